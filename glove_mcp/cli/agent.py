"""``glove-mcp chat``, ``serve`` and ``demo``: an agent over the catalogue, in the terminal
or as a headless server."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from glove_core import (
    DisplayManager,
    EventsConfig,
    Glove,
    GloveError,
    ModelAdapter,
    SqliteStore,
)
from glove_core.execution import Execution
from glove_core.resources import AsyncResource
from glove_mcp.adapter import SqliteMcpAdapter
from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.cli.chat_names import NO_SERVERS, resume_hint
from glove_mcp.cli.chat_session import (
    HELP,
    NewConversation,
    choose_session,
    list_servers,
    list_sessions,
    new_session_id,
    saved_ids,
)
from glove_mcp.cli.chat_web import ChatWebPage, servable_id
from glove_mcp.cli.config import database_file, load_catalogue, open_token_store
from glove_mcp.cli.console import ConsolePrinter, chat_loop, plain
from glove_mcp.cli.console_asks import ConsoleQuestions
from glove_mcp.cli.errors import CliError, command_hint, terminal_message
from glove_mcp.cli.progress import Progress, color_wanted, retrying_policy
from glove_mcp.cli.prompt_command import handle_prompt_command
from glove_mcp.cli.script import load_script, read_script, script_model
from glove_mcp.cli.serve_auth import serve_authenticator
from glove_mcp.cli.serve_database import (
    check_database_flags,
    database_kwargs,
    session_parts,
    shown,
    start_database,
)
from glove_mcp.cli.serve_index import background_index
from glove_mcp.cli.telemetry import configure_from_env, instrument_asgi
from glove_mcp.cli.token_kind import store_kind
from glove_mcp.cli.tokens import database_token_store
from glove_mcp.connect.http import McpClientPool
from glove_mcp.mount import McpMount, mount_mcp
from glove_mcp.mount.activation_sync import follow_activations
from glove_mcp.oauth import BoundLogin, OAuthStore, UrlPolicy
from glove_mcp.resource_keys import DEFAULT_PRINCIPAL
from glove_mcp.server.session_storage import SessionStore

__all__ = ["chat", "demo", "serve"]

CHAT_PROMPT = (
    "You are a helpful assistant with access to the user's tools through MCP servers. When you "
    "need a capability you do not have, call find_capability with a short description of the "
    "need. Be concise."
)


def _with_login_hints(
    entries: list[McpCatalogueEntry], args: argparse.Namespace
) -> list[McpCatalogueEntry]:
    """Entries whose login advice (what discovery tells the model to tell the user) is the
    ``glove-mcp auth`` command with this run's ``--catalogue`` and ``--store``."""
    hinted = []
    for entry in entries:
        if "login_command" in entry.metadata or entry.command:
            hinted.append(entry)
            continue
        metadata = {**entry.metadata, "login_command": command_hint(args, "auth", entry.id)}
        hinted.append(entry.model_copy(update={"metadata": metadata}))
    return hinted


def _token_lookup(
    store: OAuthStore, entries: list[McpCatalogueEntry], args: argparse.Namespace
) -> dict[str, BoundLogin]:
    """The command's logins (principal ``default``): a server's token is sent only to the
    URL it was issued for; until ``glove-mcp auth`` ran for that URL, nothing is sent (the
    server's 401 makes discovery name the login) and nothing is refreshed."""
    policy = UrlPolicy(allow_private=getattr(args, "allow_private_oauth", False))
    return {
        e.id: BoundLogin(
            store,
            DEFAULT_PRINCIPAL,
            e.id,
            e.url,
            command_hint(args, "auth", e.id),
            url_policy=policy,
        )
        for e in entries
        if e.url
    }


def _model(args: argparse.Namespace, progress: Progress) -> ModelAdapter:
    if args.script:
        return load_script(args.script)
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise CliError(
            "no model: set ANTHROPIC_API_KEY (or pass --script FILE for an offline scripted model)",
            2,
        )
    from glove_core.models.anthropic import AnthropicModel

    return AnthropicModel(args.model, api_key=key, retry=retrying_policy(progress))


# -- chat ------------------------------------------------------------------------------------


