"""Issue 16, item 8: ``render_data`` is client-only, yet every ``ModelRequest`` a custom model
adapter received still carried it (only the shipped adapters dropped it). Now it is taken out
of the request itself, whoever builds it; the store and the subscribers keep it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glove_core import (
    Glove,
    Message,
    ModelRequest,
    SqliteStore,
    Tool,
    ToolCall,
    ToolContext,
    ToolResultData,
)
from glove_core.abort import AbortSignal
from glove_core.models.base import ModelResponse
from glove_core.subscribers import Notify, ToolUseResult
from glove_core.testing import RecordingSubscriber

_SECRET_UI = {"html": "<b>for the UI only</b>", "rows": list(range(5))}


class RecordingAdapter:
    """A model adapter of the application's own: calls the tool once per request, then
    answers; keeps every request it was sent."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    @property
    def name(self) -> str:
        return "recording"

    async def prompt(
        self, request: ModelRequest, notify: Notify, signal: AbortSignal | None = None
    ) -> ModelResponse:
        self.requests.append(request)
        last = request.messages[-1]
        if last.tool_results:
            return ModelResponse(Message(sender="agent", text="done"))
        call = ToolCall(id=f"c{len(self.requests)}", name="report", input={})
        return ModelResponse(Message(sender="agent", tool_calls=[call]))


def _report(input: dict[str, Any], ctx: ToolContext) -> ToolResultData:
    return ToolResultData(data="3 rows", render_data=_SECRET_UI)


async def test_a_custom_adapter_never_sees_render_data(tmp_path: Path) -> None:
    adapter = RecordingAdapter()
    store = SqliteStore(tmp_path / "conv.db", "c1")
    recorder = RecordingSubscriber()
    glove = Glove(model=adapter, system_prompt="test", store=store, server_mode=True)
    glove.fold(Tool(name="report", description="Report.", do=_report))
    glove.add_subscriber(recorder)
    glove.build()
    await glove.process_request("first")
    await glove.process_request("second")  # replays the first request's result from the store

    sent = [m for request in adapter.requests for m in request.messages]
    seen = [r for m in sent for r in m.tool_results or []]
    assert len(seen) >= 3  # the second request replays the first one's result
    assert all(r.result.render_data is None for r in seen)
    assert all(r.result.data == "3 rows" for r in seen)
    assert "for the UI only" not in repr(adapter.requests)

    # The store and the subscribers still have it.
    saved = [r for m in await store.get_messages() for r in m.tool_results or []]
    assert [r.result.render_data for r in saved] == [_SECRET_UI, _SECRET_UI]
    assert [e.result.render_data for e in recorder.of(ToolUseResult)] == [_SECRET_UI, _SECRET_UI]


def test_a_request_built_by_hand_is_stripped_too() -> None:
    from glove_core import ToolResult

    with_ui = Message(
        sender="user",
        tool_results=[ToolResult(call_id="c", name="t", result=ToolResultData(render_data=[1]))],
    )
    plain = Message(sender="user", text="hi")
    request = ModelRequest(system="s", tools=[], messages=[plain, with_ui])
    assert request.messages[0] is plain  # untouched messages are not copied
    assert request.messages[1].tool_results is not None
    assert request.messages[1].tool_results[0].result.render_data is None
    assert with_ui.tool_results is not None and with_ui.tool_results[0].result.render_data == [1]
