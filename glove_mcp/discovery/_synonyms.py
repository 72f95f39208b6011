"""Query-side language knowledge for catalogue ranking, built from the lexicon
(``glove_mcp.discovery._lexicon``).

Turns a query's text into stems the ranking can use:

1. token shapes: things people paste rather than say ("r/python", "#general", "~/Downloads",
   "PROJ-221", "report.pdf", "10.0.0.1") are read as what they are (a subreddit, a chat channel,
   a local path, a ticket, a file, an address);
2. multi-word expressions (the lexicon's phrases) are replaced by their gloss, so "balance
   sheet" is not a spreadsheet and "reports to" is not a report;
3. words nobody knows are corrected by one edit against the catalogue's words and the lexicon's
   (``glove_mcp.discovery._spelling``);
4. the text is tokenised and stemmed, and abbreviations gain their long form ("pr").

``expansions`` then gives each stem's synonyms and hints, and ``is_weak`` marks common words
that seldom tell services apart. The lexicon is stemmed once, on first use (``_tables``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple

from glove_mcp.discovery._lexicon import Lexicon, lexicon
from glove_mcp.discovery._text import STOP_WORDS, stem, tokenize

__all__ = [
    "QueryText",
    "expand_abbreviation",
    "expansions",
    "is_known",
    "lexicon_size",
    "lexicon_words",
    "rewrite_query",
    "word_weight",
]


def _stems(words: str) -> list[str]:
    return [stem(w.replace("-", "").replace("'", "")) for w in words.split()]


def _build_related(lex: Lexicon) -> Mapping[str, Mapping[str, str]]:
    related: dict[str, dict[str, str]] = {}
    for group in lex.synonym_groups:
        members = _stems(group)
        for member in members:
            bucket = related.setdefault(member, {})
            for other in members:
                if other != member:
                    bucket[other] = "synonym"
    synonyms = {word: dict(bucket) for word, bucket in related.items()}
    for words, targets in lex.hints:
        # A hint points at a concept, so it reaches every name of the concept.
        reach: list[str] = []
        for target in _stems(targets):
            reach.append(target)
            reach.extend(synonyms.get(target, {}))
        for word in _stems(words):
            bucket = related.setdefault(word, {})
            for target in reach:
                if target != word:
                    bucket.setdefault(target, "hint")
    return MappingProxyType({k: MappingProxyType(v) for k, v in related.items()})


@dataclass(frozen=True)
class _Tables:
    """The lexicon, stemmed and keyed for lookups."""

    related: Mapping[str, Mapping[str, str]]
    abbreviations: Mapping[str, tuple[str, ...]]
    """Keyed by stem, as query tokens come: "subs" is looked up as "sub"."""
    weak: frozenset[str]
    markers: frozenset[str]
    that_followers: frozenset[str]
    polysemous: frozenset[str]
    phrases: Mapping[str, tuple[tuple[tuple[str, ...], str], ...]]
    """Phrases keyed by their first word; each list longest first, so "profit and loss" wins
    over any shorter phrase sharing its start."""
    symbolic: Mapping[str, str]
    """Symbolic abbreviations ("p&l", "1:1") never survive tokenising, so they are phrases."""


@functools.cache
def _tables() -> _Tables:
    lex = lexicon()
    return _Tables(
        related=_build_related(lex),
        abbreviations=MappingProxyType(
            {
                key: tuple(tokenize(long))
                for short, long in lex.abbreviations
                if short.isalnum()
                for key in {short, *tokenize(short)}
            }
        ),
        weak=frozenset(_stems(lex.weak_words)),
        markers=frozenset(lex.content_markers.split()),
        that_followers=frozenset(lex.that_clause_starts.split()),
        polysemous=frozenset(_stems(lex.polysemous_words)),
        phrases=MappingProxyType(
            {
                first: tuple(
                    sorted(
                        (
                            (tuple(p.split()), gloss)
                            for p, gloss in lex.phrases
                            if p.split()[0] == first
                        ),
                        key=lambda item: -len(item[0]),
                    )
                )
                for first in {p.split()[0] for p, _ in lex.phrases}
            }
        ),
        symbolic=MappingProxyType(
            {short: long for short, long in lex.abbreviations if not short.isalnum()}
        ),
    )


_NOTHING: Mapping[str, str] = MappingProxyType({})

# Shapes of pasted things, each read as a few words. Order matters: the first match wins a span.
_SHAPES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"\bhttps?://\S+|\bwww\.\S+|\b[\w.-]+\.(?:com|org|net|io|dev|app)\b"),
        " website domain ",
    ),
    (re.compile(r"(?<![\w/])r/\w+"), " subreddit "),
    (re.compile(r"(?<![\w&])#[a-z][\w-]*"), " chat channel "),
    (re.compile(r"(?:^|\s)(?:~|\.{1,2})?/[\w.~/-]+|\b[a-z]:\\\S*"), " local file path "),
    (
        re.compile(r"\b[\w-]+\.(?:py|js|ts|tsx|jsx|go|rb|rs|java|kt|swift|php|cpp|cs)\b"),
        " code file ",
    ),
    (re.compile(r"\b[\w-]+\.(?:pdf|docx?|pptx?|txt|md|rtf)\b"), " document file "),
    (re.compile(r"\b[\w-]+\.(?:csv|xlsx?|tsv)\b"), " spreadsheet file "),
    (re.compile(r"\b[\w-]+\.(?:png|jpe?g|gif|svg|webp)\b"), " image file "),
    (re.compile(r"\b[\w-]+\.(?:log)\b"), " log file "),
    (re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d+\b"), " issue "),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b"), " ip address "),
    # A clock time is a when: read it as a calendar cue (see the lexicon's hints), not as the
    # weak "time".
    (re.compile(r"\b\d{1,2}(?::\d\d)?\s?(?:am|pm)\b", re.IGNORECASE), " time o'clock "),
    (re.compile(r"[$€£]\s?\d"), " money "),
    (re.compile(r"\b[1-5]xx\b", re.IGNORECASE), " http status error metric "),
    (re.compile(r"\b\d+\s?°"), " degrees "),
)
# A pasted email address names a person (to charge, invite, look up) as often as a mailbox:
# it counts as a topic word "email" (see ``rewrite_query``), not as the request's service.
_EMAIL_ADDRESS_RE = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.]+\b")
_WORDS_RE = re.compile(r"[a-z0-9*][a-z0-9&':-]*")
# Quoted text is what to write or find ("add 'call the plumber'"), so it belongs to the topic.
_QUOTED_RE = re.compile(r"(?<!\w)'([^']+)'(?!\w)|\"([^\"]+)\"|\u201c([^\u201d]+)\u201d")
_PLACE_WORDS = frozenset({"in", "on", "via", "using", "through", "into", "onto"})
_DETERMINERS = frozenset({"the", "a", "an", "my", "our", "your", "their", "his", "her", "this"})
_SLOT_MAX = 3  # words a "*" in a phrase may stand for ("let * know": "let the whole team know")


class QueryText(NamedTuple):
    """A query rewritten into plain words (see ``rewrite_query``)."""

    request: str
    """What is asked, e.g. "text my mom"."""
    topic: str
    """What it is about, e.g. "the flight landed"; may be empty."""
    mentions: str
    """Words naming where to act: the word after "in", "on", "via", ... ("in drive")."""


def rewrite_query(text: str, correct: Callable[[str], str | None] | None = None) -> QueryText:
    """Rewrite a query into plain words the tokeniser and the lexicon understand.

    Applies token shapes, phrases (and symbolic abbreviations) and, given ``correct``,
    spelling corrections, in that order, and splits the request from its topic: in "text my
    mom that the flight landed" or "search the web for reviews of a phone", what follows the
    first content marker word (after some other word) is what the message or search is
    about, not which service carries it.

    Args:
        text: the query as typed.
        correct: returns the word a misspelt word stands for, or ``None`` to keep it (see
            ``glove_mcp.discovery._spelling.Speller``); ``None`` leaves spelling alone.

    Returns:
        The request, the topic and the mentions, each lower-case words separated by spaces;
        the topic is ``""`` when the query has no marker and no quoted text.
    """
    tables = _tables()
    source = text.replace("\u2019", "'").replace("*", " ")
    quoted: list[str] = []

    def set_aside(match: re.Match[str]) -> str:
        quoted.append(next(g for g in match.groups() if g is not None))
        return " "

    source = _QUOTED_RE.sub(set_aside, source)
    source, addresses = _EMAIL_ADDRESS_RE.subn(" ", source)
    quoted.extend(["email"] * min(addresses, 1))
    for pattern, reading in _SHAPES:
        source = pattern.sub(reading, source)
    raw = _WORDS_RE.findall(source.lower())
    words = [w.rstrip("'-:") for w in raw]
    out: list[str] = []
    head: list[str] | None = None
    i = 0
    while i < len(words):
        word = words[i]
        if (
            head is None
            and _starts_topic(tables, words, i)
            and any(w not in STOP_WORDS for w in out)
        ):
            head, out = out, []
            i += 1
            continue
        if word in tables.symbolic:
            out.append(tables.symbolic[word])
            i += 1
            continue
        for phrase, gloss in tables.phrases.get(word, ()):
            matched = _match_phrase(phrase, words, i)
            if matched is not None:
                end, slot = matched
                out.append(gloss)
                out.extend(slot)
                i = end
                break
        else:
            fixed = correct(word) if correct is not None else None
            out.append(word if fixed is None else fixed)
            i += 1
    topic = " ".join([*(out if head is not None else []), *quoted]).lower()
    request = " ".join(out if head is None else head)
    return QueryText(request, topic, " ".join(_mentions(words)))


def _mentions(words: list[str]) -> list[str]:
    """The head noun after each place word: the last word before the next stop word ("in our
    team wiki" gives "wiki", "in google drive" gives "drive")."""
    found: list[str] = []
    for i, word in enumerate(words):
        if word not in _PLACE_WORDS:
            continue
        at = i + 1
        while at < len(words) and words[at] in _DETERMINERS:
            at += 1
        end = at
        while end < len(words) and words[end] not in STOP_WORDS:
            end += 1
        if end > at:
            found.append(words[end - 1])
    return found


def _match_phrase(
    phrase: tuple[str, ...], words: list[str], i: int
) -> tuple[int, list[str]] | None:
    """Where ``phrase`` ends if it starts at ``words[i]``, and the words its ``*`` stood for."""
    if "*" not in phrase:
        end = i + len(phrase)
        return (end, []) if tuple(words[i:end]) == phrase else None
    star = phrase.index("*")
    before, after = phrase[:star], phrase[star + 1 :]
    start = i + len(before)
    if tuple(words[i:start]) != before:
        return None
    for size in range(1, _SLOT_MAX + 1):
        end = start + size + len(after)
        if tuple(words[start + size : end]) == after:
            return end, words[start : start + size]
    return None


def _starts_topic(tables: _Tables, words: list[str], i: int) -> bool:
    word = words[i]
    if word not in tables.markers:
        return False
    if word != "that":
        return True
    return i + 1 < len(words) and words[i + 1] in tables.that_followers


def expansions(token: str) -> Mapping[str, str]:
    """Related stems of one stemmed query token and how they relate.

    Args:
        token: a stem produced by ``tokenize``.

    Returns:
        A read-only mapping of related stem to ``"synonym"`` or ``"hint"``; empty when the
        vocabulary knows nothing about the token.
    """
    return _tables().related.get(token, _NOTHING)


def expand_abbreviation(token: str) -> tuple[str, ...]:
    """The stems of an abbreviation's long form, or ``()`` when ``token`` is not one.

    Args:
        token: a stem produced by ``tokenize``.

    Returns:
        The long form's stems in order.
    """
    return _tables().abbreviations.get(token, ())


def word_weight(token: str, weak: float, polysemous: float) -> tuple[float, float]:
    """The share of its weight a query stem keeps, for its own occurrences and for what the
    lexicon relates it to.

    A common word that seldom tells services apart keeps ``weak`` of its own occurrences and
    all of its relations; a word with unrelated senses keeps ``polysemous`` of both.

    Args:
        token: a stem produced by ``tokenize``.
        weak: the share of a weak word's stem.
        polysemous: the share of a polysemous word's stem.

    Returns:
        ``(own, related)`` shares, each in (0, 1].
    """
    tables = _tables()
    if token in tables.weak:
        return weak, 1.0
    if token in tables.polysemous:
        return polysemous, polysemous
    return 1.0, 1.0


def is_known(token: str) -> bool:
    """Whether the lexicon knows a stem (so it is a real word, not a truncated one).

    Args:
        token: a stem produced by ``tokenize``.

    Returns:
        ``True`` when the stem has synonyms or hints, or is a weak or polysemous word.
    """
    tables = _tables()
    return token in tables.related or token in tables.weak or token in tables.polysemous


def lexicon_words() -> Iterable[str]:
    """Every plain word the lexicon and the stop-word list know, for spelling correction."""
    lex = lexicon()
    yield from STOP_WORDS
    texts: list[str] = [*lex.synonym_groups, lex.weak_words, lex.polysemous_words]
    texts.extend(f"{words} {targets}" for words, targets in lex.hints)
    texts.extend(f"{short} {long}" for short, long in lex.abbreviations)
    texts.extend(f"{phrase} {gloss}" for phrase, gloss in lex.phrases)
    for text in texts:
        yield from _WORDS_RE.findall(text.lower())


def lexicon_size() -> dict[str, int]:
    """How much the lexicon holds, per table (for reports and benchmarks)."""
    lex = lexicon()
    return {
        "synonym_groups": len(lex.synonym_groups),
        "synonym_words": sum(len(g.split()) for g in lex.synonym_groups),
        "hint_rules": len(lex.hints),
        "hint_words": sum(len(words.split()) for words, _ in lex.hints),
        "abbreviations": len(lex.abbreviations),
        "phrases": len(lex.phrases),
        "weak_words": len(lex.weak_words.split()),
        "polysemous_words": len(lex.polysemous_words.split()),
        "related_stems": len(_tables().related),
    }
