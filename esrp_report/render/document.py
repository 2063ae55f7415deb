"""The content of an ESRP solution document, computed from a manifest and the assessed evidence.

Pure: no I/O. Every figure here is computed (targets, databases per host, mailboxes per
database, capacity, per-server and aggregate tables, backup and replay figures, reliability
statements); the manifest contributes only what a vendor states. Figures stay at full precision
in ``Cell``; rounding happens when a cell is rendered, with the convention's decimals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from esrp_report.analysis import aggregate as agg
from esrp_report.analysis.assess import RunAssessment, ServerAssessment, SolutionAssessment
from esrp_report.analysis.compare import Disagreement
from esrp_report.analysis.rules import Rule, RuleResult, Status, find_rule
from esrp_report.analysis.stated import Difference, differences
from esrp_report.model import PLACEHOLDER, Generation, Manifest, Problem, Run, TestKind
from esrp_report.model.data import package_toml
from esrp_report.model.errors import RulesError
from esrp_report.model.numbers import fmt_number
from esrp_report.model.sections import Form, form_for
from esrp_report.model.server_facts import fact_specs
from esrp_report.model.sizing import SizingResult

APPENDIX_ORDER = (
    TestKind.PERFORMANCE,
    TestKind.STRESS,
    TestKind.DATABASE_BACKUP,
    TestKind.SOFT_RECOVERY,
    TestKind.DB_CHECKSUM,
)


@dataclass(frozen=True)
class Convention:
    """How a solution document prints its figures: decimals per kind of figure, servers per table, which I/O
    table the summary reads ("transactional" or "total"), thousands separators and row labels."""

    name: str
    io_decimals: int
    latency_decimals: int
    backup_decimals: int
    replay_decimals: int
    servers_per_table: int
    summary: str  # "transactional" | "total"
    thousands: bool
    labels: dict[str, str]
    first_row: str = "achieved"  # "achieved" (transactional IOPS vs target) | "transfers" (reads + writes)

    def figure(self, value: float | None, decimals: int) -> str:
        """A figure as this document prints it: rounded half up to ``decimals``, grouped in thousands
        when the convention groups them. Every number of the document's tables and text asks this,
        so one quantity never prints "127398.241" in one table and "1,424.414" in another."""
        return fmt_number(value, decimals, thousands=self.thousands)


def load_convention(name: str, overrides: dict[str, Any] | None = None) -> Convention:
    """The named document convention from conventions.toml, with the manifest's overrides applied. Raises
    RulesError for an unknown convention or summary."""
    known = package_toml("esrp_report.render", "conventions.toml")
    if name not in known:
        raise RulesError(f"unknown document convention {name!r}; known: {', '.join(sorted(known))}")
    data = dict(known[name]) | dict(overrides or {})
    if data["summary"] not in agg.CONVENTIONS:
        raise RulesError(f"unknown summary convention {data['summary']!r}; known: transactional, total")
    if data.get("first_row", "achieved") not in ("achieved", "transfers"):
        raise RulesError(f"unknown first_row {data['first_row']!r}; known: achieved, transfers")
    return Convention(name=name, **data)


@dataclass(frozen=True)
class Cell:
    """A figure of a document table at full precision, with the decimals it is printed with; a FAIL status
    marks the cell."""

    value: float | None
    decimals: int
    convention: Convention  # how the document prints its figures
    status: Status | None = None  # Fail marks the cell

    @property
    def text(self) -> str:
        return self.convention.figure(self.value, self.decimals)


@dataclass
class Row:
    """One row of a document table: its label, the target as printed, a cell per column; ``heading`` marks a
    group heading."""

    label: str
    target: str
    cells: list[Cell]
    heading: bool = False  # a group heading row ("Transaction log I/O")


@dataclass
class SummaryTable:
    """A summary table of the document: title, target column heading, column names, rows and a note."""

    title: str
    target_heading: str
    columns: list[str]
    rows: list[Row]
    note: str = ""

    def split(self, size: int) -> list[SummaryTable]:
        """The table as tables of at most ``size`` columns each, in order, each row's cells cut with
        its columns: a page holds five servers' columns with their names unwrapped, not ten."""
        if len(self.columns) <= size:
            return [self]
        return [
            SummaryTable(
                self.title,
                self.target_heading,
                self.columns[start : start + size],
                [Row(r.label, r.target, r.cells[start : start + size], heading=r.heading) for r in self.rows],
                self.note if start + size >= len(self.columns) else "",
            )
            for start in range(0, len(self.columns), size)
        ]


