"""``glove-mcp servers list|add|remove|set-url|test``: the catalogue from the command line.

``add`` and ``remove`` edit a TOML catalogue with ``tomlkit``, which keeps the file's
comments, order and layout; the whole file is checked before and after the edit (a broken
file is refused, not rewritten), and written atomically (a temporary file in the same folder,
then a rename), keeping its mode. Without ``--catalogue`` they edit the data directory's
``servers.toml``, created from the built-in servers on first use, which every command then
reads by default.

Light to import (the parser of every command is built from it): pathlib, tempfile and the
rest are imported where they are used.
"""

from __future__ import annotations

import os

from glove_mcp.cli.parser import (
    at_least,
    catalogue_and_store,
    json_output,
    subcommand,
    token_database,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse
    from collections.abc import Coroutine
    from pathlib import Path
    from typing import Any

__all__ = [
    "NAME",
    "add_parser",
    "add_server",
    "import_servers",
    "index_servers",
    "list_servers",
    "remove_server",
    "servers_test",
    "set_url",
]

NAME = "servers"


def add_parser(commands: Any) -> None:
    """Add ``servers`` and its actions to the command's subparsers."""
    servers = subcommand(
        commands,
        NAME,
        "list, add, remove and test catalogue servers",
        "The catalogue: the MCP servers the agent may use. `add`, `remove` and `set-url` "
        "edit the --catalogue file (default servers.toml in the configuration folder, "
        "$XDG_CONFIG_HOME/glove, created from the built-in servers on first use), keeping "
        "its comments.",
        "  glove-mcp servers list\n"
        "  glove-mcp servers add docs https://docs.example.com/mcp --description 'Our docs'\n"
        "  glove-mcp servers add files --description 'Local files' -- \\\n"
        "      npx -y @modelcontextprotocol/server-filesystem /tmp\n"
        "  glove-mcp servers set-url docs https://docs.example.com/v2/mcp\n"
        "  glove-mcp servers test docs\n"
        "  glove-mcp servers remove docs\n"
        "  glove-mcp servers import registry-page.json --output registry.toml\n"
        "  glove-mcp servers index\n",
    )
    actions = servers.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = subcommand(
        actions,
        "list",
        "the catalogue's servers",
        "One line per catalogue server: its id, transport (http or stdio), URL or command, "
        "and name; --json prints every field.",
        "  glove-mcp servers list\n  glove-mcp servers list --json\n"
        "  glove-mcp servers list --catalogue team.toml\n",
    )
    json_output(listing)
    listing.set_defaults(handler=list_servers, light=True)

    adding = subcommand(
        actions,
        "add",
        "add a server: a URL, or a command after --",
        "Add a Streamable HTTP server by URL, or a stdio server by the command that starts it "
        "(after --).",
        "  glove-mcp servers add docs https://docs.example.com/mcp --description 'Our docs'\n"
        "  glove-mcp servers add files --description 'Local files' -- \\\n"
        "      npx -y @modelcontextprotocol/server-filesystem /tmp\n",
        usage="glove-mcp servers add ID (URL | -- COMMAND [ARG ...]) [options]",
    )
    adding.add_argument("id", help="the catalogue id (letters, digits, - and _)")
    adding.add_argument("url", nargs="?", metavar="URL", help="a Streamable HTTP endpoint")
    adding.add_argument("--name", help="a human name (default: the id)")
    adding.add_argument("--description", help="what the server can do (discovery ranks on it)")
    adding.add_argument(
        "--tag", action="append", default=[], metavar="TAG", help="a keyword (repeatable)"
    )
    adding.set_defaults(handler=add_server, light=True, command_line=None, takes_command_line=True)

    importing = subcommand(
        actions,
        "import",
        "add servers from MCP registry server.json files",
        "Read the official MCP registry's server.json documents, or registry API pages "
        '({"servers": [...]}) saved to files, and write one catalogue server per registry '
        "server: a Streamable HTTP remote as its URL, else an npm, PyPI, OCI or NuGet package "
        "as the command that starts it (npx, uvx, docker, dnx). Headers, environment variables "
        "and argument values the server needs are written as comments and placeholders, never "
        "invented. A folder is read for every .json file under it. A document that cannot be "
        "imported gets one line on stderr naming the file and the field; the others are "
        "imported. Exit status 0 when at least one server was imported, 1 when none was.",
        "  glove-mcp servers import server.json\n"
        "  glove-mcp servers import registry/ --output registry.toml\n"
        "  glove-mcp servers import page-1.json page-2.json --catalogue team.toml\n",
        usage="glove-mcp servers import PATH [PATH ...] [--output FILE [--replace]]",
    )
    importing.add_argument(
        "paths", nargs="+", metavar="PATH", help="a server.json, an API page, or a folder"
    )
    importing.add_argument(
        "--output",
        metavar="FILE",
        help="write a new catalogue file with the imported servers only (default: add them "
        "to the --catalogue file)",
    )
    importing.add_argument(
        "--replace", action="store_true", help="with --output: replace FILE if it exists"
    )
    importing.set_defaults(handler=import_servers, light=True)

    indexing = subcommand(
        actions,
        "index",
        "list every server's tools ahead, for discovery",
        "Connect to every catalogue server that can be reached — open servers, servers you "
        "logged in to (each login is sent only to the URL it was issued for), stdio servers "
        "(started, then stopped) — and keep their tools and instructions in the --db file, "
        "where chat and serve's discovery read them: a server is then found by what its "
        "tools do before its first use. A server whose kept listing is still fresh (it said "
        "for how long, with ttlMs) is not contacted again, unless --refresh. A server that "
        "fails is skipped with one line. Exit status 0 when at least one server was listed "
        "or still fresh, 1 when none was.",
        "  glove-mcp servers index\n"
        "  glove-mcp servers index notion files --timeout 30\n"
        "  glove-mcp servers index --refresh --db server.db\n",
    )
    indexing.add_argument("ids", nargs="*", metavar="ID", help="only these servers")
    indexing.add_argument(
        "--db",
        metavar="FILE",
        help="the SQLite file chat or serve uses (default: chat's, in the data dir)",
    )
    indexing.add_argument(
        "--timeout",
        type=at_least(0, float, strict=True),
        default=15.0,
        metavar="SECONDS",
        help="how long to wait for each server (default 15)",
    )
    indexing.add_argument(
        "--refresh",
        action="store_true",
        help="list every server again, also those whose kept listing is still fresh",
    )
    catalogue_and_store(indexing)
    token_database(indexing)
    json_output(indexing)
    indexing.set_defaults(handler=index_servers)

    setting = subcommand(
        actions,
        "set-url",
        "change a server's URL",
        "Point an HTTP server of the catalogue at another URL (a moved endpoint, a staging "
        "server). Its stored tokens are kept; if they were issued for the old URL, the next "
        "`glove-mcp auth ID` logs in again.",
        "  glove-mcp servers set-url docs https://docs.example.com/v2/mcp\n",
    )
    setting.add_argument("id", help="the catalogue id")
    setting.add_argument("url", metavar="URL", help="the new Streamable HTTP endpoint")
    setting.set_defaults(handler=set_url, light=True)

    testing = subcommand(
        actions,
        "test",
        "connect to a server and list its tools",
        "Connect to one catalogue server as the agent would (with its stored tokens, if it "
        "has some; a stdio server is started) and list its tools. Exit status 0 when it "
        "answered, 1 when it did not (the line says why: down, a login needed or expired).",
        "  glove-mcp servers test notion\n  glove-mcp servers test files --json\n",
    )
    testing.add_argument("id", help="the catalogue id")
    testing.add_argument(
        "--timeout",
        type=at_least(0, float, strict=True),
        default=15.0,
        metavar="SECONDS",
        help="how long to wait for the server (default 15)",
    )
    catalogue_and_store(testing)
    token_database(testing)
    json_output(testing)
    testing.set_defaults(handler=servers_test)

    removing = subcommand(
        actions,
        "remove",
        "remove a server (and, if asked, its tokens)",
        "Remove a server from the catalogue file. If it has stored tokens, a terminal asks "
        "whether to forget them too; --forget-tokens or --keep-tokens answer beforehand. "
        "Without a terminal the tokens are kept, and the command says so.",
        "  glove-mcp servers remove docs\n"
        "  glove-mcp servers remove docs --forget-tokens\n"
        "  glove-mcp servers remove docs --keep-tokens\n",
    )
    removing.add_argument("id", help="the catalogue id")
    forget = removing.add_mutually_exclusive_group()
    forget.add_argument(
        "--forget-tokens",
        dest="forget_tokens",
        action="store_const",
        const=True,
        help="also delete the server's stored tokens (not revoked: `glove-mcp logout ID` "
        "first revokes them)",
    )
    forget.add_argument(
        "--keep-tokens",
        dest="forget_tokens",
        action="store_const",
        const=False,
        help="keep the server's stored tokens",
    )
    catalogue_and_store(removing)
    token_database(removing)
    removing.set_defaults(handler=remove_server, light=True, forget_tokens=None)


_HEADER = (
    "# The glove-mcp catalogue: the MCP servers an agent may use.\n"
    "# Edit it by hand or with `glove-mcp servers add|remove`; comments are kept.\n"
)


def list_servers(args: argparse.Namespace) -> int:
    """Print the catalogue: one line per server, or JSON with ``--json``."""
    import json

    from glove_mcp.cli.config import load_catalogue

    entries = load_catalogue(args.catalogue)
    if args.json:
        rows = [entry.model_dump(exclude_defaults=True) for entry in entries]
        print(json.dumps(rows, indent=2))
        return 0
    for entry in entries:
        target = entry.url or " ".join(entry.command)
        kind = "http " if entry.url else "stdio"
        print(f"{entry.id:<16} {kind} {target}  — {entry.name}")
    return 0


def _target_file(args: argparse.Namespace) -> Path:
    from pathlib import Path

    from glove_mcp.cli.config import catalogue_file_name

    return Path(args.catalogue or catalogue_file_name()).expanduser()


def _read(file: Path, *, create: bool) -> Any:
    """The file as a ``tomlkit`` document (checked), or a new one when it does not exist and
    ``create``: the built-in servers when it is the default catalogue."""
    from pathlib import Path

    import tomlkit

    from glove_mcp.cli.config import (
        DEFAULT_SERVERS,
        CatalogueFileError,
        catalogue_file_name,
        entries_from_toml,
    )

    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        if not create:
            raise CatalogueFileError(file, "no such file") from None
        document = tomlkit.parse(_HEADER)
        servers = tomlkit.aot()
        if str(file) == str(Path(catalogue_file_name()).expanduser()):
            for raw in DEFAULT_SERVERS:
                servers.append(tomlkit.item(dict(raw)))
        document.append("servers", servers)
        return document
    except OSError as exc:
        raise CatalogueFileError(file, exc.strerror or str(exc)) from None
    except UnicodeDecodeError as exc:
        raise CatalogueFileError(file, f"not UTF-8 text ({exc}); it was left as it is") from None
    try:
        document = tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:
        raise CatalogueFileError(file, f"not valid TOML ({exc}); it was left as it is") from None
    entries_from_toml(document.unwrap(), file)  # refuse to edit a file that is already wrong
    return document


def _write(file: Path, document: Any) -> None:
    """Replace ``file`` with ``document``, atomically, keeping the file's mode; a symbolic
    link keeps pointing where it did (its target is replaced)."""
    import tomlkit

    _write_text(file, tomlkit.dumps(document))


def _write_text(file: Path, text: str) -> None:
    """``_write`` of a catalogue's text."""
    import tempfile
    import tomllib
    from pathlib import Path

    from glove_mcp.cli.config import CatalogueFileError, entries_from_toml
    from glove_mcp.oauth.private_files import make_private_dirs

    file = file.resolve()
    try:  # what is written must load: the text itself, not the document in memory
        entries_from_toml(tomllib.loads(text), file)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueFileError(
            file,
            f"editing it would not give valid TOML ({exc}); it was left as it is (write "
            "servers as [[servers]] tables to edit them from the command line)",
        ) from None
    make_private_dirs(file.parent)
    try:
        mode = file.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o644
    descriptor, temporary = tempfile.mkstemp(prefix=f".{file.name}.", dir=file.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, file)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def add_server(args: argparse.Namespace) -> int:
    """Add a server by URL, or by the command that starts it."""
    import tomlkit
    from pydantic import ValidationError

    from glove_mcp.catalogue import McpCatalogueEntry
    from glove_mcp.cli.errors import CliError

    if bool(args.url) == bool(args.command_line):
        raise CliError(
            "servers add needs a URL (glove-mcp servers add ID https://…/mcp) or a command "
            "after -- (glove-mcp servers add ID -- npx -y some-mcp-server), not both",
            2,
        )
    raw: dict[str, Any] = {
        "id": args.id,
        "name": args.name or args.id,
        "description": args.description or args.name or args.id,
    }
    if args.url:
        raw["url"] = args.url
    else:
        raw["command"] = list(args.command_line)
    if args.tag:
        raw["tags"] = list(args.tag)
    try:
        McpCatalogueEntry.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        flag = {"id": "ID", "url": "URL", "command": "COMMAND"}.get(field, f"--{field}")
        raise CliError(f"servers add: {flag}: {message}", 2) from None
    file = _target_file(args)
    created = not file.exists()
    document = _read(file, create=True)
    servers = document.get("servers")
    if any(table.get("id") == args.id for table in servers):
        raise CliError(
            f"servers add: {args.id!r} is already in {str(file)!r}; remove it first "
            f"(glove-mcp servers remove {args.id})",
            2,
        )
    servers.append(tomlkit.item(raw))
    _write(file, document)
    if created and args.catalogue is None:
        print(f"created {file} from the built-in servers; glove-mcp reads it from now on")
    print(f"{args.id}: added to {file}")
    return 0


def import_servers(args: argparse.Namespace) -> int:
    """Add servers from registry ``server.json`` files to a catalogue (or a new one)."""
    import sys
    from pathlib import Path

    import tomlkit

    from glove_mcp.cli.errors import CliError
    from glove_mcp.discovery.registry_import import catalogue_toml, read_registry

    output = Path(args.output).expanduser() if args.output else None
    if args.replace and output is None:
        raise CliError("servers import: --replace goes with --output FILE", 2)
    if output is not None and output.exists() and not args.replace:
        raise CliError(
            f"servers import: {str(output)!r} exists; pass --replace to replace it, or leave "
            "out --output to add the servers to the --catalogue file",
            2,
        )
    base = ""
    taken: list[str] = []
    file = output
    if output is None:
        file = _target_file(args)
        document = _read(file, create=True)
        taken = [str(table.get("id")) for table in document.get("servers")]
        # The file as it is (tomlkit gives its text back unchanged), the new tables after it.
        base = tomlkit.dumps(document).rstrip("\n") + "\n\n"
    imported = read_registry(args.paths, taken=taken)
    for problem in imported.problems:
        print(f"servers import: skipped {problem}", file=sys.stderr)
    assert file is not None
    if not imported.entries:
        print(f"servers import: no server imported; {str(file)!r} was not changed", file=sys.stderr)
        return 1
    header = "Imported from the MCP registry by `glove-mcp servers import`."
    _write_text(file, base + catalogue_toml(imported.entries, header=header))
    count = len(imported.entries)
    skipped = len(imported.problems)
    print(
        f"{count} server{'s' if count != 1 else ''} imported into {file}"
        + (f"; {skipped} skipped (see above)" if skipped else "")
    )
    return 0


def index_servers(args: argparse.Namespace) -> Coroutine[Any, Any, int]:
    """List every reachable server's tools into the learned-tools store."""
    return _index_servers(args)


async def _index_servers(args: argparse.Namespace) -> int:
    import json
    import sys

    from glove_mcp.adapter import SqliteMcpAdapter
    from glove_mcp.cli.config import database_file, load_catalogue
    from glove_mcp.cli.errors import CliError, command_hint
    from glove_mcp.cli.tokens import check_token_flags, command_token_store
    from glove_mcp.discovery.tool_index import IndexedServer, index_tools

    check_token_flags(args)
    entries = load_catalogue(args.catalogue)
    if args.ids:
        known = {entry.id for entry in entries}
        unknown = [i for i in args.ids if i not in known]
        if unknown:
            from glove_mcp.cli.parser import did_you_mean

            raise CliError(
                f"servers index: no server {unknown[0]!r} in the catalogue"
                f"{did_you_mean(unknown[0], sorted(known))}",
                2,
            )
        entries = [entry for entry in entries if entry.id in args.ids]

    def said(outcome: IndexedServer) -> None:
        if args.json:
            return
        if outcome.state == "listed":
            print(f"{outcome.id}: {outcome.detail}", flush=True)
        elif outcome.state == "fresh":
            print(f"{outcome.id}: fresh, not listed again: {outcome.detail}", flush=True)
        else:
            print(f"{outcome.id}: skipped: {outcome.detail}", file=sys.stderr, flush=True)

    db = database_file(args.db, "chat.db")
    async with (
        command_token_store(args) as store,
        SqliteMcpAdapter(db, "glove-mcp-servers-index") as learned,
    ):
        outcomes = await index_tools(
            entries,
            learned,
            credentials=store,
            login_command=lambda server_id: command_hint(args, "auth", server_id),
            timeout=args.timeout,
            report=said,
            refresh=args.refresh,
        )
    listed = sum(1 for o in outcomes if o.state == "listed")
    fresh = sum(1 for o in outcomes if o.state == "fresh")
    if args.json:
        rows = [
            {
                "id": o.id,
                "state": o.state,
                "detail": o.detail,
                "tools": [t.name for t in o.tools],
                "instructions": o.instructions,
                "ttl_ms": o.ttl_ms,
            }
            for o in outcomes
        ]
        print(json.dumps(rows, indent=2))
    else:
        still = f"; {fresh} still fresh, not listed again (--refresh lists them)" if fresh else ""
        print(f"{listed} of {len(outcomes)} servers listed into {db}{still}")
    return 0 if listed or fresh else 1


def remove_server(args: argparse.Namespace) -> int:
    """Remove a server from the catalogue file; forget its stored tokens if asked."""
    from glove_mcp.cli.errors import CliError

    file = _target_file(args)
    document = _read(file, create=args.catalogue is None)
    servers = document.get("servers")
    index = _index_of(servers, args.id, file, "remove")
    if len(servers) == 1:
        raise CliError(
            f"servers remove: {args.id!r} is the last server of {str(file)!r}, and a catalogue "
            "needs one; add another first, or delete the file",
            2,
        )
    import asyncio

    # Asked before the file changes: a store that cannot be opened stops the command with
    # the catalogue as it was.
    keys = _token_keys(args.id, servers[index].get("url"))
    has_tokens = asyncio.run(_tokens_stored(args, keys))
    forget = args.forget_tokens
    if has_tokens and forget is None:
        forget = _ask_to_forget(args.id)
    del servers[index]
    _write(file, document)
    print(f"{args.id}: removed from {file}")
    if not has_tokens:
        return 0
    if forget:
        asyncio.run(_forget_tokens(args, keys))
        print(
            f"{args.id}: its stored tokens were deleted (not revoked at the server: "
            f"`glove-mcp logout {args.id}` before removing a server revokes them)"
        )
    else:
        print(
            f"{args.id}: its stored tokens were kept"
            + (
                ""
                if args.forget_tokens is False
                else " (no terminal to ask; --forget-tokens deletes them)"
            )
            + f"; `glove-mcp logout {args.id} --local-only` deletes them later"
        )
    return 0


def _index_of(servers: Any, server_id: str, file: Path, action: str) -> int:
    from glove_mcp.cli.errors import CliError

    index = next((i for i, table in enumerate(servers) if table.get("id") == server_id), None)
    if index is None:
        from glove_mcp.cli.parser import did_you_mean

        ids = [str(t.get("id")) for t in servers]
        raise CliError(
            f"servers {action}: no server {server_id!r} in {str(file)!r}"
            f"{did_you_mean(server_id, ids)} (known: {', '.join(ids)})",
            2,
        )
    return index


def _token_keys(server_id: str, url: object) -> list[str]:
    """Where the command's login for a server may be stored: under its resource-bound key
    (principal ``default`` and its URL) and, written by an older version, under its id."""
    from glove_mcp.resource_keys import DEFAULT_PRINCIPAL, credential_key

    keys = [server_id]
    if isinstance(url, str) and url:
        keys.append(credential_key(DEFAULT_PRINCIPAL, url))
    return keys


async def _tokens_stored(args: argparse.Namespace, keys: list[str]) -> bool:
    from glove_mcp.cli.tokens import check_token_flags, command_token_store

    check_token_flags(args)
    async with command_token_store(args) as store:
        for key in keys:
            if await store.get(key) is not None:
                return True
    return False


async def _forget_tokens(args: argparse.Namespace, keys: list[str]) -> None:
    from glove_mcp.cli.tokens import command_token_store

    async with command_token_store(args) as store:
        for key in keys:
            await store.delete(key)


def _ask_to_forget(server_id: str) -> bool:
    """On a terminal, ask whether to forget the server's tokens (no by default); without
    one, keep them: a script that removes a server must not lose a login silently."""
    import sys

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return False
    print(f"{server_id} has stored tokens. Forget them too? [y/N] ", end="", flush=True)
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


def set_url(args: argparse.Namespace) -> int:
    """Change an HTTP server's URL in the catalogue file."""
    from pydantic import ValidationError

    from glove_mcp.catalogue import McpCatalogueEntry
    from glove_mcp.cli.errors import CliError

    file = _target_file(args)
    document = _read(file, create=args.catalogue is None)
    servers = document.get("servers")
    table = servers[_index_of(servers, args.id, file, "set-url")]
    if table.get("command"):
        raise CliError(
            f"servers set-url: {args.id!r} is a stdio server (it runs a command, it has no "
            f"URL); remove it and add it again with a URL to make it an HTTP server",
            2,
        )
    try:
        McpCatalogueEntry.model_validate({**table.unwrap(), "url": args.url})
    except ValidationError as exc:
        message = str(exc.errors(include_url=False)[0]["msg"]).removeprefix("Value error, ")
        raise CliError(f"servers set-url: URL: {message}", 2) from None
    old = table.get("url")
    table["url"] = args.url
    _write(file, document)
    print(f"{args.id}: url {old} -> {args.url} in {file}")
    return 0


def servers_test(args: argparse.Namespace) -> Coroutine[Any, Any, int]:
    """Connect to one server and list its tools; exit status 1 if it did not answer."""
    return _servers_test(args)


async def _servers_test(args: argparse.Namespace) -> int:
    import json

    from glove_mcp.cli.config import load_catalogue
    from glove_mcp.cli.errors import command_hint
    from glove_mcp.cli.login import entry_named
    from glove_mcp.cli.progress import Progress
    from glove_mcp.cli.server_check import try_server
    from glove_mcp.cli.tokens import check_token_flags, command_token_store

    check_token_flags(args)
    entry = entry_named(load_catalogue(args.catalogue), args.id)
    target = entry.url or " ".join(entry.command)
    progress = Progress(enabled=not args.json)
    async with command_token_store(args) as store:
        try:
            with progress.step(f"connecting to {target}…"):
                tried = await try_server(
                    entry, store, command_hint(args, "auth", entry.id), timeout=args.timeout
                )
        finally:
            progress.close()
    if args.json:
        print(
            json.dumps(
                {
                    "id": entry.id,
                    "state": tried.state,
                    "detail": tried.detail,
                    "tools": tried.tools,
                },
                indent=2,
            )
        )
    elif tried.state == "ok":
        print(f"{entry.id}: ok, {tried.detail}")
        for name in tried.tools:
            print(f"  {name}")
    else:
        print(f"{entry.id}: {tried.state.replace('_', ' ')}: {tried.detail}")
    return 0 if tried.state == "ok" else 1
