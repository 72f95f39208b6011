"""A fake OpenAI Chat Completions endpoint (JSON and SSE) for the OpenAI-compatible adapter.

Scripted the same way as the fake Messages API. It imitates automatic prefix caching the way
OpenAI reports it: ``usage.prompt_tokens_details.cached_tokens`` is the longest prefix (in
128-token steps, from 1,024 tokens) that an earlier request already sent.
"""

from __future__ import annotations

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

from glove_core.testing._fake_base import DroppedConnection, FakeAPIBase
from glove_core.testing._prompt_cache import FlatBlock, estimate_tokens, prefix_hashes
from glove_core.testing._script import (
    FakeDrop,
    FakeError,
    FakeReply,
    FakeStall,
    FakeToolUse,
    as_reply,
)
from glove_core.testing._server import raise_server_errors, serve_asgi

__all__ = ["FakeOpenAIAPI", "serve_fake_openai"]

_MIN_CACHED = 1024
_CACHE_STEP = 128


@dataclass
class FakeOpenAIAPI(FakeAPIBase):
    """State and Starlette app of the fake Chat Completions endpoint.

    Args:
        default_reply: the answer when the script is empty and no ``responder`` is set.
        responder: builds an answer from the request body when the script is empty.
        context_window: requests estimated above this many tokens get a
            ``context_length_exceeded`` 400.
        chunk_chars: the size of streamed text and argument pieces.
    """

    context_window: int = 128_000
    chunk_chars: int = 12
    _seen_prefixes: set[str] = field(default_factory=set, init=False, repr=False)

    def __post_init__(self) -> None:
        self.app = Starlette(
            routes=[Route("/v1/chat/completions", self._completions, methods=["POST"])]
        )

    async def _completions(self, request: Request) -> Response:
        return await self._guarded(self._handle, request)

    async def _handle(self, request: Request) -> Response:
        record, body = await self._record(request)
        problem = _validate(body)
        blocks = _flatten(body) if problem is None else []
        total = sum(b.tokens for b in blocks)
        if problem is None and total > self.context_window:
            problem = (
                f"This model's maximum context length is {self.context_window} tokens. However, "
                f"your messages resulted in {total} tokens."
            )
            code = "context_length_exceeded"
        else:
            code = None
        if problem is not None:
            record.status, record.outcome = 400, "invalid"
            return _error(FakeError(400, problem, error_type="invalid_request_error"), code)
        item = self._next_item(body)
        if isinstance(item, FakeError):
            record.status, record.outcome = item.status, "error"
            return _error(item, None)
        if isinstance(item, FakeStall):
            raise TypeError("FakeStall is only supported by the fake Messages API")
        cached = self._cache(str(body["model"]), blocks)
        reply = as_reply(item.reply if isinstance(item, FakeDrop) else item)
        completion = self._completion(body, reply, total, cached)
        record.usage = completion["usage"]
        if isinstance(item, FakeDrop):
            record.outcome = "drop"
            if not body.get("stream"):
                return StreamingResponse(_half_body(completion), media_type="application/json")
            return self._sse(self._chunks(body, completion)[: item.after_events], drop=True)
        if body.get("stream"):
            return self._sse(self._chunks(body, completion), drop=False)
        return JSONResponse(completion)

    def _cache(self, model: str, blocks: list[FlatBlock]) -> int:
        hashes = prefix_hashes(model, blocks)
        cached = 0
        running = 0
        for block, digest in zip(blocks, hashes, strict=True):
            running += block.tokens
            if digest in self._seen_prefixes:
                cached = running
            if running >= _MIN_CACHED:
                self._seen_prefixes.add(digest)
        return (cached // _CACHE_STEP) * _CACHE_STEP if cached >= _MIN_CACHED else 0

    def _completion(
        self, body: dict[str, Any], reply: FakeReply, prompt: int, cached: int
    ) -> dict[str, Any]:
        text = "".join(b for b in reply.blocks if isinstance(b, str))
        calls = [
            {
                "id": b.id or self._new_id("call_"),
                "type": "function",
                "function": {"name": b.name, "arguments": json.dumps(b.input)},
            }
            for b in reply.blocks
            if isinstance(b, FakeToolUse)
        ]
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = calls
        completion_tokens = max(1, estimate_tokens(text) + sum(estimate_tokens(c) for c in calls))
        return {
            "id": self._new_id("chatcmpl-"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if calls else "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        }

    def _chunks(self, body: dict[str, Any], completion: dict[str, Any]) -> list[dict[str, Any]]:
        base = {k: completion[k] for k in ("id", "created", "model")}
        base["object"] = "chat.completion.chunk"
        choice = completion["choices"][0]
        size = max(1, self.chunk_chars)

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        chunks = [chunk({"role": "assistant", "content": ""})]
        text = choice["message"]["content"] or ""
        chunks.extend(chunk({"content": text[i : i + size]}) for i in range(0, len(text), size))
        for index, call in enumerate(choice["message"].get("tool_calls") or []):
            head = {"index": index, "id": call["id"], "type": "function"}
            chunks.append(
                chunk({"tool_calls": [{**head, "function": {"name": call["function"]["name"]}}]})
            )
            args = call["function"]["arguments"]
            pieces = [args[i : i + size] for i in range(0, len(args), size)]
            chunks.extend(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                for piece in pieces
            )
        chunks.append(chunk({}, choice["finish_reason"]))
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append({**base, "choices": [], "usage": completion["usage"]})
        return chunks

    def _sse(self, chunks: list[dict[str, Any]], *, drop: bool) -> StreamingResponse:
        async def frames() -> AsyncIterator[bytes]:
            for item in chunks:
                yield f"data: {json.dumps(item)}\n\n".encode()
            if drop:
                raise DroppedConnection()
            yield b"data: [DONE]\n\n"

        return StreamingResponse(frames(), media_type="text/event-stream")


async def _half_body(completion: dict[str, Any]) -> AsyncIterator[bytes]:
    # Raising before the response starts would only become a clean 500.
    raw = json.dumps(completion).encode()
    yield raw[: len(raw) // 2]
    raise DroppedConnection()


def _flatten(body: dict[str, Any]) -> list[FlatBlock]:
    blocks: list[FlatBlock] = []
    for item in [*(body.get("tools") or []), *(body.get("messages") or [])]:
        canonical = json.dumps(item, sort_keys=True, ensure_ascii=False)
        blocks.append(FlatBlock(canonical, max(1, len(canonical) // 4), None))
    return blocks


def _validate(body: Any) -> str | None:
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must contain at least one message"
    open_calls: list[str] = []
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("system", "developer", "user", "assistant", "tool"):
            return f"Invalid value for 'messages[{i}].role'"
        if role == "tool":
            if message.get("tool_call_id") not in open_calls:
                return (
                    f"Invalid parameter: messages with role 'tool' must be a response to a "
                    f"preceding message with 'tool_calls' (messages[{i}])."
                )
            open_calls.remove(message["tool_call_id"])
            continue
        if open_calls:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                f"responding to each 'tool_call_id'. Missing: {', '.join(open_calls)}"
            )
        if role == "assistant":
            open_calls = [c["id"] for c in message.get("tool_calls") or []]
            if message.get("content") is None and not open_calls:
                return f"messages[{i}]: an assistant message needs content or tool_calls"
        elif message.get("content") in (None, "", []):
            return f"messages[{i}].content: must be a non-empty string or list of parts"
    if open_calls:
        return f"Missing tool messages for tool_call_id(s): {', '.join(open_calls)}"
    return None


def _error(error: FakeError, code: str | None) -> JSONResponse:
    kind = error.error_type or ("rate_limit_error" if error.status == 429 else "server_error")
    headers = {}
    if error.retry_after is not None:
        headers["retry-after"] = f"{error.retry_after:g}"
    payload = {
        "error": {
            "message": error.message or f"fake API error {error.status}",
            "type": kind,
            "param": None,
            "code": code,
        }
    }
    return JSONResponse(payload, status_code=error.status, headers=headers)


@contextlib.asynccontextmanager
async def serve_fake_openai(
    fake: FakeOpenAIAPI | None = None, **options: Any
) -> AsyncIterator[FakeOpenAIAPI]:
    """Serve a fake Chat Completions endpoint on 127.0.0.1 for the duration of the block.

    Yields:
        The fake, with ``base_url`` set to ``http://127.0.0.1:PORT/v1``.
    """
    api = fake if fake is not None else FakeOpenAIAPI(**options)
    async with serve_asgi(api.app, quiet_exceptions=(DroppedConnection,)) as base_url:
        api.base_url = f"{base_url}/v1"
        yield api
        raise_server_errors(api.server_errors)
