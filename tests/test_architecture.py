"""Architecture rules (DESIGN, "Architecture principles"), checked by parsing the source.

- No import cycles among glove_core / glove_mcp modules, counting imports made only under
  ``TYPE_CHECKING`` and imports inside functions: a cycle hidden from the interpreter is still
  two modules that cannot be understood, tested or changed apart.
- No module reads or writes another object's private attributes (``obj._name``) unless the
  name is defined in that same module. ``self._x`` and ``cls._x`` are the object's own; a
  private module (``glove_core._execute``) is imported by name, not reached into.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("glove_core", "glove_mcp")

# Tests, examples and benchmarks use the packages as users do and are held to the same rule,
# except white-box tests of a private module's internals (named here, with the reason).
WHITE_BOX: dict[str, str] = {}
USERS = sorted(
    p
    for folder in ("tests", "examples", "bench")
    for p in (ROOT / folder).rglob("*.py")
    if str(p.relative_to(ROOT)) not in WHITE_BOX and "node_modules" not in p.parts
)


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    tree: ast.Module

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"


def _modules() -> dict[str, Module]:
    found: dict[str, Module] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join(parts)
            found[name] = Module(name, path, ast.parse(path.read_text(), str(path)))
    return found


MODULES = _modules()


def _resolve(module: Module, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.name.split(".")
    if not module.is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imports(module: Module) -> set[str]:
    """Every glove module ``module`` imports, wherever the import statement stands."""
    targets: set[str] = set()
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node)
            # `from pkg import sub` imports the submodule when there is one.
            names = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else source
                for alias in node.names
            ]
        else:
            continue
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module.name:
                targets.add(name)
                targets |= _packages_run_first(module.name, name)
    return targets


def _packages_run_first(importer: str, imported: str) -> set[str]:
    """Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first; they count as
    imports too, except the importer's own packages (whose ``__init__`` is already running
    or done when the importer loads)."""
    parts = imported.split(".")
    ancestors = {".".join(parts[:i]) for i in range(1, len(parts))}
    own = {importer} | {
        ".".join(importer.split(".")[:i]) for i in range(1, importer.count(".") + 1)
    }
    return {a for a in ancestors - own if a in MODULES}


def _edges() -> dict[str, set[str]]:
    return {name: _imports(module) for name, module in MODULES.items()}


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
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
        for target in sorted(edges.get(node, ())):
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

    for node in sorted(edges):
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


def _private_reaches(path: Path, tree: ast.Module) -> Iterator[str]:
    own = _defined_private_names(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not _is_private(node.attr):
            continue
        if node.attr in own:
            continue
        target = node.value
        if isinstance(target, ast.Name) and target.id in ("self", "cls"):
            continue
        yield f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}"


def test_no_import_cycles_among_glove_modules() -> None:
    cycles = _cycles(_edges())
    assert cycles == [], "import cycles (TYPE_CHECKING and local imports count): " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_reaches_into_private_attributes_of_another() -> None:
    reaches: list[str] = []
    for module in MODULES.values():
        reaches += _private_reaches(module.path, module.tree)
    for path in USERS:
        reaches += _private_reaches(path, ast.parse(path.read_text(), str(path)))
    assert reaches == [], "private attributes reached across modules:\n" + "\n".join(reaches)


def test_the_private_access_check_catches_a_reach() -> None:
    tree = ast.parse("def f(glove):\n    return glove._tools\n\nclass A:\n    _own = 1\n")
    reaches = list(_private_reaches(ROOT / "x.py", tree))
    assert reaches == ["x.py:2: glove._tools"]
    source = "class A:\n    def __init__(self):\n        self._x = 1\n\n    def f(self, other):\n"
    tree = ast.parse(source + "        other._x = self._x\n")
    assert list(_private_reaches(ROOT / "x.py", tree)) == []  # _x is defined in this module
    tree = ast.parse(source + "        other._y = 2\n")
    assert list(_private_reaches(ROOT / "x.py", tree)) == ["x.py:6: other._y"]  # a write


def test_the_core_does_not_know_glove_mcp() -> None:
    """glove_core never imports glove_mcp, nor names its event kinds: glove_mcp defines and
    publishes its own events."""
    for name, module in MODULES.items():
        if name.startswith("glove_core"):
            assert not any(t.startswith("glove_mcp") for t in _imports(module)), name
            assert "mcp_server_" not in module.path.read_text(), name
