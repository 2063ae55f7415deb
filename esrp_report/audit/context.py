"""What every relation group of the audit is handed: the document, the rules, the result that
collects the findings (``Context.add``, ``Context.relation``), and what is worked out once from the
document: the databases per host, the appendix's runs, each server's column across the per-server
tables; and which appendix report is a column's (``run_for``)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property

from esrp_report.analysis.intervals import Iv
from esrp_report.analysis.rules import Rule
from esrp_report.audit.findings import fmt, relative, weighed
from esrp_report.audit.intervals import INSTANCE_HALF_UNIT
from esrp_report.audit.result import AuditResult, CellKey, cell_key
from esrp_report.model import (
    DocLine,
    DocNumber,
    PublishedDocument,
    PublishedReport,
    Run,
    TestKind,
    is_unnamed_server,
)
from esrp_report.model.findings import ERROR, NOTE, WARNING, Finding

# A figure a relation is worked out from: a printed number (a sum's term, coefficient 1) or a
# number with the coefficient it has in the relation (1/n for a mean of n; 0 when the relation
# only bounds it on one side, so that no change of it is sure to break the relation).
Term = DocNumber | tuple[DocNumber | None, float] | None
# The changes of one cell that make a relation hold, given how far its subject is from what it
# should be (``Evaluated.offset``) and the tolerance: for a cell the relation is not linear in
# (a quotient's denominator), where a slope at the printed figures is wrong by as much as the
# slip is large.
Mend = Callable[[float, float], tuple[float, float]]


@dataclass(slots=True)
class Evaluated:
    """One relation as evaluated: the printed cells it was worked out from (the subject first) with
    their coefficients, how far a change may go before it is sure to fail (``slack``), how far
    outside its tolerance the subject is (``excess``, 0 when it holds), and the findings it gave.
    ``blamed``: the relation group already chose which of its cells is the slip."""

    check: str
    subject: DocNumber | None
    cells: list[tuple[DocNumber, float]]
    slack: float
    excess: float
    offset: float = 0.0  # the subject minus the middle of what it should be
    tolerance: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    blamed: bool = False
    exact: dict[CellKey, Mend] = field(default_factory=dict)  # cells a slope does not mend

    def shift(self, number: DocNumber, coefficient: float) -> tuple[float, float]:
        """The changes of one of its cells that would make the relation hold."""
        mend = self.exact.get(cell_key(number))
        if mend is not None:
            return mend(self.offset, self.tolerance)
        if number is self.subject:
            return (-self.offset - self.tolerance, -self.offset + self.tolerance)
        if not coefficient:
            return (-math.inf, math.inf)
        lo, hi = (self.offset - self.tolerance) / coefficient, (self.offset + self.tolerance) / coefficient
        return (min(lo, hi), max(lo, hi))


@dataclass
class Column:
    """One server's column across the per-server tables of one test."""

    name: str
    values: dict[str, DocNumber | None] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    corrected: dict[str, Iv] = field(default_factory=dict)  # a printed slip, replaced by its relation


