"""Ranking a catalogue: ``CatalogueIndex`` and ``match_entries``.

``match_entries`` answers "which server does this need?" with general retrieval and nothing
tuned to particular queries. Lexically: the query and every entry are tokenised and
Snowball-stemmed (``_text``) and scored with BM25F (``_ranking``) over each entry's name, tags,
the keywords its author gave, its description, and the names and descriptions of its tools and
the server's instructions once they are known; a word the catalogue lacks matches the catalogue
words it begins or is one or two typing errors from (``_typos``). By default that score is
fused with the similarity of WordLlama static embeddings (``default``), general knowledge of
English from a maintained resource, so "will I need an umbrella" finds a weather server;
``ranker=None`` ranks lexically only, and any ``CatalogueRanker`` (the embedding ranker of
the ``glove-agents[semantic]`` extra) can be plugged in instead. What neither can tell, the
catalogue's author can, in ``McpCatalogueEntry.keywords``.

It ranks anything shaped like a catalogue entry (``CatalogueItem``); the catalogue's
``McpCatalogueEntry`` is the one glove_mcp uses, and ``glove_mcp.catalogue`` re-exports both
names, so this module never imports the catalogue.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Generic, Literal, Protocol

from typing_extensions import TypeVar

from glove_mcp.discovery._entry_text import (
    ToolInfo,
    digest,
    entry_keywords,
    entry_text,
    string_list,
    tool_pairs,
)
from glove_mcp.discovery._index_cache import cached_index
from glove_mcp.discovery._ranking import QueryWord, RankingIndex, RankingParams
from glove_mcp.discovery._text import raw_words, stem, tokenize, words_of
from glove_mcp.discovery.default import default_ranker
from glove_mcp.discovery.ranker import CatalogueRanker, RankingRequest

__all__ = ["LEXICAL_DEPTH", "CatalogueIndex", "CatalogueItem", "ToolInfo", "match_entries"]

LEXICAL_DEPTH = 100
"""How many lexical results a plugged-in ranker is given."""

_ITEM_FIELDS = ("id", "name", "description", "tags")


class CatalogueItem(Protocol):
    """What ranking reads of a catalogue entry; ``McpCatalogueEntry`` is one. An optional
    ``keywords`` attribute (a list of strings) is read too when the item has one."""

    @property
    def id(self) -> str:
        """The catalogue id."""
        ...

    @property
    def name(self) -> str:
        """A human name."""
        ...

    @property
    def description(self) -> str:
        """What the server can do."""
        ...

    @property
    def tags(self) -> Sequence[str]:
        """Categories, for tag filters and ranking."""
        ...


EntryT = TypeVar("EntryT", bound=CatalogueItem, default=CatalogueItem)
"""The entry type an index ranks (``McpCatalogueEntry`` in glove_mcp; a bare
``CatalogueIndex`` annotation means ``CatalogueIndex[CatalogueItem]``)."""


def _is_item(entry: object) -> bool:
    return all(hasattr(entry, name) for name in _ITEM_FIELDS)


class CatalogueIndex(Generic[EntryT]):
    """A ranking index over one catalogue, built once and reused for every query.

    Keep one per catalogue (a mount keeps one for its lifetime); ``match_entries`` over a plain
    list reuses a cached one for the same content. Tools learnt from servers that were
    connected before make their entries findable by what they can do (``add_tools``), and so
    do the instructions those servers gave (``add_instructions``).

    Args:
        entries: the catalogue; ids must be unique. Order is kept and breaks ties.
        tool_names: optional known tools per entry id: names (namespaced ``id__tool`` or
            bare), or objects with ``name`` and ``description`` (``LearnedTool``).
        instructions: optional server instructions per entry id (``LearnedListing``'s);
            ranked as the tools' descriptions are, in the lowest-weight field.
        ranker: ``"default"``: BM25F fused with WordLlama's general knowledge of words
            (``glove_mcp.discovery.static``); a ``CatalogueRanker`` that re-ranks every
            query (given the lexical ranking); or None: lexically only (BM25F), when only
            entries that share a word (or a stem, prefix or near-typo) with the query
            should be returned.

    Raises:
        TypeError: an entry is not an ``McpCatalogueEntry`` (nor has its ``id``, ``name``,
            ``description`` and ``tags``), its ``keywords`` is not a list of strings, or
            ``ranker`` has no ``rank`` method.
        ValueError: two entries share an id, ``tool_names`` or ``instructions`` names an
            unknown id, or ``ranker`` is a string other than ``"default"``.
    """

    def __init__(
        self,
        entries: Iterable[EntryT],
        *,
        tool_names: Mapping[str, Iterable[str | ToolInfo]] | None = None,
        instructions: Mapping[str, str] | None = None,
        ranker: CatalogueRanker | Literal["default"] | None = "default",
    ) -> None:
        if isinstance(ranker, str):
            if ranker != "default":
                raise ValueError(
                    f"ranker must be 'default', None or a CatalogueRanker, got {ranker!r}"
                )
            ranker = default_ranker()
        if ranker is not None and not isinstance(ranker, CatalogueRanker):
            raise TypeError(
                f"ranker must be a CatalogueRanker (an object with rank(request)), got "
                f"{type(ranker).__name__}"
            )
        self._entries = tuple(entries)
        self._ranker = ranker
        self._params = RankingParams()
        self._position: dict[str, int] = {}
        for i, entry in enumerate(self._entries):
            if not _is_item(entry):
                raise TypeError(
                    f"catalogue item {i} is a {type(entry).__name__}, not an McpCatalogueEntry: "
                    "build entries with McpCatalogueEntry(...) or McpCatalogueEntry.model_validate"
                )
            if entry.id in self._position:
                raise ValueError(
                    f"catalogue id {entry.id!r} appears twice (items {self._position[entry.id]} "
                    f"and {i}): ids are activation keys and must be unique"
                )
            self._position[entry.id] = i
        self._keywords = [entry_keywords(e, i) for i, e in enumerate(self._entries)]
        self._stems: dict[str, str] = {}  # word -> stem, shared by every entry's fields
        self._fixed = [
            self._fixed_fields(e, k) for e, k in zip(self._entries, self._keywords, strict=True)
        ]
        self._tools: list[dict[str, str]] = [{} for _ in self._entries]
        self._instructions: list[str] = ["" for _ in self._entries]
        self._by_tag: dict[str, set[int]] = {}
        for i, entry in enumerate(self._entries):
            for tag in entry.tags:
                self._by_tag.setdefault(_norm_tag(tag), set()).add(i)
        for entry_id, tools in (tool_names or {}).items():
            self._learn(entry_id, tools)
        for entry_id, text in (instructions or {}).items():
            self._learn_instructions(entry_id, text)
        self._ids = tuple(self._position)
        self._index: RankingIndex | None = None
        self._texts: tuple[tuple[str, ...], str] | None = None

    @property
    def entries(self) -> tuple[EntryT, ...]:
        """The catalogue, in its original order."""
        return self._entries

    @property
    def ranker(self) -> CatalogueRanker | None:
        """The ranker in use (``DefaultRanker`` by default), or None when lexical only."""
        return self._ranker

    def __len__(self) -> int:
        return len(self._entries)

    def tool_names(self, entry_id: str) -> tuple[str, ...]:
        """The tool names known for an entry, in the order first learnt.

        Raises:
            ValueError: no entry has that id.
        """
        return tuple(self._tools[self._locate(entry_id)])

    def tools(self, entry_id: str) -> dict[str, str]:
        """The tools known for an entry: name -> description (empty when unknown).

        Raises:
            ValueError: no entry has that id.
        """
        return dict(self._tools[self._locate(entry_id)])

    def add_tool_names(self, entry_id: str, names: Iterable[str | ToolInfo]) -> None:
        """Record tools a server offered, so later queries can match them.

        Names may be namespaced (``tracker__create_issue``) or bare, or objects with ``name``
        and ``description``; a tool seen again keeps the newer description. The ranking is
        rebuilt lazily at the next query, once, however many tools were added.

        Args:
            entry_id: the catalogue id of the server.
            names: its tools.

        Raises:
            ValueError: no entry has that id.
            TypeError: ``names`` is a string or holds something other than strings or tools.
        """
        if self._learn(entry_id, names):
            self._index = None
            self._texts = None

    add_tools = add_tool_names

    def instructions(self, entry_id: str) -> str:
        """The server instructions known for an entry (``""`` when unknown).

        Raises:
            ValueError: no entry has that id.
        """
        return self._instructions[self._locate(entry_id)]

    def add_instructions(self, entry_id: str, text: str) -> None:
        """Record what a server said about itself (its ``instructions``), so later queries
        can match its words. They rank as the tools' descriptions do (the lowest-weight
        field), and replace the instructions known before. The ranking is rebuilt lazily.

        Args:
            entry_id: the catalogue id of the server.
            text: its instructions; ``""`` forgets them.

        Raises:
            ValueError: no entry has that id.
            TypeError: ``text`` is not a string.
        """
        if self._learn_instructions(entry_id, text):
            self._index = None
            self._texts = None

    def search(
        self, query: str, tags: Iterable[str] | None = None, limit: int = 10
    ) -> list[EntryT]:
        """Rank the catalogue for ``query``; see ``match_entries`` for the rules.

        Args:
            query: what is needed, in natural words; empty means "everything".
            tags: only entries carrying every one of these tags (case-insensitive).
            limit: at most this many entries (>= 1).

        Returns:
            The best candidates, best first (see ``match_entries``).

        Raises:
            TypeError: ``query`` is not a string, ``tags`` is a string or holds non-strings,
                or ``limit`` is not an int.
            ValueError: ``limit`` is below 1, or the plugged-in ranker returned bad positions.
        """
        return [self._entries[i] for i in self.search_positions(query, tags, limit)]

    def search_positions(
        self, query: str, tags: Iterable[str] | None = None, limit: int = 10
    ) -> list[int]:
        """Like ``search``, but the entries' positions in the catalogue.

        Args:
            query: what is needed, in natural words; empty means "everything".
            tags: only entries carrying every one of these tags (case-insensitive).
            limit: at most this many entries (>= 1).

        Returns:
            Positions of the matching entries (indexes into ``entries``), best first.

        Raises:
            TypeError: ``query`` is not a string, ``tags`` is a string or holds non-strings,
                or ``limit`` is not an int.
            ValueError: ``limit`` is below 1, or the plugged-in ranker returned bad positions.
        """
        if not isinstance(query, str):
            raise TypeError(
                f"query must be a str, got {type(query).__name__}: pass '' to list everything"
            )
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError(f"limit must be an int, got {type(limit).__name__}")
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        allowed = self._filter(tags)
        index = self._ranking()
        words = _query_words(query)
        if not words:  # nothing to rank by (an embedding of "the of and" is noise)
            ids = range(len(self._entries)) if allowed is None else sorted(allowed)
            return list(ids[:limit])
        if allowed is not None and not allowed:
            return []
        depth = limit if self._ranker is None else max(limit, LEXICAL_DEPTH)
        lexical = index.rank(words, allowed, depth) if words else []
        if self._ranker is None:
            return [i for i, _ in lexical]
        texts, key = self._catalogue_texts()
        request = RankingRequest(
            query=query,
            ids=self._ids,
            texts=texts,
            catalogue_key=key,
            lexical=lexical,
            allowed=None if allowed is None else frozenset(allowed),
            limit=limit,
        )
        return self._checked(self._ranker.rank(request), allowed, limit)

    def entry_text(self, entry_id: str) -> str:
        """What a plugged-in ranker is given for an entry (see ``RankingRequest.texts``).

        Raises:
            ValueError: no entry has that id.
        """
        return self._catalogue_texts()[0][self._locate(entry_id)]

    def _catalogue_texts(self) -> tuple[tuple[str, ...], str]:
        if self._texts is None:
            texts = tuple(
                entry_text(e, k, self._tools[i], self._instructions[i])
                for i, (e, k) in enumerate(zip(self._entries, self._keywords, strict=True))
            )
            self._texts = (texts, digest([*self._position, *texts]))
        return self._texts

    def _checked(self, positions: Sequence[int], allowed: set[int] | None, limit: int) -> list[int]:
        out: list[int] = []
        seen: set[int] = set()
        size = len(self._entries)
        for p in positions:
            if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < size:
                raise ValueError(
                    f"the ranker {type(self._ranker).__name__} returned {p!r}: positions must "
                    f"be ints from 0 to {size - 1} (indexes into RankingRequest.ids)"
                )
            if p in seen:
                raise ValueError(
                    f"the ranker {type(self._ranker).__name__} returned position {p} twice"
                )
            seen.add(p)
            if (allowed is None or p in allowed) and len(out) < limit:
                out.append(p)
        return out

    def _ranking(self) -> RankingIndex:
        if self._index is None:
            docs = [(*fixed, *self._tool_fields(i)) for i, fixed in enumerate(self._fixed)]
            words: dict[str, str] = {}
            every = zip(self._entries, self._keywords, self._tools, self._instructions, strict=True)
            for entry, keywords, tools, instructions in every:
                text = " ".join(
                    [
                        entry.name,
                        entry.id,
                        entry.description,
                        *entry.tags,
                        *keywords,
                        *tools,
                        instructions,
                    ]
                )
                for word in raw_words(text):
                    if word not in words:
                        words[word] = self._stems.get(word) or stem(word)
            self._index = RankingIndex(docs, self._params, words)
        return self._index

    def _tool_fields(self, i: int) -> tuple[list[str], list[str]]:
        memo = self._stems
        names = [t for name in self._tools[i] for t in tokenize(name, split_camel=True, memo=memo)]
        text = [t for d in self._tools[i].values() for t in tokenize(d, memo=memo)]
        # The server's own words about what it does: free text like a tool's description,
        # so the same (lowest-weight) field.
        text += tokenize(self._instructions[i], memo=memo)
        return names, text

    def _filter(self, tags: Iterable[str] | None) -> set[int] | None:
        if tags is None:
            return None
        wanted = string_list(tags, "tags")
        if not wanted:
            return None
        allowed: set[int] | None = None
        for tag in wanted:
            having = self._by_tag.get(_norm_tag(tag), set())
            allowed = set(having) if allowed is None else allowed & having
        return allowed

    def _locate(self, entry_id: str) -> int:
        try:
            return self._position[entry_id]
        except KeyError:
            raise ValueError(
                f"no catalogue entry has id {entry_id!r}; known ids: "
                f"{', '.join(sorted(self._position)[:20]) or '(none)'}"
            ) from None

    def _learn(self, entry_id: str, tools: Iterable[str | ToolInfo]) -> bool:
        known = self._tools[self._locate(entry_id)]
        added = False
        for name, description in tool_pairs(tools):
            bare = name.split("__", 1)[1] if "__" in name else name
            if bare and (bare not in known or (description and known[bare] != description)):
                known[bare] = description or known.get(bare, "")
                added = True
        return added

    def _learn_instructions(self, entry_id: str, text: str) -> bool:
        if not isinstance(text, str):
            raise TypeError(
                f"instructions of {entry_id!r} must be a str, got {type(text).__name__}"
            )
        position = self._locate(entry_id)
        if self._instructions[position] == text:
            return False
        self._instructions[position] = text
        return True

    def _fixed_fields(
        self, entry: EntryT, keywords: Sequence[str]
    ) -> tuple[list[str], list[str], list[str], list[str]]:
        memo = self._stems
        name = tokenize(f"{entry.name} {entry.id}", split_camel=True, memo=memo)
        tags = [t for tag in entry.tags for t in tokenize(tag, memo=memo)]
        words = [t for keyword in keywords for t in tokenize(keyword, memo=memo)]
        return name, tags, words, tokenize(entry.description, memo=memo)


def match_entries(
    entries: Sequence[EntryT] | CatalogueIndex[EntryT],
    query: str,
    tags: Iterable[str] | None = None,
    limit: int = 10,
) -> list[EntryT]:
    """Rank catalogue entries for a need phrased in natural words.

    General retrieval, tuned to no query set: words are tokenised and stemmed with the
    Snowball English stemmer ("meetings" finds "meeting"), weighted so rare words count more
    than common ones (BM25F over name, tags, keywords, description and the names and
    descriptions of known tools, in falling weight; a server's known instructions rank with
    its tools' descriptions), and a word the catalogue lacks matches
    the catalogue words it begins ("calend") or is a typing error or two from ("calender").
    Adjacent query words that are adjacent in an entry earn a phrase bonus. That score is
    fused with the similarity of WordLlama embeddings (the default ranker), so a need that
    shares no word with its server still finds it. Equal scores keep catalogue order. What
    the words cannot tell, the catalogue can: give entries ``keywords``; or rank another way
    with ``CatalogueIndex(entries, ranker=...)`` (None: lexically only; the embedding ranker
    of the ``glove-agents[semantic]`` extra).

    Args:
        entries: the catalogue, or a ``CatalogueIndex`` over it. For a list, an index built
            for the same content is reused (a small cache: the same entries, or equal ones,
            give the same index; a changed catalogue builds a new one).
        query: the need; an empty query, or one of only stop words, returns entries in
            catalogue order.
        tags: only entries that carry every one of these tags (case-insensitive).
        limit: at most this many entries (>= 1).

    Returns:
        The best candidates, best first; never duplicates, at most ``limit``. With the
        default ranker any entry may be a candidate (the most similar ones, when none shares
        a word with the query); lexically only, entries with a positive score.

    Raises:
        TypeError: bad argument types (see ``CatalogueIndex.search``), or an item of
            ``entries`` that is not an ``McpCatalogueEntry``.
        ValueError: ``limit`` below 1, or duplicate ids in ``entries``.
    """
    if isinstance(entries, CatalogueIndex):
        return entries.search(query, tags, limit)
    items = list(entries)
    # A cached index may have been built over equal entries of another list: answer with the
    # caller's own objects, by position.
    index: CatalogueIndex[EntryT] = cached_index(items, CatalogueIndex)
    return [items[i] for i in index.search_positions(query, tags, limit)]


def _query_words(query: str) -> list[QueryWord]:
    """The query's words with their stems, in order (stop words dropped)."""
    return [QueryWord(stem(word), word) for word in words_of(query)]


def _norm_tag(tag: str) -> str:
    return tag.strip().lower()
