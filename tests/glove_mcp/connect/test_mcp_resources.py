"""Resources and prompts against a real MCP server (``build_docs_server``) over HTTP: listing,
reading, prompts with arguments, every bad input, the mount's methods, and what the model sees
through bridged tools and ``<id>__read_resource``."""

from __future__ import annotations

import base64
import functools
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
import pytest
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

from glove_core import Glove, ImagePart, ScriptedModel, ToolCall, ToolResultData
from glove_mcp import McpCatalogueEntry, McpMount, MemoryMcpAdapter, connect_mcp, mount_mcp
from glove_mcp.connect import McpServerConnection, ProtocolChoice
from glove_mcp.errors import (
    McpCapabilityError,
    McpProtocolError,
    McpServerNotLoadedError,
    McpStateError,
    McpUnknownServerError,
)
from glove_mcp.mount.bridge import bridge_resource_reader, offers_resources
from glove_mcp.testing import build_paged_server, serve
from glove_mcp.testing.docs_server import (
    ARCHIVE_BYTES,
    DOCS_PAGES,
    DOCS_PROMPT_NAMES,
    DOCS_RESOURCE_URIS,
    DOCS_TOOL_NAMES,
    build_docs_server,
)
from glove_mcp.testing.servers import TINY_PNG, TRACKER_TOOL_NAMES
from glove_mcp.types import McpTextContent

# These tests read results as the server sent them, without the untrusted-content
# envelope that mount_mcp puts them in by default (tests/glove_mcp/test_untrusted_marks.py).
mount_mcp = functools.partial(mount_mcp, mark_untrusted=False)

READER = "docs__read_resource"


@pytest.fixture(params=["auto", "legacy"])
async def docs(request: pytest.FixtureRequest) -> AsyncIterator[McpServerConnection]:
    """A connection to the docs server, over the stateless protocol and the handshake."""
    protocol: ProtocolChoice = request.param
    async with (
        serve(build_docs_server()) as url,
        await connect_mcp("docs", url, protocol=protocol) as conn,
    ):
        yield conn


@pytest.fixture
async def bare() -> AsyncIterator[McpServerConnection]:
    """A connection to a server that declares tools only: no resources, no prompts."""
    async with (
        serve(build_paged_server(tool_count=2)) as url,
        await connect_mcp("bare", url) as conn,
    ):
        yield conn


# -- resources ----------------------------------------------------------------------------------


async def test_resources_are_listed(docs: McpServerConnection) -> None:
    resources = await docs.list_resources()
    assert tuple(r.uri for r in resources) == DOCS_RESOURCE_URIS
    readme = resources[0]
    assert (readme.name, readme.title, readme.mime_type) == ("readme", "Read me", "text/markdown")
    assert readme.description == "Where to start."
    assert readme.model_dump(by_alias=True, exclude_none=True)["mimeType"] == "text/markdown"


async def test_templates_are_listed(docs: McpServerConnection) -> None:
    [template] = await docs.list_resource_templates()
    assert template.uri_template == "docs://page/{page_id}"
    assert (template.name, template.mime_type) == ("page", "text/plain")
    assert template.model_dump(by_alias=True)["uriTemplate"] == "docs://page/{page_id}"


async def test_text_blob_and_templated_resources_are_read(docs: McpServerConnection) -> None:
    readme = await docs.read_resource("docs://readme")
    assert readme.text == "# Docs\nStart with docs://page/intro."
    [logo] = (await docs.read_resource("docs://logo.png")).contents
    assert (logo.mime_type, logo.text) == ("image/png", None)
    assert logo.blob is not None and base64.b64decode(logo.blob) == TINY_PNG
    page = await docs.read_resource("docs://page/auth")
    assert page.text == DOCS_PAGES["auth"]
    assert page.contents[0].uri == "docs://page/auth"


async def test_an_unknown_uri_says_which(docs: McpServerConnection) -> None:
    with pytest.raises(
        McpProtocolError,
        match=r"MCP server 'docs' answered resources/read 'docs://nope' .*Unknown resource",
    ):
        await docs.read_resource("docs://nope")
    with pytest.raises(McpProtocolError, match=r"resources/read 'docs://page/zzz'"):
        await docs.read_resource("docs://page/zzz")
    assert (await docs.read_resource("docs://readme")).text  # the connection still works


# -- prompts ------------------------------------------------------------------------------------


async def test_prompts_are_listed_with_their_arguments(docs: McpServerConnection) -> None:
    prompts = await docs.list_prompts()
    assert tuple(p.name for p in prompts) == DOCS_PROMPT_NAMES
    summarize, greet = prompts
    assert summarize.title == "Summarize a topic"
    topic, style = summarize.arguments
    assert (topic.name, topic.required) == ("topic", True)
    assert (style.name, style.required) == ("style", False)
    assert greet.arguments == ()


