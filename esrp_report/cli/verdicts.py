"""What `check` prints, without Typer: the verdicts and figures of an assessment, its exit status.

Kept apart from :mod:`esrp_report.cli.main` so that `esrp-report check PATH... [--json]` is
answered before Typer is imported (esrp_report/command.py) by the same function as the Typer
command. Running any Typer command imports Pydantic and builds a validator for each of its
options: about 90 ms of CPU, where inspect of the 24-hour log takes about 280 in all
(docs/benchmarks.md, "Stop 40: check and start-up"). The library, Rich and the rules are
imported when a check runs, not here.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from esrp_report.cli import output
from esrp_report.cli.output import EXIT_FAIL, EXIT_INCOMPLETE, EXIT_PASS, EXIT_UNUSABLE
from esrp_report.model.errors import EsrpError
from esrp_report.model.numbers import fmt_number

if TYPE_CHECKING:
    from rich.text import Text

    from esrp_report.app.views import RuleResult, SolutionAssessment

# Keyed by the values of esrp_report.app.views.Status (a StrEnum, so a Status finds its entry):
# naming the members here would import the rules, the model and Polars to print --help.
VERDICT_EXIT = {
    "pass": EXIT_PASS,
    "fail": EXIT_FAIL,
    "not evaluated": EXIT_UNUSABLE,
    "incomplete": EXIT_INCOMPLETE,
}

STATUS_STYLE = {  # keyed by Status values, as VERDICT_EXIT
    "pass": "green",
    "fail": "bold red",
    "incomplete": "bold yellow",
    "not evaluated": "yellow",
}


def run_check(
    paths: list[Path],
    *,
    rules: Path | None = None,
    target_iops: float | None = None,
    loosen: str | None = None,
    encoding: str | None = None,
    as_json: bool = False,
) -> int:
    """Judge the evidence in ``paths`` (:func:`esrp_report.app.api.check`), print the verdicts
    (or, with ``as_json``, the JSON document) and give the exit status; when nothing can be
    judged, the reason on stderr (and with ``as_json`` a document saying so) and 2."""
    from esrp_report.app import api, views  # noqa: PLC0415 - see the module docstring

    try:
        assessment = api.check(
            paths, rules_file=rules, target_iops=target_iops, loosen=loosen, encoding=encoding
        )
    except EsrpError as exc:
        if as_json:  # --json always writes its document: nothing evaluated, and why
            print(json.dumps(views.unusable_payload(", ".join(map(str, paths)), exc), indent=2))
        output.print_error(str(exc))
        return EXIT_UNUSABLE
    if as_json:
        print(json.dumps(views.check_payload(assessment), indent=2))
    else:
        print_check(assessment)
    return VERDICT_EXIT[assessment.status]


def print_check(a: SolutionAssessment) -> None:
    """The verdicts and figures of an assessment as tables, then its problems and the solution's verdict."""
    from esrp_report.app.views import Status  # noqa: PLC0415 - see the module docstring
    from esrp_report.cli.console import styled  # noqa: PLC0415 - see the module docstring
    from esrp_report.cli.fit import Column, print_fitted  # noqa: PLC0415 - see the module docstring

    console = output.console()
    # Every table fits the terminal with its figures whole (cli/fit.py): text wraps instead.
    verdict_rows: list[tuple[list[str | Text], str | None]] = []
    for server in a.servers:
        for run in server.runs:
            grouped: dict[str, list[RuleResult]] = defaultdict(list)
            for result in run.results:
                grouped[result.rule_id].append(result)
            for results in grouped.values():
                for row in _verdict_rows(results):
                    verdict_rows.append(([server.name, run.run.kind.value, *row], None))
    print_fitted(
        console,
        "Verdicts",
        [Column(name, figures=name in {"Value", "Threshold", "Margin"}) for name in _VERDICT_COLUMNS],
        verdict_rows,
    )

    for kind, aggregate in a.aggregates.items():
        figure_rows: list[tuple[list[str | Text], str | None]] = [
            (
                [
                    server.name,
                    *_figure_cells(summary.target_iops, summary.achieved_iops, summary.conventions),
                ],
                None,
            )
            for server in a.servers
            if (summary := server.summaries.get(kind)) is not None
        ]
        figure_rows.append(
            (
                [
                    "All servers",
                    *_figure_cells(aggregate.target_iops, aggregate.achieved_iops, aggregate.conventions),
                ],
                "bold",
            )
        )
        print_fitted(
            console,
            f"{kind}: per-server figures (transactional | total convention)",
            [Column(name, figures=name != "Server") for name in _FIGURE_COLUMNS],
            figure_rows,
        )

    backups = [(s.name, s.backup, s.recovery) for s in a.servers if s.backup or s.recovery]
    if backups:
        print_fitted(
            console,
            "Backup and soft recovery",
            [
                Column(name, figures=name != "Server")
                for name in ("Server", "MB/s per database", "MB/s per server", "Seconds per log replayed")
            ],
            [
                (
                    [
                        name,
                        fmt_number(backup.mb_per_sec_per_database, 3) if backup else "—",
                        fmt_number(backup.mb_per_sec_per_server, 3) if backup else "—",
                        fmt_number(recovery.seconds_per_log, 3) if recovery else "—",
                    ],
                    None,
                )
                for name, backup, recovery in backups
            ],
        )

    disagreements = [(s.name, d) for s in a.servers for r in s.runs for d in r.disagreements]
    if disagreements:
        print_fitted(
            console,
            "Sources disagree (> 0.5%)",
            [
                Column(name, figures=name in {"Report", "Counter log", "Difference"})
                for name in ("Server", "Table", "Instance", "Figure", "Report", "Counter log", "Difference")
            ],
            [
                (
                    [
                        name,
                        d.table,
                        d.instance,
                        d.metric,
                        fmt_number(d.first_value, 3),
                        fmt_number(d.second_value, 3),
                        f"{d.relative_difference:.2%}",
                    ],
                    None,
                )
                for name, d in disagreements
            ],
        )

    problems = list(a.problems) + [p for s in a.servers for r in s.runs for p in r.problems]
    if problems:
        console.print(styled(("Problems in the evidence", "bold")))
        for p in problems:
            console.print(
                styled("  ", (p.severity, "red" if p.severity == "error" else "yellow"), " ", p.describe())
            )
    for s in a.servers:
        if s.missing_kinds:
            console.print(
                styled(
                    "  ", ("note", "dim"), f" {s.name}: no {', '.join(s.missing_kinds)} run in the evidence"
                )
            )
    style = STATUS_STYLE[a.status]
    console.print(styled("Solution ", (a.name, "bold"), ": ", (a.status.value.upper(), style)))
    if a.status is not Status.PASS and a.reason:
        console.print(f"  {a.reason}")


