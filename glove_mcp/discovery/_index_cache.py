"""The index cache behind ``match_entries`` over a plain list.

Building an index costs far more than a query (about a second at 10,000 entries), so the
documented call ``match_entries(entries, query)`` keeps the last few indexes, keyed by the
entries' content: equal content gives the same index, changed content a new one. Two levels:

- by identity, when every entry is of an immutable type (a frozen pydantic model such as
  ``McpCatalogueEntry``, a frozen dataclass, a tuple): the same objects in the same order
  are the same content, found without reading them (a lookup costs a tuple of ``id()``s);
- by content (every field ranking reads), for everything else and when identity misses:
  a list rebuilt from the same JSON finds the index built for the first one.

The identity level keeps the very objects it was given next to the index, and a hit checks
them with ``is``: an ``id()`` is only ever compared while its object is alive, so a new entry
at a freed address never finds another catalogue's index. Entries are taken as immutable: a
frozen entry whose ``tags`` or ``keywords`` list is changed in place keeps its old index
until ``clear_index_cache()`` (build a new entry instead).
"""

from __future__ import annotations

import operator
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

__all__ = ["CACHE_SIZE", "cached_index", "clear_index_cache"]

CACHE_SIZE = 8
"""How many catalogues' indexes each level keeps (least recently used goes first)."""

_T = TypeVar("_T")
_U = TypeVar("_U")

_lock = threading.Lock()
_by_identity: OrderedDict[Hashable, object] = OrderedDict()
_by_content: OrderedDict[Hashable, object] = OrderedDict()
_last: list[tuple[tuple[object, ...], object]] = []
"""The identity entry found or made last (at most one): checked first, without a key."""


def _immutable(kind: type) -> bool:
    config = getattr(kind, "model_config", None)
    if isinstance(config, dict) and config.get("frozen"):
        return True
    params = getattr(kind, "__dataclass_params__", None)
    if params is not None and getattr(params, "frozen", False):
        return True
    return issubclass(kind, tuple)


def _content(entries: Sequence[object]) -> Hashable:
    def fields(e: object) -> tuple[object, ...]:
        keywords = getattr(e, "keywords", None)
        return (
            type(e),
            getattr(e, "id", None),
            getattr(e, "name", None),
            getattr(e, "description", None),
            _frozen(getattr(e, "tags", None)),
            _frozen(keywords),
        )

    return tuple(fields(e) for e in entries)


def _frozen(value: object) -> object:
    if isinstance(value, list | tuple):
        value = tuple(value)
    try:
        hash(value)
    except TypeError:  # e.g. a list inside the list: CatalogueIndex will refuse it clearly
        return repr(value)
    return value


def _remember(cache: OrderedDict[Hashable, object], key: Hashable, value: object) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > CACHE_SIZE:
        cache.popitem(last=False)


def cached_index(entries: Sequence[_T], build: Callable[[Sequence[_T]], _U]) -> _U:
    """The index of ``entries`` from the cache, built with ``build`` on a miss.

    A build that raises (a bad catalogue) caches nothing.
    """
    items = list(entries)
    with _lock:
        last = _last[0] if _last else None
    # The catalogue of the call before, as is usual: one pass, without building a key.
    if last is not None and len(last[0]) == len(items) and all(map(operator.is_, last[0], items)):
        return last[1]  # type: ignore[return-value]
    identity: Hashable | None = None
    # map() and operator.is_ keep the per-entry steps in C: at 10,000 entries a Python-level
    # loop here would cost more than the query itself.
    if all(_immutable(kind) for kind in set(map(type, items))):
        identity = tuple(map(id, items))
        with _lock:
            kept = _by_identity.get(identity)
            if isinstance(kept, tuple):
                objects: tuple[object, ...] = kept[0]
                if all(map(operator.is_, objects, items)):  # same length: same identity key
                    _by_identity.move_to_end(identity)
                    _last[:] = [kept]
                    return kept[1]  # type: ignore[no-any-return]
                del _by_identity[identity]
    content = _content(items)
    with _lock:
        found = _by_content.get(content)
    if found is None:
        found = build(items)
        with _lock:
            _remember(_by_content, content, found)
    if identity is not None:
        with _lock:
            # The objects stay alive with the index, so their ids cannot be reused meanwhile.
            made = (tuple(items), found)
            _remember(_by_identity, identity, made)
            _last[:] = [made]
    return found  # type: ignore[return-value]


def clear_index_cache() -> None:
    """Forget every cached index (tests, or to free memory)."""
    with _lock:
        _by_identity.clear()
        _by_content.clear()
        _last.clear()