async def chat(
    args: argparse.Namespace, *, session: str | None = None, first_line: str | None = None
) -> int:
    """``glove-mcp chat``. With ``session`` and ``first_line``, a new conversation whose
    first lines and prompt ``_cli_chat_fast`` showed already, and the line the user typed."""
    entries = _with_login_hints(load_catalogue(args.catalogue), args)
    if args.new and not args.session:
        raise CliError("--new starts a conversation with the id of --session ID: add it", 2)
    progress = Progress(sys.stderr)
    model = _model(args, progress)
    telemetry = configure_from_env()
    async with AsyncExitStack() as stack:
        if telemetry is not None:  # the last spans and metrics exported, after everything
            stack.push_async_callback(asyncio.to_thread, telemetry.shutdown)
        if isinstance(model, AsyncResource):  # its HTTP client, closed last
            stack.push_async_callback(model.aclose)
        stack.callback(progress.close)
        store = open_token_store(args.store or "file")
        db = database_file(args.db, "chat.db")
        if session is None:
            session = await choose_session(args, db)
        if args.prompt is not None:
            return await _one_shot(args, _ChatParts(entries, model, progress, store, db), session)
        parts = _ChatParts(entries, model, progress, store, db)
        while True:
            try:
                await _converse(args, parts, session, first_line)
                return 0
            except NewConversation as new:
                session, first_line = new.session_id, None


class _ChatParts:
    """What every conversation of one ``chat`` run shares."""

    def __init__(
        self,
        entries: list[McpCatalogueEntry],
        model: ModelAdapter,
        progress: Progress,
        store: OAuthStore,
        db: Path,
    ) -> None:
        self.entries = entries
        self.model = model
        self.progress = progress
        self.store = store
        self.db = db


async def _open_conversation(
    args: argparse.Namespace,
    parts: _ChatParts,
    session: str,
    stack: AsyncExitStack,
    out: TextIO,
    *,
    pause: Callable[[], None],
    resume: Callable[[], None],
    apps: bool = False,
) -> tuple[Glove, McpMount]:
    """The agent of conversation ``session``, its servers mounted; notices go to ``out``.
    With ``apps``, servers are told views can be shown (the chat serves its web page)."""
    conversation = await stack.enter_async_context(SqliteStore(parts.db, session))
    # An explicit display manager: the terminal answers what servers ask through it.
    display = DisplayManager()
    glove = Glove(
        model=parts.model,
        system_prompt=CHAT_PROMPT,
        store=conversation,
        display_manager=display,
        server_mode=args.server_mode,
    )
    stack.push_async_callback(glove.aclose)
    if not args.server_mode:
        # Every question (permissions, the server picker, sampling, forms, URLs to open) is
        # asked in the terminal, one at a time; the chat loop is waiting on the request
        # meanwhile, so the two never read stdin together. Without a terminal on stdin
        # nobody can answer: each is refused with one line instead of waiting forever.
        questions = ConsoleQuestions(
            display, out, before=pause, after=resume, interactive=sys.stdin.isatty()
        )
        stack.callback(questions.attach())
    logins = _token_lookup(parts.store, parts.entries, args)
    adapter = SqliteMcpAdapter(parts.db, session, tokens=dict(logins))
    active_ids = await adapter.get_active()
    for server_id in active_ids:
        login = logins.get(server_id)
        if login is None:
            continue
        # Only a login issued for the server's URL counts (never one the id pointed
        # elsewhere before): say what is missing, with the command that fixes it.
        check = await login.check()
        if check.stale:
            again = login.login_command
            out.write(f"{server_id} needs a new login: {check.reason} (run: {again})\n")
        elif check.state == "needs_login":
            hint = login.login_command
            out.write(f"no token for {server_id} (if it needs a login, run: {hint})\n")
    doing = f"connecting to {', '.join(active_ids)}…" if active_ids else "starting…"
    with parts.progress.step(doing):
        mount = await mount_mcp(
            glove,
            adapter=adapter,
            entries=parts.entries,
            mark_untrusted=not getattr(args, "no_untrusted_marks", False),
            apps=apps,
        )
    stack.push_async_callback(mount.aclose)
    glove.build()
    return glove, mount


