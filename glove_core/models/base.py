"""The model adapter protocol and the request/response records it exchanges with the loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from glove_core.abort import AbortSignal
from glove_core.subscribers import ModelResponseCompleteEvent, ModelResponseEvent, Notify
from glove_core.tools import ToolSpec
from glove_core.types import Message, Usage

__all__ = [
    "ModelAdapter",
    "ModelRequest",
    "ModelResponse",
    "RenderFreeMessages",
    "without_render_data",
]


class RenderFreeMessages(list[Message]):
    """A list of messages its maker has already taken ``render_data`` out of (the loop keeps
    each message's model view per request): ``ModelRequest`` trusts it instead of checking
    every tool result of every message again at each model call."""


def without_render_data(messages: list[Message]) -> list[Message]:
    """``messages`` with every tool result's ``render_data`` taken out (client-only data by
    contract); the same list when none has any, and the same message objects where they had
    none."""
    if type(messages) is RenderFreeMessages:
        return messages
    if not _any_render_data(messages):
        return messages
    stripped: list[Message] = []
    for message in messages:
        results = message.tool_results
        if results and any(r.result.render_data is not None for r in results):
            clean = [
                r.model_copy(update={"result": r.result.model_copy(update={"render_data": None})})
                if r.result.render_data is not None
                else r
                for r in results
            ]
            message = message.model_copy(update={"tool_results": clean})
        stripped.append(message)
    return stripped


def _any_render_data(messages: list[Message]) -> bool:
    # Plain loops: this runs over the whole history once per request.
    for message in messages:
        results = message.tool_results
        if results:
            for result in results:
                if result.result.render_data is not None:
                    return True
    return False


@dataclass
class ModelRequest:
    """Everything one model call sends.

    ``messages`` are in order: saved history first, then transient messages (runtime context
    that is never saved). ``saved_count`` is how many leading messages are saved history; a
    caching adapter places its conversation breakpoint on the last of those, never on a
    transient one.

    ``request_context_index``, when set, is the index in ``messages`` where this request's
    request-frozen context starts (the context rendered once per request, placed just before
    the request's message). Everything before it is history shared with earlier requests, so a
    caching adapter puts a breakpoint on the block just before it: the next request, whose
    request context differs, still reads that history from the cache. None when the request
    has no request-frozen context.

    ``conversation_id`` names the conversation (e.g. the store's identifier) so an adapter that
    tracks cache health per conversation keeps separate conversations — and subagents sharing
    one adapter — apart. None means "key by the system prompt".

    ``max_tokens``, when set, limits this one reply (e.g. a token cap on an MCP server's
    sampling request). The adapter's own limit still applies: the smaller of the two wins.
    None means the adapter's limit alone.

    ``summarized`` counts the saved messages whose tool results are sent as summaries
    (``glove_core.result_summaries``): when it grows, the prefix was rewritten on purpose, once
    per user turn, and a caching adapter does not report it as an unexpected cache collapse.

    Tool results in ``messages`` never carry ``render_data``: it is data for the application's
    UI, so it is taken out here, whoever builds the request, before any adapter sees it (the
    store and subscribers keep it).

    ``deferred_tools`` names tools among ``tools`` that joined mid-conversation and are loaded
    by ``tool_references`` of results in ``messages``: an adapter that can keeps them out of the
    cached prefix (Anthropic's ``defer_loading``), so their arrival costs no cache.
    ``tools_may_join`` says a tool source may add tools mid-conversation, so an adapter without
    deferral can keep a stable stand-in in its tool list from the first call.
    """

    system: str
    tools: list[ToolSpec]
    messages: list[Message]
    saved_count: int = -1
    request_context_index: int | None = None
    conversation_id: str | None = None
    max_tokens: int | None = None
    summarized: int = 0
    deferred_tools: frozenset[str] = frozenset()
    tools_may_join: bool = False

    def reply_limit(self, own: int) -> int:
        """The reply's token cap for an adapter whose own cap is ``own``: the smaller of that
        and this request's ``max_tokens``."""
        return own if self.max_tokens is None else min(own, self.max_tokens)

    def __post_init__(self) -> None:
        self.messages = without_render_data(self.messages)
        if self.deferred_tools:
            unknown = self.deferred_tools - {t.name for t in self.tools}
            if unknown:
                raise ValueError(
                    f"deferred_tools must name tools of the request; not among its tools: "
                    f"{', '.join(sorted(unknown))}"
                )
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1 (or None), got {self.max_tokens}")
        if self.summarized < 0:
            raise ValueError(f"summarized must be 0 or more, got {self.summarized}")
        if self.saved_count < 0:
            self.saved_count = len(self.messages)
        if self.request_context_index is not None and not (
            0 <= self.request_context_index <= self.saved_count
        ):
            raise ValueError(
                f"request_context_index must be between 0 and saved_count={self.saved_count} "
                f"(request context sits among the saved prefix), got {self.request_context_index}"
            )


@dataclass
class ModelResponse:
    """One reply: an agent message (text and/or tool calls) and its token usage."""

    message: Message
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None


async def announce(notify: Notify, response: ModelResponse, *, streamed: bool) -> ModelResponse:
    """Tell subscribers a reply is whole (``model_response_complete`` after a stream,
    ``model_response`` otherwise) and return it."""
    message = response.message
    args = (message.text, list(message.tool_calls or []), response.usage, response.stop_reason)
    if streamed:
        await notify(ModelResponseCompleteEvent(*args))
    else:
        await notify(ModelResponseEvent(*args))
    return response


@runtime_checkable
class ModelAdapter(Protocol):
    """Turns a ModelRequest into a reply.

    Adapters report streaming progress through ``notify``: ``text_delta`` as text arrives,
    ``tool_use`` when a tool call is complete, then ``model_response_complete`` (streaming) or
    ``model_response`` (not streaming). They stop promptly when ``signal`` fires.
    """

    @property
    def name(self) -> str:
        """A short name for logs, e.g. ``anthropic:claude-sonnet-4-5``."""
        ...

    async def prompt(
        self, request: ModelRequest, notify: Notify, signal: AbortSignal | None = None
    ) -> ModelResponse:
        """Make one model call."""
        ...
