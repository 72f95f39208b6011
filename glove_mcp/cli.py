"""The ``glove-mcp`` command: demo, login, status, chat and a headless server.

Errors print as one line (``--debug`` shows the traceback). Every subcommand has ``--help``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TextIO

from glove_core import (
    AbortController,
    AbortError,
    Glove,
    GloveError,
    ModelAdapter,
    ScriptedModel,
    SqliteStore,
)
from glove_mcp._cli_config import data_dir, load_catalogue, open_token_store
from glove_mcp._console import ConsolePrinter
from glove_mcp._http import McpClientPool
from glove_mcp.adapter import SqliteMcpAdapter
from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.errors import GloveMcpError, OAuthCallbackTimeoutError, OAuthError
from glove_mcp.mount import mount_mcp
from glove_mcp.oauth import OAuthStore, OAuthTokenSource, run_mcp_oauth

__all__ = ["chat_loop", "main"]

DEFAULT_MODEL = "claude-sonnet-4-5"
CHAT_PROMPT = (
    "You are a helpful assistant with access to the user's tools through MCP servers. When you "
    "need a capability you do not have, call find_capability with a short description of the "
    "need. Be concise."
)


class CliError(Exception):
    """A failure to report as one line, with the exit status to use."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


# -- shared pieces ---------------------------------------------------------------------------


def _entry(entries: list[McpCatalogueEntry], server_id: str) -> McpCatalogueEntry:
    for entry in entries:
        if entry.id == server_id:
            return entry
    known = ", ".join(e.id for e in entries)
    raise CliError(f"no server {server_id!r} in the catalogue (known: {known})", 2)


class _StoredLogin:
    """A server's OAuth tokens from the command's store: None until ``glove-mcp auth`` ran
    (the server then answers 401 and discovery names the login command); refreshed silently
    afterwards, and after a 401."""

    def __init__(self, store: OAuthStore, entry: McpCatalogueEntry) -> None:
        self._store = store
        self._id = entry.id
        self._source = OAuthTokenSource(
            store, entry.id, entry.url, login_command=f"glove-mcp auth {entry.id}"
        )

    async def access_token(self, *, force_refresh: bool = False) -> str | None:
        if await self._store.get(self._id) is None:
            return None
        return await self._source.access_token(force_refresh=force_refresh)


def _token_lookup(store: OAuthStore, entries: list[McpCatalogueEntry]) -> dict[str, Any]:
    return {e.id: _StoredLogin(store, e) for e in entries}


def load_script(path: str) -> ScriptedModel:
    """A ScriptedModel from a JSON script file (see ``ScriptedModel.from_json``)."""
    try:
        return ScriptedModel.from_json(path)
    except ValueError as exc:
        raise CliError(str(exc), 2) from None


def _model(args: argparse.Namespace) -> ModelAdapter:
    if args.script:
        return load_script(args.script)
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise CliError(
            "no model: set ANTHROPIC_API_KEY (or pass --script FILE for an offline scripted model)",
            2,
        )
    from glove_core.models.anthropic import AnthropicModel

    return AnthropicModel(args.model, api_key=key)


# -- chat ------------------------------------------------------------------------------------


async def chat_loop(glove: Glove, printer: ConsolePrinter, out: TextIO) -> None:
    """Read lines from stdin and send them to ``glove`` until ``/quit`` or end of input.

    Ctrl-C aborts the request in progress; the conversation so far is kept.
    """
    loop = asyncio.get_running_loop()
    current: list[AbortController] = []

    def interrupt() -> None:
        if current:
            current[0].abort("interrupted with Ctrl-C")
        else:
            out.write("\n(Ctrl-C: type /quit to leave)\n")
            out.flush()

    installed = True
    try:
        loop.add_signal_handler(signal.SIGINT, interrupt)
    except (NotImplementedError, RuntimeError):
        installed = False  # not the main thread, or a platform without signal handlers
    try:
        while True:
            out.write("you> ")
            out.flush()
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line:
                out.write("\n")
                return
            text = line.strip()
            if not text:
                continue
            if text in ("/quit", "/exit"):
                return
            controller = AbortController()
            current[:] = [controller]
            try:
                await glove.process_request(text, signal=controller.signal)
            except AbortError:
                printer.end_turn()
                out.write("(aborted; the conversation is kept)\n")
            except GloveError as exc:
                printer.end_turn()
                out.write(f"error: {exc}\n")
            finally:
                current.clear()
            printer.end_turn()
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)


