"""``glove-mcp auth ID``: log in to a catalogue server with OAuth (``glove_mcp.cli.login``
does the work)."""

from __future__ import annotations

from glove_mcp.cli.parser import (
    at_least,
    catalogue_and_store,
    port,
    safety_flags,
    subcommand,
    token_database,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse
    from collections.abc import Coroutine
    from typing import Any

__all__ = ["NAME", "add_parser", "run"]

NAME = "auth"


def add_parser(commands: Any) -> None:
    """Add ``auth`` to the command's subparsers."""
    sub = subcommand(
        commands,
        NAME,
        "log in to a catalogue server with OAuth",
        "Log in to one catalogue server with OAuth and keep its tokens. Servers that need no "
        "login (open HTTP servers, stdio servers) are recognised and nothing is saved. Tokens "
        'that still work are kept ("already logged in") unless --force is given; a forced '
        "login that fails keeps the old tokens.",
        "  glove-mcp auth notion\n"
        "  glove-mcp auth notion --no-browser          over SSH: paste the redirect back\n"
        "  glove-mcp auth notion --force               log in again (another account)\n"
        "  glove-mcp auth tracker --catalogue servers.toml --port 0\n"
        "  glove-mcp auth notion --client-metadata-url https://example.com/glove/client.json\n",
    )
    sub.add_argument("id", help="the catalogue id, e.g. notion")
    sub.add_argument(
        "--force",
        action="store_true",
        help="log in again even when the stored tokens still work",
    )
    sub.add_argument(
        "--no-browser",
        action="store_true",
        help="print the URL and paste the redirect back (SSH, headless boxes)",
    )
    sub.add_argument("--port", type=port, default=53683, help="callback port; 0 picks a free one")
    sub.add_argument(
        "--timeout",
        type=at_least(0, float, strict=True),
        default=300,
        metavar="SECONDS",
        help="how long to wait for consent",
    )
    sub.add_argument(
        "--client-id", metavar="ID", help="a client registered out of band (no registration)"
    )
    sub.add_argument(
        "--client-metadata-url",
        metavar="URL",
        help="the HTTPS URL of this client's metadata document (Client ID Metadata Document), "
        "used as client id where the authorization server supports it; otherwise the client "
        "registers dynamically (deprecated). The document must list "
        "http://127.0.0.1:PORT/callback (see --port) among its redirect_uris",
    )
    sub.add_argument(
        "--client-secret-env",
        metavar="NAME",
        help="environment variable holding that client's secret",
    )
    catalogue_and_store(sub)
    safety_flags(sub)
    token_database(sub)
    sub.set_defaults(handler=run)


def run(args: argparse.Namespace) -> Coroutine[Any, Any, int]:
    """The ``auth`` command."""
    from glove_mcp.cli.login import auth

    return auth(args)
