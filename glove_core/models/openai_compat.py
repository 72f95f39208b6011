"""OpenAICompatModel: any OpenAI-style Chat Completions endpoint over httpx2, without an SDK.

OpenAI, OpenRouter, Ollama, LM Studio, vLLM and similar servers speak this format; point
``base_url`` at them. Tool calls and results, streaming and usage (cached prompt tokens
included) are supported. Providers cache prompt prefixes automatically, so there are no
breakpoints to place: keeping the prefix stable (as the loop does) is what earns cache hits.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
from collections.abc import Callable, Mapping
from typing import Any

import httpx2

from glove_core.abort import AbortSignal
from glove_core.errors import MissingAPIKeyError, ModelConnectionError
from glove_core.models._anthropic_convert import PLACEHOLDER_RESULT, result_text
from glove_core.models._openai_proxy import (
    loaded_text,
    proxied_call,
    tool_definitions,
    unwrap_call,
    uses_proxy,
)
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
from glove_core.types import (
    ContentPart,
    DocumentPart,
    ImagePart,
    Message,
    TextPart,
    ToolCall,
    ToolResult,
    Usage,
)

__all__ = ["OpenAICompatModel", "to_chat_messages"]

logger = logging.getLogger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"
_PROVIDER = "openai-compatible"


def _part(part: ContentPart) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text} if part.text.strip() else None
    if isinstance(part, ImagePart):
        url = part.url if part.data is None else f"data:{part.media_type};base64,{part.data}"
        return {"type": "image_url", "image_url": {"url": url}} if url else None
    return _document(part)


def _document(part: DocumentPart) -> dict[str, Any] | None:
    if part.data is None:
        return {"type": "text", "text": f"[document: {part.url}]"} if part.url else None
    if part.media_type == "application/pdf":
        return {
            "type": "file",
            "file": {
                "filename": part.title or "document.pdf",
                "file_data": f"data:{part.media_type};base64,{part.data}",
            },
        }
    try:
        text = base64.b64decode(part.data, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        text = part.data
    title = f"{part.title}\n" if part.title else ""
    return {"type": "text", "text": f"{title}{text}"}


def _user_content(message: Message) -> str | list[dict[str, Any]] | None:
    if not message.content:
        return message.text if message.text.strip() else None
    parts = [p for p in (_part(c) for c in message.content) if p is not None]
    part_text = "\n".join(c.text for c in message.content if isinstance(c, TextPart))
    if message.text.strip() and message.text != part_text:
        parts.insert(0, {"type": "text", "text": message.text})
    return parts or None


def to_chat_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """Convert a ModelRequest to Chat Completions messages the API accepts.

    Every tool call is answered by a ``tool`` message before anything else follows (a
    placeholder when no result was recorded); duplicate results are dropped; a result that
    answers no open call becomes user text; media a tool returned follows as a user message.
    """
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    open_ids: dict[str, str] = {}
    answered: set[str] = set()

    def close_open_calls() -> None:
        for call_id in list(open_ids):
            out.append({"role": "tool", "tool_call_id": call_id, "content": PLACEHOLDER_RESULT})
            answered.add(call_id)
        open_ids.clear()

    for message in request.messages:
        if message.sender == "agent":
            close_open_calls()
            entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    proxied_call(c, request.deferred_tools) for c in message.tool_calls
                ]
                open_ids = {c.id: c.name for c in message.tool_calls}
            if entry["content"] is not None or message.tool_calls:
                out.append(entry)
            continue
        media, orphans = _add_results(out, message.tool_results or [], open_ids, answered, request)
        content = _user_content(message)
        if media or orphans or content is not None:
            close_open_calls()
        if media:
            out.append({"role": "user", "content": media})
        for text in orphans:
            out.append({"role": "user", "content": text})
        if content is not None:
            out.append({"role": "user", "content": content})
    close_open_calls()
    return out


def _add_results(
    out: list[dict[str, Any]],
    results: list[ToolResult],
    open_ids: dict[str, str],
    answered: set[str],
    request: ModelRequest,
) -> tuple[list[dict[str, Any]], list[str]]:
    media: list[dict[str, Any]] = []
    orphans: list[str] = []
    for result in results:
        if result.call_id in answered:
            continue
        answered.add(result.call_id)
        text = result_text(result.result)
        if result.call_id not in open_ids:
            orphans.append(f"[result of tool {result.name} ({result.call_id})] {text}")
            continue
        del open_ids[result.call_id]
        if result.result.tool_references:
            text += loaded_text(request, result.result)
        parts = [p for p in (_part(c) for c in result.result.content or []) if p is not None]
        if parts:
            # Tool messages carry text only on most servers; the media follows as user content.
            text = f"{text}\n(the tool also returned {len(parts)} attachment(s), sent next)"
            media.append({"type": "text", "text": f"Attachments returned by {result.name}:"})
            media.extend(parts)
        out.append(
            {"role": "tool", "tool_call_id": result.call_id, "content": text or "(no output)"}
        )
    return media, orphans


_Unwrap = Callable[[ToolCall], ToolCall]


def _as_called(call: ToolCall) -> ToolCall:
    return call


def _parse_arguments(raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        # The tool's input validation turns this into an error result the model can fix.
        return {"_unparsed_arguments": raw}
    return value if isinstance(value, dict) else {"_value": value}


def _usage(raw: Mapping[str, Any] | None) -> Usage:
    if not raw:
        return Usage()
    details = raw.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0)
    prompt = int(raw.get("prompt_tokens") or 0)
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=int(raw.get("completion_tokens") or 0),
        cache_read_tokens=cached,
    )


class OpenAICompatModel(AsyncResource):
    """A ModelAdapter for OpenAI-style Chat Completions endpoints.

    Args:
        model: the model id the server knows.
        api_key: bearer token; ``OPENAI_API_KEY`` (or ``api_key_env``) when omitted. Required
            only for the default OpenAI ``base_url``; local servers often need none.
        base_url: the API root ending in ``/v1``.
        max_tokens: the most tokens one reply may have (None: the server's default); a
            request's ``max_tokens`` may lower it.
        stream: stream replies over SSE or make one JSON call.
        client: a shared ``httpx2.AsyncClient``; never closed by this adapter.
        api_key_env: the environment variable read when ``api_key`` is omitted.
        retry: how 429/5xx and dropped connections are retried.
        timeout: seconds for one HTTP call when this adapter builds its own client.

    Raises:
        MissingAPIKeyError: the default OpenAI ``base_url`` with no key anywhere.
    """

    def __init__(
        self,
        model: str,
        api_key: str | None = None,
        base_url: str = OPENAI_BASE_URL,
        max_tokens: int | None = None,
        stream: bool = True,
        client: httpx2.AsyncClient | None = None,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        retry: RetryPolicy | None = None,
        timeout: float = 600.0,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.max_tokens = max_tokens
        self.stream = stream
        self.retry = retry if retry is not None else RetryPolicy()
        key = api_key or os.environ.get(api_key_env)
        if not key and self.base_url == OPENAI_BASE_URL:
            raise MissingAPIKeyError(_PROVIDER, api_key_env)
        self._headers = {"authorization": f"Bearer {key}"} if key else {}
        self._owns_client = client is None
        self._client = client if client is not None else httpx2.AsyncClient(timeout=timeout)

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    async def aclose(self) -> None:
        """Close the HTTP client if this adapter built it."""
        if self._owns_client:
            self._owns_client = False
            await self._client.aclose()

    async def prompt(
        self, request: ModelRequest, notify: Notify, signal: AbortSignal | None = None
    ) -> ModelResponse:
        """Make one call, retrying transient failures.

        Raises:
            AbortError: ``signal`` fired; the HTTP stream is closed.
            ContextWindowExceededError: the prompt is over the model's context window.
            ModelAPIError (and subclasses): the server answered with an error.
            ModelConnectionError: the connection failed or dropped on every attempt.
        """
        work = self._prompt(request, notify)
        if signal is not None:
            return await signal.race(work)
        return await work

    async def _prompt(self, request: ModelRequest, notify: Notify) -> ModelResponse:
        body: dict[str, Any] = {"model": self.model, "messages": to_chat_messages(request)}
        tools = tool_definitions(request)
        if tools:
            body["tools"] = tools
        if self.max_tokens is not None:
            body["max_tokens"] = request.reply_limit(self.max_tokens)
        elif request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if self.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        # Only a request that offers the stand-in has calls of it to unwrap: without joining
        # tools, a tool of the application's own named glove_call_tool is just that tool.
        unwrap = unwrap_call if uses_proxy(request) else _as_called

        async def attempt(number: int) -> ModelResponse:
            try:
                if self.stream:
                    return await self._call_stream(body, notify, number, unwrap)
                return await self._call_json(body, notify, number, unwrap)
            except httpx2.TransportError as exc:
                detail = str(exc) or type(exc).__name__
                raise TryAgain(ModelConnectionError(_PROVIDER, detail, number)) from exc

        return await with_retries(self.retry, self.name, attempt)

    async def _raise_for_status(self, response: httpx2.Response, attempt: int) -> None:
        if response.status_code < 400:
            return
        await response.aread()
        try:
            error = response.json().get("error") or {}
        except ValueError:
            error = {}
        if not isinstance(error, dict):
            error = {"message": str(error)}
        message = str(error.get("message") or response.text or "no message")
        typed = status_error(
            _PROVIDER,
            response.status_code,
            message,
            headers=response.headers,
            attempt=attempt,
            code=str(error.get("code") or ""),
        )
        if is_retryable(response.status_code):
            raise TryAgain(typed, typed.retry_after)
        raise typed

    async def _call_json(
        self, body: dict[str, Any], notify: Notify, attempt: int, unwrap: _Unwrap
    ) -> ModelResponse:
        url = f"{self.base_url}/chat/completions"
        response = await self._client.post(url, json=body, headers=self._headers)
        await self._raise_for_status(response, attempt)
        data = response.json()
        choice = (data.get("choices") or [{}])[0]
        raw = choice.get("message") or {}
        calls = [
            unwrap(
                ToolCall(
                    id=c["id"],
                    name=c["function"]["name"],
                    input=_parse_arguments(c["function"].get("arguments") or ""),
                )
            )
            for c in raw.get("tool_calls") or []
        ]
        message = Message(sender="agent", text=raw.get("content") or "", tool_calls=calls or None)
        result = ModelResponse(message, _usage(data.get("usage")), choice.get("finish_reason"))
        return await announce(notify, result, streamed=False)

    async def _call_stream(
        self, body: dict[str, Any], notify: Notify, attempt: int, unwrap: _Unwrap
    ) -> ModelResponse:
        url = f"{self.base_url}/chat/completions"
        texts: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        usage: Mapping[str, Any] | None = None
        finish: str | None = None
        async with self._client.stream("POST", url, json=body, headers=self._headers) as response:
            await self._raise_for_status(response, attempt)
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                payload = line[5:].strip()
                if payload == "[DONE]":
                    break
                chunk = json.loads(payload)
                usage = chunk.get("usage") or usage
                for choice in chunk.get("choices") or []:
                    delta = choice.get("delta") or {}
                    finish = choice.get("finish_reason") or finish
                    if delta.get("content"):
                        texts.append(delta["content"])
                        await notify(TextDelta(delta["content"]))
                    for piece in delta.get("tool_calls") or []:
                        call = calls.setdefault(
                            int(piece.get("index", 0)), {"id": "", "name": "", "arguments": ""}
                        )
                        function = piece.get("function") or {}
                        call["id"] = piece.get("id") or call["id"]
                        call["name"] += function.get("name") or ""
                        call["arguments"] += function.get("arguments") or ""
            else:
                raise httpx2.RemoteProtocolError("the stream ended before data: [DONE]")
        tool_calls = [
            unwrap(ToolCall(id=c["id"], name=c["name"], input=_parse_arguments(c["arguments"])))
            for _, c in sorted(calls.items())
        ]
        for done in tool_calls:
            await notify(ToolUse(done.id, done.name, dict(done.input)))
        message = Message(sender="agent", text="".join(texts), tool_calls=tool_calls or None)
        return await announce(notify, ModelResponse(message, _usage(usage), finish), streamed=True)

    def __repr__(self) -> str:
        return f"OpenAICompatModel(model={self.model!r}, base_url={self.base_url!r})"
