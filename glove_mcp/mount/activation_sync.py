"""Activation sync across instances: several processes serving one conversation (the headless
server on PostgreSQL) each keep a mount; before each turn the mount follows what the shared
adapter says is active, so every instance offers the conversation the same tools."""

from __future__ import annotations

from glove_core import Glove
from glove_core.abort import AbortSignal
from glove_mcp.mount.mcp_mount import McpMount

__all__ = ["follow_activations"]


def follow_activations(glove: Glove, mount: McpMount) -> None:
    """Before each turn, load the servers another instance activated for the conversation
    and drop those it deactivated (one read of the adapter), so every instance offers the
    conversation the same tools. Inside the turn, under the conversation's lock.

    A server that cannot be loaded is logged and the turn goes on without it, as a reload
    does.
    """

    async def sync(signal: AbortSignal) -> None:
        active = [i for i in await mount.adapter.get_active() if i in mount.entries]
        for server_id in active:
            # Recorded active already: loaded without writing it again. One that fails is
            # logged and the turn goes on without it, as a reload does.
            await mount.load(server_id)
        for server_id in [i for i in mount.loaded if i not in active]:
            await mount.deactivate(server_id)

    glove.add_turn_preparer(sync)
