"""A fake Anthropic Messages API for tests and benchmarks.

It speaks the wire format the ``anthropic`` SDK accepts (JSON and SSE), answers from a script,
injects failures, rejects the malformed requests the real API rejects, imitates prompt caching
(deferred tools outside the cached prefix, loaded by ``tool_reference`` blocks: ``_deferred``)
and records every request::

    async with serve_fake_anthropic() as fake:
        fake.script("Hello!", FakeToolUse("search", {"q": "x"}))
        model = AnthropicModel("claude-test", api_key="test", base_url=fake.base_url)
        ...
        assert fake.requests[-1].usage["cache_read_input_tokens"] > 0
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from glove_core.testing._deferred import (
    DeferredToolScriptError,
    check_deferred,
    deferred_definitions,
    loaded_tools,
)
from glove_core.testing._fake_base import DroppedConnection, FakeAPIBase, RecordedRequest
from glove_core.testing._prompt_cache import (
    CacheResult,
    PromptCacheSim,
    estimate_tokens,
    flatten_anthropic,
)
from glove_core.testing._script import (
    FakeDrop,
    FakeError,
    FakeReply,
    FakeStall,
    FakeToolUse,
    as_reply,
)
from glove_core.testing._server import raise_server_errors, serve_asgi
from glove_core.testing._validate import validate_messages_request

__all__ = ["FakeAnthropicAPI", "RecordedRequest", "serve_fake_anthropic"]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class FakeAnthropicAPI(FakeAPIBase):
    """State and Starlette app of the fake Messages API.

    Args:
        default_reply: the answer when the script is empty and no ``responder`` is set.
        responder: builds an answer from the request body when the script is empty.
        min_cache_tokens: prefixes shorter than this are never cached.
        context_window: requests estimated above this many tokens get the API's
            "prompt is too long" 400.
        chunk_chars: the size of streamed text and partial-JSON pieces.
        cache: False disables the cache imitation (nothing read or written).
    """

    min_cache_tokens: int = 1024
    context_window: int = 200_000
    chunk_chars: int = 12
    cache: bool = True
    _clock_offset: float = field(default=0.0, init=False)
    _closing: asyncio.Event = field(default_factory=asyncio.Event, init=False, repr=False)

    def __post_init__(self) -> None:
        self.cache_sim = PromptCacheSim(self.now, self.min_cache_tokens, self.cache)
        self.app = Starlette(routes=[Route("/v1/messages", self._messages, methods=["POST"])])

    # -- scripting --------------------------------------------------------------------------

    def now(self) -> float:
        """The fake's clock (monotonic time plus what ``advance_clock`` added)."""
        return time.monotonic() + self._clock_offset

    def advance_clock(self, seconds: float) -> None:
        """Move the fake's clock forward, e.g. past a cache TTL, without waiting."""
        self._clock_offset += seconds

    def clear_cache(self) -> None:
        """Forget every cache entry."""
        self.cache_sim.entries.clear()

    # -- the endpoint -----------------------------------------------------------------------

    async def _messages(self, request: Request) -> Response:
        return await self._guarded(self._handle, request)

    async def _handle(self, request: Request) -> Response:
        record, body = await self._record(request)
        headers = record.headers
        if not headers.get("x-api-key") and not headers.get("authorization"):
            record.status, record.outcome = 401, "invalid"
            return _error_response(
                FakeError(401, "x-api-key header is required (or an Authorization bearer token)")
            )
        problem = validate_messages_request(body)
        if problem is None:
            problem = check_deferred(body)
        if problem is None:
            total = sum(b.tokens for b in flatten_anthropic(body))
            if total > self.context_window:
                problem = f"prompt is too long: {total} tokens > {self.context_window} maximum"
        if problem is not None:
            record.status, record.outcome = 400, "invalid"
            return _error_response(FakeError(400, problem))
        item = self._next_item(body)
        if isinstance(item, FakeError):
            record.status, record.outcome = item.status, "error"
            return _error_response(item)
        cache = self.cache_sim.process(str(body["model"]), flatten_anthropic(body))
        if isinstance(item, FakeStall):
            record.outcome = "stall"
            record.usage = _usage(cache, 1)
            return self._sse(self._stall_frames(body, cache, item, request))
        reply = as_reply(item.reply if isinstance(item, FakeDrop) else item)
        message = self._message(body, reply, cache)
        record.usage = message["usage"]
        if isinstance(item, FakeDrop):
            record.outcome = "drop"
            if not record.stream:
                return StreamingResponse(_half_body(message), media_type="application/json")
            return self._sse(self._drop_frames(message, item.after_events))
        if record.stream:
            return self._sse(self._frames(message))
        return JSONResponse(message, headers={"request-id": self._new_id("req_")})

    def _message(
        self, body: dict[str, Any], reply: FakeReply, cache: CacheResult
    ) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        deferred = deferred_definitions(body)
        loaded = loaded_tools(body) if deferred else set()
        for block in reply.blocks:
            if isinstance(block, FakeToolUse):
                if block.name in deferred and block.name not in loaded:
                    raise DeferredToolScriptError(block.name)
                content.append(
                    {
                        "type": "tool_use",
                        "id": block.id or self._new_id("toolu_"),
                        "name": block.name,
                        "input": block.input,
                    }
                )
            else:
                content.append({"type": "text", "text": block})
        output = sum(estimate_tokens(b.get("text") or b.get("input")) for b in content)
        return {
            "id": self._new_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": reply.effective_stop_reason,
            "stop_sequence": None,
            "usage": _usage(cache, max(1, output)),
        }

    # -- SSE --------------------------------------------------------------------------------

    def _sse(self, frames: AsyncIterator[bytes]) -> StreamingResponse:
        return StreamingResponse(
            frames,
            media_type="text/event-stream",
            headers={"request-id": self._new_id("req_"), "cache-control": "no-cache"},
        )

    def _event_list(self, message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        start = {**message, "content": [], "stop_reason": None}
        start["usage"] = {**message["usage"], "output_tokens": 1}
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": start}),
            ("ping", {"type": "ping"}),
        ]
        for index, block in enumerate(message["content"]):
            events.extend(self._block_events(index, block))
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                    "usage": {"output_tokens": message["usage"]["output_tokens"]},
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        return events

    def _block_events(self, index: int, block: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        size = max(1, self.chunk_chars)
        if block["type"] == "text":
            first: dict[str, Any] = {"type": "text", "text": ""}
            text = block["text"]
            deltas = [
                {"type": "text_delta", "text": text[i : i + size]}
                for i in range(0, len(text), size)
            ]
        else:
            first = {**block, "input": {}}
            raw = json.dumps(block["input"])
            deltas = [
                {"type": "input_json_delta", "partial_json": raw[i : i + size]}
                for i in range(0, len(raw), size)
            ]
        events: list[tuple[str, dict[str, Any]]] = [
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": first},
            )
        ]
        events.extend(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        return events

    async def _frames(self, message: dict[str, Any]) -> AsyncIterator[bytes]:
        for name, data in self._event_list(message):
            yield _frame(name, data)

    async def _drop_frames(self, message: dict[str, Any], after: int) -> AsyncIterator[bytes]:
        for name, data in self._event_list(message)[:after]:
            yield _frame(name, data)
        raise DroppedConnection()

    async def _stall_frames(
        self, body: dict[str, Any], cache: CacheResult, stall: FakeStall, request: Request
    ) -> AsyncIterator[bytes]:
        message = self._message(body, FakeReply((stall.text,)), cache)
        events = self._event_list(message)
        # message_start, ping, the text block's start and its first delta.
        for name, data in events[:4]:
            yield _frame(name, data)
        stall.started.set()
        try:
            await _until_disconnected(request, self._closing)
        finally:
            # Starlette may cancel this generator when it sees the disconnect first.
            if not self._closing.is_set():
                stall.disconnected.set()

    async def aclose(self) -> None:
        """Release streams that are stalled on purpose."""
        self._closing.set()


async def _until_disconnected(request: Request, closing: asyncio.Event) -> bool:
    """Wait until the client disconnects (True) or the fake shuts down (False)."""

    async def disconnected() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    gone = asyncio.ensure_future(disconnected())
    shutdown = asyncio.ensure_future(closing.wait())
    try:
        await asyncio.wait([gone, shutdown], return_when=asyncio.FIRST_COMPLETED)
        return gone.done() and not gone.cancelled()
    finally:
        gone.cancel()
        shutdown.cancel()


async def _half_body(message: dict[str, Any]) -> AsyncIterator[bytes]:
    # Headers and half the JSON go out, then the connection drops: raising before the response
    # starts would only turn into a clean 500.
    raw = json.dumps(message).encode()
    yield raw[: len(raw) // 2]
    raise DroppedConnection()


def _frame(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _usage(cache: CacheResult, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": cache.input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": cache.cache_creation_input_tokens,
        "cache_read_input_tokens": cache.cache_read_input_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": cache.creation_5m,
            "ephemeral_1h_input_tokens": cache.creation_1h,
        },
    }


def _error_response(error: FakeError) -> JSONResponse:
    kind = error.error_type or _ERROR_TYPES.get(error.status, "api_error")
    message = error.message or f"fake API error {error.status} ({kind})"
    headers = {"request-id": "req_fake_error"}
    if error.retry_after is not None:
        headers["retry-after"] = f"{error.retry_after:g}"
    payload = {"type": "error", "error": {"type": kind, "message": message}}
    return JSONResponse(payload, status_code=error.status, headers=headers)


@contextlib.asynccontextmanager
async def serve_fake_anthropic(
    fake: FakeAnthropicAPI | None = None, **options: Any
) -> AsyncIterator[FakeAnthropicAPI]:
    """Serve a fake Messages API on 127.0.0.1 for the duration of the block.

    Args:
        fake: a configured fake; a new ``FakeAnthropicAPI(**options)`` when omitted.
        **options: constructor arguments of ``FakeAnthropicAPI``.

    Yields:
        The fake, with ``base_url`` set (pass it as the SDK's ``base_url``).
    """
    api = fake if fake is not None else FakeAnthropicAPI(**options)
    async with serve_asgi(api.app, quiet_exceptions=(DroppedConnection,)) as base_url:
        api.base_url = base_url
        try:
            yield api
            raise_server_errors(api.server_errors)
        finally:
            await api.aclose()
