"""What every relation group of the audit is handed: the document, the rules, the result that
collects the findings (``Context.add``, ``Context.relation``), and what is worked out once from the
document: the databases per host, the appendix's runs, each server's column across the per-server
tables; and which appendix report is a column's (``run_for``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from esrp_report.analysis.intervals import Iv
from esrp_report.analysis.rules import Rule
from esrp_report.audit.findings import fmt, relative
from esrp_report.audit.intervals import INSTANCE_HALF_UNIT
from esrp_report.audit.result import AuditResult
from esrp_report.model import DocNumber, PublishedDocument, Run, TestKind
from esrp_report.model.findings import ERROR, NOTE, Finding


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

    def add(self, severity: str, check: str, message: str, **where: object) -> None:
        """A finding, where ``where`` says (section, table, row, column, line, printed, expected...)."""
        self.result.findings.append(Finding(severity, check, message, **where))  # type: ignore[arg-type]

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
        **where: object,
    ) -> bool:
        """Does a printed figure meet what the document's other figures say it must be?"""
        self.result.checked += 1
        mine = printed_iv or Iv.of(printed)
        if mine.meets(expected):
            return True
        best = min(max(printed.value, expected.lo), expected.hi)
        shown = fmt(expected.mid, max(printed.decimals, 0))
        self.add(
            severity,
            check,
            f"{what}: printed {printed.text}, expected {shown}",
            printed=printed.text,
            expected=shown,
            derivation=derivation,
            relative_difference=relative(printed.value, best),
            **where,
        )
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
    """The leading figure of a configuration fact, or None."""
    fact = doc.facts.get(key)
    if fact is None:
        return None
    return DocNumber.leading(fact[0])


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


def run_for(ctx: Context, test: TestKind, col: Column) -> Run | None:
    """The appendix report of a server's column: by machine name, else the only report whose achieved
    IOPS matches that column alone."""
    candidates = [r for r in ctx.runs if r.kind is test]
    name = col.name.casefold()
    for run in candidates:
        if run.machine and run.machine.casefold() in name:
            return run
    # Columns named "Server N": the report whose achieved IOPS only that column matches.
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
