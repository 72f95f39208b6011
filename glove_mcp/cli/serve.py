"""``glove-mcp serve``: a headless HTTP agent server (``glove_mcp.cli.agent`` runs it)."""

from __future__ import annotations

import os

from glove_mcp.cli.parser import (
    at_least,
    catalogue_and_store,
    model_options,
    port,
    safety_flags,
    subcommand,
)
from glove_mcp.cli.serve_auth import add_auth_flags, add_principal_limits

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse
    from collections.abc import Coroutine
    from typing import Any

__all__ = ["NAME", "add_parser", "run"]

NAME = "serve"


def add_parser(commands: Any) -> None:
    """Add ``serve`` to the command's subparsers."""
    serve = subcommand(
        commands,
        NAME,
        "a headless HTTP agent server (one agent per session)",
        "Serve agents over HTTP: POST /sessions, then POST /sessions/ID/messages. Clients "
        "send a key (GLOVE_API_KEY, or one of --keys) or a JWT (--jwt-issuer) as a bearer "
        "token; each session belongs to the principal that created it. With --database, "
        "OAuth tokens and client registrations live in that database too, shared by every "
        "instance (log in with `glove-mcp auth ID --database URL`); an explicit --store "
        "file|keyring keeps them on this machine instead.",
        "  glove-mcp serve --port 8765        # GLOVE_API_KEY: a key of 20 characters or more\n"
        "  glove-mcp serve --keys keys.toml --web    # a key per principal (see docs)\n"
        "  glove-mcp serve --jwt-issuer https://idp.example --jwt-audience glove\n"
        "  glove-mcp auth notion --database postgresql://glove@db/glove --no-browser\n"
        "  glove-mcp serve --database postgresql://glove@db/glove\n",
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=port, default=8765, help="0 picks a free port")
    serve.add_argument(
        "--web",
        action="store_true",
        help="also serve a chat page at / (it asks for the same key); the agent then asks the "
        "page for permissions and what MCP servers want to know",
    )
    serve.add_argument(
        "--access-log", action="store_true", help="log one line per request to stderr"
    )
    serve.add_argument(
        "--public-url",
        metavar="URL",
        help="the address clients and browsers reach this server at (behind a proxy or load "
        "balancer): the base of the OAuth redirect of /connections; https unless loopback",
    )
    serve.add_argument(
        "--client-metadata-url",
        metavar="URL",
        help="the HTTPS URL of this server's OAuth client metadata document (Client ID "
        "Metadata Document) for the logins of /connections, used where the authorization "
        "server supports it (otherwise: dynamic registration, deprecated); its redirect_uris "
        "must list PUBLIC_URL/oauth/callback",
    )
    add_auth_flags(serve)
    limits = serve.add_argument_group("limits")
    add_principal_limits(limits)
    limits.add_argument(
        "--max-sessions",
        type=at_least(1, int),
        metavar="N",
        help="sessions kept open at once; idle ones beyond are closed and reopened from the "
        "database on their next request (default: ulimit -n / 16, 4 to 1000)",
    )
    limits.add_argument(
        "--idle-timeout",
        type=at_least(0, float),
        default=600.0,
        metavar="SECONDS",
        help="close a session idle this long; 0 never (default 600)",
    )
    limits.add_argument(
        "--max-connections",
        type=at_least(1, int),
        metavar="N",
        help="open connections beyond which requests get 503 (default: half of ulimit -n, "
        "at most 1000)",
    )
    limits.add_argument(
        "--header-timeout",
        type=at_least(0, float, strict=True),
        default=10.0,
        metavar="SECONDS",
        help="time a connection has to send a request's headers, then 408 (default 10)",
    )
    limits.add_argument(
        "--body-timeout",
        type=at_least(0, float, strict=True),
        default=30.0,
        metavar="SECONDS",
        help="time a request body may take to arrive, then 408 (default 30)",
    )
    limits.add_argument(
        "--keep-alive",
        type=at_least(1, int),
        default=5,
        metavar="SECONDS",
        help="how long an idle keep-alive connection stays open (default 5)",
    )
    database = serve.add_argument_group("several instances (PostgreSQL; needs the postgres extra)")
    database.add_argument(
        "--database",
        metavar="URL",
        default=os.environ.get("GLOVE_DATABASE_URL"),
        help="keep sessions, events, MCP state and, unless --store is given, OAuth tokens in "
        "PostgreSQL (postgresql://user:pw@host/db; default $GLOVE_DATABASE_URL) so several "
        "instances behind a load balancer serve any session and refresh each token once; "
        "log in with `glove-mcp auth ID --database URL`; instead of --db",
    )
    database.add_argument(
        "--database-pool-min",
        type=at_least(0, int),
        default=1,
        metavar="N",
        help="pooled database connections kept open (default 1)",
    )
    database.add_argument(
        "--database-pool-max",
        type=at_least(1, int),
        default=10,
        metavar="N",
        help="most pooled database connections at once (default 10)",
    )
    database.add_argument(
        "--database-timeout",
        type=at_least(0, float, strict=True),
        default=30.0,
        metavar="SECONDS",
        help="wait this long for a free pooled connection, or to connect at start (default 30)",
    )
    database.add_argument(
        "--database-max-locks",
        type=at_least(1, int),
        default=100,
        metavar="N",
        help="most turns running at once on this instance; each holds a database connection "
        "for its conversation's lock (default 100)",
    )
    serve.add_argument(
        "--index-tools",
        type=at_least(1, float),
        default=None,
        metavar="MINUTES",
        help="every MINUTES, list the tools of the catalogue's open and stdio servers in the "
        "background, so discovery knows them before their first use (default: never; "
        "`glove-mcp servers index --db FILE` does it once)",
    )
    database.add_argument(
        "--durable",
        action="store_true",
        help="run each turn as a durable workflow in --database: when an instance dies "
        "mid-turn, another finishes the turn from its last completed step (needs the durable "
        "extra: pip install 'glove-agents[durable]')",
    )
    catalogue_and_store(serve)
    safety_flags(serve, agent=True)
    model_options(serve)
    serve.set_defaults(handler=run)


def run(args: argparse.Namespace) -> Coroutine[Any, Any, int]:
    """The ``serve`` command."""
    from glove_mcp.cli.agent import serve

    return serve(args)
