"""What the CLI prints of each command's result, as the library gives it: the JSON documents and
terminal tables (made in render/), and the verdict vocabulary (``Status``, from the rules).

The CLI imports these from here, so every command depends on the app layer only
(tests/test_cli_imports.py). Each view's module is imported when its function is called:
``check`` does not load the comparison's or the sizing's renderers.
"""

from __future__ import annotations

# ruff: noqa: PLC0415 - imports inside functions: see the docstring
from typing import TYPE_CHECKING, Any

from esrp_report.analysis.rules import Status

if TYPE_CHECKING:
    from rich.table import Table

    from esrp_report.analysis.assess import SolutionAssessment
    from esrp_report.analysis.rules import RuleResult
    from esrp_report.analysis.trends import Comparison
    from esrp_report.audit import AuditResult
    from esrp_report.model.sizing import SizingResult
    from esrp_report.render.trends_report import CompareView

# The result types are named for the CLI's annotations only (imported under TYPE_CHECKING there).
__all__ = [
    "AuditResult",
    "RuleResult",
    "SolutionAssessment",
    "Status",
    "audit_payload",
    "check_payload",
    "compare_payload",
    "compare_tables",
    "compare_view",
    "sizing_payload",
    "sizing_tables",
    "unusable_payload",
]


def check_payload(assessment: SolutionAssessment) -> dict[str, Any]:
    """``check --json``'s document (docs/check-json.md)."""
    from esrp_report.render import payload

    return payload.check_payload(assessment)


def unusable_payload(name: str, error: Exception) -> dict[str, Any]:
    """``check --json``'s document when nothing could be evaluated."""
    from esrp_report.render import payload

    return payload.unusable_payload(name, error)


def audit_payload(result: AuditResult) -> dict[str, Any]:
    """``audit --json``'s document."""
    from esrp_report.render import payload

    return payload.audit_payload(result)


def sizing_payload(result: SizingResult) -> dict[str, Any]:
    """``size --json``'s document (docs/sizing.md)."""
    from esrp_report.render import sizing_view

    return sizing_view.sizing_payload(result)


def sizing_tables(result: SizingResult) -> list[Table]:
    """``size``'s terminal tables."""
    from esrp_report.render import sizing_view

    return sizing_view.sizing_tables(result)


def compare_payload(comparison: Comparison) -> dict[str, Any]:
    """``compare --json``'s document (docs/compare.md)."""
    from esrp_report.render import trends_report

    return trends_report.compare_payload(comparison)


def compare_view(comparison: Comparison) -> CompareView:
    """The comparison as the terminal shows it."""
    from esrp_report.render import trends_report

    return trends_report.compare_view(comparison)


def compare_tables(view: CompareView) -> list[Table]:
    """``compare``'s terminal tables."""
    from esrp_report.render import trends_report

    return trends_report.compare_tables(view)
