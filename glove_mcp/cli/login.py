"""``glove-mcp auth`` and ``logout``: logins kept in the command's token store (the file, the
keyring, or with ``--database`` the PostgreSQL database ``serve --database`` reads); a logout
revokes the tokens at the authorization server before deleting them."""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.cli.config import load_catalogue, token_file
from glove_mcp.cli.errors import CliError, command_hint, in_flags
from glove_mcp.cli.probe import Reach, probe, stdio_problem
from glove_mcp.cli.progress import Progress
from glove_mcp.cli.token_kind import store_kind
from glove_mcp.cli.tokens import check_token_flags, command_token_store
from glove_mcp.errors import OAuthCallbackTimeoutError, OAuthError, OAuthRevocationError
from glove_mcp.oauth import (
    BoundLogin,
    OAuthResult,
    OAuthState,
    OAuthStore,
    UrlPolicy,
    run_mcp_oauth,
)
from glove_mcp.resource_keys import DEFAULT_PRINCIPAL

__all__ = ["auth", "client_metadata_url", "entry_named", "logout"]


def entry_named(entries: list[McpCatalogueEntry], server_id: str) -> McpCatalogueEntry:
    for entry in entries:
        if entry.id == server_id:
            return entry
    known = ", ".join(e.id for e in entries)
    raise CliError(f"no server {server_id!r} in the catalogue (known: {known})", 2)


def client_metadata_url(args: argparse.Namespace) -> str | None:
    """``--client-metadata-url``, checked: an HTTPS URL with a path.

    Raises:
        CliError: another URL, or given with ``--client-id``.
    """
    url: str | None = getattr(args, "client_metadata_url", None)
    if url is None:
        return None
    if getattr(args, "client_id", None):
        raise CliError(
            "--client-metadata-url and --client-id name two different clients; give one",
            status=2,
        )
    parsed = urlsplit(url)
    if parsed.scheme != "https" or not parsed.netloc or parsed.path in ("", "/"):
        raise CliError(
            f"--client-metadata-url must be an HTTPS URL with a path, e.g. "
            f"https://example.com/glove/client.json (got {url!r})",
            status=2,
        )
    return url


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
    client_metadata_url(args)  # checked before anything is opened
    # Opened first: a database that cannot be reached stops the command before the person
    # consents to a login it could not keep.
    async with command_token_store(args) as store:
        progress = Progress(sys.stderr)
        try:
            # Asked first, without credentials: a server that needs no login (or cannot give
            # one) is told plainly, and nothing is written to the token store.
            with progress.step(f"checking {entry.url}…"):
                reach = await probe(entry, allow_private=args.allow_private_oauth)
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
    login = BoundLogin(
        store, DEFAULT_PRINCIPAL, entry.id, entry.url, entry.id, url_policy=_policy(args)
    )
    await login.bound_state()
    kept = await store.get(login.key) if args.force else None
    try:
        used = _Forced(store, login.key) if kept is not None else store
        result = await _run_login(args, entry, client, used, say, login.key)
    except BaseException:
        if kept is not None:
            # A forced login that failed leaves the tokens it started from, not none.
            await store.set(login.key, kept)
        raise
    finally:
        if fresh_file:
            _drop_if_empty(tokens)
    tools = f", {result.tool_count} tools" if result.tool_count is not None else ""
    print(f"{entry.id}: {result.status}{tools}")
    return 0


async def _run_login(
    args: argparse.Namespace,
    entry: McpCatalogueEntry,
    client: dict[str, str] | None,
    store: OAuthStore,
    say: Callable[[str], None],
    key: str,
) -> OAuthResult:
    """``run_mcp_oauth`` for ``entry`` under the resource-bound ``key``, its failures worded
    for the terminal."""
    try:
        return await run_mcp_oauth(
            entry.url,
            store,
            key,
            port=args.port,
            pre_registered_client=client,
            client_metadata_url=client_metadata_url(args),
            open_browser=not args.no_browser,
            on_progress=say,
            timeout=args.timeout,
            url_policy=UrlPolicy(allow_private=args.allow_private_oauth),
        )
    except OAuthCallbackTimeoutError:
        raise CliError(
            f"{entry.id}: no approval arrived within {args.timeout:g} s; run "
            f"`{command_hint(args, 'auth', entry.id)}` again (--timeout SECONDS for longer, "
            "--no-browser to paste the redirected URL instead)"
        ) from None
    except OAuthError as exc:
        # The message names the store key; the person knows the server by its id.
        text = str(exc).replace(repr(key), repr(entry.id))
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


class _Forced:
    """The command's store as ``auth --force`` shows it to the login: the server's tokens
    hidden until the login stores new ones, so tokens that still work are not taken as
    "already logged in" (its client registration is kept and reused)."""

    def __init__(self, store: OAuthStore, key: str) -> None:
        self._store = store
        self._key = key
        self._hiding = True

    async def get(self, key: str) -> OAuthState | None:
        state = await self._store.get(key)
        if key == self._key and self._hiding and state is not None:
            return state.model_copy(update={"tokens": None})
        return state

    async def set(self, key: str, state: OAuthState) -> None:
        if key == self._key:
            self._hiding = False
        await self._store.set(key, state)

    async def delete(self, key: str) -> None:
        if key == self._key:
            self._hiding = False
        await self._store.delete(key)

    async def clear(self) -> None:
        self._hiding = False
        await self._store.clear()


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
    entries = load_catalogue(args.catalogue)
    if args.local_only and all(entry.id != args.id for entry in entries):
        # A server removed from the catalogue (``servers remove --keep-tokens``): its tokens
        # can still be deleted here, by id; revoking needs its URL, which is gone.
        async with command_token_store(args) as store:
            if await store.get(args.id) is not None:
                await store.delete(args.id)
                print(f"{args.id}: its stored tokens were deleted (it is not in the catalogue)")
                return 0
    entry = entry_named(entries, args.id)
    async with command_token_store(args) as store:
        return await _logout_from(args, entry, store)


async def _logout_from(
    args: argparse.Namespace, entry: McpCatalogueEntry, store: OAuthStore
) -> int:
    login = BoundLogin(
        store, DEFAULT_PRINCIPAL, entry.id, entry.url, entry.id, url_policy=_policy(args)
    )
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


def _policy(args: argparse.Namespace) -> UrlPolicy:
    """The URL policy the command's OAuth fetches pass (``--allow-private-oauth`` relaxes it)."""
    return UrlPolicy(allow_private=getattr(args, "allow_private_oauth", False))
