"""Running a local test MCP server in a child process.

``python -m glove_mcp.testing notes`` prints the server URL as its first line and serves until
its stdin closes (so it dies with its parent) or it is terminated. ``--oauth`` puts it behind
a local OAuth authorization server (discovery, registration, PKCE; consent auto-approved, or
always denied with ``--deny``). ``spawn_server`` starts one
and yields the URL.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import threading
from collections.abc import AsyncIterator, Sequence

from mcp.server.mcpserver import MCPServer

from glove_mcp.testing.harness import McpTestServer, build_server
from glove_mcp.testing.oauth_server import serve_oauth_server
from glove_mcp.testing.servers import build_notes_server, build_tracker_server

__all__ = ["main", "spawn_server", "spawn_servers"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m glove_mcp.testing", description="Serve a local test MCP server."
    )
    parser.add_argument("kind", choices=["notes", "tracker", "paged", "sizes"])
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument(
        "--token", action="append", default=None, help="accepted bearer token (repeatable)"
    )
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    parser.add_argument(
        "--connect-latency", type=float, default=0.0, help="seconds per handshake request"
    )
    parser.add_argument(
        "--count", type=int, default=1, help="serve this many servers, one URL per line"
    )
    parser.add_argument(
        "--stdio", action="store_true", help="speak MCP over stdin/stdout instead of HTTP"
    )
    parser.add_argument(
        "--oauth",
        action="store_true",
        help="behind a local OAuth authorization server on the same origin (notes, tracker)",
    )
    parser.add_argument(
        "--deny", action="store_true", help="with --oauth: deny every authorization"
    )
    return parser


async def _serve_until_stdin_closes(args: argparse.Namespace) -> None:
    if args.count < 1 or (args.count > 1 and args.port):
        raise SystemExit("--count must be at least 1, and --port works with --count 1 only")
    if args.deny and not args.oauth:
        raise SystemExit("--deny works with --oauth only")
    builders = {"notes": build_notes_server, "tracker": build_tracker_server}
    if args.oauth and (args.kind not in builders or args.port or args.token):
        raise SystemExit("--oauth serves notes or tracker, without --port or --token")
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(args.count):
            if args.oauth:
                protected = await stack.enter_async_context(
                    serve_oauth_server(builders[args.kind], deny=args.deny)
                )
                sys.stdout.write(protected.url + "\n")
                continue
            server = McpTestServer(
                args.kind,
                tokens=set(args.token) if args.token else None,
                latency=args.latency,
                connect_latency=args.connect_latency,
                port=args.port,
            )
            await stack.enter_async_context(server)
            sys.stdout.write(server.url + "\n")
        sys.stdout.flush()
        await _until_stopped()


async def _until_stopped() -> None:
    """Wait until stdin closes, Ctrl-C or SIGTERM: the servers then close (open streams are
    cut), and the process leaves with status 0 and nothing on stderr."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for number in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not on this platform
            loop.add_signal_handler(number, stop.set)

    def watch_stdin() -> None:
        # A daemon thread, not the loop's executor: asyncio.run waits for executor threads
        # at exit, and this one would block in readline forever after a signal.
        while sys.stdin.readline():
            pass
        loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=watch_stdin, name="stdin-watch", daemon=True).start()
    await stop.wait()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m glove_mcp.testing``."""
    args = _parser().parse_args(argv)
    if args.stdio:
        server = build_server(args.kind)
        if not isinstance(server, MCPServer):
            raise SystemExit(f"the {args.kind} server cannot run over stdio")
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(server.run_stdio_async())
        return 0
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_until_stdin_closes(args))
    return 0


@contextlib.asynccontextmanager
async def spawn_server(
    kind: str = "notes",
    *,
    tokens: Sequence[str] = (),
    latency: float = 0.0,
    connect_latency: float = 0.0,
    startup_timeout: float = 30.0,
) -> AsyncIterator[str]:
    """Start a test server in a child process for the duration of the block; yields its URL.

    Raises:
        RuntimeError: the child exited or printed no URL within ``startup_timeout`` seconds.
    """
    async with spawn_servers(
        kind,
        1,
        tokens=tokens,
        latency=latency,
        connect_latency=connect_latency,
        startup_timeout=startup_timeout,
    ) as urls:
        yield urls[0]


@contextlib.asynccontextmanager
async def spawn_servers(
    kind: str = "notes",
    count: int = 1,
    *,
    tokens: Sequence[str] = (),
    latency: float = 0.0,
    connect_latency: float = 0.0,
    startup_timeout: float = 30.0,
) -> AsyncIterator[list[str]]:
    """Start ``count`` test servers (separate ports, separate data) in *one* child process;
    yields their URLs.

    Raises:
        RuntimeError: the child exited or printed fewer URLs within ``startup_timeout`` seconds.
    """
    cmd = [sys.executable, "-m", "glove_mcp.testing", kind]
    for token in tokens:
        cmd += ["--token", token]
    cmd += ["--latency", str(latency), "--connect-latency", str(connect_latency)]
    cmd += ["--count", str(count)]
    proc = await asyncio.create_subprocess_exec(
        *cmd,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        urls: list[str] = []
        try:
            async with asyncio.timeout(startup_timeout):
                while len(urls) < count:
                    line = (await proc.stdout.readline()).decode().strip()
                    if not line.startswith("http://"):
                        break
                    urls.append(line)
        except TimeoutError:
            pass
        if len(urls) < count:
            raise RuntimeError(
                f"test server {kind!r} did not start (exit code {proc.returncode}); run "
                f"`{' '.join(cmd)}` by hand to see why"
            )
        yield urls
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except TimeoutError:
            proc.kill()
            await proc.wait()
