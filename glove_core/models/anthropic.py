"""AnthropicModel: the Messages API through the ``anthropic`` SDK, with prompt caching.

What it adds to the SDK: conversion of glove messages (always a request the API accepts), cache
breakpoints placed so the prefix only grows between calls, streaming events for subscribers,
retries that honour ``retry-after`` and stop on abort, typed errors, and a cache-health check
that reports a collapsed cache as a ``cache_collapse`` event.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable
from typing import Any, Literal

import anthropic
import httpx2

from glove_core.abort import AbortSignal
from glove_core.errors import MissingAPIKeyError, ModelAPIError, ModelConnectionError
from glove_core.models._anthropic_convert import AnthropicParams, build_params, message_from_blocks
from glove_core.models._cache_health import CacheHealth, conversation_key
from glove_core.models.base import ModelRequest, ModelResponse, announce
from glove_core.models.retry import (
    RetryPolicy,
    TryAgain,
    is_retryable,
    status_error,
    with_retries,
)
from glove_core.resources import AsyncResource
from glove_core.subscribers import (
    Notify,
    TextDelta,
    ToolUse,
)
from glove_core.types import Usage

__all__ = ["AnthropicModel", "CacheTTL"]

logger = logging.getLogger(__name__)

CacheTTL = Literal["5m", "1h"]
_TTL_SECONDS: dict[str, float] = {"5m": 300.0, "1h": 3600.0}
_PROVIDER = "anthropic"
_MAX_TRACKED = 1000
# Status the API uses inside an SSE ``error`` event, by error type.
_STREAM_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


class AnthropicModel(AsyncResource):
    """A ModelAdapter for Anthropic's Messages API.

    Args:
        model: the model id, e.g. ``claude-sonnet-4-5``.
        api_key: the API key; ``ANTHROPIC_API_KEY`` from the environment when omitted.
        base_url: another endpoint (a proxy, or a fake in tests).
        max_tokens: the most tokens one reply may have (a request's ``max_tokens`` may lower it).
        stream: stream replies (``text_delta`` events as text arrives) or make one JSON call.
        cache: place prompt-cache breakpoints (tools, system, history) on every request.
        client: a configured ``anthropic.AsyncAnthropic`` to use instead of building one; it is
            never closed by this adapter.
        cache_ttl: the cache entry lifetime, ``"5m"`` or ``"1h"``.
        retry: how 429/529/5xx and dropped connections are retried.
        clock: seconds, monotonic; the cache-health check measures idle time with it.
        defer_tools: declare tools that joined mid-conversation (``ModelRequest.deferred_tools``)
            with ``defer_loading`` and load them with ``tool_reference`` blocks, so they cost no
            cache. False sends them as ordinary tools (for a gateway that refuses either field;
            each joining tool then rewrites the cached prefix).

    Raises:
        MissingAPIKeyError: no ``api_key``, no ``client`` and no ``ANTHROPIC_API_KEY``.

    A stream that drops mid-reply is sent again from the start, so subscribers may see the
    ``text_delta`` events of a reply's beginning twice; only the completed reply is returned.
    """

    def __init__(
        self,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 8192,
        stream: bool = True,
        cache: bool = True,
        client: anthropic.AsyncAnthropic | None = None,
        *,
        cache_ttl: CacheTTL = "5m",
        retry: RetryPolicy | None = None,
        clock: Callable[[], float] = time.monotonic,
        defer_tools: bool = True,
    ) -> None:
        if cache_ttl not in _TTL_SECONDS:
            raise ValueError(f"cache_ttl must be '5m' or '1h', got {cache_ttl!r}")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        self.model = model
        self.max_tokens = max_tokens
        self.stream = stream
        self.cache = cache
        self.cache_ttl: CacheTTL = cache_ttl
        self.retry = retry if retry is not None else RetryPolicy()
        self.defer_tools = defer_tools
        self._clock = clock
        self._health = CacheHealth(ttl_seconds=_TTL_SECONDS[cache_ttl])
        # Per conversation: where the previous call's last-saved breakpoint sat.
        self._anchors: dict[str, int] = {}
        if client is not None:
            # Retries are ours (they honour abort and report typed errors), so the SDK's are off.
            self._client = client.with_options(max_retries=0)
            self._owns_client = False
        else:
            key = api_key or os.environ.get("ANTHROPIC_API_KEY")
            if not key:
                raise MissingAPIKeyError(_PROVIDER, "ANTHROPIC_API_KEY")
            self._client = anthropic.AsyncAnthropic(api_key=key, base_url=base_url, max_retries=0)
            self._owns_client = True

    @property
    def name(self) -> str:
        return f"{_PROVIDER}:{self.model}"

    async def aclose(self) -> None:
        """Close the HTTP client if this adapter built it (a passed ``client`` stays open)."""
        if self._owns_client:
            self._owns_client = False
            await self._client.close()

    def build_params(self, request: ModelRequest) -> AnthropicParams:
        """The system, tools and messages this adapter would send for ``request``."""
        request = self._as_sent(request)
        anchor = self._anchors.get(conversation_key(request))
        return build_params(request, self.cache_ttl if self.cache else None, anchor)

    def _as_sent(self, request: ModelRequest) -> ModelRequest:
        if self.defer_tools or not request.deferred_tools:
            return request
        return dataclasses.replace(request, deferred_tools=frozenset())

    async def prompt(
        self, request: ModelRequest, notify: Notify, signal: AbortSignal | None = None
    ) -> ModelResponse:
        """Make one call, retrying transient failures.

        Raises:
            AbortError: ``signal`` fired; the HTTP stream is closed.
            ContextWindowExceededError: the prompt is over the model's context window.
            ModelBadRequestError: the API refused the request (its message included).
            ModelRateLimitError, ModelOverloadedError, ModelServerError: still failing after
                the retries.
            ModelConnectionError: the connection failed or dropped on every attempt.
        """
        work = self._prompt(request, notify, signal)
        if signal is not None:
            return await signal.race(work)
        return await work

    async def _prompt(
        self, request: ModelRequest, notify: Notify, signal: AbortSignal | None
    ) -> ModelResponse:
        # What the cache-health check compares is what was sent.
        request = self._as_sent(request)
        params = self.build_params(request)
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.reply_limit(self.max_tokens),
            "messages": params.messages,
        }
        if params.system:
            kwargs["system"] = params.system
        if params.tools:
            kwargs["tools"] = params.tools

        async def attempt(number: int) -> ModelResponse:
            try:
                if self.stream:
                    return await self._call_stream(kwargs, notify)
                return await self._call_json(kwargs, notify)
            except anthropic.APIStatusError as exc:
                error = _typed_error(exc, number)
                if not is_retryable(error.status_code):
                    raise error from exc
                raise TryAgain(error, error.retry_after) from exc
            except (anthropic.APIConnectionError, httpx2.TransportError) as exc:
                raise TryAgain(ModelConnectionError(_PROVIDER, _describe(exc), number)) from exc

        response = await with_retries(
            self.retry, self.name, attempt, signal.throw_if_aborted if signal else None
        )
        if self.cache:
            key = conversation_key(request)
            if params.saved_position is not None:
                self._anchors.pop(key, None)
                self._anchors[key] = params.saved_position
                if len(self._anchors) > _MAX_TRACKED:
                    # A long-lived server sees many conversations; forget the idlest.
                    del self._anchors[next(iter(self._anchors))]
            collapse = self._health.observe(self.name, request, response.usage, self._clock())
            if collapse is not None:
                await notify(collapse)
        return response

    async def _call_stream(self, kwargs: dict[str, Any], notify: Notify) -> ModelResponse:
        async with self._client.messages.stream(**kwargs) as stream:
            async for event in stream:
                if event.type == "text":
                    if event.text:
                        await notify(TextDelta(event.text))
                elif event.type == "content_block_stop":
                    block = event.content_block
                    if block.type == "tool_use":
                        payload = block.input if isinstance(block.input, dict) else {}
                        await notify(ToolUse(block.id, block.name, dict(payload)))
            final = await stream.get_final_message()
        return await announce(notify, _response(final), streamed=True)

    async def _call_json(self, kwargs: dict[str, Any], notify: Notify) -> ModelResponse:
        final = await self._client.messages.create(**kwargs)
        return await announce(notify, _response(final), streamed=False)

    def __repr__(self) -> str:
        return (
            f"AnthropicModel(model={self.model!r}, stream={self.stream}, cache={self.cache}, "
            f"cache_ttl={self.cache_ttl!r}, defer_tools={self.defer_tools})"
        )


def _response(final: Any) -> ModelResponse:
    usage = final.usage
    return ModelResponse(
        message=message_from_blocks(list(final.content)),
        usage=Usage(
            input_tokens=usage.input_tokens or 0,
            output_tokens=usage.output_tokens or 0,
            cache_read_tokens=usage.cache_read_input_tokens or 0,
            cache_write_tokens=usage.cache_creation_input_tokens or 0,
        ),
        stop_reason=final.stop_reason,
    )


def _describe(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    text = str(exc) or type(exc).__name__
    if cause is not None and str(cause) and str(cause) not in text:
        text = f"{text} {cause}"
    return text


def _typed_error(exc: anthropic.APIStatusError, attempt: int) -> ModelAPIError:
    body: dict[str, Any] = exc.body if isinstance(exc.body, dict) else {}
    raw_error = body.get("error")
    error: dict[str, Any] = raw_error if isinstance(raw_error, dict) else {}
    message = getattr(exc, "api_message", None) or error.get("message") or exc.message
    status = exc.status_code
    if status == 200:
        # An ``error`` event inside an SSE stream arrives on a 200 response.
        status = _STREAM_ERROR_STATUS.get(str(error.get("type")), 500)
    return status_error(
        _PROVIDER, status, str(message), headers=exc.response.headers, attempt=attempt
    )
