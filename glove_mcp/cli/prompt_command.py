"""The chat commands ``/prompts`` and ``/prompt <server> <name> [key=value ...]`` of
``glove-mcp chat``: list the loaded servers' prompts, or fill one in and send its text as the
user's request.
"""

from __future__ import annotations

import shlex
from typing import TextIO

from glove_mcp.errors import GloveMcpError, McpCapabilityError
from glove_mcp.mount import McpMount
from glove_mcp.types import McpEmbeddedResource, McpPrompt, McpPromptResult, McpTextContent

__all__ = ["handle_prompt_command"]

_USAGE = "usage: /prompt <server> <name> [key=value ...]   (/prompts lists them)"


async def handle_prompt_command(text: str, mount: McpMount, out: TextIO) -> str | None:
    """Handle one line the user typed in the chat.

    Args:
        text: the line as typed.
        mount: the chat's mount; its loaded servers are asked.
        out: where listings and errors are written.

    Returns:
        The request to send to the agent: ``text`` itself when it is no prompt command, the
        prompt's text for ``/prompt``; None when a listing or an error was written instead.
    """
    command, _, rest = text.strip().partition(" ")
    if command == "/prompts" and not rest.strip():
        await _list(mount, out)
        return None
    if command != "/prompt":
        return text
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        _fail(out, f"cannot read the arguments ({exc}); {_USAGE}")
        return None
    if len(words) < 2:
        _fail(out, _USAGE)
        return None
    server, name, pairs = words[0], words[1], words[2:]
    arguments: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            _fail(out, f"arguments are key=value, not {pair!r}; {_USAGE}")
            return None
        arguments[key] = value
    try:
        result = await mount.get_prompt(server, name, arguments or None)
    except GloveMcpError as exc:
        _fail(out, str(exc))
        return None
    request = _request_text(result)
    if not request:
        _fail(out, f"prompt {name!r} of {server!r} has no text to send")
        return None
    return request


async def _list(mount: McpMount, out: TextIO) -> None:
    if not mount.loaded:
        out.write("no MCP server is loaded\n")
    for server in mount.loaded:
        try:
            prompts = await mount.list_prompts(server)
        except McpCapabilityError:
            out.write(f"{server}: offers no prompts\n")
            continue
        except GloveMcpError as exc:
            out.write(f"{server}: error: {exc}\n")
            continue
        if not prompts:
            out.write(f"{server}: no prompts\n")
        for prompt in prompts:
            out.write(f"{server} {_signature(prompt)}\n")
    out.flush()


def _signature(prompt: McpPrompt) -> str:
    args = " ".join(f"{a.name}=…" if a.required else f"[{a.name}=…]" for a in prompt.arguments)
    about = prompt.description or prompt.title
    return " ".join(part for part in (prompt.name, args, f"— {about}" if about else "") if part)


def _request_text(result: McpPromptResult) -> str:
    """The prompt's text blocks and embedded text resources, in order; other media are left
    out (the chat sends text)."""
    parts: list[str] = []
    for message in result.messages:
        block = message.content
        if isinstance(block, McpTextContent):
            parts.append(block.text)
        elif isinstance(block, McpEmbeddedResource) and block.resource.text is not None:
            parts.append(block.resource.text)
    return "\n\n".join(parts)


def _fail(out: TextIO, message: str) -> None:
    out.write(f"error: {message}\n")
    out.flush()
