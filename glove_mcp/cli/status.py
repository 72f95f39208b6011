"""``glove-mcp status``: which catalogue servers have tokens, and when they expire; which
need no login (stdio servers; with ``--check``, open servers); ``--json`` for scripts.

The common case (a catalogue file or the built-in one, and the token file) is read with the
standard library alone, so the command answers about as fast as the interpreter starts;
anything unusual (the keyring store, the ``--database`` store, a file that is not plainly
valid) goes through the full readers, which give the precise error.
"""

from __future__ import annotations

import os
import time

from glove_mcp.cli.parser import catalogue_and_store, json_output, subcommand, token_database

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse
    from typing import Any

__all__ = ["NAME", "add_parser", "status"]

NAME = "status"


def add_parser(commands: Any) -> None:
    """Add ``status`` to the command's subparsers."""
    sub = subcommand(
        commands,
        NAME,
        "show which servers have tokens, and expiry",
        "One line per catalogue server: logged in (and when the token expires), no tokens, "
        "or no login needed (stdio servers). --check also asks every HTTP server (with the "
        "stored tokens, where there are some) and says which need attention.",
        "  glove-mcp status\n  glove-mcp status --check\n  glove-mcp status --json\n"
        "\nexit status:\n"
        "  0  all good (with --check: every server answered as expected)\n"
        "  1  with --check: something needs attention (a server down, a login needed or no\n"
        "     longer working)\n"
        "  2  a usage or catalogue mistake\n",
    )
    sub.add_argument(
        "--check",
        action="store_true",
        help="ask every HTTP server whether it answers (with its tokens, if stored), and exit "
        "1 if one needs attention",
    )
    catalogue_and_store(sub)
    token_database(sub)
    json_output(sub)
    sub.set_defaults(handler=status, light=True)


_TOKEN_FILE_FORMAT = ("glove-mcp-oauth", 1)


class _Unusual(Exception):
    """The fast read met something only the full readers should judge."""


def status(args: argparse.Namespace) -> int:
    """Print one line per catalogue server (or, with ``--json``, one JSON list); with
    ``--check``, exit 1 when a server needs attention."""
    from glove_mcp.cli.token_kind import store_kind

    if args.database or args.store is not None:
        from glove_mcp.cli.tokens import check_token_flags

        check_token_flags(args)
    if args.check:
        import asyncio

        # Every server is contacted: the SDK gets loaded anyway, so the full readers (the
        # one catalogue validation, any token store) cost nothing extra.
        return asyncio.run(_status_in_full(args))
    try:
        servers = _catalogue_servers(args.catalogue)
        logins = _bound_logins(servers, _logins(store_kind(args)))
    except _Unusual:
        import asyncio

        return asyncio.run(_status_in_full(args))
    _report(args, [_row(args, server, logins.get(server["id"])) for server in servers])
    return 0


def _catalogue_servers(path: str | None) -> list[dict[str, Any]]:
    """Each server's id, url and command, read with the standard library alone when every
    entry is plainly valid (``plainly_valid``); anything else goes to ``load_catalogue``, the
    one validation every command applies, which names the problem."""
    from glove_mcp.cli.config import DEFAULT_SERVERS, catalogue_file_name

    servers: Any = list(DEFAULT_SERVERS)
    if path is None and os.path.exists(catalogue_file_name()):
        path = catalogue_file_name()
    if path is not None:
        import tomllib  # only for a catalogue file: it costs several ms to import

        try:
            with open(os.path.expanduser(path), encoding="utf-8") as file:
                servers = tomllib.loads(file.read())["servers"]
        except (OSError, ValueError, KeyError, TypeError):
            raise _Unusual from None
    found: list[dict[str, Any]] = []
    for raw in servers if isinstance(servers, list) else ():
        if not plainly_valid(raw):
            raise _Unusual  # let the full reader say what is wrong with it
        found.append(
            {"id": raw["id"], "url": raw.get("url", ""), "command": raw.get("command", [])}
        )
    ids = [server["id"] for server in found]
    if not ids or len(set(ids)) != len(ids):
        raise _Unusual
    return found


_PLAIN_FIELDS = frozenset({"id", "name", "description", "url", "command", "tags"})
# The plain forms, checked with str methods: compiling patterns would cost ``status`` more
# than reading the catalogue.
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")


def _plain_id(text: str) -> bool:
    """Letters, digits, ``-`` and single ``_`` between them, starting with a letter or digit."""
    return (
        bool(text)
        and text[0] in _ID_CHARS
        and text[0] not in "-_"
        and _ID_CHARS.issuperset(text)
        and "__" not in text
        and not text.endswith("_")
    )


