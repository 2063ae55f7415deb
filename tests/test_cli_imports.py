"""Every CLI command calls the library through ``esrp_report.app`` only (issue 31 item 2): the
modules of ``esrp_report/cli/`` and the entry point import nothing of the package below app but
the few model names listed here, each with why the CLI needs it itself.

Each module is parsed, not imported, so an import inside a function or under TYPE_CHECKING counts
as much as one at the top of the file.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "esrp_report"
CLI_FILES = [*sorted((PACKAGE / "cli").glob("*.py")), PACKAGE / "command.py"]
OWN = ("esrp_report.app", "esrp_report.cli")

# Model names the CLI imports itself, and why re-exporting them through app would be worse.
ALLOWED = {
    "esrp_report": "__version__, printed by --version before anything else is imported (command.py)",
    "esrp_report.model.errors": "EsrpError, the base of every error the library raises on purpose: the CLI "
    "catches it to print one line and exit 2; a second name for it in app would be a second owner",
    "esrp_report.model.numbers": "fmt_number, the documents' rounding: terminal figures print as the "
    "document prints them",
    "esrp_report.model": "PLACEHOLDER, the marker `init` writes and names in its message",
}


def _imported(source: str, name: str) -> list[tuple[int, str]]:
    """(line, module) of every absolute import in ``source`` (relative ones resolved in cli)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                module = ".".join(["esrp_report", "cli"][: 3 - node.level] + ([module] if module else []))
            found.append((node.lineno, module))
    return found


def _offences(source: str, name: str) -> list[str]:
    return [
        f"{name}:{line}: imports {module}; call esrp_report.app instead"
        for line, module in _imported(source, name)
        if module.split(".")[0] == "esrp_report"
        and module not in ALLOWED
        and not any(module == own or module.startswith(own + ".") for own in OWN)
    ]


@pytest.mark.parametrize("path", CLI_FILES, ids=lambda p: p.name)
def test_the_cli_imports_only_the_app_layer(path: Path) -> None:
    assert _offences(path.read_text(encoding="utf-8"), path.name) == []


def test_every_allowed_import_is_still_used() -> None:
    """An exception nobody needs any more is a door left open: drop it from ALLOWED."""
    used = {
        module for path in CLI_FILES for _, module in _imported(path.read_text(encoding="utf-8"), path.name)
    }
    assert set(ALLOWED) <= used


@pytest.mark.parametrize(
    "source",
    [
        "from esrp_report.catalog import query",
        "def f():\n    from esrp_report.ingest.perfmon import blg",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from esrp_report.analysis.rules import Status",
        "import esrp_report.render.payload",
        "from esrp_report.model.core import Run",
    ],
)
def test_an_import_below_app_is_named(source: str) -> None:
    assert _offences(source, "main.py") != []


def test_the_apps_own_modules_pass() -> None:
    assert (
        _offences("from esrp_report.app import api, views\nfrom esrp_report.cli import output", "main.py")
        == []
    )