@dataclass
class Failure:
    """One rule judged, printed for the reviewer's report: server, test, instance, the rule, the
    value and the limit with units, where the value came from, and (for a result that is not a
    failure) its status and why. ``Document.failures`` holds the failed ones."""

    server: str
    run_kind: str
    instance: str | None
    rule: str
    rule_id: str
    value: str
    limit: str
    source: str
    status: Status = Status.FAIL
    reason: str = ""  # why a rule was not evaluated, or the caveat of a result on damaged evidence


@dataclass
class Statement:
    """One reliability statement of the document and whether it is "pass", "fail" or "unknown" (not
    checked)."""

    text: str
    status: str  # "pass" | "fail" | "unknown"


@dataclass
class RunView:
    """One Jetstress report in the appendix."""

    anchor: str
    title: str
    run: Run
    status: Status
    failures: list[Failure]
    disagreements: list[Disagreement]
    judged: list[Failure] = field(default_factory=list)  # every rule result of the run, printed

    @property
    def whole_test(self) -> list[Failure]:
        """The rules judged on the whole test (IOPS, Jetstress' own result, event logs)."""
        return [f for f in self.judged if f.instance is None]

    @property
    def instance_grid(self) -> tuple[list[tuple[Failure, str]], list[tuple[str, list[Failure | None]]]]:
        """The rules judged per database instance as a grid for the reviewer's report: one
        column per rule (its first result gives its name and limit, beside where its values came
        from), one row per instance in the order judged, each cell that rule's result on that
        instance (None: not judged)."""
        heads: dict[str, Failure] = {}
        sources: dict[str, dict[str, None]] = {}
        cells: dict[str, dict[str, Failure]] = {}
        for f in self.judged:
            if f.instance is None:
                continue
            heads.setdefault(f.rule_id, f)
            sources.setdefault(f.rule_id, {})[f.source or "no value"] = None
            cells.setdefault(f.instance, {})[f.rule_id] = f
        columns = [(head, ", ".join(sources[rule])) for rule, head in heads.items()]
        return columns, [(instance, [row.get(rule) for rule in heads]) for instance, row in cells.items()]


@dataclass
class ServerView:
    """One server in the appendix: its anchor, label, machine, verdict, reports, and achieved and target
    IOPS."""

    anchor: str
    label: str
    machine: str
    status: Status
    runs: list[RunView]
    achieved: float | None = None
    target: float | None = None


@dataclass(frozen=True)
class DisagreementGroup:
    """The disagreements of one test report, summed up for the body; the appendix lists each."""

    server: str
    test: str
    count: int
    largest: Disagreement


