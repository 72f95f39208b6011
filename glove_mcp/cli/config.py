"""Where the ``glove-mcp`` command keeps things, and how it reads a catalogue file.

Configuration (the catalogue, ``servers.toml``) lives in ``$XDG_CONFIG_HOME/glove`` (default
``~/.config/glove``); data (tokens, databases) in ``$GLOVE_HOME``, else
``$XDG_DATA_HOME/glove`` (default ``~/.local/share/glove``). A ``servers.toml`` left in the
data folder by an earlier version is moved to the configuration folder once, saying so.
"""

from __future__ import annotations

import os

from glove_mcp.errors import GloveMcpError
from glove_mcp.paths import config_dir
from glove_mcp.paths import data_dir as data_dir_name
from glove_mcp.paths import token_file as token_file_name

# Not typing.TYPE_CHECKING, and pathlib/tomllib imported where used: ``glove-mcp status``
# goes through this module, and each of them costs its start-up several ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Literal, TypeAlias

    from pydantic import ValidationError

    from glove_mcp.catalogue import McpCatalogueEntry
    from glove_mcp.oauth import OAuthStore

__all__ = [
    "DEFAULT_SERVERS",
    "CatalogueFileError",
    "catalogue_file_name",
    "config_dir_name",
    "data_dir",
    "data_dir_name",
    "database_file",
    "default_catalogue",
    "entries_from_toml",
    "load_catalogue",
    "open_token_store",
    "private_file",
    "token_file",
    "token_file_name",
]

if TYPE_CHECKING:
    StoreKind: TypeAlias = Literal["file", "keyring"]


DEFAULT_SERVERS: tuple[dict[str, object], ...] = (
    {
        "id": "notion",
        "name": "Notion",
        "description": "Search, read, create and edit pages, databases and comments in a "
        "Notion workspace.",
        "url": os.environ.get("GLOVE_NOTION_MCP_URL", "https://mcp.notion.com/mcp"),
        "tags": ["docs", "notes", "wiki", "knowledge-base"],
    },
    {
        "id": "linear",
        "name": "Linear",
        "description": "Create, update and search issues, projects and cycles in Linear.",
        "url": os.environ.get("GLOVE_LINEAR_MCP_URL", "https://mcp.linear.app/mcp"),
        "tags": ["issues", "tickets", "project-management"],
    },
)
"""The built-in catalogue (Notion and Linear; URLs overridable by environment), as data."""


def default_catalogue() -> list[McpCatalogueEntry]:
    """The built-in catalogue as entries."""
    from glove_mcp.catalogue import McpCatalogueEntry

    return [McpCatalogueEntry.model_validate(raw) for raw in DEFAULT_SERVERS]


class CatalogueFileError(GloveMcpError):
    """A catalogue file could not be read."""

    exit_status = 2
    """A configuration mistake: the command exits with status 2, as for a bad argument."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        super().__init__(f"catalogue {str(path)!r}: {problem}")


def data_dir() -> Path:
    """The command's data directory (``data_dir_name()``) as a path."""
    from pathlib import Path

    return Path(data_dir_name())


def config_dir_name() -> str:
    """``$XDG_CONFIG_HOME/glove``, else ``~/.config/glove``: where the catalogue lives."""
    return config_dir()


def catalogue_file_name() -> str:
    """The catalogue used when no ``--catalogue`` is given, if it exists: ``servers.toml``
    in the configuration folder (``glove-mcp servers add`` creates it). One left in the data
    folder by an earlier version is moved there first (once, saying so on stderr)."""
    name = os.path.join(config_dir_name(), "servers.toml")
    _move_old_catalogue(os.path.join(data_dir_name(), "servers.toml"), name)
    return name


