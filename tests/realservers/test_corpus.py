"""The corpus of published servers (``tests/realservers/corpus.py``), each as a user runs it:
started over stdio with its defaults, offline, mounted with ``mount_mcp``'s defaults on a Glove
driven by a ``ScriptedModel``. Every server's listing is checked (each bridged name valid and
derived from the server's name, each input schema a valid JSON Schema and the server's own),
and the servers whose work is local are called through the Glove: what the model reads next
must be a success holding what the server did.

Install the corpus with ``tests/realservers/install.sh``; without it these tests skip, unless
``GLOVE_REQUIRE_INTEROP=1``.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from glove_core import Glove, ScriptedModel, ToolCall, ToolResultData
from glove_mcp import MemoryMcpAdapter, mount_mcp
from glove_mcp.mount.bridge import READ_RESOURCE_TOOL, bridged_tool_name
from glove_mcp.mount.listing import MORE_TOOLS
from tests.realservers import corpus
from tests.realservers.pdf_file import write_pdf

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Case:
    """How one server is started and what is asked of it.

    Attributes:
        server: the corpus server.
        args: its arguments beyond the defaults, given the test's folder.
        env: its environment beyond the defaults, given the test's folder.
        calls: tool calls (real tool names) the model makes in turn, given the folder; none
            for a server whose calls need a cloud service.
        expect: text the last call's result holds.
        tools: how many tools it lists at least.
    """

    server: corpus.Server
    tools: int
    args: Callable[[Path], tuple[str, ...]] = lambda folder: ()
    env: Callable[[Path], dict[str, str]] = lambda folder: {}
    calls: Callable[[Path], list[tuple[str, dict[str, Any]]]] = lambda folder: []
    expect: str = ""
    setup: Callable[[Path], None] = field(default=lambda folder: None)


def _git_repo(folder: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (folder / "notes.txt").write_text("first line\n", encoding="utf-8")
    git("add", "notes.txt")
    who = ("-c", "user.name=Glove", "-c", "user.email=glove@example.invalid")
    git(*who, "commit", "-qm", "Add notes")


def _pdf(folder: Path) -> None:
    write_pdf(folder / "report.pdf", "Quarterly report: revenue grew")


CASES = [
    Case(corpus.NOTION, tools=20),
    Case(corpus.LINEAR, tools=128),
    Case(corpus.PLAYWRIGHT, tools=20),
    Case(corpus.FETCH, tools=1),
    Case(
        corpus.FILESYSTEM,
        tools=10,
        args=lambda f: (str(f),),
        calls=lambda f: [
            ("write_file", {"path": str(f / "hello.txt"), "content": "hello from glove"}),
            ("read_text_file", {"path": str(f / "hello.txt")}),
        ],
        expect="hello from glove",
    ),
    Case(
        corpus.MEMORY,
        tools=8,
        env=lambda f: {"MEMORY_FILE_PATH": str(f / "memory.jsonl")},
        calls=lambda f: [
            (
                "create_entities",
                {
                    "entities": [
                        {"name": "Ada", "entityType": "person", "observations": ["writes code"]}
                    ]
                },
            ),
            ("search_nodes", {"query": "Ada"}),
        ],
        expect="writes code",
    ),
    Case(
        corpus.THINKING,
        tools=1,
        calls=lambda f: [
            (
                "sequentialthinking",
                {
                    "thought": "The answer is 42.",
                    "nextThoughtNeeded": False,
                    "thoughtNumber": 1,
                    "totalThoughts": 1,
                },
            )
        ],
        expect="thoughtNumber",
    ),
    Case(
        corpus.EVERYTHING,
        tools=10,
        calls=lambda f: [("echo", {"message": "hi there"})],
        expect="hi there",
    ),
    Case(
        corpus.PDF,
        # 2.0.4 lists 5; read_pdf_bytes and one more are for its MCP Apps view alone
        # (visibility ["app"]), never offered to the model.
        tools=3,
        args=lambda f: (str(f),),
        setup=_pdf,
        calls=lambda f: [("list_pdfs", {})],
        expect="report.pdf",
    ),
    Case(
        corpus.GIT,
        tools=10,
        args=lambda f: ("--repository", str(f)),
        setup=_git_repo,
        calls=lambda f: [("git_log", {"repo_path": str(f)})],
        expect="Add notes",
    ),
    Case(
        corpus.TIME,
        tools=2,
        calls=lambda f: [
            (
                "convert_time",
                {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
            )
        ],
        expect="21:00",
    ),
    Case(
        corpus.SQLITE,
        tools=5,
        args=lambda f: ("--db-path", str(f / "shop.db")),
        calls=lambda f: [
            ("create_table", {"query": "CREATE TABLE items (name TEXT, price REAL)"}),
            ("write_query", {"query": "INSERT INTO items VALUES ('pencil', 1.25)"}),
            ("read_query", {"query": "SELECT name, price FROM items"}),
        ],
        expect="pencil",
    ),
    Case(
        corpus.EXCEL,
        tools=20,
        env=lambda f: {"EXCEL_FILES_PATH": str(f)},
        calls=lambda f: [
            ("create_workbook", {"path": str(f / "book.xlsx")}),
            (
                "write_range",
                {
                    "path": str(f / "book.xlsx"),
                    "sheet": "Sheet1",
                    "at": "A1",
                    "rows": [["item", "price"], ["pencil", 1.25]],
                },
            ),
            ("read_range", {"path": str(f / "book.xlsx"), "sheet": "Sheet1"}),
        ],
        expect="pencil",
    ),
    Case(
        corpus.WORD,
        tools=20,
        calls=lambda f: [
            ("create_document", {"filename": str(f / "letter.docx")}),
            ("add_paragraph", {"filename": str(f / "letter.docx"), "text": "Dear reader"}),
            ("get_document_text", {"filename": str(f / "letter.docx")}),
        ],
        expect="Dear reader",
    ),
]


def _text(result: ToolResultData) -> str:
    return f"{result.data}\n{result.message or ''}"


@pytest.mark.parametrize("case", CASES, ids=[c.server.id for c in CASES])
async def test_server_lists_valid_tools_and_answers_offline(case: Case, tmp_path: Path) -> None:
    server = case.server
    server.require()
    case.setup(tmp_path)
    entry = server.entry(*case.args(tmp_path), env=case.env(tmp_path))
    calls = case.calls(tmp_path)
    script: list[Any] = [
        [ToolCall(id=f"c{i}", name=bridged_tool_name(server.id, name), input=args)]
        for i, (name, args) in enumerate(calls)
    ]
    glove = Glove(model=ScriptedModel([*script, "done"]), system_prompt="t", server_mode=True)
    async with await mount_mcp(
        glove, MemoryMcpAdapter("conv", active=[server.id]), [entry]
    ) as mount:
        assert mount.loaded == [server.id], f"{server.package} did not mount"
        names = mount.tool_names(server.id)
        connection = mount.connection(server.id)
        assert connection is not None
        listed = {t.name: t for t in await connection.list_tools()}
        if calls:
            await glove.build().process_request("go")
        offered = {t.name: t.spec for t in glove.tools}
    own = {READ_RESOURCE_TOOL, MORE_TOOLS}
    real_names = [real for real in names.values() if real not in own]
    assert len(real_names) >= case.tools
    for bridged, real in names.items():
        assert _NAME.match(bridged), bridged
        if real in own:
            continue
        assert bridged == bridged_tool_name(server.id, real)
        schema = offered[bridged].input_schema
        jsonschema.validators.validator_for(schema).check_schema(schema)
        assert schema == listed[real].input_schema, f"{real}: the schema changed on the way"
    if not calls:
        return
    requests = glove.model.requests  # type: ignore[attr-defined]
    results = [r.result for m in requests[-1].messages for r in (m.tool_results or [])]
    assert len(results) == len(calls)
    for (name, _), result in zip(calls, results, strict=True):
        assert result.status == "success", f"{name}: {_text(result)[:500]}"
    assert case.expect in _text(results[-1])