@dataclass
class Document:
    """Everything a solution document shows, computed: verdict, profile, summary tables, reliability
    statements, failures, servers, disagreements and problems, and the sections still holding the vendor
    placeholder."""

    manifest: Manifest
    convention: Convention
    verdict: Status
    profile_rows: list[tuple[str, str]]
    performance_tables: list[SummaryTable]
    aggregate_table: SummaryTable | None
    stress_tables: list[SummaryTable]
    backup_table: SummaryTable | None
    recovery_tables: list[SummaryTable]
    backup_across: tuple[Cell, Cell] | None
    reliability: list[Statement]
    failures: list[Failure]
    servers: list[ServerView]
    disagreements: list[Disagreement]
    problems: list[Problem]
    disagreement_groups: list[DisagreementGroup] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)  # sections still holding PLACEHOLDER
    verdict_reason: str = ""  # why the verdict is not PASS: what failed, was not evaluated or not read
    # Facts the manifest states differently from the evidence, with its reason (the document's notes).
    stated_differences: list[Difference] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)  # the criteria judged: tables and charts ask them
    # The "Tested servers" table: what the manifest's [[servers]] state (headings, then a row a server).
    server_facts: list[list[str]] = field(default_factory=list)
    # One results table per server (the ESRP 4.0 form's "Server 1 test results"): a "Value" column.
    server_tables: list[SummaryTable] = field(default_factory=list)
    # What keeps the verdict from PASS, one line each (SolutionAssessment.blocking): the review's.
    blocking: list[str] = field(default_factory=list)
    # The servers tested, when only some have been read (an appendix piece laid out early, while
    # the others are still being read, counts the manifest's); None: those in ``servers``.
    tested: int | None = None

    @property
    def form(self) -> Form:
        """The form the document is printed in, by its ESRP and Exchange versions."""
        info = self.manifest.document
        return form_for(info.esrp_version, info.exchange_version)

    @property
    def unchecked(self) -> list[Failure]:
        """Every rule result that is neither a plain pass nor a fail: not evaluated, or passed
        only on damaged evidence, each with why (the reviewer's report lists them)."""
        return [
            f
            for view in self.servers
            for rv in view.runs
            for f in rv.judged
            if f.status in {Status.NOT_EVALUATED, Status.INCOMPLETE}
        ]

    @property
    def not_checked(self) -> list[Statement]:
        """The reliability statements the evidence could not decide (no event logs, no checksum
        or backup report): the reviewer's, never the vendor's document."""
        return [s for s in self.reliability if s.status == "unknown"]

    @property
    def stated_reliability(self) -> list[Statement]:
        """The reliability statements the evidence decides, as the vendor's document prints them."""
        return [s for s in self.reliability if s.status != "unknown"]

    @property
    def reading_notes(self) -> list[Problem]:
        """The reader's notes (severity "note": a cell or row passed over that no figure uses):
        kept out of the document, written to the diagnostics file beside it."""
        return [p for p in self.problems if p.severity == "note"]

    @property
    def shown_problems(self) -> list[Problem]:
        """The problems the document itself lists: errors and warnings."""
        return [p for p in self.problems if p.severity != "note"]

    @property
    def evidence_notes(self) -> list[tuple[str, str, str, str]]:
        """The problems the document lists, in readers' words: (severity as the model names it,
        severity in words, file, sentence). Their technical text is in the diagnostics file
        beside the document."""
        return [(p.severity, *reader_words(p)) for p in self.shown_problems]

    @property
    def server_count(self) -> int:
        return len(self.servers) if self.tested is None else self.tested

    @property
    def appendix_views(self) -> list[ServerView]:
        """The servers whose test reports the appendix shows: those [appendix] servers names, in
        document order, or every server."""
        chosen = self.manifest.appendix_servers
        if chosen is None:
            return self.servers
        return [view for view in self.servers if view.label in chosen]

    @property
    def appendix_is_partial(self) -> bool:
        """Whether the appendix leaves servers out (representative servers only)."""
        chosen = self.manifest.appendix_servers
        return chosen is not None and len(self.appendix_views) < self.server_count


def _limit_text(rule: Rule | None, kind: TestKind, generations: list[Generation]) -> str:
    # The criterion prints its own limit: its operator and its threshold to the last digit stated.
    # Columns of different Jetstress generations may stand under different limits: each is named.
    if rule is None:
        return "N/A"
    texts = {g: rule.limit_text(kind, g, unit="msec") for g in dict.fromkeys(generations)}
    if len(set(texts.values())) <= 1:
        return next(iter(texts.values()), rule.limit_text(kind, unit="msec"))
    return "; ".join(f"{text} (Jetstress {g.value})" for g, text in texts.items())


def _generation(server: ServerAssessment, kind: TestKind) -> Generation:
    """The Jetstress generation of a server's runs of one test type, the one its verdict's limits
    were taken for; UNKNOWN (the test type's own limit) when its runs are of several or none."""
    found = {r.run.generation for r in server.runs if r.run.kind is kind}
    return found.pop() if len(found) == 1 else Generation.UNKNOWN


