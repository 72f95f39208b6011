"""``glove-mcp auth`` and ``logout``: logins kept in the command's token store; a logout
revokes the tokens at the authorization server before deleting them."""

from __future__ import annotations

import argparse
import os

from glove_mcp._cli_config import load_catalogue, open_token_store
from glove_mcp._cli_errors import CliError
from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.errors import OAuthCallbackTimeoutError, OAuthError, OAuthRevocationError
from glove_mcp.oauth import OAuthTokenSource, run_mcp_oauth

__all__ = ["auth", "entry_named", "logout"]


def entry_named(entries: list[McpCatalogueEntry], server_id: str) -> McpCatalogueEntry:
    for entry in entries:
        if entry.id == server_id:
            return entry
    known = ", ".join(e.id for e in entries)
    raise CliError(f"no server {server_id!r} in the catalogue (known: {known})", 2)


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


async def auth(args: argparse.Namespace) -> int:
    entry = entry_named(load_catalogue(args.catalogue), args.id)
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


async def logout(args: argparse.Namespace) -> int:
    entry = entry_named(load_catalogue(args.catalogue), args.id)
    store = open_token_store(args.store)
    if args.local_only:
        await store.delete(entry.id)
        print(f"{entry.id}: logged out (tokens deleted here, not revoked at the server)")
        return 0
    # Revoked first, deleted after: a token deleted here but still valid at the server is
    # a login the person believes is gone.
    try:
        outcome = await OAuthTokenSource(store, entry.id, entry.url).revoke()
    except OAuthRevocationError as exc:
        raise CliError(
            f"{entry.id}: {exc.reason} at {exc.endpoint}: the tokens were not revoked and are "
            f"kept; run `glove-mcp logout {entry.id}` again, or `glove-mcp logout {entry.id} "
            "--local-only` to delete them here anyway"
        ) from None
    await store.delete(entry.id)
    if outcome == "revoked":
        print(f"{entry.id}: logged out (tokens revoked at the server and deleted)")
    elif outcome == "no_revocation_endpoint":
        print(
            f"{entry.id}: logged out (tokens deleted; the server offers no revocation, so "
            "they stay valid there until they expire: remove the app's access in the "
            "provider's account settings to end them now)"
        )
    else:
        print(f"{entry.id}: not logged in (no tokens stored)")
    return 0
