"""Text normalisation for catalogue ranking: tokenising, stop words and a small stemmer.

The stemmer is deliberately modest. It only has to map the inflections people actually type
("meetings", "scheduled", "replies", "deployment") onto the same stem as the catalogue's
wording; it does not need to produce dictionary words, only to be consistent on both sides.
"""

from __future__ import annotations

import re

__all__ = ["STOP_WORDS", "stem", "tokenize"]

# Words that carry no information about *which* server is meant. Request verbs that do
# discriminate ("send", "search", "deploy") are left to IDF weighting instead.
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
_CAMEL_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_CAMEL_HINT_RE = re.compile(r"[a-z][A-Z]")
_NON_WORD_RE = re.compile(r"[^A-Za-z0-9'-]+")
_JOINERS_RE = re.compile(r"[-']")
_VOWELS = frozenset("aeiouy")
# Words the suffix rules would mangle into something that collides with another word.
_KEEP = frozenset({"news", "series", "species", "always", "canvas", "analysis", "status", "ios"})
_IRREGULAR = {"daily": "day", "people": "person", "children": "child", "analyses": "analysis"}


def tokenize(
    text: str, *, split_camel: bool = False, memo: dict[str, str] | None = None
) -> list[str]:
    """Split ``text`` into lower-case stemmed tokens, dropping stop words.

    Anything but letters and digits separates words (so ``create_issue`` is two words). A
    hyphenated compound yields its parts and the joined form ("on-call" gives "call" and
    "oncall"), so "todo", "to-do" and "to do" meet. With ``split_camel`` a camelCase word also
    yields its parts ("PagerDuty" gives "pager", "duty" and "pagerduty"); that is for names and
    tool names, where brands glue words together, not for free text.

    Args:
        text: any text.
        split_camel: also emit the parts of camelCase words.
        memo: a word -> stem map to reuse across calls (indexing a large catalogue repeats
            words); filled as a side effect.

    Returns:
        The tokens, in text order (a compound's parts come before its joined form).
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
        for part in parts:
            if part in STOP_WORDS:
                continue
            if memo is None:
                out.append(stem(part))
                continue
            stemmed = memo.get(part)
            if stemmed is None:
                stemmed = memo[part] = stem(part)
            out.append(stemmed)
    return out


def stem(word: str) -> str:
    """Reduce a lower-case word to a stem shared by its common inflections.

    Args:
        word: a lower-case word without punctuation.

    Returns:
        The stem; words of three letters or fewer, and words with digits, come back unchanged.
    """
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or not word.isalpha() or word in _KEEP:
        return word
    w = _americanise(word)
    w = _strip_plural(w)
    w = _strip_verb_ending(w)
    for suffix, replacement in (
        ("ization", "ize"),
        ("ability", "able"),
        ("ibility", "ible"),
        ("ment", ""),
    ):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)] + replacement
            break
    if w.endswith("ation") and len(w) > 7:
        w = w[:-5] + "ate"
    if w.endswith("ly") and len(w) >= 6:
        w = w[:-2]
    if w.endswith("ll") and len(w) > 4:
        w = w[:-1]
    if w.endswith("e") and not w.endswith("ee"):
        # Porter's rule: "schedule" -> "schedul" (meets "scheduling"), but "plane" and "note"
        # keep their e so they do not collide with "plan" and "not".
        base = w[:-1]
        m = _measure(base)
        if m > 1 or (m == 1 and not _ends_cvc(base)):
            w = base
    if w.endswith("y") and len(w) >= 4 and w[-2] not in _VOWELS:
        w = w[:-1] + "i"
    return w


def _americanise(word: str) -> str:
    # "organise" and "organize" should meet; only the verb forms are rewritten.
    for british, american in (
        ("isation", "ization"),
        ("ising", "izing"),
        ("ised", "ized"),
        ("ises", "izes"),
        ("ise", "ize"),
    ):
        if word.endswith(british) and len(word) - len(british) >= 3:
            return word[: -len(british)] + american
    return word


def _strip_plural(w: str) -> str:
    if w.endswith("sses"):
        return w[:-2]
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "xes", "zzes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def _strip_verb_ending(w: str) -> str:
    for suffix in ("ing", "ed"):
        if not w.endswith(suffix):
            continue
        base = w[: -len(suffix)]
        if len(base) < 3 or not any(c in _VOWELS for c in base):
            return w
        if base[-1] == base[-2] and base[-1] not in "sz":
            # "running" -> "run", "cancelled" -> "cancel", but "called" stays "call".
            if base[-1] != "l" or len(base) > 4:
                base = base[:-1]
        elif _measure(base) == 1 and _ends_cvc(base):
            base += "e"  # "sharing" -> "share", "moving" -> "move", "noted" -> "note"
        return base
    return w


def _pattern(word: str) -> str:
    # C/V per letter; "y" after a consonant acts as a vowel.
    out: list[str] = []
    for i, ch in enumerate(word):
        vowel = ch in "aeiou" or (ch == "y" and i > 0 and out[i - 1] == "C")
        out.append("V" if vowel else "C")
    return "".join(out)


def _measure(word: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in the word."""
    return re.sub(r"(.)\1+", r"\1", _pattern(word)).lstrip("C").count("VC")


def _ends_cvc(word: str) -> bool:
    """Consonant-vowel-consonant ending whose last letter is not w, x or y ("shar", "not")."""
    return len(word) >= 3 and _pattern(word).endswith("CVC") and word[-1] not in "wxy"