def _plain_url(url: str) -> bool:
    """``http(s)://host[:port][/?#printable ASCII]``, the host of letters, digits, ``.``, ``-``."""
    for scheme in ("https://", "http://"):
        if url.startswith(scheme):
            rest = url[len(scheme) :]
            break
    else:
        return False
    cut = next((i for i, c in enumerate(rest) if c in "/?#"), len(rest))
    host, colon, port = rest[:cut].partition(":")
    if not host or host[0] in ".-" or not _HOST_CHARS.issuperset(host):
        return False
    if colon and not (port.isascii() and port.isdigit() and 1 <= len(port) <= 5):
        return False
    return all("!" <= c <= "~" for c in rest[cut:])


def plainly_valid(raw: object) -> bool:
    """Whether a raw catalogue entry is one ``McpCatalogueEntry`` certainly accepts, judged
    with the standard library alone: the common fields only, each of a plain form. False
    means "not sure", never "invalid": the caller then asks the full validation."""
    if not isinstance(raw, dict) or not set(raw) <= _PLAIN_FIELDS:
        return False
    if not all(isinstance(raw.get(field), str) for field in ("id", "name", "description")):
        return False
    server_id = raw["id"]
    if len(server_id) > 40 or not _plain_id(server_id):
        return False
    tags = raw.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        return False
    url, command = raw.get("url", ""), raw.get("command", [])
    if not isinstance(url, str) or not isinstance(command, list):
        return False
    if url:
        return not command and _plain_url(url)
    return (
        bool(command)
        and all(isinstance(part, str) for part in command)
        and bool(command[0].strip())
    )


def _logins(store: str) -> dict[str, dict[str, Any]]:
    """Each key's stored tokens (a dict from the token file), for keys that have some."""
    from glove_mcp.cli.config import token_file_name

    if store != "file":
        raise _Unusual
    try:
        with open(token_file_name(), "rb") as file:
            raw = file.read()
    except FileNotFoundError:
        return {}
    except OSError:
        raise _Unusual from None
    import json  # only when there is a token file

    try:
        doc = json.loads(raw)
    except ValueError:
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
        server_url = state.get("server_url")
        if server_url is not None and not isinstance(server_url, str):
            raise _Unusual
        logins[key] = {**tokens, "server_url": server_url}
    return logins


