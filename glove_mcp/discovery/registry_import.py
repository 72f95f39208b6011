"""Catalogue entries from the official MCP registry's ``server.json`` documents.

The registry (``registry.modelcontextprotocol.io``) describes each server with a
``server.json`` document (schema ``static.modelcontextprotocol.io/schemas/…/server.schema.json``):
``name`` (reverse-DNS, ``io.github.user/weather``), ``title``, ``description``, ``version``,
``remotes`` (``type`` ``streamable-http`` or ``sse``, ``url``, ``headers``) and ``packages``
(``registryType`` ``npm`` / ``pypi`` / ``oci`` / ``nuget`` / ``mcpb``, ``identifier``,
``version``, ``transport``, ``runtimeHint``, ``runtimeArguments``, ``packageArguments``,
``environmentVariables``). Its API lists them in pages: ``{"servers": [{"server": {...},
"_meta": {...}}, ...], "metadata": {"nextCursor": ..., "count": ...}}``.

``read_registry`` reads such documents and pages saved to files (no network) and turns each
server into one ``McpCatalogueEntry``:

- a ``streamable-http`` remote becomes ``url`` (preferred: nothing to install);
- otherwise a package with a ``stdio`` transport becomes ``command``: ``npx -y pkg@version``
  (npm), ``uvx pkg==version`` (PyPI), ``docker run -i --rm … image:tag`` (OCI, each declared
  variable passed with ``-e NAME``), ``dnx pkg@version --yes`` (NuGet);
- what the server needs from the user — required headers, environment variables, argument
  values without a default — is never guessed: it is kept as documented placeholders in
  ``metadata["registry"]`` (``headers``, ``environment``) and ``<value_hint>`` in the command.

A document this cannot use yields one ``ImportProblem`` naming the document and the field,
and the rest are imported.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from glove_mcp.catalogue import MAX_ID_LENGTH, McpCatalogueEntry

__all__ = [
    "ImportProblem",
    "RegistryImport",
    "catalogue_toml",
    "entries_from_registry",
    "missing_inputs",
    "needs",
    "read_registry",
]

_SERVER_NAME = re.compile(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+")
_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_.-]+)\}")
_NOT_ID = re.compile(r"[^a-z0-9-]+")
_MAX_DOCUMENT_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class ImportProblem:
    """Why one document (or one server of a page) was not imported.

    Attributes:
        document: the file, and the server's place in it for a page
            (``page.json: servers[3]``), with the server's name when it has one.
        field: the field at fault, as a JSON path (``packages[0].transport.type``), or ``""``
            for the whole document.
        message: what is wrong, in words.
    """

    document: str
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.document}: {self.field}" if self.field else self.document
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class RegistryImport:
    """What ``read_registry`` made of its inputs.

    Attributes:
        entries: one catalogue entry per usable server, in input order, ids unique.
        problems: one per document or server that was not imported.
    """

    entries: list[McpCatalogueEntry] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)


class _Refused(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def read_registry(paths: Iterable[str | Path], *, taken: Iterable[str] = ()) -> RegistryImport:
    """Read ``server.json`` documents and registry API pages from files and folders.

    A folder is read for every ``*.json`` file under it (recursively, sorted by path).

    Args:
        paths: files or folders.
        taken: catalogue ids already in use (new ids avoid them).

    Returns:
        The entries and the problems, one per document or server not imported.
    """
    result = RegistryImport()
    used = set(taken)
    for path in _files(paths, result.problems):
        try:
            raw = path.read_bytes()
            if len(raw) > _MAX_DOCUMENT_BYTES:
                raise ValueError(f"larger than {_MAX_DOCUMENT_BYTES // 2**20} MB")
            document = json.loads(raw.decode("utf-8"))
        except OSError as exc:
            result.problems.append(ImportProblem(str(path), "", exc.strerror or str(exc)))
            continue
        except (UnicodeDecodeError, ValueError) as exc:
            result.problems.append(ImportProblem(str(path), "", f"not a JSON document ({exc})"))
            continue
        entries, problems = entries_from_registry(document, str(path), taken=used)
        result.entries.extend(entries)
        result.problems.extend(problems)
    return result


def _files(paths: Iterable[str | Path], problems: list[ImportProblem]) -> Iterator[Path]:
    if isinstance(paths, str | Path):
        paths = [paths]
    for given in paths:
        path = Path(given).expanduser()
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.json") if p.is_file())
            if not found:
                problems.append(ImportProblem(str(path), "", "holds no .json file"))
            yield from found
        elif path.exists():
            yield path
        else:
            problems.append(ImportProblem(str(path), "", "no such file or folder"))


def entries_from_registry(
    document: object, source: str, *, taken: set[str] | None = None
) -> tuple[list[McpCatalogueEntry], list[ImportProblem]]:
    """Catalogue entries from one parsed document: a ``server.json``, an API page, or a
    list of either's servers.

    Args:
        document: the parsed JSON.
        source: how problems name the document (its file name).
        taken: ids in use; the new ids are added to it.

    Returns:
        The entries and the problems (one per server not imported).
    """
    used: set[str] = set() if taken is None else taken
    entries: list[McpCatalogueEntry] = []
    problems: list[ImportProblem] = []
    if isinstance(document, dict) and "servers" in document and "name" not in document:
        servers = document["servers"]
        if not isinstance(servers, list):
            return [], [ImportProblem(source, "servers", "must be a list of servers")]
        items = [(f"{source}: servers[{i}]", item) for i, item in enumerate(servers)]
        items = _latest_only(items)
    elif isinstance(document, list):  # a plain list of server.json documents (or API items)
        items = _latest_only([(f"{source}: [{i}]", item) for i, item in enumerate(document)])
    else:
        items = [(source, document)]
    for label, item in items:
        server, prefix = _unwrap(item)
        name = server.get("name") if isinstance(server, dict) else None
        if isinstance(name, str) and name:
            label = f"{label} ({name[:100]})"
        try:
            entry = _entry(server, prefix, used)
        except _Refused as refused:
            problems.append(ImportProblem(label, refused.field, refused.message))
            continue
        used.add(entry.id)
        entries.append(entry)
    return entries, problems


def _unwrap(item: object) -> tuple[object, str]:
    """The server of an API item (``{"server": {...}, "_meta": ...}``) or the item itself."""
    if isinstance(item, dict) and isinstance(item.get("server"), dict) and "name" not in item:
        return item["server"], "server."
    return item, ""


def _latest_only(items: list[tuple[str, object]]) -> list[tuple[str, object]]:
    """One item per server name: the one the registry marks latest, else the first listed.
    (A page of every version lists a server once per version.)"""
    chosen: dict[str, int] = {}
    for position, (_, item) in enumerate(items):
        server, _ = _unwrap(item)
        name = server.get("name") if isinstance(server, dict) else None
        if not isinstance(name, str):
            chosen[f"\0{position}"] = position
            continue
        if name not in chosen or _is_latest(item):
            chosen[name] = position
    keep = set(chosen.values())
    return [pair for position, pair in enumerate(items) if position in keep]


def _is_latest(item: object) -> bool:
    meta = item.get("_meta") if isinstance(item, dict) else None
    official = (
        meta.get("io.modelcontextprotocol.registry/official") if isinstance(meta, dict) else None
    )
    return isinstance(official, dict) and official.get("isLatest") is True


def _text(server: Mapping[str, Any], key: str, where: str, *, required: bool) -> str:
    value = server.get(key)
    if value is None:
        if required:
            raise _Refused(where + key, "is missing")
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise _Refused(where + key, f"must be a non-empty string, got {_shown(value)}")
    return value.strip()


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _list(value: object, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Refused(where, f"must be a list, got {_shown(value)}")
    return value


def _entry(server: object, prefix: str, used: set[str]) -> McpCatalogueEntry:
    if not isinstance(server, dict):
        raise _Refused(prefix.rstrip("."), f"must be a server.json object, got {_shown(server)}")
    name = _text(server, "name", prefix, required=True)
    if not _SERVER_NAME.fullmatch(name):
        raise _Refused(
            prefix + "name",
            f"{_shown(name)} is not a reverse-DNS name such as io.github.user/weather",
        )
    description = _text(server, "description", prefix, required=True)
    version = _text(server, "version", prefix, required=False)
    title = _text(server, "title", prefix, required=False)
    remotes = _list(server.get("remotes"), prefix + "remotes")
    packages = _list(server.get("packages"), prefix + "packages")
    if not remotes and not packages:
        raise _Refused(prefix + "remotes", "neither remotes nor packages: nothing to connect to")
    registry: dict[str, Any] = {"name": name}
    if version:
        registry["version"] = version
    if isinstance(server.get("websiteUrl"), str):
        registry["website"] = server["websiteUrl"]
    repository = server.get("repository")
    if isinstance(repository, dict) and isinstance(repository.get("url"), str):
        registry["repository"] = repository["url"]
    target, reasons = _target(remotes, packages, prefix)
    if target is None:
        field_name, message = reasons[0]
        more = (
            f" ({len(reasons) - 1} more: {'; '.join(m for _, m in reasons[1:])})"
            if len(reasons) > 1
            else ""
        )
        raise _Refused(field_name, message + more)
    raw: dict[str, Any] = {
        "id": _new_id(name, used),
        "name": title or name.split("/", 1)[1],
        "description": description,
    }
    raw.update(target.fields)
    registry.update(target.registry)
    raw["metadata"] = {"registry": registry}
    try:
        json.dumps(raw, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, ValueError):
        raise _Refused(
            prefix.rstrip(".") or "server", "holds text that is not valid Unicode"
        ) from None
    try:
        return McpCatalogueEntry.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "entry"
        message = str(first["msg"]).removeprefix("Value error, ")
        raise _Refused(
            prefix.rstrip(".") or "server", f"gives no usable catalogue entry ({where}: {message})"
        ) from None


@dataclass
class _Target:
    fields: dict[str, Any]
    registry: dict[str, Any]


def _target(
    remotes: list[Any], packages: list[Any], prefix: str
) -> tuple[_Target | None, list[tuple[str, str]]]:
    """The first usable way to reach the server: a Streamable HTTP remote, else a stdio
    package; with the reasons each other one was passed over."""
    reasons: list[tuple[str, str]] = []
    for i, remote in enumerate(remotes):
        where = f"{prefix}remotes[{i}]"
        try:
            return _remote(remote, where), reasons
        except _Refused as refused:
            reasons.append((refused.field, refused.message))
    for i, package in enumerate(packages):
        where = f"{prefix}packages[{i}]"
        try:
            return _package(package, where), reasons
        except _Refused as refused:
            reasons.append((refused.field, refused.message))
    return None, reasons


def _inputs(values: list[Any], where: str) -> list[dict[str, Any]]:
    """Header or environment variable declarations, as documented placeholders."""
    out: list[dict[str, Any]] = []
    for i, value in enumerate(values):
        if not isinstance(value, dict):
            raise _Refused(f"{where}[{i}]", f"must be an object, got {_shown(value)}")
        name = _text(value, "name", f"{where}[{i}].", required=True)
        kept: dict[str, Any] = {"name": name}
        for key, out_key in (
            ("description", "description"),
            ("isRequired", "required"),
            ("isSecret", "secret"),
            ("default", "default"),
            ("value", "value"),
            ("choices", "choices"),
        ):
            if key in value and value[key] is not None:
                # A secret's fixed value is not copied: only that one is needed.
                if out_key in ("value", "default") and value.get("isSecret"):
                    continue
                kept[out_key] = value[key]
        out.append(kept)
    return out


def _remote(remote: object, where: str) -> _Target:
    if not isinstance(remote, dict):
        raise _Refused(where, f"must be an object, got {_shown(remote)}")
    kind = remote.get("type", remote.get("transport_type"))
    if kind is None:
        raise _Refused(f"{where}.type", "is missing")
    if kind == "sse":
        raise _Refused(
            f"{where}.type", "sse (the old HTTP+SSE transport) is not supported; Streamable HTTP is"
        )
    if kind != "streamable-http":
        raise _Refused(
            f"{where}.type", f"{_shown(kind)} is not a remote transport (streamable-http or sse)"
        )
    url = remote.get("url")
    if not isinstance(url, str) or not url:
        raise _Refused(
            f"{where}.url", "is missing" if url is None else f"must be a URL, got {_shown(url)}"
        )
    holes = _PLACEHOLDER.findall(url)
    if holes:
        raise _Refused(
            f"{where}.url",
            f"is a template ({', '.join('{' + h + '}' for h in holes)} to fill in); "
            "give it a URL without variables",
        )
    if not re.fullmatch(r"https?://\S+", url):
        raise _Refused(f"{where}.url", f"{_shown(url)} is not an http:// or https:// URL")
    headers = _inputs(_list(remote.get("headers"), f"{where}.headers"), f"{where}.headers")
    registry: dict[str, Any] = {"transport": "streamable-http"}
    if headers:
        registry["headers"] = headers
    return _Target({"url": url}, registry)


def _package(package: object, where: str) -> _Target:
    if not isinstance(package, dict):
        raise _Refused(where, f"must be an object, got {_shown(package)}")
    kind = package.get("registryType")
    if kind is None:
        raise _Refused(f"{where}.registryType", "is missing")
    identifier = _text(package, "identifier", f"{where}.", required=True)
    version = package.get("version")
    if version is not None and (not isinstance(version, str) or not version or version == "latest"):
        raise _Refused(f"{where}.version", f"must be a specific version, got {_shown(version)}")
    transport = package.get("transport", {"type": "stdio"})
    kind_of_transport = transport.get("type") if isinstance(transport, dict) else None
    if kind_of_transport is None:
        raise _Refused(f"{where}.transport.type", "is missing")
    if kind_of_transport != "stdio":
        raise _Refused(
            f"{where}.transport.type",
            f"{_shown(kind_of_transport)}: a package that serves HTTP itself must be started "
            "by hand; only stdio packages become commands",
        )
    environment = _inputs(
        _list(package.get("environmentVariables"), f"{where}.environmentVariables"),
        f"{where}.environmentVariables",
    )
    runtime = _arguments(package.get("runtimeArguments"), f"{where}.runtimeArguments")
    arguments = _arguments(package.get("packageArguments"), f"{where}.packageArguments")
    versioned = identifier
    if kind == "npm":
        if version:
            versioned = f"{identifier}@{version}"
        command = ["npx", *(runtime or ["-y"]), versioned, *arguments]
    elif kind == "pypi":
        if version:
            versioned = f"{identifier}=={version}"
        command = ["uvx", *runtime, versioned, *arguments]
    elif kind == "oci":
        image_name = identifier.rsplit("/", 1)[-1]
        if version and ":" not in image_name and "@" not in image_name:
            versioned = f"{identifier}:{version}"
        # ``-e NAME`` passes the variable from glove's environment into the container.
        forwarded = [part for variable in environment for part in ("-e", variable["name"])]
        command = ["docker", "run", "-i", "--rm", *runtime, *forwarded, versioned, *arguments]
    elif kind == "nuget":
        if version:
            versioned = f"{identifier}@{version}"
        command = ["dnx", *runtime, versioned, "--yes", *(["--", *arguments] if arguments else [])]
    elif isinstance(kind, str):
        raise _Refused(
            f"{where}.registryType",
            f"{_shown(kind)} packages cannot be started here (npm, pypi, oci and nuget can)",
        )
    else:
        raise _Refused(f"{where}.registryType", f"must be a string, got {_shown(kind)}")
    fixed = {
        variable["name"]: variable["value"]
        for variable in environment
        if isinstance(variable.get("value"), str) and not variable.get("secret")
    }
    registry: dict[str, Any] = {"transport": "stdio", "package": f"{kind}:{identifier}"}
    if environment:
        registry["environment"] = environment
    fields: dict[str, Any] = {"command": command}
    if fixed:
        fields["env"] = fixed
    return _Target(fields, registry)


def _arguments(values: object, where: str) -> list[str]:
    """Command-line parts of runtime or package arguments: fixed values as given, a default
    where there is no value, ``<hint>`` placeholders for required values without either;
    optional arguments without a value are left out."""
    out: list[str] = []
    for i, argument in enumerate(_list(values, where)):
        here = f"{where}[{i}]"
        if not isinstance(argument, dict):
            raise _Refused(here, f"must be an object, got {_shown(argument)}")
        kind = argument.get("type")
        value = argument.get("value", argument.get("default"))
        if value is not None and not isinstance(value, str):
            raise _Refused(f"{here}.value", f"must be a string, got {_shown(value)}")
        if isinstance(value, str):
            value = _fill(value, argument.get("variables"))
        required = argument.get("isRequired") is True
        if kind == "positional":
            hint = argument.get("valueHint")
            if value is None:
                if not isinstance(hint, str) or not hint:
                    raise _Refused(here, "a positional argument needs a value or a valueHint")
                if not required:
                    continue
                value = f"<{hint}>"
            out.append(value)
        elif kind == "named":
            name = _text(argument, "name", f"{here}.", required=True)
            if value is None:
                if not required:
                    continue
                # A flag with a format but no value to give is written as the placeholder.
                hint = argument.get("valueHint") or name.lstrip("-")
                value = f"<{hint}>" if argument.get("format") != "boolean" else ""
            out.extend([name, value] if value else [name])
        else:
            raise _Refused(
                f"{here}.type",
                "is missing" if kind is None else f"{_shown(kind)} is neither positional nor named",
            )
    return out


def _fill(value: str, variables: object) -> str:
    """``{name}`` replaced by the variable's value or default; otherwise ``<name>`` (the
    schema leaves an unknown ``{name}`` as it is: it is still a value to fill in)."""

    def one(match: re.Match[str]) -> str:
        variable = variables.get(match[1]) if isinstance(variables, dict) else None
        if isinstance(variable, dict):
            for key in ("value", "default"):
                if isinstance(variable.get(key), str) and not variable.get("isSecret"):
                    return str(variable[key])
        return f"<{match[1]}>"

    return _PLACEHOLDER.sub(one, value)


def _new_id(name: str, used: set[str]) -> str:
    """A catalogue id for a registry name: its part after ``/`` (``weather``), with the
    namespace's last label before it when that is taken (``user-weather``), then a short hash."""
    namespace, _, short = name.partition("/")
    base = _slug(short) or "server"
    owner = _slug(namespace.rsplit(".", 1)[-1])
    candidates = [base, _slug(f"{owner}-{base}")] if owner else [base]
    for candidate in candidates:
        candidate = candidate[:MAX_ID_LENGTH].strip("-_") or "server"
        if candidate not in used:
            return candidate
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    stem = candidates[-1][: MAX_ID_LENGTH - 9].strip("-_") or "server"
    candidate = f"{stem}-{digest}"
    counter = 2
    while candidate in used:
        candidate = f"{stem[: MAX_ID_LENGTH - 12]}-{digest}-{counter}"
        counter += 1
    return candidate


