"""Issue 18, point 2: old tool results rode along forever.

With ``Glove(result_summaries=ResultSummaries(...))`` a tool result older than the last
message the user typed is sent as a summary — the tool's own (``ToolResultData.summary``) or a
bounded head and tail with a note — while the store keeps it whole. Framework messages
(runtime context, events) never count as a user turn, so they never shorten the current turn's
results, and the prefix sent to the model changes at most once per user turn. Figures:
``bench/result_summaries.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from glove_core import (
    AnthropicModel,
    CompactionConfig,
    Glove,
    ModelRequest,
    ResultSummaries,
    ScriptedModel,
    SqliteStore,
    ToolCall,
    ToolContext,
    ToolResultData,
    notice,
    tool,
)
from glove_core.subscribers import CacheCollapse
from glove_core.testing import FakeToolUse, RecordingSubscriber, serve_fake_anthropic
from glove_core.tools import Tool

MARKER = "<<the middle of the result>>"
BIG = "h" * 3_000 + MARKER + "t" * 3_000
CONFIG = ResultSummaries(min_chars=1_000, head_chars=200, tail_chars=100)


def sent_results(request: ModelRequest) -> dict[str, str]:
    """call id -> the data text each tool result carries in a model request."""
    return {r.call_id: str(r.result.data) for m in request.messages for r in m.tool_results or []}


def big_tool(*, own_summary: str | None = None, during: Any = None) -> Tool:
    async def fetch(input: dict[str, Any], ctx: ToolContext) -> ToolResultData:
        if during is not None:
            await during(ctx)
        return ToolResultData(data=BIG, summary=own_summary)

    return Tool(
        name="fetch",
        description="Fetch a big document.",
        do=fetch,
        json_schema={"type": "object", "properties": {}},
    )


def call(call_id: str) -> list[ToolCall]:
    return [ToolCall(id=call_id, name="fetch", input={})]


# --- the current user turn is never summarised ----------------------------------------------


async def test_a_result_of_the_current_user_turn_is_sent_whole_until_the_next_user_turn() -> None:
    model = ScriptedModel([call("c1"), call("c2"), "done", "next"])
    agent = Glove(model=model, system_prompt="s", result_summaries=CONFIG).fold(big_tool())
    await agent.build().process_request("fetch twice")
    await agent.process_request("thanks")
    first_turn, second_turn = model.requests[:3], model.requests[3]
    assert sent_results(first_turn[1]) == {"c1": BIG}
    assert sent_results(first_turn[2]) == {"c1": BIG, "c2": BIG}
    later = sent_results(second_turn)
    assert set(later) == {"c1", "c2"}
    for text in later.values():
        assert MARKER not in text and text.startswith("h" * 200) and text.endswith("t" * 100)
        assert "shortened" in text and "call fetch again" in text


async def test_runtime_context_and_events_after_a_result_do_not_end_its_turn() -> None:
    async def during(ctx: ToolContext) -> None:
        # Both arrive after the result in the saved history: an outside event, saved at the
        # tool step, and a notice, saved as runtime context at the next model call.
        assert ctx.glove is not None
        await ctx.glove.emit_event(id=f"e-{ctx.call_id}", source="ci", kind="build", content="ok")
        await ctx.glove.add_context([notice(f"fetched {ctx.call_id}")])

    model = ScriptedModel([call("c1"), call("c2"), "done", "next"])
    agent = Glove(model=model, system_prompt="s", result_summaries=CONFIG)
    agent.fold(big_tool(during=during)).build()
    await agent.process_request("fetch twice")
    third = model.requests[2]
    kinds = [m.framework_context for m in third.messages]
    assert "event" in kinds and "runtime" in kinds  # they do follow the first result
    assert sent_results(third) == {"c1": BIG, "c2": BIG}
    await agent.process_request("thanks")
    assert all(MARKER not in text for text in sent_results(model.requests[3]).values())


async def test_a_wake_up_by_an_event_is_not_a_user_turn() -> None:
    model = ScriptedModel([call("c1"), "done", "seen the event"])
    agent = Glove(model=model, system_prompt="s", result_summaries=CONFIG).fold(big_tool())
    waiter = RecordingSubscriber()
    agent.build().add_subscriber(waiter)
    await agent.process_request("fetch")
    disposition = await agent.emit_event(
        id="e1", source="ci", kind="x", content="hi", when_idle="wake"
    )
    assert disposition == "woke"
    await waiter.wait_for("event_injected")
    await waiter.wait_for("token_consumption", count=3)
    assert model.requests[2].messages[-1].framework_context == "event"
    assert sent_results(model.requests[2]) == {"c1": BIG}
    await agent.aclose()


# --- the summary itself ------------------------------------------------------------------


async def test_a_tools_own_summary_is_sent_in_later_turns() -> None:
    model = ScriptedModel([call("c1"), "done", "next"])
    agent = Glove(model=model, system_prompt="s", result_summaries=CONFIG)
    agent.fold(big_tool(own_summary="a 6 KB document about h and t")).build()
    await agent.process_request("fetch")
    await agent.process_request("thanks")
    assert sent_results(model.requests[1]) == {"c1": BIG}
    text = sent_results(model.requests[2])["c1"]
    assert text.endswith("\na 6 KB document about h and t")
    assert "summary given by the tool" in text and "6,028 characters" in text


async def test_small_results_and_conversations_without_summaries_are_sent_whole() -> None:
    @tool
    def small() -> str:
        """A small result."""
        return "s" * 500

    for config in (CONFIG, None):
        model = ScriptedModel([[ToolCall(id="s1", name="small")], call("c1"), "done", "next"])
        agent = Glove(model=model, system_prompt="s", result_summaries=config)
        agent.fold(small).fold(big_tool()).build()
        await agent.process_request("go")
        await agent.process_request("thanks")
        later = sent_results(model.requests[3])
        assert later["s1"] == "s" * 500
        assert (later["c1"] == BIG) is (config is None)


async def test_the_store_keeps_the_full_result(tmp_path: Path) -> None:
    path = tmp_path / "full.db"
    model = ScriptedModel([call("c1"), "done", "next", "after restart"])
    async with SqliteStore(path, "s") as store:
        agent = Glove(model=model, system_prompt="s", store=store, result_summaries=CONFIG)
        agent.fold(big_tool(own_summary="short")).build()
        await agent.process_request("fetch")
        await agent.process_request("thanks")
    assert MARKER not in sent_results(model.requests[2])["c1"]
    async with SqliteStore(path, "s") as store:
        saved = [r.result for m in await store.get_messages() for r in m.tool_results or []]
        assert [(r.data, r.summary) for r in saved] == [(BIG, "short")]
        agent = Glove(model=model, system_prompt="s", store=store, result_summaries=CONFIG)
        await agent.fold(big_tool()).build().process_request("still there?")
    assert sent_results(model.requests[3])["c1"] == sent_results(model.requests[2])["c1"]


# --- the prefix changes at most once per user turn ---------------------------------------


async def test_within_a_user_turn_each_call_extends_the_previous_one() -> None:
    script: list[Any] = []
    for turn in range(3):
        script += [call(f"t{turn}a"), call(f"t{turn}b"), f"turn {turn} done"]
    model = ScriptedModel(script)
    agent = Glove(model=model, system_prompt="s", result_summaries=CONFIG).fold(big_tool())
    agent.build()
    for turn in range(3):
        await agent.process_request(f"turn {turn}")
    saved = [r.messages[: r.saved_count] for r in model.requests]
    changed_at: list[int] = []
    for index in range(1, len(saved)):
        before, now = saved[index - 1], saved[index]
        if now[: len(before)] != before:
            changed_at.append(index)
    # Calls 3 and 6 open turns 1 and 2: the only calls whose prefix is not an extension.
    assert changed_at == [3, 6]


# --- compaction --------------------------------------------------------------------------


def compacting_agent(summaries: ResultSummaries | None, script: list[Any]) -> Glove:
    """An agent whose ``fetch`` returns ~6,000 tokens marked with the call id in the middle;
    compaction triggers at 10,000 tokens and copies up to 30,000 characters verbatim."""

    async def fetch(input: dict[str, Any], ctx: ToolContext) -> ToolResultData:
        return ToolResultData(data="x" * 12_000 + f"<<middle of {ctx.call_id}>>" + "y" * 12_000)

    config = CompactionConfig(
        context_limit=20_000, threshold=0.5, keep_last=0, max_verbatim_chars=30_000
    )
    schema = {"type": "object", "properties": {}}
    glove = Glove(
        model=ScriptedModel(script),
        system_prompt="s",
        compaction=config,
        result_summaries=summaries,
    )
    return glove.fold(Tool("fetch", "Fetch.", fetch, json_schema=schema)).build()


async def test_compaction_sizes_the_next_call_as_it_is_sent() -> None:
    # Two earlier results: ~12,000 tokens in full, a few hundred as summaries. With summaries
    # on, the third request's call is small and nothing is compacted; without, it compacts.
    summarised = compacting_agent(CONFIG, [call("c1"), "ok", call("c2"), "ok", "next"])
    for text in ("one", "two", "three"):
        await summarised.process_request(text)
    assert not any(m.is_compaction for m in await summarised.store.get_messages())

    script: list[Any] = [call("c1"), "ok", call("c2"), "the summary", "ok", "next"]
    whole = compacting_agent(None, script)
    for text in ("one", "two", "three"):
        await whole.process_request(text)
    assert any(m.is_compaction for m in await whole.store.get_messages())


async def test_compaction_still_works_with_summaries_and_reads_results_in_full() -> None:
    # c1 is from an earlier turn, so the model saw it summarised; c2 and c3 fill the current
    # turn past the trigger. The summary call must read c1 in full: the store has it whole.
    both = [*call("c2"), *call("c3")]  # one reply, two results: ~12,000 tokens appended
    script: list[Any] = [call("c1"), "ok", both, "the summary", "done", "next"]
    agent = compacting_agent(CONFIG, script)
    await agent.process_request("one")
    await agent.process_request("two")
    model = agent.model
    assert isinstance(model, ScriptedModel)
    assert "<<middle of c1>>" not in sent_results(model.requests[2])["c1"]
    summary_call = next(r for r in model.requests if "<transcript>" in r.messages[0].text)
    assert "<<middle of c1>>" in summary_call.messages[0].text
    window = await agent.store.get_messages()
    compactions = [m for m in window if m.is_compaction]
    assert len(compactions) == 1 and "the summary" in compactions[0].text
    after = model.requests[model.requests.index(summary_call) + 1]
    assert after.messages[0].is_compaction  # the next call starts from the summary
    await agent.process_request("three")
    assert model.requests[-1].messages[0].is_compaction
    saved = [r.result.data for m in window for r in m.tool_results or []]
    assert all("<<middle of" in str(d) for d in saved)  # every result still whole in the store


# --- bad configuration -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"min_chars": -1}, r"ResultSummaries.min_chars must be a whole number of 0 or more"),
        ({"head_chars": 1.5}, r"ResultSummaries.head_chars must be a whole number .* got 1.5"),
        ({"tail_chars": True}, r"ResultSummaries.tail_chars must be a whole number .* got True"),
        ({"head_chars": 0, "tail_chars": 0}, r"head_chars \+ tail_chars must be at least 1"),
        (
            {"min_chars": 1_000, "head_chars": 600, "tail_chars": 400},
            r"min_chars \(1000\) must be more than head_chars \+ tail_chars \(1000\)",
        ),
    ],
)
def test_bad_summary_settings_are_refused(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ResultSummaries(**kwargs)


def test_glove_refuses_something_other_than_result_summaries() -> None:
    with pytest.raises(TypeError, match=r"result_summaries must be a ResultSummaries or None"):
        Glove(model=ScriptedModel([]), system_prompt="s", result_summaries=True)  # type: ignore[arg-type]


# --- through the real anthropic SDK --------------------------------------------------------


def _tool_result_texts(body: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block["content"]
                out[block["tool_use_id"]] = (
                    content if isinstance(content, str) else "".join(c["text"] for c in content)
                )
    return out


async def test_summaries_reach_the_wire_and_the_turn_keeps_its_cache() -> None:
    async with serve_fake_anthropic() as fake:
        fake.script(
            FakeToolUse("fetch", {}, id="c1"),
            "done",
            FakeToolUse("fetch", {}, id="c2"),
            "done again",
        )
        async with AnthropicModel("claude-test", api_key="k", base_url=fake.base_url) as model:
            agent = Glove(model=model, system_prompt="s" * 5_000, result_summaries=CONFIG)
            agent.fold(big_tool(own_summary="the short version")).build()
            await agent.process_request("fetch")
            await agent.process_request("fetch again")
    bodies = [r.body for r in fake.requests]
    assert _tool_result_texts(bodies[1]) == {"c1": BIG}
    later = _tool_result_texts(bodies[2])
    assert later["c1"].endswith("the short version") and MARKER not in later["c1"]
    assert _tool_result_texts(bodies[3]) == {"c1": later["c1"], "c2": BIG}
    # The second turn's second call reads its whole first call from the cache.
    usage = [r.usage or {} for r in fake.requests]
    assert usage[3]["cache_read_input_tokens"] > 0
    first = usage[2]
    assert usage[3]["cache_read_input_tokens"] >= (
        first["input_tokens"]
        + first["cache_read_input_tokens"]
        + first["cache_creation_input_tokens"]
    )


async def test_the_once_per_turn_rewrite_is_reported_as_expected_not_as_a_collapse(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def fetch(input: dict[str, Any], ctx: ToolContext) -> ToolResultData:
        return ToolResultData(data=f"{ctx.call_id} " + "r" * 40_000)  # ~10,000 tokens

    schema = {"type": "object", "properties": {}}
    recorder = RecordingSubscriber()
    async with serve_fake_anthropic() as fake:
        fake.script(FakeToolUse("fetch", {}, id="c1"), "done", "next", "and next")
        async with AnthropicModel("claude-test", api_key="k", base_url=fake.base_url) as model:
            agent = Glove(model=model, system_prompt="s" * 5_000, result_summaries=CONFIG)
            agent.fold(Tool("fetch", "Fetch.", fetch, json_schema=schema)).build()
            agent.add_subscriber(recorder)
            for text in ("fetch", "thanks", "more"):
                await agent.process_request(text)
    collapses = recorder.of(CacheCollapse)
    assert [c.cause for c in collapses] == ["summaries"]  # at the second turn only
    assert collapses[0].established_tokens - collapses[0].read_tokens > 9_000
    assert not [r for r in caplog.records if "collapsed unexpectedly" in r.getMessage()]
