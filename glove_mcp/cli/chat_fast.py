"""``glove-mcp chat``'s first prompt, before the heavy imports.

A new conversation has nothing to connect before its first line: no server is active in it
yet. So the chat shows what it always shows first (the session and how to resume it, that no
server is active yet, ``you>``) at once, and reads the first line while a thread imports the
model and MCP SDKs (``anthropic`` alone takes over a second) and checks the catalogue and the
script; the conversation starts with that line once they are loaded. A check that fails
meanwhile is reported as usual (the prompt erased first) with its exit status.

Resuming a conversation (``--session``, ``--continue``) and ``-p`` take the ordinary path:
those need the conversation's file, and the servers active in it connect before the prompt.

This module imports nothing heavy itself: only the standard library and the command's light
modules.
"""

from __future__ import annotations

import os
import queue
import signal
import sys
import threading

from glove_mcp.cli.chat_names import NO_SERVERS, PROMPT, new_session_id, resume_hint

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse

__all__ = ["chat"]


def _load(args: argparse.Namespace) -> None:
    """Import what the conversation needs and make the checks the ordinary path makes
    before its prompt (catalogue, script, model key), so they fail the same way."""
    import glove_mcp.cli.agent  # noqa: F401  the chat itself: glove_core, the mcp SDK
    from glove_mcp.cli.config import load_catalogue
    from glove_mcp.cli.errors import CliError

    load_catalogue(args.catalogue)
    from pathlib import Path

    from glove_core import SqliteStore
    from glove_mcp.cli.config import data_dir

    # Not created here (nothing is saved until the first line is sent); a damaged or newer
    # file is refused now, as the ordinary path refuses it before its prompt.
    db = Path(args.db).expanduser() if args.db else data_dir() / "chat.db"
    if db.is_file() and db.stat().st_size:
        SqliteStore.list_sessions_sync(db)
    if args.script:
        from glove_mcp.cli.script import read_script

        read_script(args.script)
    elif not os.environ.get("ANTHROPIC_API_KEY"):
        raise CliError(
            "no model: set ANTHROPIC_API_KEY (or pass --script FILE for an offline scripted model)",
            2,
        )
    else:
        import glove_core.models.anthropic  # noqa: F401  the SDK behind the model


def chat(args: argparse.Namespace) -> int:
    """``glove-mcp chat``: a new conversation's prompt at once, the rest loaded behind it."""
    if args.session or args.cont or args.prompt is not None or args.new:
        return _ordinary(args, None, None)
    events: queue.Queue[tuple[str, object]] = queue.Queue()

    def load() -> None:
        try:
            _load(args)
        except BaseException as exc:  # reported by the main thread, as the ordinary path would
            events.put(("failed", exc))
        else:
            events.put(("loaded", None))

    def read() -> None:
        try:
            line = sys.stdin.readline()
        except (OSError, ValueError):  # no usable stdin (closed): as its end
            line = ""
        events.put(("line", line))

    out = sys.stdout
    hinted: list[bool] = []

    def interrupted(signum: int, frame: object) -> None:
        # As at every prompt of the chat: Ctrl-C drops the typed line, the prompt is redrawn.
        out.write("\n" if hinted else "\n(Ctrl-D or /quit to leave)\n")
        hinted.append(True)
        out.write(PROMPT)
        out.flush()

    # Before the prompt shows: a Ctrl-C at it must find this handler.
    previous = signal.signal(signal.SIGINT, interrupted)
    loaded = False
    try:
        threading.Thread(target=load, name="chat-load", daemon=True).start()
        session = new_session_id()
        out.write(f"session {session} (resume with: {resume_hint(args, session)})\n")
        out.write(f"active servers: {NO_SERVERS}. /help lists commands; /quit to leave.\n")
        out.write(PROMPT)
        out.flush()
        threading.Thread(target=read, name="chat-first-line", daemon=True).start()
        while True:
            try:
                # With a timeout: the Ctrl-C handler runs between waits.
                kind, value = events.get(timeout=0.2)
            except queue.Empty:
                continue
            if kind == "failed":
                assert isinstance(value, BaseException)
                out.write("\r\x1b[K" if out.isatty() else "\n")
                out.flush()
                raise value
            if kind == "loaded":
                loaded = True
                continue
            line = str(value)
            break
    finally:
        signal.signal(signal.SIGINT, previous)
    if not line or line.strip() in ("/quit", "/exit"):
        if not line:
            out.write("\n")
        # Nothing was said and nothing is saved, but a bad catalogue or script is still the
        # error (and exit status) it is on the ordinary path.
        if not loaded:
            _wait_loaded(events)
        return 0
    return _ordinary(args, session, line, None if loaded else events)


def _wait_loaded(loading: queue.Queue[tuple[str, object]]) -> None:
    """Wait for the loader (a spinner on a terminal meanwhile); raise what it raised."""
    from glove_mcp.cli.progress import Progress

    starting = Progress(sys.stderr)
    try:
        with starting.step("starting…"):
            while True:
                kind, value = loading.get()
                if kind == "failed":
                    assert isinstance(value, BaseException)
                    raise value
                if kind == "loaded":
                    return
    finally:
        starting.close()


def _ordinary(
    args: argparse.Namespace,
    session: str | None,
    first_line: str | None,
    loading: queue.Queue[tuple[str, object]] | None = None,
) -> int:
    """The chat proper (``_cli_agent.chat``), after the loader finished."""
    if loading is not None:
        _wait_loaded(loading)
    import asyncio

    from glove_mcp.cli.progress import Progress

    # The model and MCP SDKs load here (a second or two): on a terminal, say so meanwhile.
    starting = Progress(sys.stderr)
    try:
        with starting.step("starting…"):
            from glove_mcp.cli.agent import chat as agent_chat
    finally:
        starting.close()

    # As the command does for every asynchronous command: asyncio turns Ctrl-C into
    # cancelling it, which then cleans up before KeyboardInterrupt reaches ``main``.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return asyncio.run(agent_chat(args, session=session, first_line=first_line))
