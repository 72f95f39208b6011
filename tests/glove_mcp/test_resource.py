"""AsyncResource (glove_core.resources): the shared base of what glove_mcp lets you close."""

from __future__ import annotations

import pytest

from glove_core.resources import AsyncResource
from glove_mcp import McpServerConnection
from glove_mcp.connect import McpClientPool
from glove_mcp.testing import McpTestServer


class Closable(AsyncResource):
    def __init__(self) -> None:
        self.closed = 0

    async def aclose(self) -> None:
        self.closed += 1


async def test_leaving_the_block_closes_it_even_on_an_error() -> None:
    resource = Closable()
    with pytest.raises(ValueError, match="boom"):
        async with resource as entered:
            assert entered is resource
            raise ValueError("boom")
    assert resource.closed == 1


def test_a_resource_without_aclose_cannot_be_made() -> None:
    class Incomplete(AsyncResource):
        pass

    with pytest.raises(TypeError, match="aclose"):
        Incomplete()  # type: ignore[abstract]


def test_glove_mcp_resources_share_the_base() -> None:
    for kind in (McpClientPool, McpServerConnection, McpTestServer):
        assert issubclass(kind, AsyncResource)


async def test_a_connection_closes_under_either_name() -> None:
    async with McpTestServer("notes") as server:
        conn = McpServerConnection("notes", server.url)
        await conn.connect()
        await conn.aclose()
        await conn.close()  # idempotent
        assert conn.state.value == "closed"
