"""glove_mcp.cli.telemetry: the headless server's HTTP request spans as parents of its turns (woken
ones included), and ``glove-mcp serve`` exporting a request's spans and metrics over OTLP/HTTP
to a receiver in the test that decodes the protobuf.

Both need the ``otel`` extra (the ASGI instrumentation, the OTLP exporter and its protobuf
definitions): without it they skip, saying so, unless ``GLOVE_REQUIRE_OTEL=1`` (CI) makes that
a failure.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the OpenTelemetry SDK is in the test extra")

from opentelemetry.trace import SpanKind

from glove_core import ModelRequest
from glove_core.tracing import Attr
from glove_mcp.cli.telemetry import configure_from_env, instrument_asgi
from glove_mcp.server import HeadlessServer
from tests._otel import all_attribute_values, attrs, parent_of, telemetry
from tests.glove_mcp.server._harness import KEY, running, serve_process, simple_factory

try:
    from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware  # noqa: F401

    from tests._otlp import metric_names, otlp_receiver, received_spans

    _MISSING = ""
except ImportError as exc:  # the otel extra is not installed
    _MISSING = f"the otel extra is not installed ({exc.name}): pip install -e '.[otel]'"


@pytest.fixture(autouse=True)
def _otel_extra() -> None:
    if not _MISSING:
        return
    if os.environ.get("GLOVE_REQUIRE_OTEL") == "1":
        pytest.fail(f"GLOVE_REQUIRE_OTEL=1, but {_MISSING}", pytrace=False)
    pytest.skip(_MISSING)


async def test_turns_in_serve_are_children_of_the_http_request_that_ran_them(
    tmp_path: Path,
) -> None:
    def replies(session_id: str) -> list[Any]:
        def after_the_event(request: ModelRequest) -> str:
            return "saw the deploy"

        return ["hello back", after_the_event]

    server = HeadlessServer(str(tmp_path / "s.db"), KEY, simple_factory(replies))
    with telemetry().collect() as t:
        async with running(server, wrap=instrument_asgi) as client:
            await client.post("/sessions", json={"id": "s1"})
            reply = await client.post("/sessions/s1/messages", json={"text": "hi"})
            assert reply.status_code == 200
            event = {"id": "d1", "source": "ci", "kind": "deploy", "content": "done"}
            answer = await client.post("/sessions/s1/events", json={**event, "when_idle": "wake"})
            assert answer.json() == {"disposition": "woke"}
            await t.wait_for(
                lambda spans: any(
                    s.name == "invoke_agent" and attrs(s)[Attr.TURN_KIND] == "wake" for s in spans
                )
            )
            # The OAuth callback's query (code, state) is a credential: never an attribute.
            await client.get("/oauth/callback?code=the-secret-code&state=the-state")
    spans = t.spans()
    turns = {attrs(s)[Attr.TURN_KIND]: s for s in t.named("invoke_agent")}
    assert set(turns) == {"request", "wake"}
    for kind, turn in turns.items():
        assert attrs(turn)[Attr.CONVERSATION] == "s1"
        http = parent_of(turn, spans)
        assert http is not None and http.kind is SpanKind.SERVER, kind
        path = attrs(http).get("url.path") or attrs(http).get("http.target")
        assert path == {"request": "/sessions/s1/messages", "wake": "/sessions/s1/events"}[kind]
    values = all_attribute_values(spans)
    assert not any("the-secret-code" in v or "the-state" in v for v in values)
    assert not any(KEY in v for v in values)


def _attribute_text(requests: list[Any]) -> str:
    return "\n".join(str(request) for request in requests)


async def test_serve_exports_a_requests_spans_and_metrics_over_otlp_http(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with otlp_receiver() as (endpoint, received):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        monkeypatch.setenv("OTEL_SERVICE_NAME", "glove-serve-test")
        async with serve_process(tmp_path, script=["the answer"]) as served:
            import httpx2

            headers = {"Authorization": f"Bearer {KEY}"}
            async with httpx2.AsyncClient(base_url=served.url, headers=headers) as client:
                await client.post("/sessions", json={"id": "s1"})
                reply = await client.post("/sessions/s1/messages", json={"text": "hi"})
                assert "the answer" in reply.text
        # Stopped (SIGTERM): the command flushed what it held on its way out.
        assert served.process.returncode == 0, served.log.read_text()
        spans = received_spans(received.traces)
        names = {span.name for span in spans}
        assert {"invoke_agent", "chat scripted"} <= names, names
        turn = next(span for span in spans if span.name == "invoke_agent")
        http = [span for span in spans if span.span_id == turn.parent_span_id]
        assert len(http) == 1 and http[0].kind == http[0].SPAN_KIND_SERVER
        resource = received.traces[0].resource_spans[0].resource
        service = [a.value.string_value for a in resource.attributes if a.key == "service.name"]
        assert service == ["glove-serve-test"]
        assert {"gen_ai.client.operation.duration", "gen_ai.client.token.usage"} <= metric_names(
            received.metrics
        )
        exported = _attribute_text(received.traces) + _attribute_text(received.metrics)
        assert KEY not in exported


def test_nothing_is_configured_without_an_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    ):
        monkeypatch.delenv(name, raising=False)
    assert configure_from_env() is None
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert configure_from_env() is None


async def test_the_query_string_still_reaches_the_application() -> None:
    seen: list[bytes] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["query_string"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    wrapped = instrument_asgi(app)
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/oauth/callback",
        "raw_path": b"/oauth/callback",
        "query_string": b"code=c&state=s",
        "headers": [],
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 5000),
        "http_version": "1.1",
        "asgi": {"version": "3.0"},
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    with telemetry().collect() as t:
        await wrapped(scope, receive, send)
    assert seen == [b"code=c&state=s"]
    assert sent[0]["status"] == 204
    assert not any("code=c" in v for v in all_attribute_values(t.spans()))