def _private_dirs(folder: str) -> None:
    """Make ``folder`` and each missing parent with mode 0700, as the token folder is made
    (the standard library alone: ``status`` may get here, and must start fast)."""
    missing: list[str] = []
    while folder and not os.path.exists(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue  # another process made it meanwhile
        os.chmod(path, 0o700)  # mkdir's mode is masked by the umask


def _move_old_catalogue(old: str, new: str) -> None:
    """Move the data folder's ``servers.toml`` (where versions before 0.2 kept it) to the
    configuration folder, unless one is there already; nothing is deleted or overwritten."""
    import sys

    if not os.path.isfile(old) or os.path.abspath(old) == os.path.abspath(new):
        return
    if os.path.exists(new):
        print(
            f"glove-mcp: note: {old} is not read: the catalogue is {new} now; move what you "
            "need from the old file and delete it",
            file=sys.stderr,
        )
        return
    try:
        _private_dirs(os.path.dirname(new))
        try:
            os.link(old, new)  # never replaces a file another process just wrote there
        except OSError:
            import shutil

            # Another file system (or no hard links): copy to a temporary name, then rename
            # into place, so a half-copied catalogue is never read.
            temporary = f"{new}.moving-{os.getpid()}"
            shutil.copy2(old, temporary)
            if os.path.exists(new):
                os.unlink(temporary)
                return
            os.replace(temporary, new)
        os.unlink(old)
    except OSError as exc:
        from glove_mcp.cli.errors import CliError

        raise CliError(
            f"cannot move the catalogue {old} to {new}: {exc.strerror or exc}; move it by hand "
            "(or pass --catalogue FILE)",
            2,
        ) from None
    print(
        f"glove-mcp: moved the catalogue {old} to {new} (configuration now lives in "
        "$XDG_CONFIG_HOME/glove, default ~/.config/glove)",
        file=sys.stderr,
    )


def load_catalogue(path: str | Path | None) -> list[McpCatalogueEntry]:
    """Read a TOML catalogue (``[[servers]]`` tables); with ``path`` None, the data
    directory's ``servers.toml`` if there is one, else the built-in catalogue.

    Raises:
        CatalogueFileError: the file is missing, not TOML, or an entry is invalid (the
            message names the entry and the field).
    """
    import tomllib
    from pathlib import Path

    if path is None:
        if not os.path.exists(catalogue_file_name()):
            return default_catalogue()
        path = catalogue_file_name()
    file = Path(path).expanduser()
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CatalogueFileError(file, "no such file") from None
    except IsADirectoryError:
        raise CatalogueFileError(file, "is a folder, not a file") from None
    except PermissionError:
        raise CatalogueFileError(file, "permission denied") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CatalogueFileError(file, f"not valid TOML ({exc})") from None
    return entries_from_toml(data, file)


def entries_from_toml(data: dict[str, object], file: Path) -> list[McpCatalogueEntry]:
    """The entries of a parsed catalogue document, checked as ``load_catalogue`` does."""
    from pydantic import ValidationError

    from glove_mcp.catalogue import McpCatalogueEntry

    servers = data.get("servers")
    if not isinstance(servers, list) or not servers:
        raise CatalogueFileError(file, "expected one or more [[servers]] tables")
    entries: list[McpCatalogueEntry] = []
    seen: dict[str, int] = {}
    for position, raw in enumerate(servers, start=1):
        name = raw.get("id") if isinstance(raw, dict) else None
        label = f"server #{position}" + (f" ({name!r})" if isinstance(name, str) else "")
        try:
            entry = McpCatalogueEntry.model_validate(raw)
        except ValidationError as exc:
            raise CatalogueFileError(file, f"{label}: {_first_problem(exc)}") from None
        if entry.id in seen:
            raise CatalogueFileError(
                file,
                f"server #{position}: id {entry.id!r} is already used by server "
                f"#{seen[entry.id]}; ids must be unique",
            )
        seen[entry.id] = position
        entries.append(entry)
    return entries


def _first_problem(exc: ValidationError) -> str:
    """The first validation problem, worded for a person editing the file."""
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in first["loc"])
    kind = first["type"]
    if kind == "extra_forbidden":
        return f"unknown field {where!r}"
    if kind == "missing":
        return f"{where} is missing"
    message = str(first["msg"])
    # A validator's own ValueError reads "Value error, <our text>": the prefix is pydantic's.
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    return f"{where}: {message}" if where else message


def database_file(given: str | None, default_name: str) -> Path:
    """The SQLite file of ``--db`` (or ``default_name`` in the data directory), created
    private (``private_file``) if it does not exist yet."""
    from pathlib import Path

    return private_file(Path(given).expanduser() if given else data_dir() / default_name)


def private_file(path: Path) -> Path:
    """``path``, created empty with mode 0600 if it does not exist (its missing folders
    0700), so that a database holding conversations is readable by its owner only, like the
    token file. An existing file keeps its mode: it is the user's."""
    from glove_mcp.oauth.private_files import make_private_dirs

    make_private_dirs(path.parent)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path
    except OSError as exc:
        from glove_mcp.cli.errors import CliError

        raise CliError(f"cannot create {str(path)!r}: {exc.strerror or exc}", 2) from None
    os.close(descriptor)
    return path


def open_token_store(kind: StoreKind = "file") -> OAuthStore:
    """The OAuth token store the command uses: a 0600 JSON file under the data directory, or
    the OS keyring."""
    from glove_mcp.oauth import FsOAuthStore, KeyringOAuthStore

    if kind == "keyring":
        return KeyringOAuthStore(service="glove-mcp")
    return FsOAuthStore(token_file())


def token_file() -> Path:
    """``token_file_name()`` as a path."""
    return data_dir() / "oauth.json"
