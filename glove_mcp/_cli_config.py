"""Where the ``glove-mcp`` command keeps things, and how it reads a catalogue file."""

from __future__ import annotations

import os

from glove_mcp.errors import GloveMcpError

# Not typing.TYPE_CHECKING, and pathlib/tomllib imported where used: ``glove-mcp status``
# goes through this module, and each of them costs its start-up several ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Literal, TypeAlias

    from glove_mcp.catalogue import McpCatalogueEntry
    from glove_mcp.oauth import OAuthStore

__all__ = [
    "DEFAULT_SERVERS",
    "CatalogueFileError",
    "data_dir",
    "data_dir_name",
    "default_catalogue",
    "load_catalogue",
    "open_token_store",
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

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        super().__init__(f"catalogue {str(path)!r}: {problem}")


def data_dir_name() -> str:
    """``$GLOVE_HOME``, else ``$XDG_DATA_HOME/glove``, else ``~/.local/share/glove``."""
    explicit = os.environ.get("GLOVE_HOME")
    if explicit:
        return os.path.expanduser(explicit)
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return os.path.join(base, "glove")


def data_dir() -> Path:
    """The command's data directory (``data_dir_name()``) as a path."""
    from pathlib import Path

    return Path(data_dir_name())


def load_catalogue(path: str | Path | None) -> list[McpCatalogueEntry]:
    """Read a TOML catalogue (``[[servers]]`` tables), or the built-in one when ``path`` is
    None.

    Raises:
        CatalogueFileError: the file is missing, not TOML, or an entry is invalid.
    """
    if path is None:
        return default_catalogue()
    import tomllib
    from pathlib import Path

    from pydantic import ValidationError

    from glove_mcp.catalogue import McpCatalogueEntry

    file = Path(path).expanduser()
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CatalogueFileError(file, "no such file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CatalogueFileError(file, f"not valid TOML ({exc})") from None
    servers = data.get("servers")
    if not isinstance(servers, list) or not servers:
        raise CatalogueFileError(file, "expected one or more [[servers]] tables")
    entries = []
    for position, raw in enumerate(servers, start=1):
        try:
            entries.append(McpCatalogueEntry.model_validate(raw))
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"]) or "entry"
            raise CatalogueFileError(file, f"server #{position}: {where}: {first['msg']}") from None
    ids = [e.id for e in entries]
    if len(set(ids)) != len(ids):
        raise CatalogueFileError(file, "server ids must be unique")
    return entries


def open_token_store(kind: StoreKind = "file") -> OAuthStore:
    """The OAuth token store the command uses: a 0600 JSON file under the data directory, or
    the OS keyring."""
    from glove_mcp.oauth import FsOAuthStore, KeyringOAuthStore

    if kind == "keyring":
        return KeyringOAuthStore(service="glove-mcp")
    return FsOAuthStore(token_file())


def token_file_name() -> str:
    """The command's OAuth token file (the ``file`` store)."""
    return os.path.join(data_dir_name(), "oauth.json")


def token_file() -> Path:
    """``token_file_name()`` as a path."""
    return data_dir() / "oauth.json"
