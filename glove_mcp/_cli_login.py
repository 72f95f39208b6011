"""``glove-mcp auth`` and ``logout``: logins kept in the command's token store (the file, the
keyring, or with ``--database`` the PostgreSQL database ``serve --database`` reads); a logout
revokes the tokens at the authorization server before deleting them."""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from pathlib import Path

from glove_mcp._cli_config import load_catalogue, token_file
from glove_mcp._cli_errors import CliError, command_hint, in_flags
from glove_mcp._cli_probe import Reach, probe, stdio_problem
from glove_mcp._cli_progress import Progress
from glove_mcp._cli_token_kind import store_kind
from glove_mcp._cli_tokens import check_token_flags, command_token_store
from glove_mcp._resource_keys import DEFAULT_PRINCIPAL
from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.errors import OAuthCallbackTimeoutError, OAuthError, OAuthRevocationError
from glove_mcp.oauth import BoundLogin, OAuthStore, run_mcp_oauth

__all__ = ["auth", "entry_named", "logout"]


def entry_named(entries: list[McpCatalogueEntry], server_id: str) -> McpCatalogueEntry:
    for entry in entries:
        if entry.id == server_id:
            return entry
    known = ", ".join(e.id for e in entries)
    raise CliError(f"no server {server_id!r} in the catalogue (known: {known})", 2)


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


def _needs_no_login(entry: McpCatalogueEntry, reach: Reach | None) -> str | None:
    """Why ``entry`` needs no ``glove-mcp auth``, or None when it does."""
    if entry.command:
        program = " ".join(entry.command)
        problem = stdio_problem(entry)
        note = f"; note: {problem}" if problem else ""
        return (
            f"a stdio server (the command `{program}` starts it), so it needs no login; "
            f"nothing was saved{note}"
        )
    if reach is not None and reach.access == "open":
        return (
            f"{entry.url} answers without a login ({reach.detail}), so it needs none; nothing "
            "was saved"
        )
    return None


async def auth(args: argparse.Namespace) -> int:
    check_token_flags(args)
    entry = entry_named(load_catalogue(args.catalogue), args.id)
    plain = _needs_no_login(entry, None)
    if plain is not None:
        print(f"{entry.id}: {plain}")
        return 0
    client = _pre_registered(args)
    # Opened first: a database that cannot be reached stops the command before the person
    # consents to a login it could not keep.
    async with command_token_store(args) as store:
        progress = Progress(sys.stderr)
        try:
            # Asked first, without credentials: a server that needs no login (or cannot give
            # one) is told plainly, and nothing is written to the token store.
            with progress.step(f"checking {entry.url}…"):
                reach = await probe(entry)
            plain = _needs_no_login(entry, reach)
            if plain is not None:
                print(f"{entry.id}: {plain}")
                return 0
            if reach.access == "unreachable":
                raise CliError(
                    f"{entry.id}: {reach.detail}; check that the server is running and that "
                    f"the catalogue's url is right, then run "
                    f"`{command_hint(args, 'auth', entry.id)}` again. Nothing was saved."
                )
            if reach.access == "no_oauth":
                raise CliError(
                    f"{entry.id}: {entry.url} needs credentials but does not use OAuth: "
                    f"{reach.detail}; `glove-mcp auth` cannot log in to it. Nothing was saved."
                )
            return await _login(args, entry, client, progress, store)
        finally:
            progress.close()


async def _login(
    args: argparse.Namespace,
    entry: McpCatalogueEntry,
    client: dict[str, str] | None,
    progress: Progress,
    store: OAuthStore,
) -> int:
    tokens = token_file()
    fresh_file = store_kind(args) == "file" and not tokens.exists()

    def say(text: str) -> None:
        progress.clear()
        print(f"  {text}", flush=True)

    # A login stored under the id for this URL moves to its resource-bound key first, so
    # "already logged in" still holds; one for another URL is left alone (never sent there).
    login = BoundLogin(store, DEFAULT_PRINCIPAL, entry.id, entry.url, entry.id)
    await login.bound_state()
    try:
        result = await run_mcp_oauth(
            entry.url,
            store,
            login.key,
            port=args.port,
            pre_registered_client=client,
            open_browser=not args.no_browser,
            on_progress=say,
            timeout=args.timeout,
        )
    except OAuthCallbackTimeoutError:
        raise CliError(
            f"{entry.id}: no approval arrived within {args.timeout:g} s; run "
            f"`{command_hint(args, 'auth', entry.id)}` again (--timeout SECONDS for longer, "
            "--no-browser to paste the redirected URL instead)"
        ) from None
    except OAuthError as exc:
        # The message names the store key; the person knows the server by its id.
        text = str(exc).replace(repr(login.key), repr(entry.id))
        raise CliError(f"{entry.id}: {in_flags(text, args, entry.id)}") from None
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise CliError(
                f"{entry.id}: port {args.port} for the OAuth callback is in use (another "
                "login, or another program); pass --port N for another one, or --port 0 for "
                "any free port",
                2,
            ) from None
        raise
    finally:
        if fresh_file:
            _drop_if_empty(tokens)
    tools = f", {result.tool_count} tools" if result.tool_count is not None else ""
    print(f"{entry.id}: {result.status}{tools}")
    return 0


def _drop_if_empty(path: Path) -> None:
    """Remove a token file this run created and left with no entry (a failed first login):
    a failed ``auth`` leaves nothing behind."""
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("entries") == {}:
            path.unlink()
    except (OSError, ValueError, AttributeError):
        return


async def logout(args: argparse.Namespace) -> int:
    check_token_flags(args)
    entry = entry_named(load_catalogue(args.catalogue), args.id)
    async with command_token_store(args) as store:
        return await _logout_from(args, entry, store)


async def _logout_from(
    args: argparse.Namespace, entry: McpCatalogueEntry, store: OAuthStore
) -> int:
    login = BoundLogin(store, DEFAULT_PRINCIPAL, entry.id, entry.url, entry.id)
    state = await login.bound_state()
    if state is None or state.tokens is None:
        # A login that never finished, or one issued for another URL (kept under the id by
        # an older glove): nothing this server's tokens could be revoked with.
        await store.delete(login.key)
        await store.delete(entry.id)
        print(f"{entry.id}: not logged in: there were no tokens to delete")
        return 0
    if args.local_only:
        await login.forget()
        print(f"{entry.id}: logged out (tokens deleted here, not revoked at the server)")
        return 0
    # Revoked first, deleted after: a token deleted here but still valid at the server is
    # a login the person believes is gone.
    try:
        outcome = await login.source.revoke()
    except OAuthRevocationError as exc:
        again = command_hint(args, "logout", entry.id)
        raise CliError(
            f"{entry.id}: {exc.reason} at {exc.endpoint}: the tokens were not revoked and are "
            f"kept; run `{again}` again, or `{again} --local-only` to delete them here anyway"
        ) from None
    await login.forget()
    if outcome == "no_revocation_endpoint":
        print(
            f"{entry.id}: logged out (tokens deleted; the server offers no revocation, so "
            "they stay valid there until they expire: remove the app's access in the "
            "provider's account settings to end them now)"
        )
    else:
        print(f"{entry.id}: logged out (tokens revoked at the server and deleted)")
    return 0