async def test_a_prompt_is_filled_in(docs: McpServerConnection) -> None:
    result = await docs.get_prompt("summarize", {"topic": "auth", "style": "long"})
    assert [m.role for m in result.messages] == ["user", "assistant", "user"]
    assert result.messages[0].content == McpTextContent(
        text="Summarize the docs about auth, long style."
    )
    assert result.text.startswith("Summarize the docs about auth, long style.\n\nWhich pages")
    greeting = await docs.get_prompt("greet")
    assert greeting.text == "Hello, docs!"
    assert greeting.description == "Say hello."


async def test_an_unknown_prompt_names_those_it_offers(docs: McpServerConnection) -> None:
    with pytest.raises(
        McpProtocolError,
        match=r"prompts/get 'nope' .*It offers no prompt 'nope' \(prompts: 'summarize', 'greet'\)",
    ):
        await docs.get_prompt("nope")


async def test_a_missing_required_argument_is_named(docs: McpServerConnection) -> None:
    with pytest.raises(
        McpProtocolError,
        match=r"Prompt 'summarize' \(topic, style\?\): missing required argument\(s\) 'topic'",
    ) as caught:
        await docs.get_prompt("summarize", {"style": "long"})
    assert caught.value.server == "docs"


async def test_a_non_string_argument_is_refused_before_sending(docs: McpServerConnection) -> None:
    bad: dict[str, Any] = {"topic": 3}
    with pytest.raises(TypeError, match=r"argument values must be strings; not strings: 'topic'"):
        await docs.get_prompt("summarize", bad)


# -- a server without the capability ------------------------------------------------------------


async def test_a_server_without_resources_or_prompts_says_so(bare: McpServerConnection) -> None:
    assert not offers_resources(bare)
    resources = r"MCP server 'bare' does not offer resources: it did not declare the 'resources'"
    for call in (
        bare.list_resources(),
        bare.list_resource_templates(),
        bare.read_resource("docs://readme"),
    ):
        with pytest.raises(McpCapabilityError, match=resources) as caught:
            await call
        assert (caught.value.server, caught.value.capability) == ("bare", "resources")
    prompts = r"MCP server 'bare' does not offer prompts"
    for prompt_call in (bare.list_prompts(), bare.get_prompt("greet")):
        with pytest.raises(McpCapabilityError, match=prompts):
            await prompt_call
    assert len(await bare.list_tools()) == 2  # the connection is unharmed


# -- pagination ---------------------------------------------------------------------------------