def _failure(result: RuleResult, label: str, conv: Convention) -> Failure:
    decimals = conv.latency_decimals if result.unit == "ms" else conv.io_decimals
    threshold = (
        "" if result.threshold is None else fmt_number(result.threshold, decimals, thousands=conv.thousands)
    )
    return Failure(
        server=label,
        run_kind=result.run_kind,
        instance=result.instance,
        rule=result.description,
        rule_id=result.rule_id,
        value="—" if result.value is None else f"{conv.figure(result.value, decimals)} {result.unit}".strip(),
        limit=f"{result.operator} {threshold} {result.unit}".strip() if threshold else "—",
        source=result.evidence,
        status=result.status,
        reason=result.reason or result.caveat,
    )


def _io_rows(  # noqa: PLR0917 - one call site, each argument a distinct part of the table
    figures: list[agg.IoFigures | None],
    achieved: list[float | None],
    targets: list[float | None],
    target_text: str,
    rules: list[Rule],
    kind: TestKind,
    generations: list[Generation],
    conv: Convention,
) -> list[Row]:
    """The rows of one IO table; ``generations`` holds each column's Jetstress generation, so a
    cell is marked against the limit its own verdict used."""
    lab = conv.labels
    read_rule = find_rule(rules, "db-read-latency-avg")
    log_rule = find_rule(rules, "log-write-latency-avg")
    iops_rule = find_rule(rules, "transactional-iops")

    def marked(rule: Rule | None, value: float | None, limit: float | None) -> Status | None:
        # A cell is marked as its rule judges it: the rule's operator, never a comparison of its own.
        if rule is None or value is None or limit is None:
            return None
        return None if rule.holds(value, limit) else Status.FAIL

    def cells(attr: str, decimals: int, rule: Rule | None = None) -> list[Cell]:
        out = []
        for f, generation in zip(figures, generations, strict=True):
            limit = rule.limit(kind, generation) if rule is not None else None
            value = getattr(f, attr) if f is not None else None
            out.append(Cell(value, decimals, conv, marked(rule, value, limit)))
        return out

    achieved_cells = [
        Cell(a, conv.io_decimals, conv, marked(iops_rule, a, t))
        for a, t in zip(achieved, targets, strict=True)
    ]
    io, lat = conv.io_decimals, conv.latency_decimals
    # The first row is the achieved IOPS against the target, or (ESRP 4.0) the disks' transfers:
    # the reads plus writes printed below it, in the same convention, never the achieved IOPS
    # under a transfers label (which made Transfers < Reads in a total-convention table).
    first = (
        Row(lab["achieved"], "N/A", cells("transfers", io))
        if conv.first_row == "transfers"
        else Row(lab["achieved"], target_text, achieved_cells)
    )
    return [
        first,
        Row(lab["reads"], "N/A", cells("reads", io)),
        Row(lab["writes"], "N/A", cells("writes", io)),
        Row(
            lab["read_latency"],
            _limit_text(read_rule, kind, generations),
            cells("read_latency_ms", lat, read_rule),
        ),
        Row(lab["write_latency"], "N/A", cells("write_latency_ms", lat)),
        Row(lab["log_io"], "", [], heading=True),
        Row(lab["log_writes"], "N/A", cells("log_writes", io)),
        Row(
            lab["log_write_latency"],
            _limit_text(log_rule, kind, generations),
            cells("log_write_latency_ms", lat, log_rule),
        ),
    ]


def _chunks(items: list[Any], size: int) -> list[list[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)] or [[]]


def _per_server_tables(
    kind: TestKind,
    servers: list[tuple[str, ServerAssessment]],
    rules: list[Rule],
    conv: Convention,
) -> list[SummaryTable]:
    tables = []
    present = [(label, s) for label, s in servers if kind.value in s.summaries]
    for group in _chunks(present, conv.servers_per_table):
        if not group:
            continue
        summaries = [s.summaries[kind.value] for _, s in group]
        targets = [x.target_iops for x in summaries]
        same = len({t for t in targets if t is not None}) <= 1
        target_text = fmt_target(targets[0], conv) if same and targets[0] else "see row"
        rows = _io_rows(
            [x.conventions.get(conv.summary) for x in summaries],
            [x.achieved_iops for x in summaries],
            targets,
            target_text,
            rules,
            kind,
            [_generation(s, kind) for _, s in group],
            conv,
        )
        labels = [label for label, _ in group]
        title = (
            f"Individual server metrics for {labels[0]}"
            if len(labels) == 1
            else f"Individual server metrics for {labels[0]} through {labels[-1]}"
        )
        if kind is TestKind.STRESS:
            title = title.replace("Individual server metrics", "24-hour stress metrics")
        tables.append(SummaryTable(title, "Target values", labels, rows))
    return tables


