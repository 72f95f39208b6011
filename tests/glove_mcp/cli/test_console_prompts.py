"""The terminal answers elicitations: field by field from a fake stdin, against a real
DisplayManager and answer_elicitation."""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

import mcp_types as types
import pytest

from glove_core import DisplayManager
from glove_mcp._console_prompts import ElicitationPrompter
from glove_mcp.connect.elicitation import ELICITATION_RENDERER, answer_elicitation

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "default": "John Doe"},
        "age": {"type": "integer", "description": "in years", "minimum": 0, "maximum": 150},
        "score": {"type": "number", "default": 95.5},
        "status": {
            "type": "string",
            "oneOf": [
                {"const": "active", "title": "Active"},
                {"const": "inactive", "title": "Inactive"},
            ],
            "default": "active",
        },
        "verified": {"type": "boolean", "default": True},
        "email": {"type": "string", "format": "email"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y", "z"]}},
    },
    "required": ["age", "email"],
}


class Terminal:
    def __init__(self, display: DisplayManager, lines: str | Callable[[], str]) -> None:
        self.out = io.StringIO()
        read = io.StringIO(lines).readline if isinstance(lines, str) else lines
        self.prompter = ElicitationPrompter(display, self.out, read)
        self.detach = self.prompter.attach()


@pytest.fixture
def display() -> DisplayManager:
    return DisplayManager()


async def ask(
    display: DisplayManager, params: types.ElicitRequestParams, limit: float = 10
) -> types.ElicitResult | types.ErrorData:
    return await answer_elicitation(
        "notes", params, on_elicitation=None, display=display, server_mode=False, timeout=limit
    )


def form(schema: dict[str, Any] = SCHEMA) -> types.ElicitRequestFormParams:
    return types.ElicitRequestFormParams(message="Your \x1b[31mprofile", requested_schema=schema)


async def test_field_by_field_with_defaults_conversion_and_re_asking(
    display: DisplayManager,
) -> None:
    lines = [
        "",  # name: the default
        "old",  # age: not a number
        "200",  # age: out of range
        "41",
        "",  # score: the default
        "inactive",  # status: by value (case of the title does not matter either)
        "maybe",  # verified: not yes/no
        "no",
        "",  # email: required
        "ada",  # email: not an address
        "ada@example.com",
        "z, 1",  # tags: by value and by number
    ]
    term = Terminal(display, "\n".join(lines) + "\n")
    result = await ask(display, form())
    await term.prompter.drain()
    assert result == types.ElicitResult(
        action="accept",
        content={
            "name": "John Doe",
            "age": 41,
            "score": 95.5,
            "status": "inactive",
            "verified": False,
            "email": "ada@example.com",
            "tags": ["z", "x"],
        },
    )
    out = term.out.getvalue()
    assert "[notes] asks: Your [31mprofile" in out  # the escape character is dropped
    assert "\x1b" not in out
    assert "  Name (text, default John Doe): " in out
    assert "  age — in years (whole number, 0..150, required): " in out
    assert "  status (one of: 1) Active [active]; 2) Inactive [inactive], default active): " in out
    assert "  verified (yes/no, default yes): " in out
    assert "  tags (any of: 1) x; 2) y; 3) z; comma-separated): " in out
    assert "    type a whole number, e.g. 42\n" in out
    assert "    must be at most 150\n" in out
    assert "    answer yes or no\n" in out
    assert "    a value is required\n" in out
    assert "    must be an email address (name@domain)\n" in out
    assert "(accept sent to notes)" in out
    assert display.slots == []


async def test_optional_fields_left_empty_are_omitted(display: DisplayManager) -> None:
    schema = {"type": "object", "properties": {"note": {"type": "string"}, "n": {"type": "number"}}}
    term = Terminal(display, "\n-2.5\n")
    result = await ask(display, form(schema))
    await term.prompter.drain()
    assert result == types.ElicitResult(action="accept", content={"n": -2.5})


async def test_a_bad_choice_is_re_asked(display: DisplayManager) -> None:
    schema = {
        "type": "object",
        "properties": {"c": {"type": "string", "enum": ["a", "b"]}},
        "required": ["c"],
    }
    term = Terminal(display, "9\nB\n")
    result = await ask(display, form(schema))
    await term.prompter.drain()
    assert result == types.ElicitResult(action="accept", content={"c": "b"})
    assert "    pick one of 1) a; 2) b\n" in term.out.getvalue()


@pytest.mark.parametrize(("typed", "action"), [("/decline", "decline"), ("/cancel", "cancel")])
async def test_the_user_can_decline_or_cancel(
    display: DisplayManager, typed: str, action: str
) -> None:
    term = Terminal(display, f"Ada\n{typed}\n")
    result = await ask(display, form())
    await term.prompter.drain()
    assert result == types.ElicitResult(action=action)
    assert f"({action} sent to notes)" in term.out.getvalue()


