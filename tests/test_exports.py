"""Each package's __all__ is sorted, complete, and holds every name DESIGN.md fixes."""

from __future__ import annotations

import importlib
import os
import pkgutil
from types import ModuleType

import pytest

import glove_core
import glove_mcp
import glove_mcp.oauth
from tests._postgres import require_postgres_driver

# Names DESIGN.md fixes as public. Grown as features land; never shrunk.
FIXED: dict[str, set[str]] = {
    "glove_core": {
        "AbortController",
        "AbortError",
        "AbortSignal",
        "DisplayManager",
        "Glove",
        "Message",
        "MemoryStore",
        "ModelAdapter",
        "RequestResult",
        "ScriptedModel",
        "Slot",
        "StoreAdapter",
        "Subscriber",
        "Tool",
        "ToolCall",
        "ToolContext",
        "ToolResult",
        "ToolResultData",
        "Usage",
        "ContentPart",
        "Task",
        "InboxItem",
        "tool",
        "AnthropicModel",
        "CompactionConfig",
        "EventsConfig",
        "SqliteStore",
        "TaskStore",
        "PermissionStore",
        "InboxStore",
    },
    "glove_mcp": {
        "MCP_NAMESPACE_SEP",
        "McpAdapter",
        "McpCatalogueEntry",
        "McpMount",
        "McpServerConnection",
        "MemoryMcpAdapter",
        "SqliteMcpAdapter",
        "adapter_auth",
        "bearer",
        "bridge_mcp_tool",
        "connect_mcp",
        "headers",
        "include_tool",
        "json_schema_to_shape",
        "mount_mcp",
        "match_entries",
    },
    "glove_mcp.oauth": {
        "run_mcp_oauth",
        "OAuthStore",
        "MemoryOAuthStore",
        "FsOAuthStore",
        "KeyringOAuthStore",
        "McpOAuthProvider",
        "OAuthTokenSource",
        "build_client_metadata",
        "MCP_DEFAULT_CLIENT_INFO",
        "empty_oauth_state",
    },
}


_POSTGRES_DRIVER = {"psycopg", "psycopg_pool"}
# Modules of an optional extra other than ``postgres``: imported only where it is installed.
_OTHER_EXTRAS = {"dbos": "durable"}


def _public_modules(package: ModuleType) -> tuple[list[ModuleType], list[str]]:
    """The package's public modules, and those that could not be imported because the
    ``postgres`` extra is not installed."""
    modules = [package]
    without_driver: list[str] = []
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if info.name.rsplit(".", 1)[-1].startswith("_") or ".testing" in info.name:
            continue
        if info.name.endswith(".cli"):
            continue
        try:
            modules.append(importlib.import_module(info.name))
        except ModuleNotFoundError as exc:
            if exc.name not in _POSTGRES_DRIVER and exc.name not in _OTHER_EXTRAS:
                raise
            without_driver.append(f"{info.name} (needs {exc.name})")
    return modules, without_driver


@pytest.mark.parametrize(
    "package", [glove_core, glove_mcp, glove_mcp.oauth], ids=lambda p: p.__name__
)
def test_all_is_sorted_and_complete(package: ModuleType) -> None:
    exported = list(package.__all__)
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), n)) or exported == sorted(
        exported
    )
    assert len(set(exported)) == len(exported)
    for name in exported:
        assert hasattr(package, name), f"{package.__name__}.__all__ lists missing {name!r}"
    missing = FIXED[package.__name__] - set(exported)
    assert not missing, f"{package.__name__} lost fixed public names: {sorted(missing)}"


@pytest.mark.parametrize("package", [glove_core, glove_mcp], ids=lambda p: p.__name__)
def test_every_module_declares_all(package: ModuleType) -> None:
    modules, without_driver = _public_modules(package)
    for module in modules:
        assert hasattr(module, "__all__"), f"{module.__name__} has no __all__"
    if without_driver:
        # Every other module was checked; these are checked where the extra is installed.
        require_postgres_driver()
        missing = [m for m in without_driver if any(f"(needs {n})" in m for n in _OTHER_EXTRAS)]
        if missing and os.environ.get("GLOVE_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"an optional extra is required here but missing: {missing}")
        if missing:
            pytest.skip(f"checked where their extra is installed: {', '.join(missing)}")


def test_the_default_install_imports_without_the_postgres_driver() -> None:
    """Without the ``postgres`` extra, everything but the PostgreSQL modules imports: the
    command (its demo, chat and serve), the server and OAuth never need ``psycopg`` unless a
    PostgreSQL database is used (a module-level import of it broke the quick start's demo)."""
    import subprocess
    import sys

    program = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('psycopg', 'psycopg_pool'):\n"
        "            raise ImportError('no postgres extra')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import glove_core, glove_mcp, glove_mcp.oauth, glove_mcp.server, glove_mcp.mount\n"
        "import glove_mcp.cli.agent, glove_mcp.cli.demo_stack, glove_mcp.programs\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
