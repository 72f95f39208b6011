"""Typed subscriber events: one dataclass per event with a ``kind`` literal; the core's list
knows only its own kinds; subscribers written for ``record(event_type, data)`` keep working."""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest

from glove_core import (
    AbortSignal,
    Glove,
    Message,
    ModelRequest,
    ModelResponse,
    ScriptedModel,
    SubscriberEvent,
)
from glove_core.subscribers import (
    EventPayload,
    EventType,
    TextDelta,
    TokenConsumption,
    ToolUseResult,
)
from glove_core.testing import RecordingSubscriber


def _payload_types() -> list[type[Any]]:
    return list(typing.get_args(EventPayload))


def test_every_core_event_has_its_own_kind_literal() -> None:
    kinds: list[str] = []
    for payload in _payload_types():
        (kind_field,) = [f for f in dataclasses.fields(payload) if f.name == "kind"]
        assert not kind_field.init, f"{payload.__name__}.kind is set by the class, not passed"
        hint = typing.get_type_hints(payload)["kind"]
        assert typing.get_origin(hint) is Literal, payload
        (kind,) = typing.get_args(hint)
        assert kind_field.default == kind
        kinds.append(kind)
    assert len(set(kinds)) == len(kinds)
    assert sorted(kinds) == sorted(typing.get_args(EventType))
    assert not any(kind.startswith("mcp_") for kind in kinds)  # glove_mcp owns its kinds


def test_events_keep_positional_construction_and_compare_by_value() -> None:
    assert TextDelta("hi").kind == "text_delta"
    assert TextDelta("hi") == TextDelta("hi") != TextDelta("ho")


@dataclass(frozen=True)
class PluginEvent:
    """An event type the core does not know, as another package would define it."""

    kind: Literal["plugin_thing"] = field(default="plugin_thing", init=False)
    value: int


async def test_subscribers_get_typed_events_and_other_packages_events() -> None:
    seen: list[str] = []

    class Matcher:
        async def record(self, event: SubscriberEvent) -> None:
            match event:
                case TextDelta(text=text):
                    seen.append(f"text:{text}")
                case TokenConsumption(usage=usage):
                    seen.append(f"tokens:{usage.output_tokens > 0}")
                case PluginEvent(value=value):
                    seen.append(f"plugin:{value}")

    recorder = RecordingSubscriber()
    glove = Glove(model=ScriptedModel(["Hello"]), system_prompt="s").build()
    glove.add_subscriber(Matcher())
    glove.add_subscriber(recorder)
    await glove.process_request("hi")
    await glove.publish(PluginEvent(7))
    assert seen == ["text:Hello", "tokens:True", "plugin:7"]
    [delta] = recorder.of(TextDelta)  # typed: a list[TextDelta]
    assert delta.text == "Hello"
    assert recorder.of("plugin_thing") == [PluginEvent(7)]
    assert recorder.names()[-1] == "plugin_thing"
    assert recorder.of(ToolUseResult) == []


async def test_a_two_argument_subscriber_still_works_with_a_deprecation_warning() -> None:
    received: list[tuple[str, object]] = []

    class Old:
        async def record(self, event_type: str, data: Any) -> None:
            received.append((event_type, data))

    old = Old()
    glove = Glove(model=ScriptedModel(["Hello", "again"]), system_prompt="s").build()
    with pytest.warns(DeprecationWarning, match=r"record\(event_type, data\) is deprecated"):
        glove.add_subscriber(old)  # type: ignore[arg-type]
    assert [id(s) for s in glove.subscribers] == [id(old)]  # as given, not the adapter
    await glove.process_request("hi")
    assert ("text_delta", TextDelta("Hello")) in received
    glove.remove_subscriber(old)  # type: ignore[arg-type]
    assert glove.subscribers == []
    count = len(received)
    await glove.process_request("hi again")
    assert len(received) == count


async def test_a_model_adapter_calling_notify_the_old_way_still_reaches_subscribers() -> None:
    class OldAdapter:
        name = "old"

        async def prompt(
            self, request: ModelRequest, notify: Any, signal: AbortSignal | None = None
        ) -> ModelResponse:
            await notify("text_delta", TextDelta("streamed"))
            return ModelResponse(Message(sender="agent", text="streamed"))

    recorder = RecordingSubscriber()
    glove = Glove(model=OldAdapter(), system_prompt="s").build()
    glove.add_subscriber(recorder)
    with pytest.warns(DeprecationWarning, match=r"notify\(event_type, data\) is deprecated"):
        result = await glove.process_request("hi")
    assert result.text == "streamed"
    assert recorder.of(TextDelta) == [TextDelta("streamed")]
