"""A library people can call (issue 20, item 6): every module, public class, public function and public
method of esrp_report says what it gives back or does. The test-data generators (esrp_report/synth) are
leaving the package and are not walked."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import esrp_report

PACKAGE = Path(esrp_report.__file__).parent

# Decorators whose functions are attributes or typing aids, not callable API of their own.
SKIPPED_DECORATORS = {"property", "cached_property", "overload"}
SKIPPED_DECORATOR_ATTRIBUTES = {"setter", "deleter"}  # @name.setter on a property


def _modules() -> list[Path]:
    """Every .py of the package wherever it lives in sub-folders, except those under a folder named synth."""
    return sorted(
        path for path in PACKAGE.rglob("*.py") if "synth" not in path.relative_to(PACKAGE).parts[:-1]
    )


def _decorator_name(decorator: ast.expr) -> str:
    """The last name of a decorator: `functools.cached_property` and `cached_property()` give `cached_property`."""
    if isinstance(decorator, ast.Call):
        decorator = decorator.func
    if isinstance(decorator, ast.Attribute):
        return decorator.attr
    if isinstance(decorator, ast.Name):
        return decorator.id
    return ""


def _skipped(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """True for a property, its setter or deleter, and an @overload signature."""
    for decorator in function.decorator_list:
        name = _decorator_name(decorator)
        if name in SKIPPED_DECORATORS:
            return True
        if isinstance(decorator, ast.Attribute) and name in SKIPPED_DECORATOR_ATTRIBUTES:
            return True
    return False


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a module body, looking inside module-level if/try blocks (e.g. TYPE_CHECKING)."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _top_level(block)
        else:
            yield node


def _missing(path: Path, package: Path = PACKAGE) -> Iterator[str]:
    """`path:line name` of each public definition in one module that has no docstring, path from the
    folder holding the package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    where = path.relative_to(package.parent).as_posix()
    if ast.get_docstring(tree) is None:
        yield f"{where}:1 (module)"
    for node in _top_level(tree.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if not node.name.startswith("_") and not _skipped(node) and ast.get_docstring(node) is None:
                yield f"{where}:{node.lineno} {node.name}"
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            if ast.get_docstring(node) is None:
                yield f"{where}:{node.lineno} {node.name}"
            for member in node.body:
                if (
                    isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef)
                    and not member.name.startswith("_")
                    and not _skipped(member)
                    and ast.get_docstring(member) is None
                ):
                    yield f"{where}:{member.lineno} {node.name}.{member.name}"


def test_the_walk_finds_the_package_and_leaves_out_synth() -> None:
    modules = _modules()
    names = {path.relative_to(PACKAGE).as_posix() for path in modules}
    assert "app/api.py" in names
    assert len(modules) > 20
    assert not any("synth" in path.relative_to(PACKAGE).parts for path in modules)


def test_every_public_function_class_and_module_has_a_docstring() -> None:
    missing = [entry for path in _modules() for entry in _missing(path)]
    assert not missing, f"{len(missing)} without a docstring:\n" + "\n".join(missing)


def test_the_checker_sees_what_it_should(tmp_path: Path) -> None:
    sample = tmp_path / "esrp_report" / "layer" / "sample.py"
    sample.parent.mkdir(parents=True)
    sample.write_text(
        "import typing\n"
        "from functools import cached_property\n"
        "def public(): pass\n"
        "def _private(): pass\n"
        "@typing.overload\n"
        "def over(x: int) -> int: ...\n"
        "class Thing(typing.Protocol):\n"
        "    '''A thing.'''\n"
        "    def method(self): ...\n"
        "    def _hidden(self): pass\n"
        "    @property\n"
        "    def size(self): return 1\n"
        "    @size.setter\n"
        "    def size(self, value): pass\n"
        "    @cached_property\n"
        "    def cached(self): return 1\n"
        "class _Private:\n"
        "    def method(self): pass\n"
        "def documented():\n"
        "    '''Does it.'''\n",
        encoding="utf-8",
    )
    assert list(_missing(sample, tmp_path / "esrp_report")) == [
        "esrp_report/layer/sample.py:1 (module)",
        "esrp_report/layer/sample.py:3 public",
        "esrp_report/layer/sample.py:9 Thing.method",
    ]
