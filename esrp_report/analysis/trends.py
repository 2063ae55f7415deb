"""Comparisons across Jetstress runs: the trend tables of a study such as 004 §5 (pure, no I/O).

Each compared *run* is one Jetstress Performance test, or one test on several servers at once
(a scale-out step: one report per server). Its figures (docs/compare.md):

- **planned** IOPS: the configuration's mailboxes × IOPS per mailbox (``JetstressConfig.xml``),
  else the report's "Target Transactional I/O per Second"; summed over servers;
- **transactional**: the report's "Achieved Transactional I/O per Second" (else the
  Transactional I/O table's database reads + writes); summed over servers;
- **total** IOPS performed: the *Total I/O Performance* table's database reads + database
  writes + log reads + log writes, summed over instances and servers;
- **log**: the log writes of that table (the transactional log stream);
- **differential**: total − transactional − log, i.e. background maintenance reads plus log
  replication reads (what 004's figures show as "IOPS differential");
- **read_latency**, **write_latency**, **log_write_latency**: the *Transactional I/O
  Performance* table's averages, mean over instances, then mean over servers (facts §9).

Each figure is shown as a percentage of the baseline run's with its absolute value, as 004
prints "223% [5.2 msec]". Latencies are also *equated* to the planned IOPS (004 Table 3):
latency × planned ÷ achieved transactional, and left "unchanged" when achieved is within 0.5 %
of planned (the ratio rounds to 100 %).

A published table can be checked against the runs: each printed percentage is compared with
the percentage its own bracketed values allow, both taken as rounded (the audit's interval rule),
and with the percentage the runs give.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import fmean

from esrp_report import model as m
from esrp_report.analysis.intervals import Iv
from esrp_report.model import DocNumber, InstanceTable, Run, TableKind, TestKind
from esrp_report.model.errors import EsrpError
from esrp_report.model.numbers import fmt_number
from esrp_report.model.trends import FIGURE, FIGURES, LATENCIES, PublishedCell, PublishedTable

# Achieved within this share of planned: latencies are not equated ("unchanged", 004 Table 3).
UNCHANGED_WITHIN = 0.005


class TrendError(EsrpError):
    """Runs that cannot be compared: no Performance report, no target, a zero baseline..."""


# A zero baseline makes a percentage meaningless; for these figures it is an error.
MUST_BE_POSITIVE = ("planned", "total", "transactional", *LATENCIES)


# --- one run's figures ------------------------------------------------------------------------


@dataclass(frozen=True)
class RunFigures:
    """The figures of one compared run (one or more servers' Performance tests)."""

    label: str
    servers: tuple[str, ...]
    values: dict[str, float]
    planned_source: str  # "configuration", "report target" (or both, per server, joined)
    sources: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def __getitem__(self, key: str) -> float:
        return self.values[key]


def _column(table: InstanceTable, key: str) -> list[float]:
    return [row.values[key] for row in table.rows if key in row.values]


def _sum(table: InstanceTable | None, *keys: str) -> float:
    if table is None:
        return 0.0
    return sum(sum(_column(table, key)) for key in keys)


def _server_figures(label: str, run: Run, notes: list[str]) -> tuple[dict[str, float], str]:
    where = f"run {label!r}, server {run.machine or '?'}"
    trans = run.tables.get(TableKind.TRANSACTIONAL)
    total = run.tables.get(TableKind.TOTAL)
    bdm = run.tables.get(TableKind.BACKGROUND_MAINTENANCE)
    replication = run.tables.get(TableKind.LOG_REPLICATION)
    if not (trans and trans.rows) and not (total and total.rows):
        raise TrendError(f"{where}: the Performance report has no Transactional or Total I/O table")

    if run.config is not None and run.config.target_iops is not None:
        planned, source = run.config.target_iops, "configuration"
    elif run.sizing.target_iops is not None:
        planned, source = run.sizing.target_iops, "report target"
    else:
        raise TrendError(
            f"{where}: no planned IOPS: neither a Jetstress configuration XML with MailboxCount and "
            "MailboxIops in the run's folder nor a 'Target Transactional I/O per Second' in the report"
        )

    achieved = run.sizing.achieved_iops
    if achieved is None:
        if not (trans and trans.rows):
            raise TrendError(f"{where}: no achieved transactional IOPS and no Transactional I/O table")
        achieved = _sum(trans, m.DB_READS, m.DB_WRITES)
        notes.append(f"{where}: achieved transactional IOPS summed from the Transactional I/O table")

    if total is not None and total.rows:
        performed = _sum(total, m.DB_READS, m.DB_WRITES, m.LOG_READS, m.LOG_WRITES)
        log = _sum(total, m.LOG_WRITES)
    else:
        performed = (
            _sum(trans, m.DB_READS, m.DB_WRITES, m.LOG_READS, m.LOG_WRITES)
            + _sum(bdm, m.BDM_READS)
            + _sum(replication, m.LOG_READS)
        )
        log = _sum(trans, m.LOG_WRITES)
        notes.append(
            f"{where}: no Total I/O table; total = transactional table + maintenance reads + "
            "log replication reads"
        )

    latency_table = trans if trans is not None and trans.rows else total
    assert latency_table is not None
    latencies: dict[str, float] = {}
    for key, metric in zip(
        LATENCIES, (m.DB_READ_LATENCY, m.DB_WRITE_LATENCY, m.LOG_WRITE_LATENCY), strict=True
    ):
        values = _column(latency_table, metric)
        if not values:
            raise TrendError(f"{where}: the report gives no {FIGURE[key].label.lower()} ({metric})")
        latencies[key] = fmean(values)
    return {
        "planned": planned,
        "transactional": achieved,
        "total": performed,
        "log": log,
        **latencies,
    }, source


def run_figures(label: str, runs: Run | Sequence[Run]) -> RunFigures:
    """The figures of one compared run: a Performance test on one server, or on several servers
    at once (rates summed over servers, latencies averaged over servers)."""
    chosen = [runs] if isinstance(runs, Run) else list(runs)
    performance = [r for r in chosen if r.kind is TestKind.PERFORMANCE]
    if not performance:
        kinds = ", ".join(sorted({r.kind.value for r in chosen})) or "nothing"
        raise TrendError(f"run {label!r}: no Performance test report (found {kinds})")
    machines = [r.machine for r in performance]
    twice = sorted({name for name in machines if machines.count(name) > 1})
    if twice:
        raise TrendError(
            f"run {label!r}: {len(performance)} Performance reports, several from {', '.join(twice)}; "
            "name one report file per server"
        )
    notes: list[str] = []
    per_server = [_server_figures(label, r, notes) for r in performance]
    values: dict[str, float] = {}
    for key in ("planned", "transactional", "total", "log"):
        values[key] = sum(figures[key] for figures, _ in per_server)
    for key in LATENCIES:
        values[key] = fmean(figures[key] for figures, _ in per_server)
    values["differential"] = values["total"] - values["transactional"] - values["log"]
    sources = sorted({source for _, source in per_server})
    return RunFigures(
        label=label,
        servers=tuple(machines),
        values=values,
        planned_source=" and ".join(sources),
        sources=tuple(s for r in performance for s in r.sources),
        notes=tuple(notes),
    )


# --- the comparison ---------------------------------------------------------------------------


def percent_text(value: float | None) -> str:
    """A percentage as 004 prints it, rounded to a whole number ("223%"); "—" for None."""
    return "—" if value is None else f"{fmt_number(value, 0)}%"


def absolute_text(value: float | None, key: str) -> str:
    """A figure's absolute value as 004 prints it, with the figure's decimals and unit ("5.2 msec"); "—" for
    None."""
    figure = FIGURE[key]
    return "—" if value is None else f"{fmt_number(value, figure.decimals)} {figure.unit}"


@dataclass(frozen=True)
class Cell:
    """One run's cell of a trend row: the figure's value and its percentage of the baseline's."""

    value: float
    percent: float | None  # of the baseline's value, unrounded; None when that is not positive

    def text(self, key: str) -> str:
        """As 004 prints it: ``223% [5.2 msec]``."""
        return f"{percent_text(self.percent)} [{absolute_text(self.value, key)}]"


@dataclass(frozen=True)
class Equated:
    """004 Table 3 for one run: its latencies brought to the planned IOPS."""

    planned: float
    achieved: float
    latencies: dict[str, float]  # as measured
    equated: dict[str, float]  # latency × planned ÷ achieved

    @property
    def ratio(self) -> float:
        """Achieved ÷ planned."""
        return self.achieved / self.planned

    @property
    def unchanged(self) -> bool:
        """Achieved within 0.5 % of planned: 004 leaves the latencies as they are."""
        return abs(self.ratio - 1) < UNCHANGED_WITHIN

    def text(self, key: str) -> str:
        """The equated latency of this figure as 004 prints it ("6.8 msec"), or "unchanged" when achieved is
        within 0.5 % of planned."""
        return "unchanged" if self.unchanged else absolute_text(self.equated[key], key)


def equate(figures: RunFigures) -> Equated:
    """004 Table 3 for one run: each latency times planned IOPS over achieved transactional IOPS."""
    planned, achieved = figures["planned"], figures["transactional"]
    return Equated(
        planned=planned,
        achieved=achieved,
        latencies={k: figures[k] for k in LATENCIES},
        equated={k: figures[k] * planned / achieved for k in LATENCIES},
    )


@dataclass
class Comparison:
    """The trend tables of compared runs: a row of cells per figure, each run's equated latencies, the
    baseline's index, notes, and the check of a published table when one was given."""

    runs: list[RunFigures]
    baseline: int
    rows: dict[str, list[Cell]]  # figure key -> one cell per run
    equated: list[Equated]
    check: PublishedCheck | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def baseline_label(self) -> str:
        return self.runs[self.baseline].label


def compare(runs: Sequence[RunFigures], baseline: int = 0) -> Comparison:
    """Every figure of every run as a percentage of the baseline run's."""
    if not runs:
        raise TrendError("nothing to compare: no runs given")
    if not 0 <= baseline < len(runs):
        raise TrendError(f"baseline {baseline + 1} is not one of the {len(runs)} runs")
    base = runs[baseline]
    for key in MUST_BE_POSITIVE:
        if base[key] <= 0:
            raise TrendError(
                f"baseline run {base.label!r}: {FIGURE[key].label.lower()} is {base[key]:g}; "
                "percentages of it mean nothing (choose another run with --baseline)"
            )
    notes = [note for run in runs for note in run.notes]
    rows: dict[str, list[Cell]] = {}
    for figure in FIGURES:
        reference = base[figure.key]
        if reference <= 0:
            notes.append(
                f"baseline run {base.label!r}: {figure.label.lower()} is {reference:g}; no percentages"
            )
        rows[figure.key] = [
            Cell(run[figure.key], run[figure.key] / reference * 100 if reference > 0 else None)
            for run in runs
        ]
    for run in runs:
        for key in MUST_BE_POSITIVE:
            if run[key] <= 0:
                raise TrendError(f"run {run.label!r}: {FIGURE[key].label.lower()} is {run[key]:g}")
    return Comparison(list(runs), baseline, rows, [equate(run) for run in runs], notes=notes)


# --- checking a published table ---------------------------------------------------------------


OK, FLAG, DIFFERS = "ok", "flag", "differs"


@dataclass(frozen=True)
class CheckedCell:
    """One printed cell against its own bracketed values and against the runs.

    ``allowed`` is the interval the printed figures allow for what the cell states (a
    percentage, or Table 3's equated latency); ``computed`` is the same from the runs, unrounded,
    and ``shown`` it rounded as printed. Status: ``flag`` when the printed statement cannot follow
    from its own bracketed values, ``differs`` when it can but the runs give another value (or
    another absolute figure), ``ok`` otherwise."""

    section: str  # "rows" or "equated"
    figure: str
    column: int
    printed: str
    follows: bool
    allowed: tuple[float, float] | None
    computed: float | None
    shown: str
    matches: bool
    absolute_matches: bool
    derivation: str

    @property
    def status(self) -> str:
        if not self.follows:
            return FLAG
        return OK if self.matches and self.absolute_matches else DIFFERS


@dataclass
class PublishedCheck:
    """A published trend table checked against the runs, cell by cell."""

    table: PublishedTable
    cells: list[CheckedCell]

    @property
    def flags(self) -> list[CheckedCell]:
        return [c for c in self.cells if c.status == FLAG]

    @property
    def differences(self) -> list[CheckedCell]:
        return [c for c in self.cells if c.status == DIFFERS]


def _rounds_to(value: float, printed: DocNumber) -> bool:
    return fmt_number(value, printed.decimals) == fmt_number(printed.value, printed.decimals)


def _shown(value: float | None, printed: DocNumber | None, suffix: str = "") -> str:
    if value is None:
        return "—"
    decimals = printed.decimals if printed is not None else 0
    return f"{fmt_number(value, decimals)}{suffix}"


def fits(table: PublishedTable, runs: int) -> None:
    """A published table has one column per compared run."""
    if table.width != runs:
        raise TrendError(
            f"{table.source}: table {table.key!r} has {table.width} columns "
            f"but {runs} runs are compared; give one run per column, in the table's order"
        )


def check_published(comparison: Comparison, table: PublishedTable) -> PublishedCheck:
    """Each printed cell of ``table`` against its bracketed values and against the runs.

    Column i of the table is run i of the comparison, and the table's baseline column (the one
    at 100 %) must be the comparison's baseline."""
    runs = comparison.runs
    fits(table, len(runs))
    base = table.baseline()
    if table.rows and base is None:
        raise TrendError(
            f"{table.source}: table {table.key!r} has no column at 100 % in every row; "
            "cannot tell its baseline"
        )
    if base is not None and base != comparison.baseline:
        raise TrendError(
            f"{table.source}: table {table.key!r} has its baseline (100 %) in column {base + 1}, "
            f"but the comparison's baseline is run {comparison.baseline + 1} "
            f"({comparison.baseline_label!r}); use --baseline to choose column {base + 1}'s run"
        )
    cells: list[CheckedCell] = []
    for key, printed_cells in table.rows.items():
        if key not in FIGURE:
            raise TrendError(f"{table.source}: unknown row {key!r}; rows are {', '.join(FIGURE)}")
        assert base is not None
        reference = printed_cells[base]
        for index, cell in enumerate(printed_cells):
            cells.append(_check_percent(comparison, key, index, cell, reference, table.columns))
    if table.equated:
        cells.extend(_check_equated(comparison, table))
    return PublishedCheck(table, cells)


def column_name(columns: Sequence[str], index: int) -> str:
    """The name of a table's column by its 0-based index, or "column N" (1-based) past the named ones."""
    return columns[index] if index < len(columns) else f"column {index + 1}"


def _check_percent(  # noqa: PLR0917 - one cell and where it sits
    comparison: Comparison,
    key: str,
    index: int,
    cell: PublishedCell,
    reference: PublishedCell,
    columns: Sequence[str],
) -> CheckedCell:
    if cell.percent is None or cell.absolute is None or reference.absolute is None:
        raise TrendError(
            f"row {key!r}, {column_name(columns, index)}: {cell.text!r} is not 'NN% [value unit]'"
        )
    ratio = (Iv.of(cell.absolute) / Iv.of(reference.absolute)).scale(100)
    follows = Iv.of(cell.percent).meets(ratio)
    computed = comparison.rows[key][index]
    return CheckedCell(
        section="rows",
        figure=key,
        column=index,
        printed=cell.text,
        follows=follows,
        allowed=(ratio.lo, ratio.hi),
        computed=computed.percent,
        shown=_shown(computed.percent, cell.percent, "%"),
        matches=computed.percent is not None and _rounds_to(computed.percent, cell.percent),
        absolute_matches=_rounds_to(computed.value, cell.absolute),
        derivation=(
            f"{cell.absolute.text} / {reference.absolute.text} × 100, both bracketed values taken as "
            f"rounded: {ratio.lo:.1f}–{ratio.hi:.1f} %"
        ),
    )


def _check_equated(comparison: Comparison, table: PublishedTable) -> list[CheckedCell]:
    rows = table.equated
    needed = ("achieved", "planned")
    missing = [k for k in needed if k not in rows]
    if missing:
        raise TrendError(f"{table.source}: table {table.key!r}: equated rows need {', '.join(missing)}")
    out: list[CheckedCell] = []
    for index, equated in enumerate(comparison.equated):
        achieved, planned = rows["achieved"][index], rows["planned"][index]
        if achieved.absolute is None or planned.absolute is None:
            raise TrendError(f"{table.source}: achieved and planned cells need an IOPS figure")
        ratio = Iv.of(achieved.absolute) / Iv.of(planned.absolute)
        if achieved.percent is not None:
            percent = ratio.scale(100)
            out.append(
                CheckedCell(
                    section="equated",
                    figure="achieved",
                    column=index,
                    printed=achieved.text,
                    follows=Iv.of(achieved.percent).meets(percent),
                    allowed=(percent.lo, percent.hi),
                    computed=equated.ratio * 100,
                    shown=_shown(equated.ratio * 100, achieved.percent, "%"),
                    matches=_rounds_to(equated.ratio * 100, achieved.percent),
                    absolute_matches=_rounds_to(equated.achieved, achieved.absolute)
                    and _rounds_to(equated.planned, planned.absolute),
                    derivation=f"{achieved.absolute.text} / {planned.absolute.text} × 100",
                )
            )
        # The printed figures leave the latencies unchanged when their ratio can be within 0.5 %.
        may_be_unchanged = ratio.meets(Iv(1 - UNCHANGED_WITHIN, 1 + UNCHANGED_WITHIN))
        for key in LATENCIES:
            printed = rows.get(f"{key}_equated")
            if printed is None:
                continue
            measured = rows.get(key)
            cell = printed[index]
            latency = measured[index].absolute if measured is not None else None
            if cell.unchanged:
                follows = may_be_unchanged
                allowed = None
                matches = equated.unchanged
                derivation = (
                    f"unchanged when achieved is within {UNCHANGED_WITHIN:.1%} of planned: "
                    f"{achieved.absolute.text} / {planned.absolute.text} = {ratio.lo:.4f}–{ratio.hi:.4f}"
                )
            else:
                if cell.absolute is None or latency is None:
                    raise TrendError(
                        f"{table.source}: {key}_equated {cell.text!r} needs the measured {key} row"
                    )
                expected = Iv.of(latency) * Iv.of(planned.absolute) / Iv.of(achieved.absolute)
                follows = Iv.of(cell.absolute).meets(expected)
                allowed = (expected.lo, expected.hi)
                matches = not equated.unchanged and _rounds_to(equated.equated[key], cell.absolute)
                derivation = (
                    f"{latency.text} × {planned.absolute.text} / {achieved.absolute.text}: "
                    f"{expected.lo:.3f}–{expected.hi:.3f}"
                )
            out.append(
                CheckedCell(
                    section="equated",
                    figure=f"{key}_equated",
                    column=index,
                    printed=cell.text,
                    follows=follows,
                    allowed=allowed,
                    computed=None if equated.unchanged else equated.equated[key],
                    shown=equated.text(key),
                    matches=matches,
                    absolute_matches=latency is None or _rounds_to(equated.latencies[key], latency),
                    derivation=derivation,
                )
            )
    return out
