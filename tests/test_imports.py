"""The project's house rules, checked on the sources: the modules of ``porter`` and ``porter.rules``
import each other without a cycle (imports inside functions count: they run too, only later), and
the core in ``porter/`` names no framework API."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Mapping, Optional, Set

ROOT = Path(__file__).resolve().parent.parent
# Import name of each source folder: rules/ is installed as porter.rules (pyproject package-dir).
PACKAGES = {"porter": ROOT / "porter", "porter.rules": ROOT / "rules"}
# Names that only framework-specific code has any business with.
FRAMEWORK_NAMES = ("trainingModel", "IPUStrategy", "GradientTape", "ipu_compiler", "DataLoader", "drop_remainder")


def module_files(packages: Mapping[str, Path]) -> Dict[str, Path]:
    """Module name -> file, for every ``.py`` file below each package folder (but those below
    another listed folder nested in it, which belong to that one)."""
    folders = set(packages.values())
    found: Dict[str, Path] = {}
    for package, folder in packages.items():
        nested = [other for other in folders if folder in other.parents]
        for path in sorted(folder.rglob("*.py")):
            if any(other in path.parents for other in nested):
                continue
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST) -> Iterator[ast.stmt]:
    """Every import statement of a module, at any depth, except under ``if TYPE_CHECKING:``
    (never run; its ``else:`` is)."""
    stack: List[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _known(name: str, modules: Mapping[str, Path]) -> Optional[str]:
    """The longest prefix of a dotted name that is one of the modules."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _base(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The module a ``from`` import reads from, relative imports resolved."""
    if not node.level:
        return node.module or ""
    package = module if is_package else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def imports_of(module: str, path: Path, modules: Mapping[str, Path]) -> Set[str]:
    """The project modules that ``module`` imports anywhere in its code. ``from a import b`` is an
    import of the module ``a.b`` when there is one, else of ``a``."""
    found: Set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [_known(alias.name, modules) for alias in node.names]
        else:
            base = _base(node, module, path.name == "__init__.py")
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else _known(base, modules)
                       for alias in node.names]
        found.update(target for target in targets if target is not None and target != module)
    return found


def import_graph(packages: Mapping[str, Path]) -> Dict[str, Set[str]]:
    modules = module_files(packages)
    return {module: imports_of(module, path, modules) for module, path in modules.items()}


def cycles(graph: Mapping[str, Set[str]]) -> List[List[str]]:
    """Cycles (``[a, b, ..., a]``) of the graph: the loop closed by each back edge of a
    depth-first search, so every group of modules that import each other shows at least once."""
    state: Dict[str, int] = {}  # 1: on the current path, 2: done
    path: List[str] = []
    found: List[List[str]] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                found.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    return found


def test_no_import_cycles():
    graph = import_graph(PACKAGES)
    assert "porter.engine" in graph and "porter.rules.keras._analysis.model_plan" in graph
    found = cycles(graph)
    assert found == [], "import cycles:\n" + "\n".join(" -> ".join(loop) for loop in found)


def test_the_graph_sees_hidden_and_relative_imports_and_skips_type_checking(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from . import c\n")
    (package / "a.py").write_text("def late():\n    from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text("from ..a import late\n")
    (package / "sub" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\nelse:\n    import pkg.sub.b.x\n")
    graph = import_graph({"pkg": package})
    assert graph == {"pkg": set(), "pkg.a": {"pkg.sub.b"}, "pkg.sub": {"pkg.sub.c"},
                     "pkg.sub.b": {"pkg.a"}, "pkg.sub.c": {"pkg.sub.b"}}
    assert cycles(graph) == [["pkg.a", "pkg.sub.b", "pkg.a"]]


def test_the_core_names_no_framework_api():
    found = [
        f"{path.relative_to(ROOT)}:{number}: {name}"
        for path in sorted(PACKAGES["porter"].rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for name in FRAMEWORK_NAMES if name in line
    ]
    assert found == [], "framework names in the core:\n" + "\n".join(found)