def _server_tables(
    servers: list[tuple[str, ServerAssessment]], rules: list[Rule], conv: Convention, caption: str
) -> list[SummaryTable]:
    """One 2-hour performance table per server, its figures in one "Value" column and no targets
    (a form that prints them so; ``caption`` names the server with ``{label}``)."""
    kind = TestKind.PERFORMANCE
    tables = []
    for label, s in servers:
        summary = s.summaries.get(kind.value)
        if summary is None:
            continue
        rows = _io_rows(
            [summary.conventions.get(conv.summary)],
            [summary.achieved_iops],
            [summary.target_iops],
            "",
            rules,
            kind,
            [_generation(s, kind)],
            conv,
        )
        tables.append(SummaryTable(caption.format(label=label), "", ["Value"], rows))
    return tables


def _aggregate_table(
    a: agg.AggregateSummary, rules: list[Rule], conv: Convention, servers: list[ServerAssessment]
) -> SummaryTable | None:
    figures = a.conventions.get(conv.summary)
    if figures is None:
        return None
    target_text = fmt_target(a.target_iops, conv) if a.target_iops else "N/A"
    # One column for all servers: their common generation's limit, else the test type's own.
    found = {_generation(s, TestKind.PERFORMANCE) for s in servers}
    generation = found.pop() if len(found) == 1 else Generation.UNKNOWN
    count = len(servers)
    rows = _io_rows(
        [figures],
        [a.achieved_iops],
        [a.target_iops],
        target_text,
        rules,
        TestKind.PERFORMANCE,
        [generation],
        conv,
    )
    return SummaryTable(
        "Aggregate performance across all servers",
        f"Target values for {count} server{'s' if count != 1 else ''}",
        ["Values across all servers"],
        rows,
        note="Rates are summed over servers; latencies are the mean of the servers' latencies.",
    )


def _profile_rows(
    manifest: Manifest, assessment: SolutionAssessment, conv: Convention, problems: list[Problem]
) -> list[tuple[str, str]]:
    p = manifest.profile
    n_servers = len(manifest.servers)
    per_server = p.active_mailboxes_per_server or p.mailboxes // max(n_servers, 1)
    perf_runs = [r.run for s in assessment.servers for r in s.runs if r.run.kind is TestKind.PERFORMANCE]
    db_counts = sorted({len(r.instance_names()) for r in perf_runs if r.instance_names()})
    dbs_text = "—" if not db_counts else "–".join(str(c) for c in sorted({db_counts[0], db_counts[-1]}))
    per_db = conv.figure(per_server / db_counts[0], 0) if len(db_counts) == 1 and db_counts[0] else "—"
    target = per_server * p.tested_iops
    sizes = [r.sizing.initial_database_bytes for r in perf_runs]
    total_gb = sum(s for s in sizes if s is not None) / 2**30 if sizes and None not in sizes else None
    rows = [
        ("Number of Exchange mailboxes simulated", conv.figure(p.mailboxes, 0)),
        ("Number of database availability groups (DAGs)", str(p.dags)),
        ("Number of servers/DAG", str(p.servers_per_dag)),
        ("Number of servers tested", str(n_servers)),
        ("Number of active mailboxes/server", conv.figure(per_server, 0)),
        ("Number of databases/host", dbs_text),
        ("Number of copies/database", str(p.copies_per_database)),
        ("Number of mailboxes/database", per_db),
        (
            "Simulated profile: I/Os per second per mailbox",
            f"{p.tested_iops:g} ({p.iops_per_mailbox:g} + {p.headroom_percent:g}% headroom)"
            if p.headroom_percent
            else f"{p.tested_iops:g}",
        ),
        ("Target transactional IOPS per server", fmt_target(target, conv)),
        ("Target transactional IOPS, all tested servers", fmt_target(target * n_servers, conv)),
    ]
    if p.mailbox_size_gb is not None:
        rows.append(("Mailbox size", f"{p.mailbox_size_gb:g} GB"))
    if total_gb is not None:
        rows.append(("Total database size for performance testing", f"{conv.figure(total_gb, 0)} GB"))
        if manifest.database_capacity_gb:
            share = total_gb / manifest.database_capacity_gb * 100
            rows.append(("% formatted storage capacity used by Exchange databases", f"{share:.2f}%"))
    if manifest.sizing is not None:
        rows.extend(_sizing_rows(manifest.sizing, conv))
    return rows


