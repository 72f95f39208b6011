"""Runtime context: what is true right now, delivered without touching the system prompt.

A provider is ``fn(signal)`` (sync or async) returning text, content parts, or None. Its
*delivery* says when it is read and whether what it returns is kept:

- ``iteration``: re-read before every model call, sent after everything saved (below the cache
  boundary), never saved.
- ``request``: read once when a request starts, frozen for that request, sent just before the
  request's message, never saved.
- ``history``: text only; saved as ``<context key="KEY">…</context>`` before the request's
  message, but only when it differs from the last value saved under that key in the visible
  conversation. The wrapper itself is how the last value is found, so it survives restarts and
  stores that drop metadata.
"""

from __future__ import annotations

import asyncio
import html
import inspect
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from glove_core.abort import AbortSignal
from glove_core.errors import ContextProviderError
from glove_core.types import ContentPart, Message, TextPart

__all__ = [
    "ContextDelivery",
    "ContextProvider",
    "ContextRegistry",
    "ContextSnapshot",
    "ContextValue",
    "history_context_message",
    "last_saved_context",
    "snapshot_message",
]

ContextDelivery = Literal["iteration", "request", "history"]
ContextValue = str | list[ContentPart] | None
ContextProvider = Callable[[AbortSignal], ContextValue | Awaitable[ContextValue]]
"""``fn(signal)`` returning text, content parts or None; sync or async."""

DEFAULT_PROVIDER_TIMEOUT = 30.0

_KEY_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_SAVED_RE = re.compile(
    r'<context key="(?P<key>[A-Za-z0-9_.:-]{1,64})"'
    r'(?: status="cleared" />|>\n?(?P<body>.*?)\n?</context>)',
    re.DOTALL,
)


@dataclass(frozen=True)
class ContextSnapshot:
    """What one provider returned for one delivery."""

    name: str
    delivery: ContextDelivery
    value: ContextValue
    key: str | None = None


@dataclass(frozen=True)
class _Provider:
    fn: ContextProvider
    delivery: ContextDelivery
    key: str | None
    timeout: float | None
    name: str


class ContextRegistry:
    """The context providers of one Glove, in registration order."""

    def __init__(self) -> None:
        self._providers: list[_Provider] = []

    def add(
        self,
        fn: ContextProvider,
        delivery: ContextDelivery,
        key: str | None,
        timeout: float | None,
    ) -> Callable[[], None]:
        if delivery not in ("iteration", "request", "history"):
            raise ValueError(
                f"delivery must be 'iteration', 'request' or 'history', got {delivery!r}"
            )
        if not callable(fn):
            raise TypeError(f"a context provider must be callable, got {fn!r}")
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if key is not None and not _KEY_RE.match(key):
            raise ValueError(
                f"context key {key!r} is invalid: use 1-64 characters from [A-Za-z0-9_.:-]"
            )
        if delivery == "history":
            if key is None:
                raise ValueError("a history context provider needs a key= (unique among them)")
            if any(p.delivery == "history" and p.key == key for p in self._providers):
                raise ValueError(f"a history context provider with key {key!r} already exists")
        name = key or getattr(fn, "__qualname__", None) or repr(fn)
        provider = _Provider(fn, delivery, key, timeout, name)
        self._providers.append(provider)

        def remove() -> None:
            if provider in self._providers:
                self._providers.remove(provider)

        return remove

    def has(self, delivery: ContextDelivery) -> bool:
        return any(p.delivery == delivery for p in self._providers)

    async def resolve(
        self, delivery: ContextDelivery | None, signal: AbortSignal
    ) -> list[ContextSnapshot]:
        """Read every provider of ``delivery`` (all when None) concurrently; results keep
        registration order.

        Raises:
            ContextProviderError: a provider raised, timed out or returned a wrong type.
        """
        chosen = [p for p in self._providers if delivery is None or p.delivery == delivery]
        if not chosen:
            return []
        return list(await asyncio.gather(*(_read(p, signal) for p in chosen)))


async def _read(provider: _Provider, signal: AbortSignal) -> ContextSnapshot:
    async def call() -> ContextValue:
        value = provider.fn(signal)
        if inspect.isawaitable(value):
            value = await value
        return value

    try:
        value = await asyncio.wait_for(signal.race(call()), provider.timeout)
    except TimeoutError:
        raise ContextProviderError(
            provider.name, provider.delivery, f"timed out after {provider.timeout} s"
        ) from None
    except (asyncio.CancelledError, ContextProviderError):
        raise
    except Exception as exc:
        if signal.aborted:
            raise
        raise ContextProviderError(
            provider.name, provider.delivery, f"{type(exc).__name__}: {exc}"
        ) from exc
    return ContextSnapshot(provider.name, provider.delivery, _check(provider, value), provider.key)


def _check(provider: _Provider, value: object) -> ContextValue:
    if value is None or isinstance(value, str):
        return value or None
    if isinstance(value, list) and all(hasattr(p, "type") for p in value):
        if provider.delivery == "history":
            raise ContextProviderError(
                provider.name,
                "history",
                "history context is text only; return a str "
                "(send media through an 'iteration' or 'request' provider)",
            )
        return list(value) or None
    raise ContextProviderError(
        provider.name,
        provider.delivery,
        f"returned {type(value).__name__}; return a str, a list of content parts, or None",
    )


def snapshot_message(snapshots: Sequence[ContextSnapshot]) -> Message | None:
    """One transient message carrying the non-empty snapshots, in order, or None."""
    parts: list[ContentPart] = []
    texts: list[str] = []
    for snap in snapshots:
        if snap.value is None:
            continue
        if isinstance(snap.value, str):
            texts.append(snap.value)
            parts.append(TextPart(text=snap.value))
        else:
            for part in snap.value:
                parts.append(part)
                if isinstance(part, TextPart):
                    texts.append(part.text)
    if not parts:
        return None
    only_text = all(isinstance(p, TextPart) for p in parts)
    return Message(
        sender="user",
        text="\n\n".join(texts),
        content=None if only_text else parts,
        framework_context="runtime",
    )


def last_saved_context(messages: Sequence[Message]) -> dict[str, str | None]:
    """The last value saved under each key in ``messages`` (None where it was cleared)."""
    found: dict[str, str | None] = {}
    for message in messages:
        if message.sender != "user" or "<context key=" not in message.text:
            continue
        for match in _SAVED_RE.finditer(message.text):
            body = match.group("body")
            found[match.group("key")] = None if body is None else html.unescape(body)
    return found


def history_context_message(
    snapshots: Sequence[ContextSnapshot], visible: Sequence[Message]
) -> Message | None:
    """The message to save for history providers whose value changed, or None."""
    last = last_saved_context(visible)
    blocks: list[str] = []
    for snap in snapshots:
        assert snap.key is not None
        value = snap.value if isinstance(snap.value, str) else None
        previous = last.get(snap.key, None)
        seen = snap.key in last
        if value is None:
            if seen and previous is not None:
                blocks.append(f'<context key="{snap.key}" status="cleared" />')
        elif not seen or previous != value:
            blocks.append(
                f'<context key="{snap.key}">\n{html.escape(value, quote=False)}\n</context>'
            )
    if not blocks:
        return None
    return Message(sender="user", text="\n".join(blocks), framework_context="runtime")
