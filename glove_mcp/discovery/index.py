"""Ranking a catalogue: ``CatalogueIndex`` and ``match_entries``.

``match_entries`` answers "which server does this need?" from natural phrasing: the query is
read for pasted shapes, multi-word expressions, typos and its topic (``_synonyms``), tokenised
and stemmed (``_text``), expanded with a general-purpose lexicon (``_lexicon``, whose word
lists are ``data/lexicon.toml``), corrected by one edit (``_spelling``) and scored with BM25F
over each entry's name, tags, description and the tool names of servers seen before
(``_ranking``). Keep a ``CatalogueIndex`` to rank many queries over one catalogue.

It ranks anything shaped like a catalogue entry (``CatalogueItem``); the catalogue's
``McpCatalogueEntry`` is the one glove_mcp uses, and ``glove_mcp.catalogue`` re-exports both
names, so this module never imports the catalogue.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Generic, Protocol

from typing_extensions import TypeVar

from glove_mcp.discovery._ranking import RankingIndex, RankingParams, query_tokens
from glove_mcp.discovery._spelling import Speller
from glove_mcp.discovery._synonyms import expansions, lexicon_words, rewrite_query, word_weight
from glove_mcp.discovery._text import stem, tokenize

__all__ = ["CatalogueIndex", "CatalogueItem", "match_entries"]

_RAW_WORD_RE = re.compile(r"[a-z]+")
_CAMEL_SPLIT_RE = re.compile(r"(?<=[a-z])(?=[A-Z])")
_ITEM_FIELDS = ("id", "name", "description", "tags")


class CatalogueItem(Protocol):
    """What ranking reads of a catalogue entry; ``McpCatalogueEntry`` is one."""

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
        """Keywords."""
        ...


EntryT = TypeVar("EntryT", bound=CatalogueItem, default=CatalogueItem)
"""The entry type an index ranks (``McpCatalogueEntry`` in glove_mcp; a bare
``CatalogueIndex`` annotation means ``CatalogueIndex[CatalogueItem]``)."""


def _is_item(entry: object) -> bool:
    return all(hasattr(entry, name) for name in _ITEM_FIELDS)


@functools.cache
def lexicon_speller() -> Speller:
    """The lexicon's words as a speller, built once per process (about 20 ms); each index
    puts its catalogue's words on top. With repeats: counts break the speller's ties."""
    return Speller(lexicon_words())


@functools.cache
def lexicon_vocabulary() -> frozenset[str]:
    """Every word the lexicon knows."""
    return frozenset(lexicon_words())


class CatalogueIndex(Generic[EntryT]):
    """A ranking index over one catalogue, built once and reused for every query.

    Keep one per catalogue (a mount keeps one for its lifetime); ``match_entries`` over a plain
    list builds a throwaway index per call. Tool names learnt from servers that were connected
    before make their entries findable by what they can do (``add_tool_names``).

    Args:
        entries: the catalogue; ids must be unique. Order is kept and breaks ties.
        tool_names: optional known tool names per entry id (namespaced ``id__tool`` or bare).

    Raises:
        TypeError: an entry is not an ``McpCatalogueEntry`` (nor has its ``id``, ``name``,
            ``description`` and ``tags``).
        ValueError: two entries share an id, or ``tool_names`` names an unknown id.
    """

    def __init__(
        self,
        entries: Iterable[EntryT],
        *,
        tool_names: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        self._entries = tuple(entries)
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
        self._stems: dict[str, str] = {}  # word -> stem, shared by every entry's fields
        self._raw_words: list[str] = []  # every word as written, for spelling correction
        self._fixed = [self._fixed_fields(e) for e in self._entries]
        self._tools: list[list[str]] = [[] for _ in self._entries]
        self._tool_names: list[tuple[str, ...]] = [() for _ in self._entries]
        self._by_tag: dict[str, set[int]] = {}
        for i, entry in enumerate(self._entries):
            for tag in entry.tags:
                self._by_tag.setdefault(_norm_tag(tag), set()).add(i)
        for entry_id, names in (tool_names or {}).items():
            self._learn(entry_id, names)
        self._index: RankingIndex | None = None
        self._speller: Speller | None = None
        self._proper_names: dict[str, str] = {}

    @property
    def entries(self) -> tuple[EntryT, ...]:
        """The catalogue, in its original order."""
        return self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def tool_names(self, entry_id: str) -> tuple[str, ...]:
        """The tool names known for an entry, as given to ``add_tool_names``.

        Args:
            entry_id: a catalogue id.

        Returns:
            The names (un-namespaced), in the order first learnt.

        Raises:
            ValueError: no entry has that id.
        """
        return self._tool_names[self._locate(entry_id)]

    def add_tool_names(self, entry_id: str, names: Iterable[str]) -> None:
        """Record tool names a server offered, so later queries can match them.

        Names may be namespaced (``tracker__create_issue``) or bare; repeats are ignored. The
        ranking is rebuilt lazily at the next query, once, however many names were added.

        Args:
            entry_id: the catalogue id of the server.
            names: its tool names.

        Raises:
            ValueError: no entry has that id.
            TypeError: ``names`` is a string or holds something other than strings.
        """
        if self._learn(entry_id, names):
            self._index = None

    def search(
        self, query: str, tags: Iterable[str] | None = None, limit: int = 10
    ) -> list[EntryT]:
        """Rank the catalogue for ``query``; see ``match_entries`` for the rules.

        Args:
            query: what is needed, in natural words; empty means "everything".
            tags: only entries carrying every one of these tags (case-insensitive).
            limit: at most this many entries (>= 1).

        Returns:
            Matching entries, best first.

        Raises:
            TypeError: ``query`` is not a string, ``tags`` is a string or holds non-strings,
                or ``limit`` is not an int.
            ValueError: ``limit`` is below 1.
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
        text = rewrite_query(query, self._correct)
        tokens = query_tokens(tokenize(text.request))
        topic_tokens = query_tokens(tokenize(text.topic))
        mentions = tokenize(text.mentions)
        scales = {t: self._params.content_factor for t in topic_tokens if t not in tokens}
        tokens += topic_tokens
        if not tokens:
            ids = range(len(self._entries)) if allowed is None else sorted(allowed)
            return [self._entries[i] for i in ids[:limit]]
        if allowed is not None and not allowed:
            return []
        names = [self._proper_names[w] for w in _raw_words(text.request) if w in self._proper_names]
        ranked = index.rank(tokens, allowed, limit, scales, mentions, names)
        return [self._entries[i] for i in ranked]

    def _ranking(self) -> RankingIndex:
        if self._index is None:
            docs = [(*fixed, tools) for fixed, tools in zip(self._fixed, self._tools, strict=True)]
            self._index = RankingIndex(docs, self._params)
            self._speller = Speller(self._raw_words, base=lexicon_speller())
            known = lexicon_vocabulary()
            # Proper names: words of entry names, as written, that no general vocabulary knows
            # ("dropbox", "notion", "teams" though "team" is a word); a query uses them to say
            # which product it means. Camel-case parts ("send" of SendGrid) are not names.
            self._proper_names = {
                word: stem(word)
                for entry in self._entries
                for word in _raw_words(f"{entry.name} {entry.id}")
                if len(word) >= 3 and word not in known
            }
        return self._index

    def _correct(self, word: str) -> str | None:
        """A known word for a misspelt one; words whose stem is known are left alone."""
        if self._speller is None or self._index is None or word in self._speller:
            return None
        root = self._stems.get(word) or stem(word)
        if root in self._index or expansions(root):
            return None
        return self._speller.correct(word)

    def _filter(self, tags: Iterable[str] | None) -> set[int] | None:
        if tags is None:
            return None
        wanted = _string_list(tags, "tags")
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

    def _learn(self, entry_id: str, names: Iterable[str]) -> bool:
        i = self._locate(entry_id)
        known = list(self._tool_names[i])
        added = False
        for name in _string_list(names, "names"):
            bare = name.split("__", 1)[1] if "__" in name else name
            if bare and bare not in known:
                known.append(bare)
                self._tools[i].extend(tokenize(bare, split_camel=True, memo=self._stems))
                self._raw_words.extend(_raw_words(_CAMEL_SPLIT_RE.sub(" ", bare)))
                added = True
        self._tool_names[i] = tuple(known)
        return added

    def _fixed_fields(self, entry: EntryT) -> tuple[list[str], list[str], list[str]]:
        memo = self._stems
        self._raw_words.extend(
            _raw_words(" ".join([entry.name, entry.id, entry.description, *entry.tags]))
        )
        whole = set(tokenize(f"{entry.name} {entry.id}", memo=memo))
        # A camel-case part counts as a name word ("pager" of PagerDuty) unless it is a weak
        # word that would catch everyday phrasing ("quick" of QuickBooks: "a quick summary").
        name = [
            t
            for t in tokenize(f"{entry.name} {entry.id}", split_camel=True, memo=memo)
            if t in whole or word_weight(t, 0.0, 1.0)[0] > 0.0
        ]
        tags = [t for tag in entry.tags for t in tokenize(tag, memo=memo)]
        return name, tags, tokenize(entry.description, memo=memo)


