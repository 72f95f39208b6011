"""Architecture rules (DESIGN, "Layout"), checked by parsing the source.

- No import cycles among glove_core / glove_mcp modules, counting imports made only under
  ``TYPE_CHECKING`` and imports inside functions: a cycle hidden from the interpreter is still
  two modules that cannot be understood, tested or changed apart.
- No module reads or writes another object's private attributes (``obj._name``) unless the
  name is defined in that same module. ``self._x`` and ``cls._x`` are the object's own.
- No module imports a private module (one whose dotted name has a part starting with ``_``)
  of another package: ``glove_core.stores._rows`` is for ``glove_core.stores`` alone. A
  package shows others its public modules and its ``__init__``.
- ``glove_core`` never imports ``glove_mcp``.
- The headless server (``glove_mcp.server``) imports nothing of MCP: not the SDK (``mcp``,
  ``mcp_types``), not ``glove_mcp.connect`` nor ``glove_mcp.mount``, not even through the
  modules it imports.

Modules hold one concept whole; there is no line limit (split by concept, never by length).
Each rule has a test that builds a small package tree breaking it and checks it is reported.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("glove_core", "glove_mcp")
SERVER = "glove_mcp.server"
MCP_SIDE = ("glove_mcp.connect", "glove_mcp.mount")
MCP_SDK = ("mcp", "mcp_types")

# Tests, examples and benchmarks use the packages as users do and are held to the private
# attribute rule, except white-box tests of a private module's internals (named here, with the
# reason).
WHITE_BOX: dict[str, str] = {}


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    tree: ast.Module

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"

    @property
    def package(self) -> str:
        """The package the module belongs to (a package's ``__init__`` belongs to itself)."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def load_modules(root: Path, packages: Iterable[str]) -> dict[str, Module]:
    """Every module of ``packages`` under ``root``, by dotted name."""
    found: dict[str, Module] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join(parts)
            found[name] = Module(name, path, ast.parse(path.read_text(), str(path)))
    return found


MODULES = load_modules(ROOT, PACKAGES)
USERS = sorted(
    p
    for folder in ("tests", "examples", "bench")
    for p in (ROOT / folder).rglob("*.py")
    if str(p.relative_to(ROOT)) not in WHITE_BOX
    # Outside implementations installed for the tests (npm packages, a FastMCP virtualenv).
    and "node_modules" not in p.parts
    and ".venv" not in p.parts
)


def _resolve(module: Module, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.name.split(".")
    if not module.is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imported_names(module: Module, modules: dict[str, Module]) -> Iterator[str]:
    """Every dotted name ``module`` imports, wherever the import statement stands; ``from pkg
    import sub`` names the submodule when there is one."""
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node)
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                yield sub if sub in modules else source


def imports(module: Module, modules: dict[str, Module]) -> set[str]:
    """Every glove module ``module`` imports, and the packages whose ``__init__`` that runs."""
    targets: set[str] = set()
    for name in _imported_names(module, modules):
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name and name != module.name:
            targets.add(name)
            targets |= _packages_run_first(module.name, name, modules)
    return targets


def _packages_run_first(importer: str, imported: str, modules: dict[str, Module]) -> set[str]:
    """Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first; they count as
    imports too, except the importer's own packages (whose ``__init__`` is already running
    or done when the importer loads)."""
    parts = imported.split(".")
    ancestors = {".".join(parts[:i]) for i in range(1, len(parts))}
    own = {importer} | {
        ".".join(importer.split(".")[:i]) for i in range(1, importer.count(".") + 1)
    }
    return {a for a in ancestors - own if a in modules}


def edges(modules: dict[str, Module]) -> dict[str, set[str]]:
    return {name: imports(module, modules) for name, module in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _defined_private_names(tree: ast.Module) -> set[str]:
    """Private names a module defines: attributes it sets on ``self``/``cls``, names it
    assigns (class attributes, dataclass fields), methods, classes, functions."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if _is_private(n)}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_reaches(path: Path, tree: ast.Module, root: Path = ROOT) -> Iterator[str]:
    own = _defined_private_names(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not _is_private(node.attr):
            continue
        if node.attr in own:
            continue
        target = node.value
        if isinstance(target, ast.Name) and target.id in ("self", "cls"):
            continue
        yield f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}"


def _private_home(name: str) -> str | None:
    """The package a private module belongs to: the part of its dotted name before the first
    private part (``glove_core.stores._rows`` -> ``glove_core.stores``); None if public."""
    parts = name.split(".")
    for i, part in enumerate(parts):
        if _is_private(part):
            return ".".join(parts[:i])
    return None


def private_imports(modules: dict[str, Module]) -> list[str]:
    """``importer -> private module`` for each private module imported from another package."""
    found: list[str] = []
    for name, module in sorted(modules.items()):
        for target in sorted(imports(module, modules)):
            home = _private_home(target)
            if home is not None and module.package != home:
                found.append(f"{name} -> {target}")
    return found


def core_imports_of_mcp(modules: dict[str, Module]) -> list[str]:
    """``glove_core`` modules that import ``glove_mcp`` or name its event kinds."""
    found: list[str] = []
    for name, module in sorted(modules.items()):
        if name.split(".")[0] != "glove_core":
            continue
        if any(t.split(".")[0] == "glove_mcp" for t in _imported_names(module, modules)):
            found.append(f"{name} imports glove_mcp")
        if "mcp_server_" in module.path.read_text():
            found.append(f"{name} names glove_mcp's events")
    return found


def _within(name: str, packages: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def server_imports_of_mcp(modules: dict[str, Module]) -> list[str]:
    """What of MCP the server reaches: the SDK or the MCP side of glove_mcp, imported by a
    server module or by any glove module the server imports (directly or not)."""
    graph = edges(modules)
    reached: set[str] = set()
    todo = [n for n in modules if _within(n, [SERVER])]
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        todo += graph.get(name, ())
    found: list[str] = []
    for name in sorted(reached):
        if _within(name, MCP_SIDE):
            found.append(f"{name} (reached from {SERVER})")
        for imported in _imported_names(modules[name], modules):
            if imported.split(".")[0] in MCP_SDK:
                found.append(f"{name} imports {imported}")
    return found


# -- the rules on the packages ------------------------------------------------------------------


def test_no_import_cycles_among_glove_modules() -> None:
    found = cycles(edges(MODULES))
    assert found == [], "import cycles (TYPE_CHECKING and local imports count): " + "; ".join(
        " <-> ".join(c) for c in found
    )


def test_no_module_reaches_into_private_attributes_of_another() -> None:
    reaches: list[str] = []
    for module in MODULES.values():
        reaches += private_reaches(module.path, module.tree)
    for path in USERS:
        reaches += private_reaches(path, ast.parse(path.read_text(), str(path)))
    assert reaches == [], "private attributes reached across modules:\n" + "\n".join(reaches)


def test_no_module_imports_a_private_module_of_another_package() -> None:
    found = private_imports(MODULES)
    assert found == [], "private modules imported across packages:\n" + "\n".join(found)


def test_the_core_does_not_know_glove_mcp() -> None:
    """glove_core never imports glove_mcp, nor names its event kinds: glove_mcp defines and
    publishes its own events."""
    assert core_imports_of_mcp(MODULES) == []


def test_the_server_imports_nothing_of_mcp() -> None:
    assert SERVER in MODULES
    found = server_imports_of_mcp(MODULES)
    assert found == [], "the headless server reaches MCP:\n" + "\n".join(found)


MAX_TOP_LEVEL_MODULES = 12


def top_level_modules(modules: dict[str, Module], package: str) -> list[str]:
    """The modules directly in ``package`` (its packages and its ``__init__`` left out)."""
    return sorted(
        name
        for name, module in modules.items()
        if name.count(".") == 1 and name.startswith(package + ".") and not module.is_package
    )


def test_glove_mcp_keeps_a_small_top_level() -> None:
    # Concepts live in packages (connect, mount, server, cli, discovery, oauth, extensions):
    # the top level holds what every package shares.
    found = top_level_modules(MODULES, "glove_mcp")
    assert len(found) <= MAX_TOP_LEVEL_MODULES, found


# -- each rule catches what breaks it ----------------------------------------------------------


def _tree(root: Path, files: dict[str, str]) -> dict[str, Module]:
    """Write ``files`` (path -> source) under ``root`` and load their packages."""
    for relative, source in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return load_modules(root, sorted({f.split("/")[0] for f in files}))


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_a_cycle_through_type_checking_or_a_function_is_found(tmp_path: Path) -> None:
    modules = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from pkg.b import B\n",
            "pkg/b.py": "def f():\n    from pkg import a\n",
            "pkg/c.py": "import pkg.a\n",
        },
    )
    assert cycles(edges(modules)) == [["pkg.a", "pkg.b"]]


def test_a_cycle_through_a_package_init_is_found(tmp_path: Path) -> None:
    # Importing pkg.sub.x runs pkg/sub/__init__, which imports pkg.y, which imports pkg.sub.x.
    modules = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/sub/__init__.py": "from pkg.y import Y\n",
            "pkg/sub/x.py": "X = 1\n",
            "pkg/y.py": "from pkg.sub.x import X\nY = X\n",
        },
    )
    assert cycles(edges(modules)) == [["pkg.sub", "pkg.y"]]


def test_the_private_access_check_catches_a_reach(tmp_path: Path) -> None:
    tree = ast.parse("def f(glove):\n    return glove._tools\n\nclass A:\n    _own = 1\n")
    assert list(private_reaches(tmp_path / "x.py", tree, tmp_path)) == ["x.py:2: glove._tools"]
    source = "class A:\n    def __init__(self):\n        self._x = 1\n\n    def f(self, other):\n"
    tree = ast.parse(source + "        other._x = self._x\n")
    assert list(private_reaches(tmp_path / "x.py", tree, tmp_path)) == []  # _x is defined here
    tree = ast.parse(source + "        other._y = 2\n")
    assert list(private_reaches(tmp_path / "x.py", tree, tmp_path)) == ["x.py:6: other._y"]


def test_a_private_module_imported_from_another_package_is_found(tmp_path: Path) -> None:
    modules = _tree(
        tmp_path,
        {
            "core/__init__.py": "",
            "core/_helpers.py": "H = 1\n",
            "core/stores/__init__.py": "",
            "core/stores/_rows.py": "R = 1\n",
            "core/stores/sql.py": "from core.stores._rows import R\n",  # same package: fine
            "core/facade.py": "from core.stores import _rows\n",  # a package above: not
            "app/__init__.py": "",
            "app/x.py": "def f():\n    import core._helpers\n",  # another package, in a function
            "app/server/__init__.py": "from app.server import _own\n",  # its own: fine
            "app/server/_own.py": "from core.stores.sql import R\n",  # public: fine
        },
    )
    assert private_imports(modules) == [
        "app.x -> core._helpers",
        "core.facade -> core.stores._rows",
    ]


def test_the_core_importing_glove_mcp_is_found(tmp_path: Path) -> None:
    modules = _tree(
        tmp_path,
        {
            "glove_core/__init__.py": "",
            "glove_core/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from glove_mcp.types import McpTool\n",
            "glove_core/b.py": 'KIND = "mcp_server_activated"\n',
            "glove_core/c.py": "import json\n",
            "glove_mcp/__init__.py": "",
            "glove_mcp/types.py": "import glove_core.c\n",
        },
    )
    assert core_imports_of_mcp(modules) == [
        "glove_core.a imports glove_mcp",
        "glove_core.b names glove_mcp's events",
    ]


def test_the_server_reaching_mcp_is_found(tmp_path: Path) -> None:
    modules = _tree(
        tmp_path,
        {
            "glove_core/__init__.py": "",
            "glove_mcp/__init__.py": "",
            "glove_mcp/errors.py": "",
            "glove_mcp/helper.py": "import mcp_types\n",
            "glove_mcp/connect/__init__.py": "",
            "glove_mcp/connect/http.py": "",
            "glove_mcp/mount/__init__.py": "",
            "glove_mcp/server/__init__.py": "from glove_mcp.server.app import App\n",
            "glove_mcp/server/app.py": "import glove_core\nfrom glove_mcp import errors, helper\n"
            "App = 1\n",
            "glove_mcp/server/rows.py": "def f():\n"
            "    from mcp.client.session import ClientSession\n"
            "    from glove_mcp.connect import http\n",
        },
    )
    assert server_imports_of_mcp(modules) == [
        "glove_mcp.connect (reached from glove_mcp.server)",
        "glove_mcp.connect.http (reached from glove_mcp.server)",
        "glove_mcp.helper imports mcp_types",
        "glove_mcp.server.rows imports mcp.client.session",
    ]


def test_a_crowded_top_level_is_found(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/inner.py": ""}
    files.update({f"pkg/m{i}.py": "" for i in range(MAX_TOP_LEVEL_MODULES + 1)})
    found = top_level_modules(_tree(tmp_path, files), "pkg")
    assert len(found) == MAX_TOP_LEVEL_MODULES + 1 and "pkg.sub.inner" not in found
