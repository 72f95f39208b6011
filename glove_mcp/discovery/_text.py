"""Text normalisation for catalogue ranking: words, stop words and Snowball stems.

Stemming is the Snowball English ("Porter 2") algorithm from PyStemmer, a maintained C
implementation; it maps the inflections people type ("meetings", "scheduled", "deployment")
onto the stem the catalogue's wording has. The stop words are English function words only:
words that say nothing about *which* server is meant. Request verbs that do discriminate
("send", "search", "deploy") are left to IDF weighting.
"""

from __future__ import annotations

import functools
import re

import Stemmer

__all__ = ["STOP_WORDS", "raw_words", "stem", "tokenize", "words_of"]

_STOP_TEXT = """
    a about above after again all am an and any are as at be because been before being
    below between both but by can could did do does doing don done down during each either
    else ever every few for from further get gets getting give go going got had has have
    having he her here hers him his how i if in into is it its itself just let lets like
    make me might mine more most much must my myself need needs no nor not now of off on
    once only or other our ours ourselves out over own please really right same shall she
    should so some something such than that the their theirs them then there these they
    this those through to too under until up us very want wants was we were what when where
    whether which while who whom whose why will with within without would you your yours
    yourself 's s t ll re ve d m also already anything anyone anybody everything everyone
    many maybe nothing someone somebody still via yet
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_TEXT.split())

_WORD_RE = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_RAW_WORD_RE = re.compile(r"[a-z]+")
_CAMEL_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_CAMEL_HINT_RE = re.compile(r"[a-z][A-Z]")
_NON_WORD_RE = re.compile(r"[^A-Za-z0-9'-]+")
_JOINERS_RE = re.compile(r"[-']")


@functools.cache
def _stemmer() -> Stemmer.Stemmer:
    # One per process: PyStemmer keeps its own cache of recent words.
    return Stemmer.Stemmer("english")


def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word (words with digits are kept whole).

    Args:
        word: a lower-case word without punctuation.

    Returns:
        The stem.
    """
    if not word.isalpha():
        return word
    result: str = _stemmer().stemWord(word)
    return result


def words_of(text: str, *, split_camel: bool = False) -> list[str]:
    """Split ``text`` into lower-case words, dropping stop words (unstemmed).

    Anything but letters and digits separates words (so ``create_issue`` is two words). A
    hyphenated compound yields its parts and the joined form ("on-call" gives "call" and
    "oncall"), so "todo", "to-do" and "to do" meet. With ``split_camel`` a camelCase word also
    yields its parts ("PagerDuty" gives "pager", "duty" and "pagerduty"); that is for names and
    tool names, where brands glue words together, not for free text.

    Args:
        text: any text.
        split_camel: also emit the parts of camelCase words.

    Returns:
        The words, in text order (a compound's parts come before its joined form).
    """
    out: list[str] = []
    source = text.replace("\u2019", "'")
    if split_camel and _CAMEL_HINT_RE.search(source):
        pieces: list[str] = []
        for raw in _NON_WORD_RE.split(source):
            if _CAMEL_HINT_RE.search(raw):
                pieces.extend(_CAMEL_RE.findall(raw))
            pieces.append(raw)
        source = " ".join(pieces)
    for word in _WORD_RE.findall(source.lower()):
        if "-" in word or "'" in word:
            if word.endswith("'s"):
                word = word[:-2]
            parts = [p for p in _JOINERS_RE.split(word) if p]
            if len(parts) > 1:
                parts.append("".join(parts))
        else:
            parts = [word]
        out.extend(part for part in parts if part not in STOP_WORDS)
    return out


def tokenize(
    text: str, *, split_camel: bool = False, memo: dict[str, str] | None = None
) -> list[str]:
    """The stems of ``words_of(text)``.

    Args:
        text: any text.
        split_camel: also emit the parts of camelCase words.
        memo: a word -> stem map to reuse across calls (indexing a large catalogue repeats
            words); filled as a side effect.
    """
    words = words_of(text, split_camel=split_camel)
    if memo is None:
        return [stem(w) for w in words]
    out: list[str] = []
    for word in words:
        stemmed = memo.get(word)
        if stemmed is None:
            stemmed = memo[word] = stem(word)
        out.append(stemmed)
    return out


def raw_words(text: str) -> list[str]:
    """The alphabetic words of ``text``, lower-cased and unstemmed (for typo matching)."""
    return _RAW_WORD_RE.findall(text.lower())
