"""Interop: the reference TypeScript server ``@modelcontextprotocol/server-everything``, mounted
through glove_mcp's public API with default settings, over stdio and over Streamable HTTP.

Each transport starts the server once (module-scoped fixtures) and mounts it on one Glove driven
by a ``ScriptedModel``. Every tool the server lists must be folded as ``everything__<tool>`` with
the server's input schema, and is called once through the Glove with arguments that validate
against that schema; the assertions are on what the model receives in its next request. The
server declares resources, so the mount also offers ``everything__read_resource``, and resource
links in results tell the model to read them with it; content the server annotates for the user
alone (``get-annotated-message``'s image) reaches ``render_data``, never the model. Its
resources, templates and prompts are also read through the mount's own methods.

The server is a handshake-era (TypeScript SDK 1.x) server: it registers some tools only after
``initialize``, and only for clients that declare the matching capability (``ABSENT``). With
default settings a mount in server mode declares neither elicitation (nobody could answer it
without an ``on_elicitation`` handler) nor roots nor sampling;
``test_server_requests_everything`` declares everything.

Install the server with ``tests/interop/install.sh``. Without it the module is skipped, unless
``GLOVE_REQUIRE_INTEROP=1``, which makes a missing install a failure.
"""

from __future__ import annotations

import base64
import functools
import gzip
import itertools
import json
import os
import queue
import re
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
import pytest_asyncio

from glove_core import Glove, ImagePart, ScriptedModel, ToolCall, ToolResultData
from glove_core.testing import RecordingSubscriber
from glove_mcp import McpCatalogueEntry, McpMount, McpTool, MemoryMcpAdapter, mount_mcp
from glove_mcp.errors import McpProtocolError
from glove_mcp.mount.bridge import bridged_tool_name
from glove_mcp.types import McpEmbeddedResource, McpTextContent

# These tests compare what the model gets with what the server sent, so they mount without the
# untrusted-content envelopes (on by default; tests/glove_mcp/test_untrusted_marks.py).
mount_mcp = functools.partial(mount_mcp, mark_untrusted=False)

HERE = Path(__file__).resolve().parent
NODE = HERE / "node_modules" / "node" / "bin" / "node"
EVERYTHING = HERE / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
LOOPBACK = HERE / "loopback.cjs"
"""Preloaded into the HTTP server: binds 127.0.0.1 only and reports the port it got."""

_missing = [f"tests/interop/{p.relative_to(HERE)}" for p in (NODE, EVERYTHING) if not p.is_file()]
if _missing:
    _why = (
        f"server-everything is not installed (missing: {', '.join(_missing)}): "
        "run tests/interop/install.sh"
    )
    if os.environ.get("GLOVE_REQUIRE_INTEROP") == "1":
        pytest.fail(f"GLOVE_REQUIRE_INTEROP=1, but {_why}", pytrace=False)
    pytest.skip(_why, allow_module_level=True)

pytestmark = pytest.mark.asyncio(loop_scope="module")

SERVER = "everything"
"""The catalogue id, so the tool namespace: ``everything__echo``."""

READER = f"{SERVER}__read_resource"
"""The resource reader the mount offers because the server declares resources."""

MARKER = "GLOVE_INTEROP_TRANSPORT"
"""An environment variable given to the server process; ``get-env`` must report it."""

STARTUP_TIMEOUT = 30.0
"""Seconds the HTTP server may take to listen (a bound on the wait, not a timing assert)."""

GZIP_INPUT = b"glove interop: gzip me\n"

CALLS: dict[str, dict[str, Any]] = {
    "echo": {"message": "hello from glove"},
    "get-annotated-message": {"messageType": "debug", "includeImage": True},
    "get-env": {},
    "get-resource-links": {"count": 2},
    "get-resource-reference": {"resourceType": "Text", "resourceId": 2},
    "get-structured-content": {"location": "Chicago"},
    "get-sum": {"a": 2, "b": 40},
    "get-tiny-image": {},
    # A data: URI, so the server fetches nothing from the network; "resource" embeds the blob.
    "gzip-file-as-resource": {
        "name": "glove.txt.gz",
        "data": "data:text/plain;base64," + base64.b64encode(GZIP_INPUT).decode(),
        "outputType": "resource",
    },
    "toggle-simulated-logging": {},
    "toggle-subscriber-updates": {},
    "trigger-long-running-operation": {"duration": 0.1, "steps": 2},
    "simulate-research-query": {"topic": "glove interop"},
}
"""Every tool the server lists for glove_mcp, with the arguments it is called with."""

