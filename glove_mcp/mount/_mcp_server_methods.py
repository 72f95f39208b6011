"""What a mount offers beyond tools, for each loaded server: its resources and prompts, and
the roots it may work in. ``McpMount`` inherits these methods; they use only its public view
(``entries``, ``loaded``, ``connection``)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Sequence
from pathlib import Path

from glove_mcp import types as own
from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.connect import McpServerConnection
from glove_mcp.errors import (
    GloveMcpError,
    McpServerNotLoadedError,
    McpStateError,
    McpUnknownServerError,
)
from glove_mcp.mount.options import MountOptions

__all__ = ["ServerMethods"]

logger = logging.getLogger(__name__)


class ServerMethods:
    """Resources, prompts and roots of a mount's loaded servers (mixed into ``McpMount``)."""

    entries: dict[str, McpCatalogueEntry]
    options: MountOptions
    _roots: list[str | Path]

    @property
    def loaded(self) -> list[str]:
        raise NotImplementedError  # McpMount's

    def connection(self, id: str) -> McpServerConnection | None:
        raise NotImplementedError  # McpMount's

    def _check_open(self) -> None:
        raise NotImplementedError  # McpMount's

    def _roots_now(self) -> Sequence[str | Path] | Awaitable[Sequence[str | Path]]:
        given = self.options.roots
        return given() if callable(given) else list(self._roots)

    async def set_roots(self, roots: Sequence[str | Path]) -> None:
        """Replace the roots (directories or ``file://`` URIs) servers may work in and tell
        every loaded server (``roots/list_changed``). Only a mount made with ``roots=`` (a
        list) declares roots to its servers.

        Raises:
            McpStateError: the mount was made without ``roots``, or with a function (which
                already decides the roots each time a server asks).
        """
        if self.options.roots is None or callable(self.options.roots):
            raise McpStateError(
                "set_roots needs a mount made with roots=[...]; this one was made "
                + ("without roots" if self.options.roots is None else "with a roots function")
            )
        self._roots = list(roots)
        for id in self.loaded:
            connection = self.connection(id)
            if connection is None:
                continue
            try:
                await connection.notify_roots_changed()
            except GloveMcpError as exc:
                logger.info("could not tell %r the roots changed: %s", connection, exc)

    def _serving(self, id: str) -> McpServerConnection:
        """The connection of loaded server ``id``, or the error that says why there is none."""
        self._check_open()
        if id not in self.entries:
            raise McpUnknownServerError(id, list(self.entries))
        connection = self.connection(id)
        if connection is None:
            raise McpServerNotLoadedError(id, self.loaded)
        return connection

    async def list_resources(self, id: str) -> list[own.McpResource]:
        """The resources of loaded server ``id``.

        Raises:
            McpUnknownServerError: ``id`` is not in the catalogue.
            McpServerNotLoadedError: it is not loaded; ``activate`` it first.
            McpCapabilityError: it does not declare resources; and the connection's errors.
        """
        return await self._serving(id).list_resources()

    async def list_resource_templates(self, id: str) -> list[own.McpResourceTemplate]:
        """The resource templates of loaded server ``id``; raises like ``list_resources``."""
        return await self._serving(id).list_resource_templates()

    async def read_resource(self, id: str, uri: str) -> own.McpReadResult:
        """Read resource ``uri`` of loaded server ``id``; raises like ``list_resources``, and
        ``McpProtocolError`` when the server refuses (e.g. an unknown URI)."""
        return await self._serving(id).read_resource(uri)

    async def list_prompts(self, id: str) -> list[own.McpPrompt]:
        """The prompts of loaded server ``id``; raises like ``list_resources`` (with
        ``McpCapabilityError`` for a server without prompts)."""
        return await self._serving(id).list_prompts()

    async def get_prompt(
        self, id: str, name: str, arguments: dict[str, str] | None = None
    ) -> own.McpPromptResult:
        """Prompt ``name`` of loaded server ``id`` filled in with ``arguments``; raises like
        ``list_prompts``, and ``McpProtocolError`` for an unknown prompt or missing argument."""
        return await self._serving(id).get_prompt(name, arguments)
