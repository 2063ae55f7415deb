"""The package's layers (docs/architecture.md): every import inside esrp_report points down or
sideways, never up, and the product never imports the synthetic evidence writers.

Each module is parsed, not imported, so an import inside a function or under TYPE_CHECKING counts
as much as one at the top of the file.
"""

from __future__ import annotations

import ast
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "esrp_report"

# Lower ranks are imported by higher ones, never the reverse; equal ranks may import each other.
LAYER_RANKS = {
    "model": 0,  # plain typed data, errors, the documents' rounding
    "files": 0,  # opening and writing the files a user names, safely: every layer above does
    "ingest": 1,  # readers: files in, model out
    "analysis": 2,  # pure functions over the model
    "audit": 3,
    "render": 3,
    "catalog": 3,
    "app": 4,  # the library API and the build pipeline
    "cli": 5,  # Typer commands over app
}
# Modules at the package root, ranked one by one.
ROOT_MODULE_RANKS = {
    "esrp_report": 0,  # __init__.py: the version only
    "esrp_report._exactsum": 2,  # the compiled exact sums of analysis.metrics (C, built in place)
    "esrp_report.command": 6,  # the console entry point: imports cli when run
}
SYNTHETIC_WRITERS = "esrp_synth"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _rank(module: str) -> int:
    if module in ROOT_MODULE_RANKS:
        return ROOT_MODULE_RANKS[module]
    layer = module.split(".")[1]
    if layer not in LAYER_RANKS:
        raise AssertionError(f"{module}: rank its layer in LAYER_RANKS or the module in ROOT_MODULE_RANKS")
    return LAYER_RANKS[layer]


def _imports(path: Path) -> list[tuple[int, str]]:
    return _imports_in(path.read_text(encoding="utf-8"), _module_name(path), path.name == "__init__.py")


def _imports_in(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, module) of every import in ``source``; ``from package import name`` yields
    ``package.name`` when that names a submodule, since importing it is what ranks."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, module)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                if _is_module(submodule):
                    found.append((node.lineno, submodule))
    return found


def _is_module(name: str) -> bool:
    if not name.startswith("esrp_report."):
        return False
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file() or name in ROOT_MODULE_RANKS


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_the_rank_table_covers_every_module() -> None:
    for path in _sources():
        _rank(_module_name(path))  # raises for a module no table ranks


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_points_up_a_layer(path: Path) -> None:
    module = _module_name(path)
    upward = [
        f"line {line}: {module} (rank {_rank(module)}) imports {target} (rank {_rank(target)})"
        for line, target in _imports(path)
        if (target == "esrp_report" or target.startswith("esrp_report.")) and _rank(target) > _rank(module)
    ]
    assert upward == []


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_product_never_imports_the_synthetic_writers(path: Path) -> None:
    synthetic = [
        f"line {line}: {target}"
        for line, target in _imports(path)
        if target == SYNTHETIC_WRITERS or target.startswith(SYNTHETIC_WRITERS + ".")
    ]
    assert synthetic == []


def test_the_rule_catches_an_upward_import() -> None:
    """The walk sees imports inside functions and relative ones, not only those at the top."""
    source = "def late() -> None:\n    from ..analysis import sizing\n    from esrp_report.app import api\n"
    targets = [target for _, target in _imports_in(source, "esrp_report.ingest.probe", is_package=False)]
    assert "esrp_report.analysis.sizing" in targets and "esrp_report.app" in targets
    assert all(_rank(t) > _rank("esrp_report.ingest") for t in targets)


def _import_graph() -> dict[str, set[str]]:
    """Each module of the package and the modules of the package it imports (anywhere in it,
    ``TYPE_CHECKING`` blocks included, as for the layer rule: a loop that only type checking
    closes is still two modules that need each other's names). ``from package import submodule``
    is an edge to the submodule only: Python runs the package's ``__init__`` for any of its
    submodules however the import is spelt, so that edge would make every package a loop."""
    graph: dict[str, set[str]] = {}
    for path in _sources():
        module = _module_name(path)
        found = [
            (line, t) for line, t in _imports(path) if t != module and (t == "esrp_report" or _is_module(t))
        ]
        graph[module] = {
            target
            for line, target in found
            if not any(other.startswith(target + ".") for at, other in found if at == line)
        }
    return graph


def _loops(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The groups of two or more modules that import each other, directly or round a loop (the
    strongly connected components of the import graph, found iteratively by Tarjan's method)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(frozenset(group))
    return found


def _short(module: str) -> str:
    return module.removeprefix("esrp_report.")


def test_no_import_loop_anywhere() -> None:
    """No two modules import each other, directly or round a loop, in one layer or across layers
    (the rank rule alone lets two modules of one rank need each other). What two modules both
    need goes to a third below them."""
    loops = {frozenset(map(_short, group)) for group in _loops(_import_graph())}
    assert sorted(map(sorted, loops)) == []


def test_the_loop_check_sees_a_loop_within_one_layer() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert _loops(graph) == [frozenset({"a", "b", "c"})]
    assert _loops({"a": {"b"}, "b": set()}) == []


def _module_table_reaches(source: str, name: str) -> list[int]:
    """Lines of ``source`` that touch ``sys.modules`` (as ``sys.modules`` or a ``from sys import
    modules``): a module reached that way is an import the layer and loop checks cannot see, and
    a setting read through it is one passed by nobody."""
    lines: list[int] = []
    for node in ast.walk(ast.parse(source, name)):
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "modules"
            and isinstance(node.value, ast.Name)
            and node.value.id == "sys"
        ):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "sys":
            lines += [node.lineno for alias in node.names if alias.name == "modules"]
    return lines


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_reaches_another_through_sys_modules(path: Path) -> None:
    lines = _module_table_reaches(path.read_text(encoding="utf-8"), str(path))
    assert lines == [], f"{path.relative_to(ROOT)} reads sys.modules at line(s) {lines}: import what it needs"


def test_the_sys_modules_check_sees_both_spellings() -> None:
    source = "import sys\nfrom sys import modules\n\ndef f():\n    return sys.modules['x'].ENGINE\n"
    assert _module_table_reaches(source, "probe") == [2, 5]
    assert _module_table_reaches("import sys\nsys.argv\n", "probe") == []


def test_every_data_file_of_the_package_ships() -> None:
    """pyproject's package-data globs name every TOML file the package reads at run time."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["esrp_report"]
    for data_file in sorted(PACKAGE.rglob("*.toml")):
        parts = data_file.relative_to(PACKAGE).parts
        assert any(_glob_matches(parts, pattern) for pattern in globs), "/".join(parts)


def _glob_matches(parts: tuple[str, ...], pattern: str) -> bool:
    """As setuptools matches package-data: ``*`` stays within one folder."""
    pattern_parts = pattern.split("/")
    return len(parts) == len(pattern_parts) and all(map(fnmatch, parts, pattern_parts))