async def _chat(args: argparse.Namespace) -> int:
    entries = load_catalogue(args.catalogue)
    model = _model(args)
    store = open_token_store(args.store)
    db = Path(args.db) if args.db else data_dir() / "chat.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    session = args.session or time.strftime("chat-%Y%m%d-%H%M%S")
    out = sys.stdout
    async with AsyncExitStack() as stack:
        conversation = await stack.enter_async_context(SqliteStore(db, session))
        glove = Glove(
            model=model, system_prompt=CHAT_PROMPT, store=conversation, server_mode=args.server_mode
        )
        stack.push_async_callback(glove.aclose)
        printer = ConsolePrinter(out, color=out.isatty())
        glove.add_subscriber(printer)
        adapter = SqliteMcpAdapter(db, session, tokens=_token_lookup(store, entries))
        out.write(f"session {session} (resume with --session {session}); connecting…\n")
        out.flush()
        for server_id in await adapter.get_active():
            if any(e.id == server_id for e in entries) and await store.get(server_id) is None:
                out.write(f"no token for {server_id}: run `glove-mcp auth {server_id}`\n")
        mount = await mount_mcp(glove, adapter=adapter, entries=entries)
        stack.push_async_callback(mount.aclose)
        glove.build()
        active = ", ".join(mount.loaded) or "none (the agent finds servers as it needs them)"
        out.write(f"active servers: {active}. /quit to leave.\n")
        await chat_loop(glove, printer, out)
    return 0


# -- auth, status, logout --------------------------------------------------------------------


# What a login error advises in the library's words, and the same in this command's flags.
_FLAG_ADVICE = (
    ("open_browser=False and paste", "--no-browser and paste"),
    ("pass it as pre_registered_client", "pass it with --client-id (and --client-secret-env)"),
    ("connect to it without OAuth", "it needs no `glove-mcp auth`"),
)


def _in_flags(message: str) -> str:
    for library, command in _FLAG_ADVICE:
        message = message.replace(library, command)
    return message


def _pre_registered(args: argparse.Namespace) -> dict[str, str] | None:
    if args.client_secret_env and not args.client_id:
        raise CliError("--client-secret-env needs --client-id", status=2)
    if not args.client_id:
        return None
    client = {"client_id": args.client_id}
    if args.client_secret_env:
        secret = os.environ.get(args.client_secret_env)
        if not secret:
            raise CliError(f"--client-secret-env: ${args.client_secret_env} is not set", status=2)
        client["client_secret"] = secret
    return client


async def _auth(args: argparse.Namespace) -> int:
    entry = _entry(load_catalogue(args.catalogue), args.id)
    store = open_token_store(args.store)
    try:
        result = await run_mcp_oauth(
            entry.url,
            store,
            entry.id,
            port=args.port,
            pre_registered_client=_pre_registered(args),
            open_browser=not args.no_browser,
            on_progress=lambda text: print(f"  {text}", flush=True),
            timeout=args.timeout,
        )
    except OAuthCallbackTimeoutError:
        raise CliError(
            f"{entry.id}: no approval arrived within {args.timeout:g} s; run `glove-mcp auth "
            f"{entry.id}` again (--timeout SECONDS for longer, --no-browser to paste the "
            "redirected URL instead)"
        ) from None
    except OAuthError as exc:
        raise CliError(f"{entry.id}: {_in_flags(str(exc))}") from None
    tools = f", {result.tool_count} tools" if result.tool_count is not None else ""
    print(f"{entry.id}: {result.status}{tools}")
    return 0


async def _status(args: argparse.Namespace) -> int:
    store = open_token_store(args.store)
    now = time.time()
    for entry in load_catalogue(args.catalogue):
        state = await store.get(entry.id)
        tokens = state.tokens if state else None
        if tokens is None:
            print(f"{entry.id:<16} not logged in   (glove-mcp auth {entry.id})")
            continue
        refresh = "refreshable" if tokens.refresh_token is not None else "no refresh token"
        if tokens.expires_at is None:
            when = "no expiry given"
        elif tokens.expires_at > now:
            when = f"expires in {_duration(tokens.expires_at - now)}"
        else:
            when = f"expired {_duration(now - tokens.expires_at)} ago"
        print(f"{entry.id:<16} logged in       {when}, {refresh}")
    return 0


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes} min"
    hours = minutes // 60
    return f"{hours} h {minutes % 60} min" if hours < 48 else f"{hours // 24} days"


async def _logout(args: argparse.Namespace) -> int:
    entry = _entry(load_catalogue(args.catalogue), args.id)
    store = open_token_store(args.store)
    await store.delete(entry.id)
    print(f"{entry.id}: logged out (tokens deleted)")
    return 0


# -- demo, serve -----------------------------------------------------------------------------


async def _demo(args: argparse.Namespace) -> int:
    from glove_mcp._demo import run_demo

    key = None if args.offline else os.environ.get("ANTHROPIC_API_KEY")
    return await run_demo(sys.stdout, api_key=key, interactive=not args.no_interactive)