ABSENT: dict[str, str] = {
    "trigger-elicitation-request": (
        "registered only for clients that declare elicitation, which a mount in server mode "
        "without on_elicitation does not (nobody could answer)"
    ),
    "trigger-url-elicitation": "registered only for clients that declare elicitation",
    "get-roots-list": "registered only for clients that declare roots",
    "trigger-sampling-request": "registered only for clients that declare sampling",
    "trigger-sampling-request-async": (
        "registered only for clients that declare sampling and task-augmented sampling"
    ),
    "trigger-elicitation-request-async": (
        "registered only for clients that declare elicitation and task-augmented elicitation"
    ),
}
"""Tools the server has but does not list for a mount with default settings, and why
(tests/interop/test_server_requests_everything.py declares everything and gets them all)."""

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# -- the HTTP server process ----------------------------------------------------------------------


@dataclass
class HttpServer:
    url: str
    stderr: list[str]


@pytest.fixture(scope="module")
def http_server() -> Iterator[HttpServer]:
    """server-everything over Streamable HTTP on 127.0.0.1, on a port the system picked."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "PORT": "0", MARKER: "http"}
    process = subprocess.Popen(
        [str(NODE), "--require", str(LOOPBACK), str(EVERYTHING), "streamableHttp"],
        cwd=HERE,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,  # a line per request
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
    )
    log: list[str] = []
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:  # drains stderr for the life of the process, so it never blocks
        assert process.stderr is not None
        for line in process.stderr:
            log.append(line)
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=pump, name="server-everything-stderr", daemon=True)
    reader.start()
    try:
        port = _wait_for_port(lines, log)
        yield HttpServer(f"http://127.0.0.1:{port}/mcp", log)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        reader.join(timeout=10)
        assert process.stderr is not None
        process.stderr.close()


def _wait_for_port(lines: queue.Queue[str | None], log: list[str]) -> int:
    """The port from the line loopback.cjs prints once the server listens; bounded wait."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while True:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            pytest.fail(
                f"server-everything did not listen within {STARTUP_TIMEOUT:.0f} s; stderr:\n"
                + "".join(log)
            )
        if line is None:
            pytest.fail("server-everything exited before it listened; stderr:\n" + "".join(log))
        found = re.match(r"glove-interop listening 127\.0\.0\.1:(\d+)$", line.strip())
        if found:
            return int(found.group(1))


# -- the mounted server -------------------------------------------------------------------------


@pytest.fixture(scope="module", params=["stdio", "http"])
def entry(request: pytest.FixtureRequest) -> McpCatalogueEntry:
    """The catalogue entry of server-everything over one transport (default settings)."""
    description = "The MCP reference server: every kind of tool result."
    if request.param == "stdio":
        return McpCatalogueEntry(
            id=SERVER,
            name="Everything",
            description=description,
            command=[str(NODE), str(EVERYTHING), "stdio"],
            env={MARKER: "stdio"},
        )
    server: HttpServer = request.getfixturevalue("http_server")
    return McpCatalogueEntry(id=SERVER, name="Everything", description=description, url=server.url)