def _paged_resources_server(cursors: list[str]) -> Server[Any]:
    """A low-level server whose resources/list hands out ``cursors`` one page at a time."""
    pages = iter([*cursors, None])

    async def list_resources(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        cursor = next(pages)
        uri = f"paged://{cursor or 'last'}"
        return types.ListResourcesResult(
            resources=[types.Resource(uri=uri, name=uri)], next_cursor=cursor
        )

    return Server("paged-resources", on_list_resources=list_resources)


async def test_resources_are_listed_across_pages() -> None:
    async with (
        serve(_paged_resources_server(["a", "b"])) as url,
        await connect_mcp("paged", url) as conn,
    ):
        listed = await conn.list_resources()
    assert [r.uri for r in listed] == ["paged://a", "paged://b", "paged://last"]


async def test_a_repeated_cursor_is_an_error_not_a_loop() -> None:
    async with (
        serve(_paged_resources_server(["a", "b", "a"])) as url,
        await connect_mcp("paged", url) as conn,
    ):
        with pytest.raises(
            McpProtocolError,
            match=r"resources/list .*the server repeated the pagination cursor 'a'",
        ):
            await conn.list_resources()


# -- the mount ----------------------------------------------------------------------------------


def _entries(docs_url: str, bare_url: str) -> list[McpCatalogueEntry]:
    return [
        McpCatalogueEntry(id="docs", name="Docs", description="Documentation.", url=docs_url),
        McpCatalogueEntry(id="bare", name="Bare", description="Tools only.", url=bare_url),
        McpCatalogueEntry(id="idle", name="Idle", description="Never active.", url=bare_url),
    ]


class Mounted:
    def __init__(self, glove: Glove, model: ScriptedModel, mount: McpMount) -> None:
        self.glove = glove
        self.model = model
        self.mount = mount
        self._ids = 0

    async def results(self, *calls: tuple[str, dict[str, Any]]) -> list[ToolResultData]:
        """One request in which the model makes ``calls`` (bridged name, input) in one reply;
        the results as they were saved (the model receives them without ``render_data``)."""
        ids = [f"call-{self._ids + n}" for n in range(len(calls))]
        self._ids += len(calls)
        tool_calls = [
            ToolCall(id=i, name=name, input=args)
            for i, (name, args) in zip(ids, calls, strict=True)
        ]
        self.model.extend([tool_calls, "done"])
        done = await self.glove.process_request("go")
        assert done.text == "done"
        received = {r.call_id: r.result for m in done.messages for r in m.tool_results or []}
        return [received[i] for i in ids]


@pytest.fixture
async def mounted() -> AsyncIterator[Mounted]:
    async with serve(build_docs_server()) as docs_url, serve(build_paged_server(2)) as bare_url:
        model = ScriptedModel([])
        glove = Glove(model=model, system_prompt="test", server_mode=True)
        adapter = MemoryMcpAdapter("conv", active=["docs", "bare"])
        async with await mount_mcp(glove, adapter, _entries(docs_url, bare_url)) as mount:
            glove.build()
            yield Mounted(glove, model, mount)


async def test_the_mount_reads_resources_and_prompts_by_server_id(mounted: Mounted) -> None:
    mount = mounted.mount
    assert tuple(r.uri for r in await mount.list_resources("docs")) == DOCS_RESOURCE_URIS
    [template] = await mount.list_resource_templates("docs")
    assert template.uri_template == "docs://page/{page_id}"
    assert (await mount.read_resource("docs", "docs://page/intro")).text == DOCS_PAGES["intro"]
    assert tuple(p.name for p in await mount.list_prompts("docs")) == DOCS_PROMPT_NAMES
    prompt = await mount.get_prompt("docs", "summarize", {"topic": "tools"})
    assert prompt.messages[0].content == McpTextContent(
        text="Summarize the docs about tools, short style."
    )


async def test_the_mount_names_a_server_it_cannot_ask(mounted: Mounted) -> None:
    mount = mounted.mount
    with pytest.raises(McpUnknownServerError, match=r"'nope'.*known ids: 'bare', 'docs', 'idle'"):
        await mount.read_resource("nope", "docs://readme")
    with pytest.raises(
        McpServerNotLoadedError,
        match=r"MCP server 'idle' is not loaded in this mount "
        r"\(loaded: '(docs|bare)', '(docs|bare)'\); "
        r"activate it first with `await mount.activate\('idle'\)`",
    ):
        await mount.list_prompts("idle")
    with pytest.raises(McpCapabilityError, match="'bare' does not offer resources"):
        await mount.list_resources("bare")
    await mount.aclose()
    with pytest.raises(McpStateError, match="closed"):
        await mount.get_prompt("docs", "greet")


async def test_the_reader_is_offered_only_where_resources_are(mounted: Mounted) -> None:
    names = {t.name for t in mounted.glove.tools}
    assert {f"docs__{n}" for n in DOCS_TOOL_NAMES} | {READER} <= names
    assert "bare__read_resource" not in names
    assert READER in mounted.mount.tool_names("docs")
    reader = next(t for t in mounted.glove.tools if t.name == READER)
    assert reader.parallel_safe and not reader.requires_permission
    assert reader.spec.input_schema["required"] == ["uri"]


async def test_the_model_follows_a_resource_link_with_the_reader(mounted: Mounted) -> None:
    [found] = await mounted.results(("docs__find_doc", {"page_id": "auth"}))
    assert found.data == (
        f"Found page auth.\n[resource link docs://page/auth: Page auth — read it with {READER}]"
    )
    [page] = await mounted.results((READER, {"uri": "docs://page/auth"}))
    assert page.status == "success"
    assert page.data == DOCS_PAGES["auth"]
    assert page.render_data == [
        {"uri": "docs://page/auth", "mimeType": "text/plain", "text": DOCS_PAGES["auth"]}
    ]


async def test_the_reader_returns_images_and_placeholders(mounted: Mounted) -> None:
    logo, archive = await mounted.results(
        (READER, {"uri": "docs://logo.png"}), (READER, {"uri": "docs://archive.bin"})
    )
    assert logo.data == (
        f"[resource docs://logo.png: image/png, {len(TINY_PNG)} bytes; attached as an image]"
    )
    assert logo.content == [
        ImagePart(media_type="image/png", data=base64.b64encode(TINY_PNG).decode())
    ]
    assert archive.data == (
        "[resource docs://archive.bin: application/octet-stream, 1,024 bytes; "
        "not shown to the model]"
    )
    assert archive.content is None
    assert base64.b64decode(archive.render_data[0]["blob"]) == ARCHIVE_BYTES


async def test_the_reader_turns_bad_input_into_errors_the_model_reads(mounted: Mounted) -> None:
    unknown, empty, missing = await mounted.results(
        (READER, {"uri": "docs://nope"}), (READER, {"uri": ""}), (READER, {})
    )
    assert unknown.status == "error"
    assert unknown.message is not None
    assert "answered resources/read 'docs://nope'" in unknown.message
    assert "Unknown resource: docs://nope" in unknown.message
    for bad in (empty, missing):
        assert bad.status == "error"
        assert bad.message is not None and "uri" in bad.message


async def test_content_for_the_user_only_stays_out_of_the_models_view(mounted: Mounted) -> None:
    [status] = await mounted.results(("docs__build_status", {}))
    assert status.data == "Build passed."
    assert [block["text"] for block in status.render_data] == [
        "Build passed.",
        "raw build log: 412 lines",
    ]
    assert status.render_data[1]["annotations"]["audience"] == ["user"]


async def test_embedded_blobs_reach_the_model_as_image_or_placeholder(mounted: Mounted) -> None:
    logo, archive = await mounted.results(
        ("docs__embedded_logo", {}), ("docs__embedded_archive", {})
    )
    assert logo.data == ""
    assert logo.content == [
        ImagePart(media_type="image/png", data=base64.b64encode(TINY_PNG).decode())
    ]
    assert archive.data == (
        "[resource docs://archive.bin: application/octet-stream, 1,024 bytes; "
        "not shown to the model]"
    )
    assert archive.content is None
    assert archive.render_data[0]["resource"]["blob"] == base64.b64encode(ARCHIVE_BYTES).decode()


async def test_exclude_tools_can_hide_the_reader() -> None:
    async with serve(build_docs_server()) as url:
        glove = Glove(model=ScriptedModel([]), system_prompt="test", server_mode=True)
        entry = McpCatalogueEntry(
            id="docs", name="Docs", description="d", url=url, exclude_tools=["read_resource"]
        )
        adapter = MemoryMcpAdapter("conv", active=["docs"])
        async with await mount_mcp(glove, adapter, [entry]) as mount:
            assert mount.loaded == ["docs"]
            assert READER not in mount.tool_names("docs")
            assert len(mount.tool_names("docs")) == len(DOCS_TOOL_NAMES)


async def test_a_reader_on_a_server_without_resources_reports_it(
    bare: McpServerConnection,
) -> None:
    reader = bridge_resource_reader(bare)
    assert reader.name == "bare__read_resource"
    model = ScriptedModel([[ToolCall(id="r", name=reader.name, input={"uri": "x://y"})], "ok"])
    glove = Glove(model=model, system_prompt="test", server_mode=True).fold(reader).build()
    await glove.process_request("read")
    [result] = [r.result for m in model.requests[-1].messages for r in m.tool_results or []]
    assert result.status == "error"
    assert result.message is not None
    assert "MCP server 'bare' does not offer resources" in result.message


def _declares_resources_but(answer: str) -> Server[Any]:
    """A server with one tool that declares resources, then answers ``resources/list`` and
    ``resources/templates/list`` with nothing (``"empty"``) or "Method not found"."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="t", input_schema={"type": "object"})])

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        if answer == "empty":
            return types.ListResourcesResult(resources=[])
        raise MCPError(types.METHOD_NOT_FOUND, "Method not found")

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        if answer == "empty":
            return types.ListResourceTemplatesResult(resource_templates=[])
        raise MCPError(types.METHOD_NOT_FOUND, "Method not found")

    return Server(
        answer,
        on_list_tools=list_tools,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
    )


@pytest.mark.parametrize("answer", ["empty", "not-found"])
async def test_no_reader_where_resources_are_declared_but_none_are_listed(answer: str) -> None:
    async with serve(_declares_resources_but(answer)) as url:
        glove = Glove(model=ScriptedModel([]), system_prompt="test", server_mode=True)
        entry = McpCatalogueEntry(id="hollow", name="Hollow", description="d", url=url)
        adapter = MemoryMcpAdapter("conv", active=["hollow"])
        async with await connect_mcp("hollow", url) as connection:
            assert offers_resources(connection)  # it declares them
        async with await mount_mcp(glove, adapter, [entry]) as mount:
            assert mount.loaded == ["hollow"]
            assert set(mount.tool_names("hollow")) == {"hollow__t"}


async def test_no_reader_for_a_fastmcp_server_with_tools_only() -> None:
    # MCPServer (FastMCP) declares resources whatever it holds; the tracker holds none.
    async with serve("tracker") as url:
        glove = Glove(model=ScriptedModel([]), system_prompt="test", server_mode=True)
        entry = McpCatalogueEntry(id="tracker", name="Tracker", description="d", url=url)
        adapter = MemoryMcpAdapter("conv", active=["tracker"])
        async with await connect_mcp("tracker", url) as connection:
            assert offers_resources(connection)  # it declares them
        async with await mount_mcp(glove, adapter, [entry]) as mount:
            assert mount.loaded == ["tracker"]
            assert set(mount.tool_names("tracker")) == {
                f"tracker__{name}" for name in TRACKER_TOOL_NAMES
            }
