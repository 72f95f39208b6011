"""The agent loop, driven by ScriptedModel: ordering, tool failures, permissions, abort."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from pydantic import BaseModel

from glove_core import (
    AbortController,
    AbortError,
    DisplayManager,
    Glove,
    MemoryStore,
    Message,
    ModelRequest,
    ScriptedModel,
    Slot,
    SubscriberEvent,
    TextPart,
    Tool,
    ToolCall,
    ToolContext,
    ToolResultData,
    tool,
)
from glove_core.errors import (
    GloveStateError,
    ReentrantRequestError,
    ScriptExhaustedError,
    ToolNameConflictError,
)
from glove_core.testing import RecordingSubscriber
from glove_core.tools import ToolSpec


def app_tools(request: ModelRequest) -> list[str]:
    """Tool names offered, without the built-in ``glove_*`` tools."""
    return [t.name for t in request.tools if not t.name.startswith("glove_")]


def tool_spec(request: ModelRequest, name: str) -> ToolSpec:
    return next(t for t in request.tools if t.name == name)


def call(name: str, call_id: str = "c1", **input: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, input=input)


@tool
async def echo(text: str) -> str:
    """Repeat the text.

    Args:
        text: what to repeat.
    """
    return text


def results_of(message: Message) -> list[ToolResultData]:
    assert message.tool_results is not None
    return [r.result for r in message.tool_results]


async def test_loop_saves_in_order_and_returns_final_text() -> None:
    model = ScriptedModel([[call("echo", text="hi")], "All done."])
    store = MemoryStore("s1")
    recorder = RecordingSubscriber()
    glove = Glove(model=model, system_prompt="sys", store=store).fold(echo).build()
    glove.add_subscriber(recorder)

    result = await glove.process_request("say hi")

    assert result.text == "All done."
    assert result.stop_reason == "end_turn"
    saved = await store.get_messages()
    assert [m.sender for m in saved] == ["user", "agent", "user", "agent"]
    assert saved[0].text == "say hi"
    assert results_of(saved[2]) == [ToolResultData(status="success", data="hi")]
    assert [m.id for m in result.messages] == [m.id for m in saved]
    # The second model call saw the reply and its results.
    assert [m.sender for m in model.requests[1].messages] == ["user", "agent", "user"]
    assert model.requests[0].system == "sys"
    assert app_tools(model.requests[0]) == ["echo"]
    assert result.usage.input_tokens > 0
    assert await store.get_turn_count() == 2
    assert recorder.names() == [
        "tool_use",
        "model_response_complete",
        "token_consumption",
        "tool_use_result",
        "text_delta",
        "model_response_complete",
        "token_consumption",
    ]


async def test_second_request_sees_the_first() -> None:
    model = ScriptedModel(["one", "two"])
    glove = Glove(model=model, system_prompt="s").build()
    await glove.process_request("first")
    await glove.process_request("second")
    texts = [m.text for m in model.requests[1].messages]
    assert texts == ["first", "one", "second"]


async def test_content_parts_request_keeps_parts() -> None:
    model = ScriptedModel(["ok"])
    glove = Glove(model=model, system_prompt="s").build()
    await glove.process_request([TextPart(text="look"), TextPart(text="here")])
    sent = model.requests[0].messages[0]
    assert sent.text == "look\nhere"
    assert sent.content is not None and len(sent.content) == 2


async def test_unknown_tool_lists_close_names_and_available_tools() -> None:
    model = ScriptedModel([[call("ecko", text="x")], "sorry"])
    store = MemoryStore()
    glove = Glove(model=model, system_prompt="s", store=store).fold(echo).build()
    await glove.process_request("go")
    (result,) = results_of((await store.get_messages())[2])
    assert result.status == "error"
    assert result.message is not None
    assert "unknown tool 'ecko'" in result.message
    assert "Did you mean 'echo'" in result.message
    assert "Available tools: echo, glove_post_to_inbox" in result.message


async def test_bad_input_names_the_field_and_lets_the_model_retry() -> None:
    model = ScriptedModel([[call("echo", wrong=1)], [call("echo", "c2", text="fixed")], "done"])
    store = MemoryStore()
    glove = Glove(model=model, system_prompt="s", store=store).fold(echo).build()
    result = await glove.process_request("go")
    saved = await store.get_messages()
    (bad,) = results_of(saved[2])
    assert bad.status == "error"
    assert bad.message is not None
    assert "field 'text'" in bad.message and "field 'wrong'" in bad.message
    assert results_of(saved[4]) == [ToolResultData(data="fixed")]
    assert result.text == "done"


async def test_raw_json_schema_tool_gets_the_dict_unvalidated() -> None:
    seen: list[Any] = []

    async def do(input: Any, ctx: ToolContext) -> str:
        seen.append(input)
        return "ok"

    raw = Tool(name="raw", description="d", do=do, json_schema={"type": "object"})
    model = ScriptedModel([[call("raw", anything=[1, 2])], "done"])
    glove = Glove(model=model, system_prompt="s").fold(raw).build()
    await glove.process_request("go")
    assert seen == [{"anything": [1, 2]}]
    assert tool_spec(model.requests[0], "raw").input_schema == {"type": "object"}


async def test_exceptions_are_retried_then_reported() -> None:
    attempts = 0

    async def flaky(input: Any, ctx: ToolContext) -> str:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise RuntimeError(f"boom {attempts}")
        return "recovered"

    model = ScriptedModel([[call("flaky")], "done"])
    store = MemoryStore()
    glove = Glove(model=model, system_prompt="s", store=store, max_retries=2)
    glove.fold(Tool(name="flaky", description="d", do=flaky)).build()
    await glove.process_request("go")
    assert attempts == 3
    assert results_of((await store.get_messages())[2]) == [ToolResultData(data="recovered")]


async def test_exhausted_retries_become_an_error_result(caplog: pytest.LogCaptureFixture) -> None:
    attempts = 0

    def broken(input: Any, ctx: ToolContext) -> str:
        nonlocal attempts
        attempts += 1
        raise ValueError("disk on fire")

    model = ScriptedModel([[call("broken")], "done"])
    store = MemoryStore()
    glove = Glove(model=model, system_prompt="s", store=store, max_retries=1)
    glove.fold(Tool(name="broken", description="d", do=broken)).build()
    with caplog.at_level(logging.WARNING, logger="glove_core"):
        await glove.process_request("go")
    assert attempts == 2
    (result,) = results_of((await store.get_messages())[2])
    assert result.status == "error"
    assert result.message == "tool 'broken' failed after 2 attempt(s): ValueError: disk on fire"
    assert "giving up" in caplog.text


async def test_render_data_and_plain_values() -> None:
    async def rich(input: Any, ctx: ToolContext) -> ToolResultData:
        return ToolResultData(data="for the model", render_data={"secret": "ui only"})

    model = ScriptedModel([[call("rich")], "done"])
    store = MemoryStore()
    glove = Glove(model=model, system_prompt="s", store=store)
    glove.fold(Tool(name="rich", description="d", do=rich)).build()
    await glove.process_request("go")
    (result,) = results_of((await store.get_messages())[2])
    assert result.data == "for the model"
    assert result.render_data == {"secret": "ui only"}


# --- permissions ---------------------------------------------------------------------------


def auto_answer(display: DisplayManager, answer: Any, asked: list[Slot]) -> None:
    def listener(slots: list[Slot]) -> None:
        for slot in slots:
            if slot.renderer == "permission_request" and slot not in asked:
                asked.append(slot)
                display.resolve(slot.id, answer)

    display.subscribe(listener)


def guarded_tool(runs: list[str]) -> Tool:
    async def do(input: Any, ctx: ToolContext) -> str:
        runs.append(input["path"])
        return "deleted"

    return Tool(
        name="delete",
        description="Delete a file.",
        do=do,
        json_schema={"type": "object", "properties": {"path": {"type": "string"}}},
        requires_permission=True,
    )


async def test_permission_granted_runs_the_tool() -> None:
    runs: list[str] = []
    asked: list[Slot] = []
    model = ScriptedModel([[call("delete", path="/a")], "done"])
    glove = Glove(model=model, system_prompt="s").fold(guarded_tool(runs)).build()
    auto_answer(glove.display_manager, True, asked)
    await glove.process_request("go")
    assert runs == ["/a"]
    assert asked[0].input == {
        "tool": "delete",
        "description": "Delete a file.",
        "input": {"path": "/a"},
    }
    assert asked[0].call_id == "c1"


async def test_permission_denied_is_an_error_result_and_remembered() -> None:
    runs: list[str] = []
    asked: list[Slot] = []
    store = MemoryStore()
    model = ScriptedModel(
        [
            [call("delete", path="/a")],
            [call("delete", "c2", path="/a")],
            [call("delete", "c3", path="/b")],
            "done",
        ]
    )
    glove = Glove(model=model, system_prompt="s", store=store).fold(guarded_tool(runs)).build()
    auto_answer(glove.display_manager, False, asked)
    await glove.process_request("go")
    saved = await store.get_messages()
    first, second = results_of(saved[2])[0], results_of(saved[4])[0]
    assert first.status == "error" and first.message is not None
    assert "denied permission" in first.message
    assert second == first
    # Asked once for /a (the answer was remembered), once for /b (different input).
    assert [s.input["input"] for s in asked] == [{"path": "/a"}, {"path": "/b"}]
    assert runs == []


async def test_permission_remembered_across_gloves_sharing_a_store() -> None:
    runs: list[str] = []
    store = MemoryStore()
    asked: list[Slot] = []
    first = (
        Glove(
            model=ScriptedModel([[call("delete", path="/a")], "ok"]), system_prompt="s", store=store
        )
        .fold(guarded_tool(runs))
        .build()
    )
    auto_answer(first.display_manager, True, asked)
    await first.process_request("go")
    second = (
        Glove(
            model=ScriptedModel([[call("delete", "c9", path="/a")], "ok"]),
            system_prompt="s",
            store=store,
        )
        .fold(guarded_tool(runs))
        .build()
    )
    # No listener answers on the second Glove: the remembered grant must be used.
    await asyncio.wait_for(second.process_request("again"), 5)
    assert runs == ["/a", "/a"]
    assert len(asked) == 1


# --- abort ---------------------------------------------------------------------------------


async def test_abort_mid_tool_aborts_the_rest_but_un_abortable_finishes() -> None:
    started = asyncio.Event()
    release = asyncio.Event()
    finished: list[str] = []

    async def critical(input: Any, ctx: ToolContext) -> str:
        started.set()
        await release.wait()
        finished.append("critical")
        return "committed"

    async def slow(input: Any, ctx: ToolContext) -> str:
        await asyncio.Event().wait()
        return "never"

    store = MemoryStore()
    model = ScriptedModel([[call("critical", "c1"), call("slow", "c2"), call("slow", "c3")]])
    glove = Glove(model=model, system_prompt="s", store=store)
    glove.fold(Tool(name="critical", description="d", do=critical, un_abortable=True))
    glove.fold(Tool(name="slow", description="d", do=slow)).build()
    controller = AbortController()
    task = asyncio.create_task(glove.process_request("go", signal=controller.signal))
    await started.wait()
    controller.abort("user pressed stop")
    release.set()
    with pytest.raises(AbortError, match="user pressed stop"):
        await task
    saved = await store.get_messages()
    results = results_of(saved[-1])
    assert [r.status for r in results] == ["success", "aborted", "aborted"]
    assert results[0].data == "committed"
    assert finished == ["critical"]


async def test_abort_while_a_tool_runs_cancels_it() -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def slow(input: Any, ctx: ToolContext) -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    store = MemoryStore()
    glove = Glove(model=ScriptedModel([[call("slow")]]), system_prompt="s", store=store)
    glove.fold(Tool(name="slow", description="d", do=slow)).build()
    controller = AbortController()
    task = asyncio.create_task(glove.process_request("go", signal=controller.signal))
    await started.wait()
    controller.abort()
    with pytest.raises(AbortError):
        await task
    assert cancelled.is_set()
    (result,) = results_of((await store.get_messages())[-1])
    assert result.status == "aborted"
    assert result.message == "the request was aborted while the tool ran"


async def test_abort_during_model_call_leaves_a_valid_history() -> None:
    store = MemoryStore()
    model_called = asyncio.Event()

    async def never_answers(request: ModelRequest) -> str:
        model_called.set()
        await asyncio.Event().wait()
        return "late reply"

    model = ScriptedModel([never_answers, "next"])
    glove = Glove(model=model, system_prompt="s", store=store).build()
    controller = AbortController()
    task = asyncio.create_task(glove.process_request("go", signal=controller.signal))
    await model_called.wait()
    controller.abort()
    with pytest.raises(AbortError):
        await task
    assert [m.sender for m in await store.get_messages()] == ["user"]
    result = await glove.process_request("again")
    assert result.text == "next"


async def test_cancelled_task_still_answers_every_tool_call() -> None:
    started = asyncio.Event()

    async def slow(input: Any, ctx: ToolContext) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    store = MemoryStore()
    glove = Glove(
        model=ScriptedModel([[call("slow"), call("slow", "c2")]]), system_prompt="s", store=store
    )
    glove.fold(Tool(name="slow", description="d", do=slow)).build()
    task = asyncio.create_task(glove.process_request("go"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    saved = await store.get_messages()
    assert [r.status for r in results_of(saved[-1])] == ["aborted", "aborted"]


async def test_dangling_tool_calls_from_a_crash_are_answered() -> None:
    store = MemoryStore()
    await store.append_messages(
        [
            Message(sender="user", text="before the crash"),
            Message(sender="agent", tool_calls=[call("echo", "lost", text="x")]),
        ]
    )
    model = ScriptedModel(["recovered"])
    glove = Glove(model=model, system_prompt="s", store=store).fold(echo).build()
    result = await glove.process_request("hello again")
    sent = model.requests[0].messages
    assert [m.sender for m in sent] == ["user", "agent", "user", "user"]
    repaired = results_of(sent[2])
    assert repaired[0].status == "aborted"
    assert repaired[0].message is not None and "interrupted" in repaired[0].message
    assert result.messages[0].tool_results is not None


# --- parallel, fold after build, max_turns, misuse -----------------------------------------


async def test_parallel_safe_calls_run_concurrently() -> None:
    running = 0
    peak = 0
    gate = asyncio.Event()

    async def fetch(input: Any, ctx: ToolContext) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        if running == 3:
            gate.set()
        await asyncio.wait_for(gate.wait(), 5)
        running -= 1
        return ctx.call_id

    model = ScriptedModel([[call("fetch", f"c{i}") for i in range(3)], "done"])
    store = MemoryStore()
    glove = Glove(model=model, system_prompt="s", store=store)
    glove.fold(Tool(name="fetch", description="d", do=fetch, parallel_safe=True)).build()
    await glove.process_request("go")
    assert peak == 3
    assert [r.data for r in results_of((await store.get_messages())[2])] == ["c0", "c1", "c2"]


async def test_calls_run_in_order_unless_all_are_parallel_safe() -> None:
    order: list[str] = []
    running = 0
    peak = 0

    def make(name: str, parallel: bool) -> Tool:
        async def do(input: Any, ctx: ToolContext) -> str:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            order.append(f"start {ctx.call_id}")
            await asyncio.sleep(0)
            order.append(f"end {ctx.call_id}")
            running -= 1
            return "ok"

        return Tool(name=name, description="d", do=do, parallel_safe=parallel)

    model = ScriptedModel([[call("a", "c1"), call("b", "c2"), call("a", "c3")], "done"])
    glove = Glove(model=model, system_prompt="s")
    glove.fold(make("a", True)).fold(make("b", False)).build()
    await glove.process_request("go")
    assert peak == 1
    assert order == ["start c1", "end c1", "start c2", "end c2", "start c3", "end c3"]


async def test_tool_folded_mid_request_is_offered_from_the_next_call() -> None:
    async def install(input: Any, ctx: ToolContext) -> str:
        ctx.glove.fold(echo)
        return "installed echo"

    model = ScriptedModel([[call("install")], [call("echo", "c2", text="now")], "done"])
    glove = Glove(model=model, system_prompt="s")
    glove.fold(Tool(name="install", description="d", do=install)).build()
    result = await glove.process_request("go")
    assert app_tools(model.requests[0]) == ["install"]
    assert app_tools(model.requests[1]) == ["install", "echo"]
    assert result.text == "done"


async def test_max_turns_stops_with_a_valid_history() -> None:
    model = ScriptedModel([[call("echo", f"c{i}", text=str(i))] for i in range(5)])
    store = MemoryStore()
    glove = Glove(model=model, system_prompt="s", store=store, max_turns=3).fold(echo).build()
    result = await glove.process_request("loop forever")
    assert result.stop_reason == "max_turns"
    assert len(model.requests) == 3
    saved = await store.get_messages()
    assert saved[-1].tool_results is not None  # every call answered


async def test_reentrant_request_raises_a_clear_error() -> None:
    errors: list[BaseException] = []

    async def nested(input: Any, ctx: ToolContext) -> str:
        try:
            await ctx.glove.process_request("inner")
        except ReentrantRequestError as exc:
            errors.append(exc)
            raise
        return "never"

    model = ScriptedModel([[call("nested")], "done"])
    glove = Glove(model=model, system_prompt="s", max_retries=0)
    glove.fold(Tool(name="nested", description="d", do=nested)).build()
    result = await asyncio.wait_for(glove.process_request("go"), 5)
    assert result.text == "done"
    assert len(errors) == 1
    assert "define_sub_agent" in str(errors[0])


async def test_concurrent_requests_take_turns() -> None:
    model = ScriptedModel(["a", "b"], latency=0.01)
    store = MemoryStore()
    glove = Glove(model=model, system_prompt="s", store=store).build()
    await asyncio.gather(glove.process_request("one"), glove.process_request("two"))
    senders = [m.sender for m in await store.get_messages()]
    assert senders == ["user", "agent", "user", "agent"]


async def test_queued_request_can_be_aborted_while_waiting() -> None:
    model_called = asyncio.Event()

    async def never_answers(request: ModelRequest) -> str:
        model_called.set()
        await asyncio.Event().wait()
        return "a"

    model = ScriptedModel([never_answers, "b"])
    store = MemoryStore()
    glove = Glove(model=model, system_prompt="s", store=store).build()
    first = AbortController()
    second = AbortController()
    t1 = asyncio.create_task(glove.process_request("one", signal=first.signal))
    t2 = asyncio.create_task(glove.process_request("two", signal=second.signal))
    await model_called.wait()
    second.abort("gave up waiting")
    with pytest.raises(AbortError, match="gave up waiting"):
        await t2
    first.abort()
    with pytest.raises(AbortError):
        await t1
    assert [m.text for m in await store.get_messages()] == ["one"]


async def test_misuse_errors() -> None:
    glove = Glove(model=ScriptedModel(["x"]), system_prompt="s").fold(echo)
    with pytest.raises(GloveStateError, match=r"call \.build\(\)"):
        await glove.process_request("hi")
    with pytest.raises(ToolNameConflictError, match="'echo' is already offered"):
        glove.fold(echo)
    with pytest.raises(TypeError, match="fold\\(\\) takes a Tool"):
        glove.fold("echo")  # type: ignore[arg-type]
    glove.build()
    with pytest.raises(ValueError, match="empty request"):
        await glove.process_request("  ")
    with pytest.raises(ValueError, match="max_turns"):
        Glove(model=ScriptedModel([]), system_prompt="s", max_turns=0)
    with pytest.raises(KeyError, match="no tool named 'nope'"):
        glove.unfold("nope")
    assert glove.unfold("echo") is echo
    assert "echo" not in [t.name for t in glove.tools]


async def test_script_exhausted_is_a_clear_error() -> None:
    glove = Glove(model=ScriptedModel(["only one"]), system_prompt="s").build()
    await glove.process_request("first")
    with pytest.raises(ScriptExhaustedError, match="held 1 item"):
        await glove.process_request("second")


async def test_scripted_callable_sees_the_request() -> None:
    def reply(request: ModelRequest) -> str:
        return f"you said {request.messages[-1].text}"

    async def async_reply(request: ModelRequest) -> str:
        return "async " + request.messages[-1].text

    glove = Glove(model=ScriptedModel([reply, async_reply]), system_prompt="s").build()
    assert (await glove.process_request("hi")).text == "you said hi"
    assert (await glove.process_request("yo")).text == "async yo"


async def test_a_raising_subscriber_does_not_break_the_loop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Broken:
        async def record(self, event: SubscriberEvent) -> None:
            raise RuntimeError("subscriber bug")

    recorder = RecordingSubscriber()
    glove = Glove(model=ScriptedModel(["fine"]), system_prompt="s").build()
    glove.add_subscriber(Broken())
    glove.add_subscriber(recorder)
    with caplog.at_level(logging.ERROR, logger="glove_core"):
        result = await glove.process_request("hi")
    assert result.text == "fine"
    assert "text_delta" in recorder.names()
    assert "subscriber bug" in caplog.text


async def test_sync_tool_with_pydantic_input_model() -> None:
    class Point(BaseModel):
        x: int
        y: int

    def norm(input: Point, ctx: ToolContext) -> int:
        return abs(input.x) + abs(input.y)

    store = MemoryStore()
    model = ScriptedModel([[call("norm", x=3, y=-4)], "7"])
    glove = Glove(model=model, system_prompt="s", store=store)
    glove.fold(Tool(name="norm", description="d", do=norm, input_model=Point)).build()
    await glove.process_request("go")
    assert results_of((await store.get_messages())[2]) == [ToolResultData(data=7)]
    assert tool_spec(model.requests[0], "norm").input_schema["required"] == ["x", "y"]


@pytest.mark.parametrize("granted", [True, False])
async def test_a_permission_answered_once_is_asked_again(granted: bool) -> None:
    runs: list[str] = []
    asked: list[Slot] = []
    store = MemoryStore()
    model = ScriptedModel([[call("delete", path="/a")], [call("delete", "c2", path="/a")], "ok"])
    glove = Glove(model=model, system_prompt="s", store=store).fold(guarded_tool(runs)).build()
    auto_answer(glove.display_manager, {"granted": granted, "remember": False}, asked)
    await glove.process_request("go")
    # Same tool, same input, asked twice: nothing was remembered.
    assert len(asked) == 2
    assert runs == (["/a", "/a"] if granted else [])
    assert await store.get_permission("delete", '{"path":"/a"}') is None