def _sizing_rows(sizing: SizingResult, conv: Convention) -> list[tuple[str, str]]:
    """The sizing the profile follows, in the units docs/sizing.md states (GB = 1,000 MB)."""

    def text(key: str) -> str:
        figure = sizing.figure(key)
        unit = "" if figure.unit == "mailboxes" else f" {figure.unit}"
        return f"{conv.figure(figure.value, 0)}{unit}"

    return [
        ("Sizing: mailboxes planned (users + growth)", text("planned_mailboxes")),
        ("Sizing: transactional IOPS", text("transactional_iops")),
        ("Sizing: total IOPS (transactional + log + differential)", text("total_iops")),
        ("Sizing: capacity (databases + logs + search catalog)", text("total_capacity")),
        ("Sizing: volume size per database", text("volume_size")),
    ]


def _reliability(assessment: SolutionAssessment, conv: Convention) -> list[Statement]:
    runs = [r.run for s in assessment.servers for r in s.runs]
    out: list[Statement] = []
    with_events = [r for r in runs if r.event_log_errors is not None]
    if not with_events:
        out.append(
            Statement("No Application or System event logs are in the results: not checked.", "unknown")
        )
    else:
        errors = sum(r.event_log_errors or 0 for r in with_events)
        if errors:
            out.append(
                Statement(f"{errors} error events were logged during the tests (listed below).", "fail")
            )
        else:
            out.append(
                Statement(
                    "No errors were reported in the event logs during the "
                    f"{len(with_events)} tests they cover.",
                    "pass",
                )
            )
    checksum = [r for r in runs if r.kind is TestKind.DB_CHECKSUM]
    if checksum:
        bad = sum(row.bad_pages or 0 for r in checksum for row in r.checksum if not row.is_sum)
        if bad:
            out.append(Statement(f"The database checksum found {conv.figure(bad, 0)} bad pages.", "fail"))
        else:
            out.append(Statement("No errors were reported for the database checksum.", "pass"))
    else:
        out.append(Statement("No database checksum report is in the results: not checked.", "unknown"))
    reported = [r for r in runs if r.overall_result]
    failed = [r for r in reported if r.overall_result and r.overall_result.casefold() != "pass"]
    if failed:
        names = ", ".join(f"{r.machine} {r.kind.value}" for r in failed)
        out.append(Statement(f"Jetstress reports a failed test: {names}.", "fail"))
    elif reported:
        out.append(Statement(f"All {len(reported)} Jetstress tests that state a result report Pass.", "pass"))
    backup = [r for r in runs if r.kind is TestKind.DATABASE_BACKUP]
    if not backup:
        out.append(Statement("The backup-to-disk test is not in the results.", "unknown"))
    return out


def _run_view(ra: RunAssessment, label: str, anchor: str, conv: Convention) -> RunView:
    judged = [_failure(r, label, conv) for r in ra.results]
    failures = [f for f in judged if f.status is Status.FAIL]
    return RunView(
        anchor=anchor,
        title=f"{label} ({ra.run.machine}): {ra.run.kind.value}",
        run=ra.run,
        status=ra.status,
        failures=failures,
        disagreements=list(ra.disagreements),
        judged=judged,
    )