@dataclass
class Context:
    """The document and rules audited, the result being filled, and the figures every group uses."""

    doc: PublishedDocument
    rules: list[Rule]
    result: AuditResult
    databases: DocNumber | None  # databases per host, as the configuration states
    runs: list[Run]  # the appendix's reports that could be read
    columns: dict[TestKind, list[Column]]  # each server's column, per test
    evaluated: list[Evaluated] = field(default_factory=list)
    # Printed cells an error already found wrong (by ``cell_key``), with that error's line: an
    # expected value worked from one of them would repeat the slip, so none is printed.
    doubted: dict[CellKey, int | None] = field(default_factory=dict)

    def add(self, severity: str, check: str, message: str, **where: object) -> Finding:
        """A finding, where ``where`` says (section, table, row, column, line, printed, expected...)."""
        finding = Finding(severity, check, message, **where)  # type: ignore[arg-type]
        self.result.findings.append(finding)
        return finding

    def cover(
        self, subject: DocNumber | None, expected: Iv | None, terms: Iterable[Term] = (), check: str = ""
    ) -> Evaluated:
        """Count one relation evaluated, and note the printed cells it was worked out from with its
        slack: how far the subject can move before the relation is sure to fail: the expected
        interval's half width, plus the subject's own half unit, plus how far it is from the middle
        today; any larger change, up or down, breaks the relation (for a term, that divided by its
        coefficient). The caller sets ``excess`` to 0 when it holds."""
        self.result.checked += 1
        slack, excess, offset, tolerance = math.inf, 0.0, 0.0, 0.0
        cells: list[tuple[DocNumber, float]] = []
        if subject is not None and expected is not None:
            tolerance = (expected.hi - expected.lo) / 2 + subject.half_unit
            offset = subject.value - expected.mid
            residual = abs(offset)
            slack, excess = tolerance + residual, max(residual - tolerance, 0.0)
            if subject.placed:
                cells.append((subject, 1.0))
        for term in terms:
            number, coefficient = (term, 1.0) if not isinstance(term, tuple) else term
            if number is not None and number.placed:
                cells.append((number, coefficient))
        record = Evaluated(check, subject, cells, slack, excess, offset, tolerance)
        self.evaluated.append(record)
        return record

    @cached_property
    def lines_by_number(self) -> dict[int, DocLine]:
        """The document's lines by their number."""
        return {line.no: line for line in self.doc.lines}

    def report_of(self, run: Run) -> PublishedReport | None:
        """The appendix report a run was read from."""
        return next((r for r in self.doc.reports if r.run is run), None)

    def column_cells(
        self, run: Run, table: str, fields: Iterable[str], coefficient: float = 1.0
    ) -> list[Term]:
        """The printed cells of some fields of a run's per-instance table (``TableKind`` value), as
        terms of a sum (or, with 1/n, a mean) over its instances."""
        report = self.report_of(run)
        if report is None:
            return []
        wanted = set(fields)
        return [
            (number, coefficient)
            for key, number in report.cells.items()
            if key[0] == "instance" and key[1] == table and key[3] in wanted
        ]

    def cell(self, run: Run, *key: str) -> DocNumber | None:
        """One printed cell of a run's report by its key (``PublishedReport.cells``)."""
        report = self.report_of(run)
        return None if report is None else report.cells.get(key)

    def relation(
        self,
        check: str,
        printed: DocNumber,
        expected: Iv,
        *,
        what: str,
        derivation: str,
        severity: str = ERROR,
        printed_iv: Iv | None = None,
        terms: Iterable[Term] = (),
        worst: Iv | None = None,
        worst_why: str | None = None,
        **where: object,
    ) -> bool:
        """Does a printed figure meet what the document's other figures say it must be? ``terms``
        are the printed figures ``expected`` was worked out from; a finding is placed at the printed
        figure's own line when it was read from a cell. ``worst``: what ``expected`` widens to when
        every rounding it was worked out from goes the worst way; a miss inside it is no proof, so
        its finding is a warning that says so, never an error."""
        # What a relation vouches for (blame, coverage) is what it proves: the worst case.
        record = self.cover(printed, worst or expected, terms, check)
        if printed.placed:
            where["line"] = printed.line
        mine = printed_iv or Iv.of(printed)
        if mine.meets(expected):
            record.excess = 0.0
            return True
        best = min(max(printed.value, expected.lo), expected.hi)
        shown: str | None = fmt(expected.mid, max(printed.decimals, 0))
        message = f"{what}: printed {printed.text}, expected {shown}"
        in_doubt = [n for n, _c in record.cells if n is not printed and cell_key(n) in self.doubted]
        if in_doubt:
            shown = None
            named = ", ".join(f"{n.text} at line {n.line}" for n in in_doubt)
            message = (
                f"{what}: printed {printed.text}, which disagrees with figures of which "
                f"{named} already disagree(s) with their own relations: no expected value is "
                "worked from them"
            )
        else:
            # The size decides how a reader takes it: a slip of a digit is many times what the
            # printed rounding allows, a near miss a fraction more.
            miss = abs(printed.value - expected.mid)
            allowed = (expected.hi - expected.lo) / 2 + printed.half_unit
            message += "; " + weighed(
                miss, allowed, "", why="the printed rounding allows", decimals=max(printed.decimals, 0)
            )
        if worst is not None and mine.meets(worst):
            severity = WARNING
            usual = (expected.hi - expected.lo) / 2 + printed.half_unit
            worst_case = (worst.hi - worst.lo) / 2 + printed.half_unit
            message += worst_why or (
                f"; the difference is beyond the usual rounding drift (±{fmt(usual, 4)}) but inside "
                f"the worst case of the printed rounding (±{fmt(worst_case, 4)}): improbable, not proven"
            )
        finding = self.add(
            severity,
            check,
            message,
            printed=printed.text,
            expected=shown,
            derivation=derivation,
            relative_difference=None if in_doubt else relative(printed.value, best),
            **where,
        )
        if severity == ERROR and printed.placed:
            self.doubted.setdefault(cell_key(printed), printed.line)
        record.findings.append(finding)
        if severity == ERROR:
            record.excess = max(record.excess, 1e-12)
        return False