@dataclass
class Everything:
    """server-everything mounted on a Glove that a ScriptedModel drives."""

    transport: str
    glove: Glove
    model: ScriptedModel
    mount: McpMount
    listed: dict[str, McpTool]
    """The tools as the server lists them, by their real names."""
    _ids: Iterator[int] = field(default_factory=itertools.count)

    async def turn(self, *calls: tuple[str, dict[str, Any]]) -> list[ToolResultData]:
        """One request in which the model calls ``calls`` (real tool name, arguments) one after
        another, then answers "done".

        Returns:
            For each call, its result as it was saved; the model received the same in the
            very next request, without ``render_data`` (checked).
        """
        for name, args in calls:
            schema = dict(self.listed[name].input_schema)
            validator = jsonschema.validators.validator_for(schema)
            validator.check_schema(schema)
            validator(schema).validate(args)  # the arguments fit the schema the server listed
        ids = [f"{self.transport}-{next(self._ids)}" for _ in calls]
        self.model.extend(
            [
                [ToolCall(id=call_id, name=bridged_tool_name(SERVER, name), input=args)]
                for call_id, (name, args) in zip(ids, calls, strict=True)
            ]
        )
        self.model.extend(["done"])
        first = len(self.model.requests)
        result = await self.glove.process_request("call " + ", ".join(name for name, _ in calls))
        assert result.text == "done"
        assert len(self.model.requests) == first + len(calls) + 1
        saved = {r.call_id: r.result for m in result.messages for r in m.tool_results or []}
        received: list[ToolResultData] = []
        for n, call_id in enumerate(ids):
            request = self.model.requests[first + n + 1]
            [found] = [
                r for m in request.messages for r in (m.tool_results or []) if r.call_id == call_id
            ]
            assert found.result == saved[call_id].model_copy(update={"render_data": None})
            received.append(saved[call_id])
        return received

    async def call(self, name: str) -> ToolResultData:
        """Call tool ``name`` once, with its arguments from ``CALLS``."""
        [result] = await self.turn((name, CALLS[name]))
        return result


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def everything(entry: McpCatalogueEntry) -> AsyncIterator[Everything]:
    transport = "stdio" if entry.command else "http"
    model = ScriptedModel([])
    glove = Glove(model=model, system_prompt="Interop test.", server_mode=True)
    recorder = RecordingSubscriber()
    glove.add_subscriber(recorder)
    adapter = MemoryMcpAdapter(f"interop-{transport}", active=[SERVER])
    mount = await mount_mcp(glove, adapter=adapter, entries=[entry])
    try:
        glove.build()
        failed = [f.error for f in recorder.of("mcp_server_failed")]
        assert mount.loaded == [SERVER], f"server-everything over {transport} failed: {failed}"
        connection = mount.connection(SERVER)
        assert connection is not None
        listed = {tool.name: tool for tool in await connection.list_tools()}
        yield Everything(transport, glove, model, mount, listed)
    finally:
        await mount.aclose()


def _payload(result: ToolResultData) -> str:
    """The text data of a successful result (what the model reads)."""
    assert result.status == "success", result.message
    assert isinstance(result.data, str), result.data
    return result.data


# -- listing ------------------------------------------------------------------------------------


async def test_every_listed_tool_is_folded_with_its_input_schema(everything: Everything) -> None:
    assert set(everything.listed) == set(CALLS)
    assert not set(ABSENT) & set(everything.listed)
    folded = {t.name: t for t in everything.glove.tools if t.name.startswith(f"{SERVER}__")}
    assert set(folded) == {f"{SERVER}__{name}" for name in CALLS} | {READER}
    assert folded[READER].parallel_safe and not folded[READER].requires_permission
    # What the model is offered, in its next request.
    assert await everything.turn() == []  # a request in which the model only answers
    offered = {spec.name: spec for spec in everything.model.requests[-1].tools}
    for name, tool in everything.listed.items():
        bridged = folded[f"{SERVER}__{name}"]
        assert bridged.json_schema == tool.input_schema, name
        assert offered[bridged.name].input_schema == tool.input_schema, name
        assert tool.description is not None
        assert offered[bridged.name].description.startswith(tool.description), name
        assert bridged.parallel_safe is tool.read_only, name
    # The output schema is summarised in the description.
    assert offered[f"{SERVER}__get-structured-content"].description.endswith(
        "Returns: {temperature: number, conditions: string, humidity: number}"
    )


# -- text ---------------------------------------------------------------------------------------


async def test_text_results_reach_the_model_as_text(everything: Everything) -> None:
    echo, total, operation = await everything.turn(
        ("echo", CALLS["echo"]),
        ("get-sum", CALLS["get-sum"]),
        ("trigger-long-running-operation", CALLS["trigger-long-running-operation"]),
    )
    assert _payload(echo) == "Echo: hello from glove"
    assert echo.content is None
    assert _payload(total) == "The sum of 2 and 40 is 42."
    assert _payload(operation) == (
        "Long running operation completed. Duration: 0.1 seconds, Steps: 2."
    )


async def test_the_server_process_gets_its_environment(everything: Everything) -> None:
    environment = json.loads(_payload(await everything.call("get-env")))
    assert environment[MARKER] == everything.transport


# -- images -------------------------------------------------------------------------------------


