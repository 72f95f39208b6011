"""``glove-mcp status``: which catalogue servers have tokens, and when they expire.

The common case (a catalogue file or the built-in one, and the token file) is read with the
standard library alone, so the command answers about as fast as the interpreter starts;
anything unusual (the keyring store, a file that is not plainly valid) goes through the full
readers, which give the precise error.
"""

from __future__ import annotations

import json
import os
import time

from glove_mcp._cli_config import DEFAULT_SERVERS, token_file_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse
    from typing import Any

__all__ = ["status"]

_TOKEN_FILE_FORMAT = ("glove-mcp-oauth", 1)


class _Unusual(Exception):
    """The fast read met something only the full readers should judge."""


def status(args: argparse.Namespace) -> int:
    """Print one line per catalogue server."""
    try:
        ids = _catalogue_ids(args.catalogue)
        logins = _logins(args.store)
    except _Unusual:
        import asyncio

        return asyncio.run(_status_in_full(args))
    for server_id in ids:
        print(_line(server_id, logins.get(server_id)))
    return 0


def _catalogue_ids(path: str | None) -> list[str]:
    servers: Any = list(DEFAULT_SERVERS)
    if path is not None:
        import tomllib  # only for a catalogue file: it costs several ms to import

        try:
            with open(os.path.expanduser(path), encoding="utf-8") as file:
                servers = tomllib.loads(file.read())["servers"]
        except (OSError, ValueError, KeyError, TypeError):
            raise _Unusual from None
    ids: list[str] = []
    for raw in servers if isinstance(servers, list) else ():
        if not isinstance(raw, dict) or not all(
            isinstance(raw.get(field), str) for field in ("id", "name", "description")
        ):
            raise _Unusual
        if not isinstance(raw.get("url"), str) and not isinstance(raw.get("command"), list):
            raise _Unusual
        ids.append(raw["id"])
    if not ids or len(set(ids)) != len(ids):
        raise _Unusual
    return ids


def _logins(store: str) -> dict[str, dict[str, Any]]:
    """Each key's stored tokens (a dict from the token file), for keys that have some."""
    if store != "file":
        raise _Unusual
    try:
        with open(token_file_name(), "rb") as file:
            doc = json.loads(file.read())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        raise _Unusual from None
    if not isinstance(doc, dict) or (doc.get("format"), doc.get("version")) != _TOKEN_FILE_FORMAT:
        raise _Unusual
    entries = doc.get("entries")
    if not isinstance(entries, dict):
        raise _Unusual
    logins: dict[str, dict[str, Any]] = {}
    for key, state in entries.items():
        if not isinstance(state, dict):
            raise _Unusual
        tokens = state.get("tokens")
        if tokens is None:
            continue
        expires_at = tokens.get("expires_at") if isinstance(tokens, dict) else False
        if isinstance(expires_at, bool) or not isinstance(expires_at, int | float | None):
            raise _Unusual  # not what the store writes: let it say what is wrong
        logins[key] = tokens
    return logins


def _line(server_id: str, tokens: dict[str, Any] | None) -> str:
    if tokens is None:
        return f"{server_id:<16} not logged in   (glove-mcp auth {server_id})"
    refresh = "refreshable" if tokens.get("refresh_token") else "no refresh token"
    expires_at = tokens.get("expires_at")
    now = time.time()
    if expires_at is None:
        when = "no expiry given"
    elif expires_at > now:
        when = f"expires in {_duration(expires_at - now)}"
    else:
        when = f"expired {_duration(now - expires_at)} ago"
    return f"{server_id:<16} logged in       {when}, {refresh}"


async def _status_in_full(args: argparse.Namespace) -> int:
    from glove_mcp._cli_config import load_catalogue, open_token_store

    store = open_token_store(args.store)
    for entry in load_catalogue(args.catalogue):
        state = await store.get(entry.id)
        tokens = state.tokens if state else None
        seen = (
            None
            if tokens is None
            else {"expires_at": tokens.expires_at, "refresh_token": tokens.refresh_token}
        )
        print(_line(entry.id, seen))
    return 0


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes} min"
    hours = minutes // 60
    return f"{hours} h {minutes % 60} min" if hours < 48 else f"{hours // 24} days"