async def _converse(
    args: argparse.Namespace, parts: _ChatParts, session: str, first_line: str | None
) -> None:
    """One conversation at the ``you>`` prompt; with ``first_line``, its first lines and
    prompt were shown already and that is what the user typed.

    Raises:
        NewConversation: ``/clear``; the caller opens the conversation it names.
    """
    out = sys.stdout
    async with AsyncExitStack() as stack:
        printer = ConsolePrinter(out, color=color_wanted(out), progress=parts.progress)
        if first_line is None:
            out.write(f"session {session} (resume with: {resume_hint(args, session)})\n")
            out.flush()
        # Views (MCP Apps) are shown by the conversation's web page, which the chat serves:
        # declared only where it can (an id the page can serve).
        apps = servable_id(session)
        glove, mount = await _open_conversation(
            args,
            parts,
            session,
            stack,
            out,
            pause=printer.pause,
            resume=printer.resume,
            apps=apps,
        )
        glove.add_subscriber(printer)
        web = ChatWebPage(glove, parts.db, session, printer) if apps else None
        if web is not None:
            stack.push_async_callback(web.aclose)  # before the agent and its servers close
            glove.add_subscriber(web)  # after the printer: the link goes under the result
        if first_line is None:
            active = ", ".join(mount.loaded) or NO_SERVERS
            out.write(f"active servers: {active}. /help lists commands; /quit to leave.\n")

        async def command(text: str) -> str | None:
            if text.startswith("//"):
                return text[1:]  # a line that starts with "/" for the agent
            word = text.split()[0]
            if word == "/help":
                out.write(HELP + "\n")
            elif word == "/clear":
                saved = {s for s in await saved_ids(parts.db)} | {session}
                fresh, number = new_session_id(), 2
                base = fresh
                while fresh in saved:
                    fresh, number = f"{base}-{number}", number + 1
                out.write(f"(conversation {session} is kept; a new one begins)\n")
                raise NewConversation(fresh)
            elif word == "/servers":
                await list_servers(parts.entries, list(mount.loaded), parts.store, out)
            elif word == "/sessions":
                await list_sessions(parts.db, session, out)
            elif word == "/web":
                if web is None:
                    out.write(
                        f"conversation {plain(session)} cannot be opened in the web page: its "
                        "id is not 1-128 characters from A-Z a-z 0-9 _ . : -\n"
                    )
                else:
                    await web.command(out)
            elif word in ("/prompts", "/prompt"):
                return await handle_prompt_command(text, mount, out)
            elif word.startswith("/"):
                out.write(
                    f"unknown command {plain(word)}: /help lists them (start a line with // "
                    "to send it to the agent as it is)\n"
                )
            else:
                return text
            out.flush()
            return None

        def explain(error: Exception) -> str:
            return terminal_message(error, args)[0]

        await chat_loop(glove, printer, out, command, explain=explain, first_line=first_line)


async def _one_shot(args: argparse.Namespace, parts: _ChatParts, session: str) -> int:
    """``chat -p PROMPT``: the answer alone on stdout (notices and questions on stderr);
    piped stdin is appended to the prompt as context. Returns the exit status."""
    text = args.prompt
    if not sys.stdin.isatty():
        piped = sys.stdin.read()
        if piped.strip():
            text = f"{text}\n\n<stdin>\n{piped.rstrip()}\n</stdin>"
    if not text.strip():
        raise CliError("-p needs a prompt (or text on stdin)", 2)
    progress = parts.progress
    async with AsyncExitStack() as stack:
        glove, _ = await _open_conversation(
            args, parts, session, stack, sys.stderr, pause=progress.pause, resume=progress.resume
        )
        try:
            with progress.step("thinking…"):
                result = await glove.process_request(text)
        except GloveError as exc:
            sys.stderr.write(f"glove-mcp: {terminal_message(exc, args)[0]}\n")
            return 1
    sys.stdout.write(result.text.rstrip("\n") + "\n")
    sys.stdout.flush()
    return 0


async def demo(args: argparse.Namespace) -> int:
    from glove_mcp.cli.demo_stack import run_demo

    key = os.environ.get("ANTHROPIC_API_KEY")
    progress = Progress(sys.stderr)
    try:
        return await run_demo(
            sys.stdout,
            api_key=None if args.offline else key,
            interactive=not args.no_interactive,
            offline_reason="--offline given" if args.offline and key else None,
            progress=progress,
        )
    finally:
        progress.close()