_VERDICT_COLUMNS = ("Server", "Test", "Rule", "Subject", "Value", "Threshold", "Margin", "Verdict")
_FIGURE_COLUMNS = (
    "Server",
    "Target IOPS",
    "Achieved",
    "Reads/s",
    "Writes/s",
    "Transfers/s",
    "DB read ms",
    "DB write ms",
    "Log writes/s",
    "Log write ms",
)


def _verdict_rows(results: list[RuleResult]) -> list[tuple[str | Text, ...]]:
    """Failures one per row; passes collapsed to the worst case; not-evaluated collapsed with its reason."""

    from esrp_report.app.views import Status  # noqa: PLC0415 - see the module docstring
    from esrp_report.cli.console import styled  # noqa: PLC0415 - see the module docstring

    rows: list[tuple[str | Text, ...]] = []
    failed = [r for r in results if r.status is Status.FAIL]
    passed = [r for r in results if r.status is Status.PASS]
    unevaluated = [r for r in results if r.status is Status.NOT_EVALUATED]
    incomplete = [r for r in results if r.status is Status.INCOMPLETE]
    for r in failed:
        rows.append(_result_cells(r, r.instance or "server", styled(("FAIL", "bold red"))))
    for r in incomplete:
        rows.append(
            _result_cells(r, r.instance or "server", styled(("incomplete", "bold yellow"), f": {r.caveat}"))
        )
    if passed:
        worst = min(passed, key=lambda r: r.margin if r.margin is not None else float("inf"))
        label = (
            f"worst of {len(passed)}: {worst.instance}"
            if worst.instance and len(passed) > 1
            else (worst.instance or "server")
        )
        rows.append(_result_cells(worst, label, styled(("pass", "green"))))
    if unevaluated:
        first = unevaluated[0]
        subject = (
            f"{len(unevaluated)} instances"
            if first.instance and len(unevaluated) > 1
            else (first.instance or "server")
        )
        rows.append(
            (
                f"{first.rule_id}",
                subject,
                "—",
                _threshold(first),
                "—",
                styled(("not evaluated", "yellow"), f": {first.reason}"),
            )
        )
    return rows


def _threshold(r: RuleResult) -> str:
    if r.threshold is None:
        return f"{r.operator} target"
    return f"{r.operator} {fmt_number(r.threshold, 3)} {r.unit}".strip()


def _result_cells(r: RuleResult, subject: str, verdict: Text) -> tuple[str | Text, ...]:
    # Unitless rules (Jetstress's own verdict) read better as the evidence's words than as 0/1.
    value = r.reason if not r.unit and r.reason else fmt_number(r.value, 3)
    return (
        r.rule_id,
        subject,
        value,
        _threshold(r),
        fmt_number(r.margin, 3) if r.margin is not None else "—",
        verdict,
    )


def _figure_cells(
    target: float | None, achieved: float | None, conventions: dict[str, Any]
) -> tuple[str, ...]:
    trans = conventions.get("transactional")
    total = conventions.get("total")

    def pair(attr: str) -> str:
        a = fmt_number(getattr(trans, attr), 3) if trans else "—"
        b = fmt_number(getattr(total, attr), 3) if total else "—"
        return a if a == b else f"{a} | {b}"

    return (
        fmt_number(target, 3),
        fmt_number(achieved, 3),
        pair("reads"),
        pair("writes"),
        pair("transfers"),
        pair("read_latency_ms"),
        pair("write_latency_ms"),
        pair("log_writes"),
        pair("log_write_latency_ms"),
    )