async def test_an_image_reaches_the_model_as_an_image_part(everything: Everything) -> None:
    result = await everything.call("get-tiny-image")
    # The text blocks around the image are joined; the image travels as a content part.
    assert _payload(result) == "Here's the image you requested:\nThe image above is the MCP logo."
    [image] = result.content or []
    assert isinstance(image, ImagePart)
    assert image.media_type == "image/png"
    assert image.data is not None
    assert base64.b64decode(image.data).startswith(PNG_SIGNATURE)
    # The UI keeps every block as the server sent it.
    assert [block["type"] for block in result.render_data] == ["text", "image", "text"]
    assert result.render_data[1]["data"] == image.data


async def test_content_for_the_user_only_never_reaches_the_model(everything: Everything) -> None:
    result = await everything.call("get-annotated-message")
    # The text is for the assistant: the model reads it. The image is annotated for the user
    # alone: it stays in render_data for the UI and is not sent to the model.
    assert _payload(result) == "Debug: Cache hit ratio 0.95, latency 150ms"
    assert result.content is None
    text, image = result.render_data
    assert text["annotations"]["audience"] == ["assistant"]
    assert image["type"] == "image"
    assert image["annotations"]["audience"] == ["user"]
    assert base64.b64decode(image["data"]).startswith(PNG_SIGNATURE)


async def test_a_result_only_for_the_user_tells_the_model_so(everything: Everything) -> None:
    [result] = await everything.turn(
        ("get-annotated-message", {"messageType": "success", "includeImage": True})
    )
    assert _payload(result) == "[the result was shown to the user only]"
    assert result.content is None
    assert [block["annotations"]["audience"] for block in result.render_data] == [
        ["user"],
        ["user"],
    ]
    assert result.render_data[0]["text"] == "Operation completed successfully"


# -- structured content -------------------------------------------------------------------------