async def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from glove_mcp.server import HeadlessServer

    api_key = os.environ.get(args.api_key_env, "")
    if not api_key:
        raise CliError(
            f"refusing to start without an API key: set {args.api_key_env} to the bearer key "
            "clients must send",
            2,
        )
    entries = load_catalogue(args.catalogue)
    store = open_token_store(args.store)
    db = Path(args.db) if args.db else data_dir() / "server.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    shared_model = None if args.script else _model(args)

    async def factory(session_id: str, conversation: SqliteStore, stack: AsyncExitStack) -> Glove:
        model = load_script(args.script) if args.script else shared_model
        assert model is not None
        glove = Glove(model=model, system_prompt=CHAT_PROMPT, store=conversation, server_mode=True)
        adapter = SqliteMcpAdapter(db, session_id, tokens=_token_lookup(store, entries))
        mount = await mount_mcp(glove, adapter=adapter, entries=entries, pool=pool)
        stack.push_async_callback(mount.aclose)
        return glove

    # One HTTP transport for every session's mount; closed after the server (and its mounts).
    pool = McpClientPool()
    server = HeadlessServer(str(db), api_key, factory)
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms delayed-ACK stalls
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        sock.close()
        raise CliError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}", 1) from None
    port = sock.getsockname()[1]
    print(f"glove-mcp serve: http://{args.host}:{port} (sessions in {db})", flush=True)
    config = uvicorn.Config(server.app, log_level="warning")
    async with pool:
        await uvicorn.Server(config).serve(sockets=[sock])
    return 0


# -- argument parsing ------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="glove-mcp",
        description="Agents that talk to MCP servers: try the demo, log in to servers, chat, "
        "or run a headless agent server.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser(
        "demo", help="run the whole stack locally: servers, OAuth, discovery, tools"
    )
    demo.add_argument(
        "--offline",
        action="store_true",
        help="use the scripted model even if ANTHROPIC_API_KEY is set",
    )
    demo.add_argument(
        "--no-interactive",
        action="store_true",
        help="with Claude, stop after the scripted question",
    )
    demo.set_defaults(run=_demo)

    def catalogue_and_store(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--catalogue",
            metavar="FILE",
            help="a TOML catalogue ([[servers]] id, name, description, url, tags); "
            "default: Notion and Linear",
        )
        sub.add_argument(
            "--store",
            choices=["file", "keyring"],
            default="file",
            help="where OAuth tokens live (default: a 0600 file in the data dir)",
        )

    auth = commands.add_parser("auth", help="log in to a catalogue server with OAuth")
    auth.add_argument("id", help="the catalogue id, e.g. notion")
    auth.add_argument(
        "--no-browser",
        action="store_true",
        help="print the URL and paste the redirect back (SSH, headless boxes)",
    )
    auth.add_argument("--port", type=int, default=53683, help="callback port (default 53683)")
    auth.add_argument("--timeout", type=float, default=300, help="seconds to wait for consent")
    auth.add_argument(
        "--client-id", metavar="ID", help="a client registered out of band (no registration)"
    )
    auth.add_argument(
        "--client-secret-env",
        metavar="NAME",
        help="environment variable holding that client's secret",
    )
    catalogue_and_store(auth)
    auth.set_defaults(run=_auth)

    status = commands.add_parser("status", help="show which servers have tokens, and expiry")
    catalogue_and_store(status)
    status.set_defaults(run=_status)

    logout = commands.add_parser("logout", help="delete the stored tokens of a server")
    logout.add_argument("id", help="the catalogue id")
    catalogue_and_store(logout)
    logout.set_defaults(run=_logout)

    def model_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--model",
            default=os.environ.get("GLOVE_MODEL", DEFAULT_MODEL),
            help=f"Claude model (default {DEFAULT_MODEL}; needs ANTHROPIC_API_KEY)",
        )
        sub.add_argument(
            "--script",
            metavar="FILE",
            help="offline: replies from a JSON script instead of a model",
        )
        sub.add_argument("--db", metavar="FILE", help="the SQLite file (default: in data dir)")

    chat = commands.add_parser("chat", help="an interactive agent over the catalogue")
    chat.add_argument("--session", metavar="ID", help="resume a conversation")
    chat.add_argument(
        "--server-mode",
        action="store_true",
        help="never ask for permission or a choice (headless behaviour)",
    )
    catalogue_and_store(chat)
    model_options(chat)
    chat.set_defaults(run=_chat)

    serve = commands.add_parser(
        "serve", help="a headless HTTP agent server (one agent per session)"
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    serve.add_argument(
        "--api-key-env",
        default="GLOVE_API_KEY",
        metavar="NAME",
        help="environment variable holding the clients' bearer key",
    )
    catalogue_and_store(serve)
    model_options(serve)
    serve.set_defaults(run=_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``glove-mcp`` console script."""
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.debug else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not args.debug:
        # The SDK logs its own failures with tracebacks (an OAuth flow error, a server's
        # unreadable answer) before raising them; glove turns them into one line, so the
        # terminal shows that line only.
        logging.getLogger("mcp").setLevel(logging.CRITICAL)
    try:
        status: int = asyncio.run(args.run(args))
        return status
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except (CliError, GloveError, GloveMcpError) as exc:
        if args.debug:
            raise
        print(f"glove-mcp: {exc}", file=sys.stderr)
        return exc.status if isinstance(exc, CliError) else 1
    except Exception as exc:
        if args.debug:
            raise
        print(
            f"glove-mcp: unexpected {type(exc).__name__}: {exc} (rerun with --debug)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
