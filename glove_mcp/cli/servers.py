"""``glove-mcp servers list|add|remove``: the catalogue from the command line.

``add`` and ``remove`` edit a TOML catalogue with ``tomlkit``, which keeps the file's
comments, order and layout; the whole file is checked before and after the edit (a broken
file is refused, not rewritten), and written atomically (a temporary file in the same folder,
then a rename), keeping its mode. Without ``--catalogue`` they edit the data directory's
``servers.toml``, created from the built-in servers on first use, which every command then
reads by default.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from glove_mcp.cli.config import (
    DEFAULT_SERVERS,
    CatalogueFileError,
    catalogue_file_name,
    entries_from_toml,
    load_catalogue,
)
from glove_mcp.cli.errors import CliError

__all__ = ["add_server", "list_servers", "remove_server"]

_HEADER = (
    "# The glove-mcp catalogue: the MCP servers an agent may use.\n"
    "# Edit it by hand or with `glove-mcp servers add|remove`; comments are kept.\n"
)


def list_servers(args: argparse.Namespace) -> int:
    """Print the catalogue: one line per server, or JSON with ``--json``."""
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
    return Path(args.catalogue or catalogue_file_name()).expanduser()


def _read(file: Path, *, create: bool) -> Any:
    """The file as a ``tomlkit`` document (checked), or a new one when it does not exist and
    ``create``: the built-in servers when it is the default catalogue."""
    import tomlkit

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
    import tomllib

    import tomlkit

    from glove_mcp.oauth._private_files import make_private_dirs

    file = file.resolve()
    text = tomlkit.dumps(document)
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


def remove_server(args: argparse.Namespace) -> int:
    """Remove a server from the catalogue file."""
    file = _target_file(args)
    document = _read(file, create=args.catalogue is None)
    servers = document.get("servers")
    index = next((i for i, table in enumerate(servers) if table.get("id") == args.id), None)
    if index is None:
        known = ", ".join(str(t.get("id")) for t in servers)
        raise CliError(
            f"servers remove: no server {args.id!r} in {str(file)!r} (known: {known})", 2
        )
    if len(servers) == 1:
        raise CliError(
            f"servers remove: {args.id!r} is the last server of {str(file)!r}, and a catalogue "
            "needs one; add another first, or delete the file",
            2,
        )
    del servers[index]
    _write(file, document)
    print(f"{args.id}: removed from {file}")
    return 0