def build_context(doc: PublishedDocument, rules: list[Rule], result: AuditResult) -> Context:
    """The context of one audit; a report that names no server is given the one before's (a note)."""
    ctx = Context(
        doc,
        rules,
        result,
        databases=fact_number(doc, "databases_per_host"),
        runs=[r.run for r in doc.reports if r.run is not None],
        columns={test: server_columns(doc, test) for test in (TestKind.PERFORMANCE, TestKind.STRESS)},
    )
    _name_reports(ctx)
    return ctx


def fact_number(doc: PublishedDocument, key: str) -> DocNumber | None:
    """The leading figure of a configuration fact, or None (placed at the fact's value cell)."""
    fact = doc.facts.get(key)
    if fact is None:
        return None
    figure = DocNumber.leading(fact[0])
    return None if figure is None else figure.at(fact[1], 1)


def server_columns(doc: PublishedDocument, test: TestKind) -> list[Column]:
    """Each server's column across the per-server tables of one test."""
    columns: dict[str, Column] = {}
    for table in doc.summary_tables:
        if table.kind != "server" or table.test is not test:
            continue
        for row in table.rows:
            for name, value in zip(table.columns, row.values, strict=False):
                column = columns.setdefault(name, Column(name))
                if row.key not in column.values:
                    column.values[row.key] = value
                    column.lines[row.key] = row.line
                    column.labels[row.key] = row.label
    return list(columns.values())


def _name_reports(ctx: Context) -> None:
    """A report without a machine name (backup, soft recovery in 000) follows the one before."""
    previous = ""
    for report in ctx.doc.reports:
        if report.run is None:
            continue
        if report.run.machine:
            previous = report.run.machine
        elif previous:
            report.run.machine = previous
            ctx.add(
                NOTE,
                "appendix.machine",
                f"the report '{report.title}' names no server; taken as {previous}'s, "
                "like the report before it",
                section="Appendix",
                line=report.first_line,
            )


# Where a report's heading may be: a few lines before the Test Summary table that starts it
# ("A.1 Server 1" in 002), or its own title's lines.
_HEADING_BEFORE, _HEADING_AFTER = 6, 12


def heads(ctx: Context, run: Run, column: str) -> bool:
    """Is the report headed with the column's name: its title, or a short line at its start?"""
    report = ctx.report_of(run)
    if report is None:
        return False
    pattern = re.compile(r"(?<![\w.])" + re.escape(column) + r"(?![\w.])", re.IGNORECASE)
    if pattern.search(report.title):
        return True
    lines = ctx.lines_by_number
    near = range(report.first_line - _HEADING_BEFORE, report.first_line + _HEADING_AFTER + 1)
    return any((line := lines.get(no)) and len(line.text) < 40 and pattern.search(line.text) for no in near)


def run_for(ctx: Context, test: TestKind, col: Column) -> Run | None:
    """The appendix report of a server's column: by machine name, else the only report whose achieved
    IOPS matches that column alone."""
    if is_unnamed_server(col.name):
        return None  # whose report it is would be a guess: only server-free relations check it
    candidates = [r for r in ctx.runs if r.kind is test]
    name = col.name.casefold()
    for run in candidates:
        if run.machine and run.machine.casefold() in name:
            return run
    # Columns named "Server N": the one report headed so ("A.1 Server 1", "Server 1 (JS16)").
    headed = [r for r in candidates if heads(ctx, r, col.name)]
    if len(headed) == 1:
        return headed[0]
    # Else the report whose achieved IOPS only that column matches.
    for run in candidates:
        achieved = run.sizing.achieved_iops
        if achieved is None:
            continue
        own = col.values.get("achieved") or col.values.get("transfers")
        if own is None or abs(own.value - achieved) > own.half_unit + INSTANCE_HALF_UNIT:
            continue
        columns = ctx.columns[test]
        others = [
            c
            for c in columns
            if c is not col
            and (c.values.get("achieved") or c.values.get("transfers"))
            and abs((c.values.get("achieved") or c.values["transfers"]).value - achieved)  # type: ignore[union-attr]
            <= own.half_unit + INSTANCE_HALF_UNIT
        ]
        if not others:
            return run
    return None