async def test_end_of_input_cancels(display: DisplayManager) -> None:
    term = Terminal(display, "")
    assert await ask(display, form()) == types.ElicitResult(action="cancel")
    await term.prompter.drain()


@pytest.mark.parametrize(
    ("typed", "action"), [("y", "accept"), ("no", "decline"), ("what\nc", "cancel")]
)
async def test_url_mode_prints_the_url_and_asks(
    display: DisplayManager, typed: str, action: str
) -> None:
    term = Terminal(display, typed + "\n")
    params = types.ElicitRequestURLParams(
        message="Connect", url="https://example.com/connect?x=1", elicitation_id="e1"
    )
    assert await ask(display, params) == types.ElicitResult(action=action)
    await term.prompter.drain()
    out = term.out.getvalue()
    assert "[notes] asks you to open a page: Connect\n  https://example.com/connect?x=1\n" in out
    assert out.count("opened it? accept (y) / decline (n) / cancel (c): ") == typed.count("\n") + 1


async def test_a_form_it_cannot_show_is_declined(display: DisplayManager) -> None:
    term = Terminal(display, "")
    # Pushed directly, as another application might: answer_elicitation refuses such schemas.
    answer = await display.push_and_wait(
        ELICITATION_RENDERER,
        {"server": "s", "mode": "form", "message": "m", "requested_schema": {"type": "array"}},
    )
    await term.prompter.drain()
    assert answer == {"action": "decline"}
    assert "cannot show this form (requested_schema: type must be 'object'); declining" in (
        term.out.getvalue()
    )


async def test_a_re_shown_slot_says_what_was_wrong(display: DisplayManager) -> None:
    term = Terminal(display, "\n")
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    answer = await display.push_and_wait(
        ELICITATION_RENDERER,
        {
            "server": "s",
            "mode": "form",
            "message": "m",
            "requested_schema": schema,
            "error": "field 'a': expected a string, got a number",
        },
    )
    await term.prompter.drain()
    assert answer == {"action": "accept", "content": {}}
    assert "(the last answer did not fit: field 'a': expected a string, got a number)" in (
        term.out.getvalue()
    )


async def test_two_questions_are_asked_one_after_the_other(display: DisplayManager) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    term = Terminal(display, "first\nsecond\n")
    one, two = await asyncio.gather(ask(display, form(schema)), ask(display, form(schema)))
    await term.prompter.drain()
    answers = [r.content for r in (one, two) if isinstance(r, types.ElicitResult)]
    assert sorted(str(c["a"]) for c in answers if c is not None) == ["first", "second"]
    assert term.out.getvalue().count("[notes] asks:") == 2


@pytest.fixture
async def pipe() -> AsyncIterator[tuple[Callable[[], str], Callable[[str], None]]]:
    """A stdin that blocks until the test writes a line."""
    read_fd, write_fd = os.pipe()
    reader = os.fdopen(read_fd, "r")
    writer = os.fdopen(write_fd, "w")

    def write(text: str) -> None:
        writer.write(text)
        writer.flush()

    yield reader.readline, write
    writer.close()
    reader.close()


async def test_an_answer_typed_after_the_timeout_is_not_sent(
    display: DisplayManager, pipe: tuple[Callable[[], str], Callable[[str], None]]
) -> None:
    read, write = pipe
    term = Terminal(display, read)
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert await ask(display, form(schema), limit=0.05) == types.ElicitResult(action="cancel")
    write("too late\n")
    await term.prompter.drain()
    assert "(the server stopped waiting for this answer; it was not sent)" in term.out.getvalue()


async def test_detached_it_answers_nothing(display: DisplayManager) -> None:
    term = Terminal(display, "y\n")
    term.detach()
    schema = {"type": "object", "properties": {}}
    assert await ask(display, form(schema), limit=0.05) == types.ElicitResult(action="cancel")
    assert term.out.getvalue() == ""


async def test_server_text_printed_by_the_console_carries_no_escape_sequences() -> None:
    import io

    from glove_core import ToolResultData
    from glove_core.subscribers import ToolUseResult
    from glove_mcp._console import ConsolePrinter
    from glove_mcp.subscribers import McpLog

    out = io.StringIO()
    printer = ConsolePrinter(out)
    hostile = "ok\x1b[2J\x1b]0;owned\x07 done"
    await printer.record(McpLog(server="s", level="error", logger=None, data=hostile))
    await printer.record(
        ToolUseResult(
            call_id="c",
            name="s__t",
            input={},
            result=ToolResultData(status="error", data=None, message=hostile),
        )
    )
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert text.count("ok[2J]0;owned done") == 2