async def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from glove_mcp.cli._late_store import LateStore
    from glove_mcp.cli.login import client_metadata_url
    from glove_mcp.oauth import Connections
    from glove_mcp.server import HeadlessServer, HttpLimits, uvicorn_config
    from glove_mcp.server.access_log import ACCESS_LOGGER
    from glove_mcp.server.connections import check_public_url
    from glove_mcp.server.principals import session_owner

    api_key, authenticator = serve_authenticator(args)
    check_database_flags(args)
    telemetry = configure_from_env()
    try:
        public_url = check_public_url(args.public_url)
    except ValueError as exc:
        raise CliError(f"--public-url: {exc}", 2) from None
    catalogue = load_catalogue(args.catalogue)
    # Each principal connects servers through /connections (the operator's `glove-mcp auth`
    # is the principal `default`'s login); the agent names that route when one is missing.
    late_store = LateStore()
    connections = Connections(catalogue, late_store, client_metadata_url=client_metadata_url(args))
    entries = connections.with_connect_hints()
    # Checked now, not at the first session: a bad script is one line and exit status 2.
    script = read_script(args.script) if args.script else None
    token_kind = store_kind(args)
    db = None if args.database is not None else database_file(args.db, "server.db")
    shared_model = None if script else _model(args, Progress(enabled=False))
    execution: Execution | None = None  # --durable: set once the database is reached

    async def factory(session_id: str, conversation: SessionStore, stack: AsyncExitStack) -> Glove:
        model = script_model(script) if script else shared_model
        assert model is not None
        # The session's principal's logins only: never another principal's token.
        tokens: dict[str, Any] = dict(connections.tokens(session_owner()))
        # Events wait in the server's database: one answered "deferred" survives the session
        # being closed or the server restarting, and its id stays known (duplicates refused).
        queue, adapter = await session_parts(conversation, db, session_id, tokens, stack)
        glove = Glove(
            model=model,
            system_prompt=CHAT_PROMPT,
            store=conversation,
            # With the page, a person is there to answer permissions and elicitations.
            server_mode=not args.web,
            events=EventsConfig(queue=queue),
            execution=execution,
        )
        mount = await mount_mcp(
            glove,
            adapter=adapter,
            entries=entries,
            pool=pool,
            mark_untrusted=not args.no_untrusted_marks,
            # On a shared database the turn's activation sync loads them, under the lock.
            load_active=db is not None,
            apps=args.web,  # views (MCP Apps) only where the page can show them
        )
        stack.push_async_callback(mount.aclose)
        if db is None:  # other instances may switch this conversation's servers
            follow_activations(glove, mount)
        return glove

    # One HTTP transport for every session's mount; closed after the server (and its mounts).
    pool = McpClientPool()
    server = HeadlessServer(
        None if db is None else str(db),
        api_key,
        factory,
        authenticator=authenticator,
        max_sessions_per_principal=args.max_sessions_per_principal,
        max_pending_events=args.max_pending_events,
        body_timeout=args.body_timeout,
        max_sessions=args.max_sessions,
        idle_timeout=args.idle_timeout or None,
        web=args.web,
        public_url=public_url,
        connections=connections,
        **database_kwargs(args),
    )
    if args.access_log:
        logging.getLogger(ACCESS_LOGGER).setLevel(logging.INFO)
    await start_database(server.open, args)
    if token_kind == "database":
        # In the sessions' database: every instance uses and refreshes the same tokens,
        # one refresh at a time across machines (the store's advisory lock).
        assert server.database is not None
        try:
            store = await database_token_store(server.database, args.database)
        except CliError:
            await server.aclose()
            raise
    else:
        store = open_token_store(token_kind)
    # One token source per principal and server for every session (Connections keeps
    # them): refreshes stay single-flight and a reopened session does not start from scratch.
    late_store.inner = store
    durable = contextlib.AsyncExitStack()
    if getattr(args, "durable", False):
        from glove_mcp.cli.serve_durable import durable_execution

        try:
            execution = await durable.enter_async_context(durable_execution(args.database, server))
        except CliError:
            await server.aclose()
            raise
    limits = HttpLimits(
        header_timeout=args.header_timeout,
        keep_alive=args.keep_alive,
        max_connections=args.max_connections,
    )
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms delayed-ACK stalls
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        sock.close()
        await server.aclose()
        await durable.aclose()
        raise CliError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}", 1) from None
    sock.listen(2048)  # before the line below: a client reading it may connect at once
    port = sock.getsockname()[1]
    page = " — chat page at /" if args.web else ""
    where = "the database" if token_kind == "database" else f"the {token_kind} store"
    print(
        f"glove-mcp serve: http://{args.host}:{port} (sessions in {shown(db, args)}, OAuth "
        f"tokens in {where}){page}",
        flush=True,
    )
    # With the otel extra configured, each HTTP request is a span: the turn it runs its child.
    app = server.app if telemetry is None else instrument_asgi(server.app)
    config = uvicorn_config(app, limits, log_level="warning")
    loop = asyncio.get_running_loop()

    class Stopping(uvicorn.Server):
        """uvicorn, which on Ctrl-C or SIGTERM first ends every open stream (they would hold
        the shutdown for its whole grace period) and aborts the turns in progress. A second
        signal changes nothing (the shutdown is already quick; uvicorn's forced exit would
        skip closing the sessions and print tracebacks), and the signal is not raised again
        afterwards: the command's exit status tells which one it was."""

        stopped_by: int | None = None

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            kept = {s: signal.signal(s, self.handle_exit) for s in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for number, handler in kept.items():
                    signal.signal(number, handler)

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if self.stopped_by is not None:
                return
            self.stopped_by = sig
            self.should_exit = True
            loop.call_soon_threadsafe(server.stopping)

    uvicorn_server = Stopping(config)
    indexing = background_index(args.index_tools, catalogue, db, server.database)
    try:
        async with pool, indexing:
            await uvicorn_server.serve(sockets=[sock])
    finally:
        await durable.aclose()  # after the sessions: their turns ended or stay resumable
        closable: object = shared_model  # its HTTP client, after every session
        if isinstance(closable, AsyncResource):
            await closable.aclose()
        if telemetry is not None:
            await asyncio.to_thread(telemetry.shutdown)
    if uvicorn_server.stopped_by == signal.SIGINT:
        print("glove-mcp serve: stopped (Ctrl-C)", file=sys.stderr)
        return 130
    return 0