def _slug(text: str) -> str:
    return _NOT_ID.sub("-", text.lower()).strip("-")


def catalogue_toml(entries: Sequence[McpCatalogueEntry], *, header: str = "") -> str:
    """A TOML catalogue (``[[servers]]`` tables) of ``entries``, each preceded by comments
    naming what it needs from the user (headers, environment variables, placeholders).

    Written directly (``metadata`` as an inline table), not through tomlkit: a registry's
    thousands of entries take tomlkit tens of seconds, this well under one.

    Args:
        entries: the entries (as ``read_registry`` gives them).
        header: comment lines for the top of the file (each without ``#``).
    """
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    for entry in entries:
        if lines:
            lines.append("")
        lines.append("[[servers]]")
        lines += [f"# {note}" for note in needs(entry)]
        fields = entry.model_dump(exclude_defaults=True)
        fields["metadata"] = fields.pop("metadata", {})  # last: the long line
        for key, value in fields.items():
            if value != {} or key != "metadata":
                lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def _toml_string(text: str) -> str:
    # JSON's escapes (\" \\ \n \t \uXXXX ...) are all TOML basic-string escapes; DEL is
    # the one control character JSON leaves as it is and TOML refuses.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{_toml_key(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return "{" + inner + "}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def needs(entry: McpCatalogueEntry) -> list[str]:
    """One line per thing an imported entry needs from the user before it works."""
    registry = entry.metadata.get("registry")
    if not isinstance(registry, dict):
        return []
    lines: list[str] = []
    for key, what in (("headers", "header"), ("environment", "environment variable")):
        for item in registry.get(key) or ():
            if not isinstance(item, dict) or not (item.get("required") and "value" not in item):
                continue
            secret = " (secret)" if item.get("secret") else ""
            description = f": {item['description']}" if item.get("description") else ""
            lines.append(f"needs {what} {item['name']}{secret}{description}")
    holes = _holes(entry.command)
    if holes:
        lines.append("fill in the command's " + ", ".join(f"<{h}>" for h in holes))
    return lines


def missing_inputs(entry: McpCatalogueEntry, environ: Mapping[str, str]) -> list[str]:
    """What an imported stdio entry still lacks before it can start: ``<placeholders>`` left in
    its command, and required environment variables set neither in ``environ`` nor in its
    ``env``. Empty for entries that were not imported, and for remote servers (their required
    headers are credentials: the server's refusal says so)."""
    registry = entry.metadata.get("registry")
    if not entry.command or not isinstance(registry, dict):
        return []
    lacking = [f"fill in the command's <{h}>" for h in _holes(entry.command)]
    for item in registry.get("environment") or ():
        if not isinstance(item, dict) or not item.get("required") or "value" in item:
            continue
        name = item.get("name")
        if isinstance(name, str) and name not in environ and name not in entry.env:
            lacking.append(f"set the environment variable {name}")
    return lacking


def _holes(command: Sequence[str]) -> list[str]:
    return sorted({m for part in command for m in re.findall(r"<([^<>]+)>", part)})
