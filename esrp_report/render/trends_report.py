"""A comparison of runs (``esrp-report compare``) for people and programs: the rich tables, the JSON
payload and the HTML page (self-contained, inline SVG chart) that WeasyPrint turns into the PDF.

Every text shown is built here once (:class:`CompareView`), so the terminal, the HTML and the PDF
say the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from rich.table import Table
from rich.text import Text

from esrp_report import __version__
from esrp_report.analysis.trends import (
    DIFFERS,
    FLAG,
    CheckedCell,
    Comparison,
    absolute_text,
    column_name,
    percent_text,
)
from esrp_report.model.numbers import fmt_number
from esrp_report.model.trends import FIGURE, FIGURES, LATENCIES
from esrp_report.render import charts
from esrp_report.render.html import environment
from esrp_report.render.slots import fill_charts

CHART_KEY = "chart-trend"
SPLIT = ("transactional", "log", "differential")
SPLIT_LABELS = {"transactional": "transactional", "log": "log writes", "differential": "differential"}
STATUS_TEXT = {"ok": "as printed", FLAG: "FLAG", DIFFERS: "differs"}


@dataclass(frozen=True)
class ViewRow:
    """One row of the comparison view: its figure key, label and one printed cell per run."""

    key: str
    label: str
    cells: tuple[str, ...]


@dataclass(frozen=True)
class CheckRow:
    """One checked cell of a published trend table, printed: where it is, the printed value, what its
    bracketed values allow, what the runs give, and its status."""

    where: str  # "Read Latency DBs, 150 msg / 0.18 IOPS"
    printed: str
    allowed: str
    computed: str
    status: str  # ok | flag | differs
    status_text: str
    derivation: str


@dataclass
class CompareView:
    """The template context of ``compare.html`` (and what the terminal prints)."""

    title: str
    baseline: str
    baseline_index: int
    columns: tuple[str, ...]  # run labels
    published_columns: tuple[str, ...]  # the published table's column names, or ()
    rows: list[ViewRow]  # "percentage [absolute]" per figure
    equated: list[ViewRow]  # achieved <=> planned, latencies, latencies equated
    runs: list[tuple[str, str, str, str]]  # label, servers, planned from, sources
    check_title: str = ""
    check: list[CheckRow] = field(default_factory=list)
    flags: int = 0
    differences: int = 0
    notes: list[str] = field(default_factory=list)
    chart: charts.ChartSpec | None = None


def _check_row(cell: CheckedCell, columns: tuple[str, ...]) -> CheckRow:
    if cell.section == "rows":
        what = FIGURE[cell.figure].label
        allowed = "—" if cell.allowed is None else f"{cell.allowed[0]:.1f}–{cell.allowed[1]:.1f} %"
    else:
        base = cell.figure.removesuffix("_equated")
        what = "IOPS achieved <=> planned" if base == "achieved" else f"{FIGURE[base].label} equated"
        if cell.allowed is None:
            allowed = "—"
        elif base == "achieved":
            allowed = f"{cell.allowed[0]:.1f}–{cell.allowed[1]:.1f} %"
        else:
            allowed = f"{cell.allowed[0]:.2f}–{cell.allowed[1]:.2f} msec"
    return CheckRow(
        where=f"{what}, {column_name(columns, cell.column)}",
        printed=cell.printed,
        allowed=allowed,
        computed=cell.shown,
        status=cell.status,
        status_text=STATUS_TEXT[cell.status],
        derivation=cell.derivation,
    )


def compare_view(comparison: Comparison) -> CompareView:
    """The comparison as the template and terminal show it: printed rows per figure, the equated latencies,
    the runs, the check of a published table when there is one, and a chart."""
    runs = comparison.runs
    labels = tuple(r.label for r in runs)
    published = comparison.check.table.columns if comparison.check is not None else ()
    chart_labels = published if len(published) == len(labels) else labels
    rows = [
        ViewRow(f.key, f.label, tuple(cell.text(f.key) for cell in comparison.rows[f.key])) for f in FIGURES
    ]
    equated = [
        ViewRow(
            "achieved",
            "IOPS achieved <=> planned",
            tuple(
                f"{fmt_number(e.achieved, 0)} IOPS [{percent_text(e.ratio * 100)}]"
                for e in comparison.equated
            ),
        )
    ]
    equated += [
        ViewRow(
            k, f"{FIGURE[k].label} [avg]", tuple(absolute_text(e.latencies[k], k) for e in comparison.equated)
        )
        for k in LATENCIES
    ]
    equated.append(
        ViewRow(
            "planned",
            "IOPS equated = planned",
            tuple(f"{fmt_number(e.planned, 0)} IOPS [100%]" for e in comparison.equated),
        )
    )
    equated += [
        ViewRow(f"{k}_equated", f"{FIGURE[k].label} equated", tuple(e.text(k) for e in comparison.equated))
        for k in LATENCIES
    ]
    view = CompareView(
        title=f"Comparison of {len(runs)} Jetstress run{'s' if len(runs) != 1 else ''}",
        baseline=comparison.baseline_label,
        baseline_index=comparison.baseline,
        columns=labels,
        published_columns=(),
        rows=rows,
        equated=equated,
        runs=[
            (
                r.label,
                ", ".join(r.servers),
                r.planned_source,
                ", ".join(s.replace("\\", "/") for s in r.sources),
            )
            for r in runs
        ],
        notes=list(comparison.notes),
        chart=charts.ChartSpec(
            CHART_KEY,
            "trend",
            (
                list(chart_labels),
                {SPLIT_LABELS[k]: [c.value for c in comparison.rows[k]] for k in SPLIT},
                {FIGURE[k].label: [c.value for c in comparison.rows[k]] for k in LATENCIES},
            ),
        ),
    )
    check = comparison.check
    if check is not None:
        table = check.table
        view.published_columns = table.columns
        view.check_title = f"{table.title} ({table.source})"
        view.check = [_check_row(cell, table.columns) for cell in check.cells]
        view.flags = len(check.flags)
        view.differences = len(check.differences)
    return view


# --- terminal --------------------------------------------------------------------------------------

STATUS_STYLE = {"ok": "green", FLAG: "bold red", DIFFERS: "yellow"}


def _header(view: CompareView, index: int) -> str:
    label = view.columns[index]
    if index < len(view.published_columns) and view.published_columns[index] != label:
        label = f"{view.published_columns[index]}\n({label})"
    return f"{label}\n(baseline)" if index == view.baseline_index else label


def _figure_table(view: CompareView, title: str, rows: list[ViewRow]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("Figure")
    for index in range(len(view.columns)):
        table.add_column(_header(view, index), justify="right")
    for view_row in rows:
        table.add_row(view_row.label, *view_row.cells)
    return table


def compare_tables(view: CompareView) -> list[Table]:
    """The percentage table, the equated latencies and, with a published table, its printed figures
    that are flagged or differ from the runs (every cell is in the JSON and the HTML)."""
    tables = [
        _figure_table(view, f"{view.title}: % of baseline [absolute]", view.rows),
        _figure_table(
            view, "Latencies equated to the planned IOPS (latency × planned ÷ achieved)", view.equated
        ),
    ]
    shown = [row for row in view.check if row.status != "ok"]
    if shown:
        check = Table(title=f"Published: {view.check_title}", title_justify="left")
        for column in ("Cell", "Printed", "Its brackets allow", "From the runs", ""):
            check.add_column(
                column, justify="right" if column in ("Its brackets allow", "From the runs") else "left"
            )
        for row in shown:
            style = STATUS_STYLE[row.status]
            check.add_row(
                row.where,
                row.printed,
                row.allowed,
                row.computed,
                Text(row.status_text, style=style),
            )
        tables.append(check)
    return tables


# --- JSON ------------------------------------------------------------------------------------------


def compare_payload(comparison: Comparison) -> dict[str, Any]:
    """Full precision; the schema is in docs/compare.md."""
    runs = comparison.runs
    payload: dict[str, Any] = {
        "baseline": {"index": comparison.baseline, "label": comparison.baseline_label},
        "runs": [
            {
                "label": r.label,
                "servers": list(r.servers),
                "planned_source": r.planned_source,
                "figures": dict(r.values),
                "sources": list(r.sources),
            }
            for r in runs
        ],
        "rows": [
            {
                "figure": f.key,
                "label": f.label,
                "unit": f.unit,
                "cells": [
                    {"value": c.value, "percent": c.percent, "text": c.text(f.key)}
                    for c in comparison.rows[f.key]
                ],
            }
            for f in FIGURES
        ],
        "equated": [
            {
                "planned": e.planned,
                "achieved": e.achieved,
                "ratio": e.ratio,
                "unchanged": e.unchanged,
                "latencies": dict(e.latencies),
                "equated": dict(e.equated),
                "text": {k: e.text(k) for k in LATENCIES},
            }
            for e in comparison.equated
        ],
        "notes": list(comparison.notes),
        "published": None,
    }
    check = comparison.check
    if check is not None:
        payload["published"] = {
            "source": check.table.source,
            "table": check.table.key,
            "title": check.table.title,
            "columns": list(check.table.columns),
            "flags": len(check.flags),
            "differences": len(check.differences),
            "cells": [
                {
                    "section": c.section,
                    "figure": c.figure,
                    "column": c.column,
                    "printed": c.printed,
                    "follows": c.follows,
                    "allowed": list(c.allowed) if c.allowed is not None else None,
                    "computed": c.computed,
                    "shown": c.shown,
                    "matches": c.matches,
                    "absolute_matches": c.absolute_matches,
                    "status": c.status,
                    "derivation": c.derivation,
                }
                for c in check.cells
            ],
        }
    return payload


# --- HTML ------------------------------------------------------------------------------------------


def render_compare_html(
    comparison: Comparison, *, generated: datetime, for_pdf: bool = False, template: str = "esrp"
) -> str:
    """One self-contained page: the chart inline (an SVG image in print), no external reference."""
    view = compare_view(comparison)
    env = environment(None, template)
    html = env.get_template("compare.html").render(
        v=view, generated=generated, version=__version__, for_pdf=for_pdf
    )
    drawn = {CHART_KEY: charts.draw(view.chart)} if view.chart is not None else {}
    return fill_charts(html, drawn, for_pdf=for_pdf)
