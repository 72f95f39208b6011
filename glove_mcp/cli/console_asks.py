"""Every question the agent asks, answered in the terminal: a tool's permission (allow once,
always, deny), discovery's server picker (numbered choices), an MCP server's sampling request
(approve or refuse) and its elicitations (``ElicitationPrompter``'s forms and URLs). The one
exception is the permission of a tool call a view makes on the web page (``chat_web``): the
page asks it.

One question at a time, read in a worker thread while the event loop keeps running; the
spinner is kept off the screen meanwhile. When stdin is no terminal nobody can answer: each
question is refused at once with one line saying so, and nothing waits.
"""

from __future__ import annotations

from typing import Any

from glove_core import Slot
from glove_mcp.cli.console import plain, shorten
from glove_mcp.cli.console_prompts import ElicitationPrompter, StopQuestion
from glove_mcp.connect.elicitation import ELICITATION_RENDERER

__all__ = ["PERMISSION", "PICKER", "SAMPLING", "ConsoleQuestions"]

PERMISSION = "permission_request"
"""The core's renderer for a tool's permission request."""
PICKER = "mcp_picker"
"""Discovery's ``ask_user`` renderer (``glove_mcp.discovery.capability.MCP_PICKER``; named
here so the chat does not import discovery before it needs it)."""
SAMPLING = "mcp_sampling"
"""``glove_mcp.connect.sampling.SAMPLING_RENDERER``, named here for the same reason."""

_NOBODY = "stdin is not a terminal, so nobody can answer"

# Permission answers the core understands: "once" and a refusal are not remembered; "always"
# is remembered by the conversation's store for this tool with this exact input.
_ONCE = {"granted": True, "remember": False}
_ALWAYS = True
_DENY = {"granted": False, "remember": False}


def _input(slot: Slot) -> dict[str, Any]:
    return slot.input if isinstance(slot.input, dict) else {}


class ConsoleQuestions(ElicitationPrompter):
    """Answers every question slot of the display from the terminal: permissions, the
    discovery picker, sampling approvals and elicitations (see ``ElicitationPrompter`` for
    the arguments)."""

    renderers = frozenset({ELICITATION_RENDERER, PERMISSION, PICKER, SAMPLING})

    def _answers(self, slot: Slot) -> bool:
        # A permission a view asked for (``requested_by``: its tool call from the web page)
        # is answered on the page, where the person clicked: the terminal is at its prompt
        # meanwhile, and two readers of one stdin would take each other's lines.
        if slot.renderer == PERMISSION and _input(slot).get("requested_by"):
            return False
        return super()._answers(slot)

    async def _ask(self, slot: Slot) -> tuple[Any, str]:
        if slot.renderer == PERMISSION:
            return await self._ask_permission(_input(slot))
        if slot.renderer == PICKER:
            return await self._ask_pick(_input(slot))
        if slot.renderer == SAMPLING:
            return await self._ask_sampling(_input(slot))
        return await super()._ask(slot)

    def _refuse(self, slot: Slot) -> tuple[Any, str]:
        request = _input(slot)
        if slot.renderer == PERMISSION:
            tool = plain(request.get("tool", "?"))
            return _DENY, f"denied {tool}: {_NOBODY} (run the chat on a terminal to be asked)\n"
        if slot.renderer == PICKER:
            return "", f"picked no server: {_NOBODY}\n"
        if slot.renderer == SAMPLING:
            server = plain(request.get("server", "?"))
            return False, f"refused {server}'s sampling request: {_NOBODY}\n"
        return super()._refuse(slot)

    async def _ask_permission(self, request: dict[str, Any]) -> tuple[Any, str]:
        tool = plain(request.get("tool", "?"))
        self._write(f"\nallow {tool}? {shorten(request.get('input', {}), 300)}\n")
        if request.get("description"):
            self._write(f"  ({shorten(request['description'], 200)})\n")
        while True:
            try:
                text = (
                    await self._line(
                        "  y = allow once, a = always (this input, this conversation), n = deny: "
                    )
                ).lower()
            except StopQuestion:
                return _DENY, f"(denied {tool})\n"
            if text in ("y", "yes", "once", "allow"):
                return _ONCE, f"(allowed {tool} once)\n"
            if text in ("a", "always"):
                return _ALWAYS, f"(allowed {tool}; not asked again for this input)\n"
            if text in ("n", "no", "deny", "d"):
                return _DENY, f"(denied {tool})\n"

    async def _ask_pick(self, request: dict[str, Any]) -> tuple[Any, str]:
        options = [o for o in request.get("options", []) if isinstance(o, dict) and "id" in o]
        self._write(f"\n{plain(request.get('question', 'Which server?'))}\n")
        for number, option in enumerate(options, 1):
            name = plain(option.get("name") or option["id"])
            about = f" — {shorten(option['description'], 100)}" if option.get("description") else ""
            self._write(f"  {number}) {name} [{plain(option['id'])}]{about}\n")
        self._write("  0) none of them\n")
        ids = [str(o["id"]) for o in options]
        while True:
            try:
                text = await self._line(f"  pick 0-{len(options)}: ")
            except StopQuestion:
                return "", "(picked none)\n"
            if text.isdigit() and 0 <= int(text) <= len(options):
                chosen = "" if text == "0" else ids[int(text) - 1]
            elif text in ids:
                chosen = text
            else:
                continue
            return chosen, f"(picked {plain(chosen)})\n" if chosen else "(picked none)\n"

    async def _ask_sampling(self, request: dict[str, Any]) -> tuple[Any, str]:
        server = plain(request.get("server", "?"))
        self._write(
            f"\n[{server}] asks to use the model ({plain(request.get('model', '?'))}, up to "
            f"{request.get('max_tokens', '?')} tokens):\n"
        )
        if request.get("system_prompt"):
            self._write(f"  system: {shorten(request['system_prompt'], 200)}\n")
        for message in request.get("messages", [])[-5:]:
            if isinstance(message, dict):
                who = plain(message.get("role", "?"))
                self._write(f"  {who}: {shorten(message.get('text', message), 200)}\n")
        while True:
            try:
                text = (await self._line("  approve? y / n: ")).lower()
            except StopQuestion:
                return False, f"(refused {server}'s request)\n"
            if text in ("y", "yes"):
                return True, f"(approved {server}'s request)\n"
            if text in ("n", "no"):
                return False, f"(refused {server}'s request)\n"