def match_entries(
    entries: Sequence[EntryT] | CatalogueIndex[EntryT],
    query: str,
    tags: Iterable[str] | None = None,
    limit: int = 10,
) -> list[EntryT]:
    """Rank catalogue entries for a need phrased in natural words.

    Words are tokenised and stemmed ("meetings" finds "meeting"), expanded with general
    synonyms ("inbox" finds "email", "bug" finds "issue") and everyday cues ("umbrella" points
    at the weather), and weighted so rare words count more than common ones (BM25F over name,
    tags, description and known tool names). Multi-word expressions give ambiguous words their
    sense ("balance sheet", "reports to"), a misspelt word one edit from a known one is
    corrected ("calender"), and the topic of a request ("... about the outage") counts less
    than the request itself. Adjacent query words that are adjacent in an entry earn a phrase
    bonus. Equal scores keep catalogue order.

    Args:
        entries: the catalogue, or a ``CatalogueIndex`` over it (reuse one for many queries;
            a list is indexed afresh on every call).
        query: the need; an empty query (or one of only stop words) returns entries in
            catalogue order.
        tags: only entries that carry every one of these tags (case-insensitive).
        limit: at most this many entries (>= 1).

    Returns:
        Entries with a positive score, best first; never duplicates, at most ``limit``.

    Raises:
        TypeError: bad argument types (see ``CatalogueIndex.search``), or an item of
            ``entries`` that is not an ``McpCatalogueEntry``.
        ValueError: ``limit`` below 1, or duplicate ids in ``entries``.
    """
    index = entries if isinstance(entries, CatalogueIndex) else CatalogueIndex(entries)
    return index.search(query, tags, limit)


def _raw_words(text: str) -> list[str]:
    return _RAW_WORD_RE.findall(text.lower())


def _norm_tag(tag: str) -> str:
    return tag.strip().lower()


def _string_list(values: Iterable[str], what: str) -> list[str]:
    if isinstance(values, str | bytes):
        raise TypeError(f"{what} must be a list of strings, not a single string: wrap it in [...]")
    out = list(values)
    for value in out:
        if not isinstance(value, str):
            raise TypeError(f"{what} must hold strings, got {type(value).__name__} {value!r}")
    return out