def _bound_logins(
    servers: list[dict[str, Any]], stored: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Each server's login of the ``default`` principal, found by the server's URL (a login
    stored under its id counts only when it records that URL: it migrates on first use);
    ``{"stale": reason}`` when the id's login was issued for another URL or records none."""
    if not stored:
        return {}  # no token file: nothing to find (and no URL parsing to import)
    from glove_mcp.resource_keys import DEFAULT_PRINCIPAL, credential_key, same_resource

    found: dict[str, dict[str, Any]] = {}
    for server in servers:
        url = server["url"]
        if not url:
            continue
        tokens = stored.get(credential_key(DEFAULT_PRINCIPAL, url))
        if tokens is not None and same_resource(tokens.get("server_url"), url):
            found[server["id"]] = tokens
            continue
        legacy = stored.get(server["id"])
        if legacy is None:
            continue
        if same_resource(legacy.get("server_url"), url):
            found[server["id"]] = legacy
        elif legacy.get("server_url") is None:
            found[server["id"]] = {"stale": "the stored login records no server URL"}
        else:
            found[server["id"]] = {
                "stale": f"the stored login was issued for {legacy['server_url']}, not {url}"
            }
    return found


def _row(
    args: argparse.Namespace,
    server: dict[str, Any],
    tokens: dict[str, Any] | None,
    checked: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """What ``status`` says about one server, as the JSON object ``--json`` prints."""
    from glove_mcp.cli.errors import command_hint

    row: dict[str, Any] = {
        "id": server["id"],
        "transport": "stdio" if server["command"] else "http",
        "url": server["url"] or None,
        "command": server["command"] or None,
        "state": "no_tokens",
        "expires_at": None,
        "refreshable": None,
        "detail": None,
        "login_command": command_hint(args, "auth", server["id"]),
    }
    if server["command"]:
        row.update(state="no_login_needed", login_command=None)
        import shutil

        if shutil.which(server["command"][0]) is None:
            row["detail"] = f"command {server['command'][0]!r} not found"
    elif tokens is not None and "stale" in tokens:
        row.update(state="needs_login", detail=tokens["stale"])
    elif tokens is not None:
        row.update(
            state="logged_in",
            expires_at=tokens.get("expires_at"),
            refreshable=bool(tokens.get("refresh_token")),
        )
    if checked is not None:
        state, detail = checked
        row.update(detail=detail or None)
        if state != "ok":
            row["state"] = state
        if state in ("no_login_needed", "unreachable", "no_oauth", "failed"):
            row["login_command"] = None
        row["attention"] = state not in ("ok", "no_login_needed")
    return row


def _line(row: dict[str, Any]) -> str:
    state = row["state"]
    if state == "logged_in":
        expires_at = row["expires_at"]
        now = time.time()
        if expires_at is None:
            when = "no expiry given"
        elif expires_at - now >= 60:
            when = f"expires in {_duration(expires_at - now)}"
        elif expires_at > now:
            when = "expires in under a minute"
        elif now - expires_at < 60:
            when = "expired less than a minute ago"
        else:
            when = f"expired {_duration(now - expires_at)} ago"
        refresh = "refreshable" if row["refreshable"] else "no refresh token"
        text = f"logged in        {when}, {refresh}"
    elif state == "no_login_needed":
        text = "no login needed  " + ("(stdio server)" if row["transport"] == "stdio" else "(open)")
    elif state == "needs_login":
        text = f"not logged in    (run: {row['login_command']})"
    elif state == "unreachable":
        text = "unreachable"
    elif state == "login_expired":
        text = f"login expired    (run: {row['login_command']})"
    elif state == "failed":
        text = "failed"
    elif state == "no_oauth":
        text = "needs a token    (not through OAuth)"
    else:
        text = f"not logged in    ({row['login_command']}, if it needs a login)"
    detail = f"  [{row['detail']}]" if row["detail"] else ""
    return f"{row['id']:<16} {text}{detail}"


def _report(args: argparse.Namespace, rows: list[dict[str, Any]]) -> None:
    if args.json:
        import json

        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        print(_line(row))


async def _status_in_full(args: argparse.Namespace) -> int:
    from glove_mcp.cli.config import load_catalogue
    from glove_mcp.cli.tokens import check_token_flags, command_token_store

    check_token_flags(args)  # also where $GLOVE_DATABASE_URL alone chose the database
    servers: list[dict[str, Any]] = []
    logins: dict[str, dict[str, Any]] = {}
    entries = load_catalogue(args.catalogue)
    from glove_mcp.cli.errors import command_hint
    from glove_mcp.oauth import BoundLogin
    from glove_mcp.resource_keys import DEFAULT_PRINCIPAL

    async with command_token_store(args) as store:
        for entry in entries:
            servers.append(
                {"id": entry.id, "url": entry.url, "command": entry.command, "entry": entry}
            )
            if not entry.url:
                continue
            hint = command_hint(args, "auth", entry.id)
            check = await BoundLogin(store, DEFAULT_PRINCIPAL, entry.id, entry.url, hint).check()
            if check.state == "connected":
                logins[entry.id] = {
                    "expires_at": check.expires_at,
                    "refresh_token": check.refreshable,
                }
            elif check.stale:
                logins[entry.id] = {"stale": check.reason}
        if args.check:
            return await _status_checked(args, servers, logins, store)
    _report(args, [_row(args, server, logins.get(server["id"])) for server in servers])
    return 0


async def _status_checked(
    args: argparse.Namespace,
    servers: list[dict[str, Any]],
    logins: dict[str, dict[str, Any]],
    store: Any,
) -> int:
    """``--check``: contact every server at once (with its stored tokens, if it has some;
    stdio servers are started), report, and exit 1 if one needs attention."""
    import asyncio

    from glove_mcp.cli.errors import command_hint
    from glove_mcp.cli.probe import probe, stdio_problem
    from glove_mcp.cli.progress import Progress
    from glove_mcp.cli.server_check import try_server

    states = {"open": "no_login_needed", "oauth": "needs_login"}

    async def check(server: dict[str, Any]) -> tuple[str, str]:
        entry = server["entry"]
        if entry.command:
            missing = stdio_problem(entry)
            if missing:
                return "failed", missing
        if entry.command or entry.id in logins:
            hint = command_hint(args, "auth", entry.id)
            tried = await try_server(entry, store if entry.url else None, hint, timeout=15)
            return tried.state, tried.detail
        reach = await probe(entry, timeout=10)
        return states.get(reach.access, reach.access), reach.detail

    progress = Progress(enabled=not args.json)
    try:
        with progress.step("asking the servers…"):
            checked = await asyncio.gather(*(check(server) for server in servers))
    finally:
        progress.close()
    rows = [
        _row(args, server, logins.get(server["id"]), found)
        for server, found in zip(servers, checked, strict=True)
    ]
    _report(args, rows)
    return 1 if any(row["attention"] for row in rows) else 0


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes} min"
    hours = minutes // 60
    return f"{hours} h {minutes % 60} min" if hours < 48 else f"{hours // 24} days"