def diagnostics_text(doc: Document) -> str:
    """The full diagnostics of a build, as plain text for the file beside the document: every
    problem (severity, source, location, message) and every figure two sources give differently."""
    lines = [f"Diagnostics for {doc.manifest.document.title}", ""]
    lines.append(f"Problems ({len(doc.problems)}):")
    for p in doc.problems:
        where = f"{p.source} ({p.location})" if p.location else p.source
        lines.append(f"  {p.severity}\t{where}\t{p.message}")
    lines += ["", f"Disagreements between two sources ({len(doc.disagreements)}):"]
    for d in doc.disagreements:
        lines.append(
            f"  {d.table}\t{d.instance}\t{d.metric}\t{d.first_value!r} ({d.first_source})"
            f"\t{d.second_value!r} ({d.second_source})"
        )
    return "\n".join(lines) + "\n"


def _server_facts(manifest: Manifest, conv: Convention) -> list[list[str]]:
    """The "Tested servers" table: a heading row, then each server's stated facts (none: no table)."""
    specs = fact_specs()
    keys = [k for k in specs if any(k in s.facts for s in manifest.servers)]
    if not keys:
        return []
    rows = [["Server", *(specs[k].label for k in keys)]]
    for server in manifest.servers:
        cells = []
        for key in keys:
            value = server.facts.get(key)
            if value is None:
                cells.append("—")
            elif specs[key].kind == "gb":
                cells.append(conv.figure(float(value), 0))
            else:
                cells.append(str(value))
        rows.append([server.label, *cells])
    return rows


def _differences(
    manifest: Manifest,
    servers: list[tuple[str, ServerAssessment]],
    problems: list[Problem],
    found: list[Difference] | None,
) -> list[Difference]:
    """The stated facts that differ from the evidence and say why; one that does not say why is an
    error of the document (`build` refuses it before it gets here; a library caller may not)."""
    if found is None:
        runs: dict[str, list[Run]] = {}
        for label, s in servers:
            runs.setdefault(label, []).extend(r.run for r in s.runs)
        found = differences(manifest, list(runs.items()))
    problems.extend(Problem(manifest.path, d.refusal(), severity="error") for d in found if d.reason is None)
    return [d for d in found if d.reason is not None]


@cache
def _evidence_words() -> tuple[dict[str, str], str, list[tuple[re.Pattern[str], str]]]:
    raw = package_toml("esrp_report.render", "evidence_words.toml")
    notes = [(re.compile(n["pattern"]), n["words"]) for n in raw["notes"]]
    return raw["severity"], raw["fallback"], notes


def reader_words(problem: Problem) -> tuple[str, str, str]:
    """A problem for the document's Evidence notes: its severity and file, and a sentence in readers'
    words (render/evidence_words.toml), never the reader's technical text."""
    severity, fallback, notes = _evidence_words()
    source = problem.source.replace("\\", "/").rsplit("/", 1)[-1]
    for pattern, words in notes:
        found = pattern.search(problem.message)
        if found:
            return severity.get(problem.severity, problem.severity), source, words.format(**found.groupdict())
    return severity.get(problem.severity, problem.severity), source, fallback


def fmt_target(value: float, conv: Convention) -> str:
    """A target IOPS figure, printed one way wherever it appears (profile table, summary tables):
    whole, "1,400", unless the profile makes it a fraction, then with the I/O decimals."""
    decimals = 0 if abs(value - round(value)) < 1e-6 else conv.io_decimals
    return conv.figure(value, decimals)