async def test_structured_content_reaches_the_model_as_data(everything: Everything) -> None:
    result = await everything.call("get-structured-content")
    assert result.status == "success"
    # The structured content itself, not its text copy.
    assert result.data == {"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}
    assert result.content is None
    assert [block["type"] for block in result.render_data] == ["text"]


# -- resources ----------------------------------------------------------------------------------


async def test_resource_links_reach_the_model_with_how_to_read_them(everything: Everything) -> None:
    result = await everything.call("get-resource-links")
    assert _payload(result).splitlines() == [
        "Here are 2 resource links to resources available in this server:",
        f"[resource link demo://resource/dynamic/blob/1: Blob Resource 1 — read it with {READER}]",
        f"[resource link demo://resource/dynamic/text/2: Text Resource 2 — read it with {READER}]",
    ]
    assert result.content is None
    links = [block for block in result.render_data if block["type"] == "resource_link"]
    assert [link["uri"] for link in links] == [
        "demo://resource/dynamic/blob/1",
        "demo://resource/dynamic/text/2",
    ]


async def test_an_embedded_text_resource_reaches_the_model_as_its_text(
    everything: Everything,
) -> None:
    result = await everything.call("get-resource-reference")
    before, resource, after = _payload(result).splitlines()
    assert before == "Returning resource reference for Resource 2:"
    assert re.fullmatch(r"Resource 2: This is a plaintext resource created at .+", resource)
    assert after == "You can access this resource using the URI: demo://resource/dynamic/text/2"
    embedded = result.render_data[1]
    assert embedded["type"] == "resource"
    assert embedded["resource"]["uri"] == "demo://resource/dynamic/text/2"
    assert embedded["resource"]["text"] == resource


async def test_an_embedded_blob_reaches_the_model_as_a_placeholder(everything: Everything) -> None:
    result = await everything.call("gzip-file-as-resource")
    # The model is told what the resource is and how big; its bytes stay in render_data.
    [embedded] = result.render_data
    assert embedded["type"] == "resource"
    assert embedded["resource"]["mimeType"] == "application/gzip"
    blob = base64.b64decode(embedded["resource"]["blob"])
    assert gzip.decompress(blob) == GZIP_INPUT
    assert _payload(result) == (
        f"[resource demo://resource/session/glove.txt.gz: application/gzip, {len(blob)} bytes; "
        "not shown to the model]"
    )
    assert result.content is None


async def test_the_reader_is_offered_for_a_server_with_resources(everything: Everything) -> None:
    # It declares resources and lists some, unlike servers that declare them with nothing to
    # read (tests/glove_mcp/test_resources_prompts.py): those get no reader.
    assert await everything.mount.list_resources(SERVER)
    assert READER in {t.name for t in everything.glove.tools}


async def test_the_model_reads_a_resource_link_with_the_reader(everything: Everything) -> None:
    [links] = await everything.turn(("get-resource-links", CALLS["get-resource-links"]))
    named = {b["name"]: b for b in links.render_data if b["type"] == "resource_link"}
    text_link, blob_link = named["Text Resource 2"], named["Blob Resource 1"]
    # The model follows both links with the reader the results named.
    calls = [
        ToolCall(
            id=f"{everything.transport}-read-text", name=READER, input={"uri": text_link["uri"]}
        ),
        ToolCall(
            id=f"{everything.transport}-read-blob", name=READER, input={"uri": blob_link["uri"]}
        ),
    ]
    everything.model.extend([calls, "read"])
    result = await everything.glove.process_request("read both links")
    assert result.text == "read"
    # As saved: the model receives the same results without render_data.
    received = {r.call_id: r.result for m in result.messages for r in m.tool_results or []}
    text = received[calls[0].id]
    assert re.fullmatch(r"Resource 2: This is a plaintext resource created at .+", _payload(text))
    assert text.render_data[0]["uri"] == "demo://resource/dynamic/text/2"
    # The blob resource is text/plain in base64: the model reads its text.
    blob = received[calls[1].id]
    assert re.fullmatch(r"Resource 1: This is a base64 blob created at .+", _payload(blob))
    assert "blob" in blob.render_data[0]


async def test_the_reader_reports_an_unknown_uri_to_the_model(everything: Everything) -> None:
    call = ToolCall(
        id=f"{everything.transport}-read-bad", name=READER, input={"uri": "demo://nope"}
    )
    everything.model.extend([[call], "ok"])
    await everything.glove.process_request("read a bad uri")
    [result] = [
        r.result
        for m in everything.model.requests[-1].messages
        for r in m.tool_results or []
        if r.call_id == call.id
    ]
    assert result.status == "error"
    assert result.message is not None
    assert "answered resources/read 'demo://nope' with error -32602" in result.message
    assert "demo://nope not found" in result.message


# -- resources and prompts through the mount ----------------------------------------------------


async def test_resources_and_templates_are_listed(everything: Everything) -> None:
    resources = await everything.mount.list_resources(SERVER)
    uris = {r.uri for r in resources}
    assert "demo://resource/static/document/instructions.md" in uris
    # The documents it serves from its docs folder (and, once a tool made them, session ones).
    documents = [r for r in resources if r.uri.startswith("demo://resource/static/document/")]
    assert {r.mime_type for r in documents} == {"text/markdown"}
    assert {r.name for r in documents} >= {"instructions.md", "features.md"}
    templates = {t.name: t for t in await everything.mount.list_resource_templates(SERVER)}
    assert templates["Dynamic Text Resource"].uri_template == (
        "demo://resource/dynamic/text/{resourceId}"
    )
    assert templates["Dynamic Blob Resource"].uri_template == (
        "demo://resource/dynamic/blob/{resourceId}"
    )
    assert templates["Dynamic Blob Resource"].mime_type == "application/octet-stream"


async def test_listed_and_templated_resources_are_read(everything: Everything) -> None:
    listed = await everything.mount.read_resource(
        SERVER, "demo://resource/static/document/instructions.md"
    )
    [document] = listed.contents
    assert document.mime_type == "text/markdown"
    assert document.text
    text = await everything.mount.read_resource(SERVER, "demo://resource/dynamic/text/7")
    assert re.fullmatch(r"Resource 7: This is a plaintext resource created at .+", text.text)
    blob = await everything.mount.read_resource(SERVER, "demo://resource/dynamic/blob/7")
    [contents] = blob.contents
    assert contents.text is None and contents.blob is not None
    assert base64.b64decode(contents.blob).startswith(b"Resource 7: This is a base64 blob")


async def test_reading_an_unknown_resource_says_so(everything: Everything) -> None:
    with pytest.raises(McpProtocolError, match=r"resources/read 'demo://nope'.*not found"):
        await everything.mount.read_resource(SERVER, "demo://nope")


async def test_prompts_are_listed_with_their_arguments(everything: Everything) -> None:
    prompts = {p.name: p for p in await everything.mount.list_prompts(SERVER)}
    assert {"simple-prompt", "args-prompt", "resource-prompt"} <= set(prompts)
    assert prompts["simple-prompt"].arguments == ()
    city, state = prompts["args-prompt"].arguments
    assert (city.name, city.required, city.description) == ("city", True, "Name of the city")
    assert (state.name, state.required) == ("state", False)


async def test_prompts_are_filled_in_with_their_arguments(everything: Everything) -> None:
    weather = await everything.mount.get_prompt(
        SERVER, "args-prompt", {"city": "Chicago", "state": "IL"}
    )
    [message] = weather.messages
    assert message.role == "user"
    assert message.content == McpTextContent(text="What's weather in Chicago, IL?")
    simple = await everything.mount.get_prompt(SERVER, "simple-prompt")
    assert simple.text == "This is a simple prompt without arguments."
    embedded = await everything.mount.get_prompt(
        SERVER, "resource-prompt", {"resourceType": "Text", "resourceId": "3"}
    )
    intro, resource = embedded.messages
    assert isinstance(intro.content, McpTextContent)
    assert isinstance(resource.content, McpEmbeddedResource)
    assert resource.content.resource.uri == "demo://resource/dynamic/text/3"


async def test_bad_prompt_requests_say_what_is_wrong(everything: Everything) -> None:
    with pytest.raises(
        McpProtocolError, match=r"It offers no prompt 'nope' \(prompts: .*'args-prompt'"
    ):
        await everything.mount.get_prompt(SERVER, "nope")
    with pytest.raises(
        McpProtocolError,
        match=r"Prompt 'args-prompt' \(city, state\?\): missing required argument\(s\) 'city'",
    ):
        await everything.mount.get_prompt(SERVER, "args-prompt", {"state": "IL"})


# -- tools with server-side state ---------------------------------------------------------------


async def test_toggles_switch_on_and_off(everything: Everything) -> None:
    """Each toggle is called twice, so the server stops its timers again: a stdio server with
    a live timer outlives its closed stdin until the SDK terminates it."""
    results = await everything.turn(
        ("toggle-simulated-logging", CALLS["toggle-simulated-logging"]),
        ("toggle-subscriber-updates", CALLS["toggle-subscriber-updates"]),
        ("toggle-simulated-logging", CALLS["toggle-simulated-logging"]),
        ("toggle-subscriber-updates", CALLS["toggle-subscriber-updates"]),
    )
    texts = [_payload(result) for result in results]
    assert texts[0].startswith("Started simulated, random-leveled logging for session")
    assert texts[1].startswith("Started simulated resource updated notifications for session")
    assert texts[2].startswith("Stopped simulated logging for session")
    assert texts[3].startswith("Stopped simulated resource updates for session")


# -- what the server asks, with default settings --------------------------------------------


async def test_elicitation_is_not_declared_in_server_mode_without_a_handler(
    everything: Everything,
) -> None:
    # The server registers its elicitation tools only for clients that declare elicitation;
    # a Glove in server mode has nobody to ask, so they would only ever be declined.
    assert "trigger-elicitation-request" not in everything.listed
    assert "trigger-url-elicitation" not in everything.listed
    offered = {t.name for t in everything.glove.tools}
    assert f"{SERVER}__trigger-elicitation-request" not in offered


async def test_elicitation_is_declared_in_server_mode_with_a_handler() -> None:
    entry = McpCatalogueEntry(
        id=SERVER,
        name="Everything",
        description="The MCP reference server.",
        command=[str(NODE), str(EVERYTHING), "stdio"],
    )
    glove = Glove(model=ScriptedModel([]), system_prompt="Interop test.", server_mode=True)
    adapter = MemoryMcpAdapter("interop-elicitation", active=[SERVER])
    mount = await mount_mcp(
        glove,
        adapter=adapter,
        entries=[entry],
        on_elicitation=lambda request: {"action": "decline"},
    )
    try:
        glove.build()
        offered = {t.name for t in glove.tools}
        assert f"{SERVER}__trigger-elicitation-request" in offered
        assert f"{SERVER}__trigger-url-elicitation" in offered
    finally:
        await mount.aclose()


async def test_a_tool_that_requires_a_task_runs_as_one(everything: Everything) -> None:
    report = _payload(await everything.call("simulate-research-query"))
    assert "Research Report: glove interop" in report
