"""``list_capabilities`` as a shortlist that holds: pages, keyword and tag filters, and a
subagent prompt that says so when the catalogue does not fit its budget (a real mount, the
scripted model; no server is connected)."""

from __future__ import annotations

from typing import Any

from glove_core import Glove, ScriptedModel, ToolCall
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.adapter import LearnedTool
from glove_mcp.discovery import FIND_CAPABILITY


def entry(id: str, description: str, **extra: Any) -> McpCatalogueEntry:
    return McpCatalogueEntry(
        id=id, name=id.title(), description=description, url=f"https://x/{id}/mcp", **extra
    )


CATALOGUE = [
    *(entry(f"db{i}", f"Database service number {i} for queries.") for i in range(25)),
    entry("pg", "Query a Postgres database.", tags=["databases"]),
    entry("wiki", "Team wiki pages.", tags=["docs"]),
]


async def listings(
    calls: list[dict[str, Any]], budget: int = 100_000, *, raw: bool = False
) -> tuple[list[Any], str]:
    """What each list_capabilities call returned, and the subagent's prompt."""
    script: list[Any] = [[ToolCall(id="m1", name=FIND_CAPABILITY, input={"need": "database"})]]
    script += [
        [ToolCall(id=f"s{i}", name="list_capabilities", input=call)] for i, call in enumerate(calls)
    ]
    script += ["done", "ok"]
    model = ScriptedModel(script)
    glove = Glove(model=model, system_prompt="main", server_mode=True)
    adapter = MemoryMcpAdapter("c")
    await adapter.save_learned_tools("wiki", [LearnedTool("run_sql", "Run SQL on the wiki.")])
    async with await mount_mcp(
        glove, adapter, CATALOGUE, discovery_budget_tokens=budget, discovery_ranker=None
    ):
        glove.build()
        await glove.process_request("find me a database")
    sub = [r for r in model.requests if r.system != "main"]
    results = []
    for request in sub[1:]:
        (result,) = request.messages[-1].tool_results or []
        results.append(result.result if raw else result.result.data)
    return results, sub[0].system


async def test_pages_go_through_every_match_and_say_when_there_are_more() -> None:
    query = {"query": "database"}
    calls = [{**query, "page": page} for page in (1, 2, 3, 4)]
    (first, second, third, past, whole, small), _ = await listings(
        [*calls, {**query, "limit": 30}, {**query, "limit": 2}]
    )
    more = "more matches: call list_capabilities again with page="
    assert first[-1] == {"more": more + "2"} and second[-1] == {"more": more + "3"}
    assert len(first) == len(second) == 11
    assert len(third) == 6 and "more" not in third[-1]  # 26 matches: 10 + 10 + 6
    paged = [row["id"] for row in [*first[:-1], *second[:-1], *third]]
    assert paged == [row["id"] for row in whole]  # the pages of one ranking, in order
    assert len(set(paged)) == 26
    assert past == "no more matches after page 3"
    assert len(small) == 3 and small[-1] == {"more": more + "2"}


async def test_keywords_and_tags_filter_the_ranking() -> None:
    (postgres, sql, tagged, none, both), _ = await listings(
        [
            {"query": "database", "keywords": ["POSTGRES"]},
            {"query": "database", "keywords": ["sql"]},  # a learned tool mentions it
            {"query": "", "tags": ["docs"]},
            {"query": "database", "keywords": ["postgres", "wiki"]},
            {"query": "database", "keywords": ["sql"], "tags": ["databases"]},
        ]
    )
    assert [row["id"] for row in postgres] == ["pg"]
    assert [row["id"] for row in sql] == ["wiki"]
    assert [row["id"] for row in tagged] == ["wiki"]
    assert none.startswith("no catalogue entry matches")
    assert both.startswith("no catalogue entry matches")  # wiki mentions sql, has no tag


async def test_bad_paging_is_refused_with_a_clear_error() -> None:
    (zero, huge), _ = await listings(
        [{"query": "x", "page": 0}, {"query": "x", "limit": 31}], raw=True
    )
    assert zero.status == "error" and "page" in (zero.message or "")
    assert huge.status == "error" and "limit" in (huge.message or "")


async def test_the_prompt_gives_a_shortlist_and_says_how_to_look_further() -> None:
    _, whole = await listings([], budget=100_000)
    assert "The whole catalogue" in whole and "db24" in whole
    _, short = await listings([], budget=300)
    assert "27 servers, too many to list here. A shortlist: the " in short
    assert "keywords=[...]" in short and "page=2" in short and "tags=[...]" in short