def build_document(
    manifest: Manifest,
    assessment: SolutionAssessment,
    rules: list[Rule],
    labels: dict[str, str],
    *,
    stated: list[Difference] | None = None,
) -> Document:
    """``labels`` maps each assessed server name (machine) to the manifest's label; ``stated`` is
    the manifest's differences from the evidence when the caller has worked them out already
    (`build` does, to refuse unexplained ones), else they are worked out here."""
    if manifest.sizing_spec is not None and manifest.sizing is None:
        # Its profile would hold placeholders where the sizing's values belong.
        raise ValueError(f"{manifest.path}: [sizing] not worked out (analysis.sizing.sized_manifest)")
    conv = load_convention(manifest.convention, manifest.convention_overrides)
    form = form_for(manifest.document.esrp_version, manifest.document.exchange_version)
    problems = list(assessment.problems) + list(manifest.problems)
    servers = [(labels.get(s.name, s.name), s) for s in assessment.servers]
    views: list[ServerView] = []
    failures: list[Failure] = []
    disagreements: list[Disagreement] = []
    groups: list[DisagreementGroup] = []
    for i, (label, s) in enumerate(servers, start=1):
        runs = sorted(s.runs, key=lambda r: APPENDIX_ORDER.index(r.run.kind))
        run_views = [_run_view(r, label, f"server-{i}-{r.run.kind.value.lower()}", conv) for r in runs]
        summary = s.summaries.get(TestKind.PERFORMANCE.value)
        views.append(
            ServerView(
                f"server-{i}",
                label,
                s.name,
                s.status,
                run_views,
                summary.achieved_iops if summary else None,
                summary.target_iops if summary else None,
            )
        )
        for rv in run_views:
            failures.extend(rv.failures)
            disagreements.extend(rv.disagreements)
            if rv.disagreements:
                largest = max(rv.disagreements, key=lambda d: d.relative_difference)
                groups.append(DisagreementGroup(label, rv.run.kind.value, len(rv.disagreements), largest))
        for ra in s.runs:
            problems.extend(ra.problems)
        if s.missing_kinds:
            problems.append(
                Problem(label, f"no {', '.join(s.missing_kinds)} report in the results", severity="warning")
            )
    performance = assessment.aggregates.get(TestKind.PERFORMANCE.value)
    backup_rows = [(label, s.backup) for label, s in servers if s.backup is not None]
    backup_table = None
    if backup_rows:
        d = conv.backup_decimals
        backup_table = SummaryTable(
            "Database read-only performance",
            "",
            [label for label, _ in backup_rows],
            [
                Row(
                    "MB read/sec per database",
                    "",
                    [Cell(b.mb_per_sec_per_database, d, conv) for _, b in backup_rows],
                ),
                Row(
                    "MB read/sec total per server",
                    "",
                    [Cell(b.mb_per_sec_per_server, d, conv) for _, b in backup_rows],
                ),
            ],
        )
    across = None
    if assessment.backup is not None and len(backup_rows) > 1:
        d = conv.backup_decimals
        across = (
            Cell(assessment.backup.mb_per_sec_per_database, d, conv),
            Cell(assessment.backup.mb_per_sec_per_server, d, conv),
        )
    recovery = [(label, s.recovery) for label, s in servers if s.recovery is not None]
    recovery_tables = [
        SummaryTable(
            "Transaction log recovery/replay performance",
            "",
            [label for label, _ in group],
            [
                Row(
                    "Average time to play one log file (sec)",
                    "",
                    [Cell(r.seconds_per_log, conv.replay_decimals, conv) for _, r in group],
                )
            ],
        )
        for group in _chunks(recovery, conv.servers_per_table)
        if group
    ]
    placeholders = [k for k, text in manifest.sections.items() if PLACEHOLDER in text]
    return Document(
        rules=list(rules),
        manifest=manifest,
        convention=conv,
        verdict=assessment.status,
        verdict_reason=assessment.reason,
        blocking=list(assessment.blocking),
        profile_rows=_profile_rows(manifest, assessment, conv, problems),
        performance_tables=_per_server_tables(TestKind.PERFORMANCE, servers, rules, conv),
        aggregate_table=_aggregate_table(performance, rules, conv, [s for _, s in servers])
        if performance
        else None,
        stress_tables=_per_server_tables(TestKind.STRESS, servers, rules, conv),
        backup_table=backup_table,
        recovery_tables=recovery_tables,
        backup_across=across,
        reliability=_reliability(assessment, conv),
        failures=failures,
        servers=views,
        disagreements=disagreements,
        disagreement_groups=groups,
        problems=problems,
        placeholders=placeholders,
        stated_differences=_differences(manifest, servers, problems, stated),
        server_facts=_server_facts(manifest, conv),
        server_tables=_server_tables(servers, rules, conv, form.server_table) if form.server_table else [],
    )
