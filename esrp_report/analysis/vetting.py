"""Is a run's evidence whole, consistent and of this test? Checked before anything is judged.

A verdict is only as good as the figures behind it. Every figure a rule can judge is checked here
against what it can physically be, and every source of one fact against the others: the report's
tables against themselves and against the configuration it states, the result XML (merged in
``analysis.solution``), the configuration XML, and the counter log (its machine, its instances, its
columns, and whether its samples cover the collection window). What fails is a ``Problem`` with
``doubt`` set: the run's verdict is then INCOMPLETE at best, never PASS (a figure that fails on any
credible source still FAILs: ``analysis.rules``). A figure that cannot exist is also taken out of
the run, so that no sum or average is made with it; the problem names it and its source.

The limits (how long a gap in the samples may be, how near the window's edges they must start and
end) are data: ``rules/evidence.toml``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, fields
from functools import cache
from typing import Any

import polars as pl

from esrp_report.analysis import compare
from esrp_report.analysis.metrics import CounterMetrics, counter_map
from esrp_report.model import CounterLog, Problem, Run, TableKind
from esrp_report.model.data import package_toml


@dataclass(frozen=True)
class EvidenceLimits:
    """How far a counter log may stray from the collection window before its figures are in doubt."""

    max_gap_intervals: float
    edge_intervals: float
    agreement_relative: float
    agreement_absolute: float


@cache
def limits() -> EvidenceLimits:
    """The limits of ``rules/evidence.toml``."""
    raw = package_toml("esrp_report.analysis.rules", "evidence.toml")
    log, agree = raw["counter_log"], raw["agreement"]
    return EvidenceLimits(
        float(log["max_gap_intervals"]),
        float(log["edge_intervals"]),
        float(agree["relative"]),
        float(agree["absolute"]),
    )


def _doubt(source: str, message: str, lost: int = 0) -> Problem:
    return Problem(source, message, severity="error", lost=lost, doubt=True)


# ---------------------------------------------------------------- figures that cannot exist


def _bounds(label: str) -> tuple[float | None, float | None]:
    cmap = counter_map()
    for name, (_object, counter, _instance) in cmap.host_counters.items():
        if name.casefold() == label.casefold():
            return cmap.bounds(counter)
    return cmap.ranges["default"]


def _impossible(value: float, bounds: tuple[float | None, float | None]) -> bool:
    low, high = bounds
    return (
        not math.isfinite(value) or (low is not None and value < low) or (high is not None and value > high)
    )


def vet_figures(run: Run) -> list[Problem]:
    """Take out and name every figure of one source (a report, a result XML, or the two merged) that
    cannot exist."""
    source = run.sources[0] if run.sources else run.machine
    found: list[Problem] = []
    default = counter_map().ranges["default"]
    for table in run.tables.values():
        for row in table.rows:
            for key, value in list(row.values.items()):
                if _impossible(value, default):
                    del row.values[key]
                    found.append(
                        _doubt(
                            source,
                            f"{table.kind.value} {row.instance} {key}: {value!r} cannot exist; not judged",
                            1,
                        )
                    )
    for counter in run.host:
        bounds = _bounds(counter.name)
        for stat in ("average", "minimum", "maximum"):
            value = getattr(counter, stat)
            if value is not None and _impossible(value, bounds):
                setattr(counter, stat, None)
                found.append(
                    _doubt(
                        source, f"host counter {counter.name} {stat}: {value!r} cannot exist; not judged", 1
                    )
                )
    sizing = run.sizing
    for attr in ("achieved_iops", "target_iops", "initial_database_bytes", "final_database_bytes"):
        value = getattr(sizing, attr)
        # A target of no I/O is no test; every other figure of the sizing table may be zero.
        low_ok = value is None or (value > 0 if attr == "target_iops" else value >= 0)
        if value is not None and (not math.isfinite(value) or not low_ok):
            setattr(sizing, attr, None)
            found.append(_doubt(source, f"{attr}: {value!r} cannot exist; not judged", 1))
    if sizing.database_files is not None and sizing.database_files < 1:
        found.append(_doubt(source, f"database_files: {sizing.database_files!r} cannot exist", 1))
        sizing.database_files = None
    for rows in (run.backup, run.soft_recovery, run.checksum):
        for item in rows:
            for f in fields(item):
                value = getattr(item, f.name)
                if isinstance(value, float) and _impossible(value, default):
                    setattr(item, f.name, None)
                    name = getattr(item, "instance", None) or getattr(item, "database", "")
                    found.append(_doubt(source, f"{name} {f.name}: {value!r} cannot exist; not judged", 1))
    return found


# ---------------------------------------------------------------- the report against itself


def _keys(names: Iterable[str]) -> set[str]:
    return {compare.instance_key(n) for n in names}


def _shown(names: Iterable[str], limit: int = 3) -> str:
    names = sorted(names)
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _vet_completeness(run: Run, source: str) -> list[Problem]:
    """A table whose rows do not all carry the same figures lost some: an instance's figure is gone."""
    found: list[Problem] = []
    for table in run.tables.values():
        present: set[str] = set()
        for row in table.rows:
            present |= set(row.values)
        for row in table.rows:
            missing = present - set(row.values)
            if missing:
                found.append(
                    _doubt(
                        source,
                        f"{table.kind.value} {row.instance} has no {_shown(missing)} "
                        "while other instances do",
                    )
                )
    return found


def _vet_instances(run: Run, source: str) -> list[Problem]:
    """Every statement of which databases were tested must name the same ones."""
    statements: list[tuple[str, set[str]]] = []
    for kind in (TableKind.TRANSACTIONAL, TableKind.TOTAL):
        table = run.tables.get(kind)
        if table is not None and table.rows:
            statements.append((f"{kind.value} table", _keys(table.instances())))
    if run.databases:
        statements.append(("Database Configuration", _keys(db.instance for db in run.databases)))
    found: list[Problem] = []
    if run.config is not None and run.config.instances and statements:
        # Jetstress names an instance by its process id (Instance2756.1), so one configuration file
        # beside the runs of several tests names other instances than each of them: counted only.
        configured, (name, names) = len(run.config.instances), statements[0]
        if configured != len(names):
            found.append(
                _doubt(
                    source,
                    f"the configuration XML {run.config.source} has {configured} instances, "
                    f"the {name} {len(names)}",
                )
            )
    if statements:
        first_name, first = statements[0]
        for name, names in statements[1:]:
            if names != first:
                only_first, only_other = first - names, names - first
                detail = "; ".join(
                    part
                    for part in (
                        f"only in the {first_name}: {_shown(only_first)}" if only_first else "",
                        f"only in the {name}: {_shown(only_other)}" if only_other else "",
                    )
                    if part
                )
                found.append(
                    _doubt(source, f"the {first_name} and the {name} name different databases ({detail})")
                )
    files = run.sizing.database_files
    listed = sum(len(db.database_paths) for db in run.databases) if run.databases else None
    if files is not None and listed and files != listed:
        found.append(
            _doubt(
                source,
                f"Database Files (Count) says {files}, the Database Configuration lists {listed} "
                "database files",
            )
        )
    elif files is not None and not listed and statements and files < len(statements[0][1]):
        found.append(
            _doubt(source, f"Database Files (Count) says {files} for {len(statements[0][1])} databases")
        )
    return found


def _vet_target(run: Run, source: str) -> list[Problem]:
    report = run.sizing.target_iops
    config = run.config.target_iops if run.config else None
    if config is not None and (not math.isfinite(config) or config <= 0):
        return [
            _doubt(
                run.config.source if run.config else source,
                f"target IOPS {config!r} from the configuration cannot exist",
            )
        ]
    if report is not None and config is not None and not agree(report, config):
        return [
            _doubt(
                source,
                f"target IOPS differs: report says {report!r}, configuration XML says {config!r} "
                "(MailboxCount x MailboxIops)",
            )
        ]
    return []


def agree(a: float, b: float) -> bool:
    """Do two sources' figures agree, within the relative or the absolute tolerance of evidence.toml?"""
    lim = limits()
    return abs(a - b) <= lim.agreement_absolute or compare.relative_difference(a, b) <= lim.agreement_relative


def vet_once(run: Run) -> None:
    """Check the run's own figures (report, result XML, configuration) once, before it is judged: what is
    wrong goes on ``run.problems``."""
    if not run.vetted:
        run.problems.extend(vet_report(run))
        run.vetted = True


def vet_report(run: Run) -> list[Problem]:
    """What is wrong with the run's own figures (report, result XML, configuration), before judging."""
    source = run.sources[0] if run.sources else run.machine
    return [
        *vet_figures(run),
        *_vet_completeness(run, source),
        *_vet_instances(run, source),
        *_vet_target(run, source),
    ]


# ---------------------------------------------------------------- the counter log against the run


@dataclass
class LogVetting:
    """What the counter log's own checks found, and whether its figures may be judged at all."""

    problems: list[Problem]
    usable: bool  # False when the log cannot be of this run: nothing of it is judged


def _log_machines(log: CounterLog) -> list[str]:
    names = log.counters.get_column("machine").drop_nulls().unique().to_list()
    return sorted({str(n) for n in names if str(n).strip()}, key=str.casefold)


def vet_counter_log(run: Run, log: CounterLog, counter: CounterMetrics, judged: Iterable[str]) -> LogVetting:
    """Is the counter log of this machine and these databases, does it cover the collection window
    without gaps, repeats or ambiguous columns, and do its judged figures agree with the report's?"""
    source = log.source
    found: list[Problem] = []
    usable = True
    machines = _log_machines(log)
    known = {n.casefold() for n in machines}
    if run.machine and run.sources and machines and run.machine.casefold() not in known:
        usable = False
        found.append(
            _doubt(
                source,
                f"the counter log is of {_shown(machines)}, the report of {run.machine}: "
                "its figures are not judged",
            )
        )
    if len(machines) > 1:
        found.append(
            _doubt(source, f"the counter log holds counters of {len(machines)} machines ({_shown(machines)})")
        )
    found.extend(_ambiguous_columns(log))
    report_names = set()
    for kind in (TableKind.TRANSACTIONAL, TableKind.TOTAL):
        table = run.tables.get(kind)
        if table is not None and table.rows:
            report_names = _keys(table.instances())
            break
    log_names = _keys(counter.maxima) or _keys(
        counter.tables[TableKind.TRANSACTIONAL].instances()
        if TableKind.TRANSACTIONAL in counter.tables
        else []
    )
    if report_names and log_names and report_names != log_names:
        extra, missing = log_names - report_names, report_names - log_names
        parts = [
            f"not in the report: {_shown(extra)}" if extra else "",
            f"not in the log: {_shown(missing)}" if missing else "",
        ]
        found.append(
            _doubt(
                source,
                "the counter log and the report name different databases ("
                + "; ".join(p for p in parts if p)
                + ")",
            )
        )
    found.extend(_coverage(counter, source))
    judged = set(judged)
    hit = sorted(
        (name, metric, n)
        for name, per in counter.damaged.items()
        for metric, n in per.items()
        if metric in judged
    )
    if hit:
        # Damage in a counter no rule rests on is shown and costs nothing else; here a rule rests on it.
        name, metric, _n = hit[0]
        found.append(
            _doubt(
                source,
                f"{sum(n for *_x, n in hit)} damaged sample(s) of judged counters in the collection window "
                f"(first: {name} {metric})",
            )
        )
    if usable:
        found.extend(_disagreements(run, counter, source, judged))
    return LogVetting(found, usable)


def _ambiguous_columns(log: CounterLog) -> list[Problem]:
    counters = log.counters
    if "duplicate" not in counters.columns:
        return []
    dupes = counters.filter(pl.col("duplicate"))
    if dupes.height == 0:
        return []
    paths = dupes.get_column("path").cast(pl.String).to_list()
    return [
        _doubt(
            log.source,
            f"{dupes.height} counter path(s) appear in more than one column (first: {paths[0]}): "
            "which one holds the test's samples cannot be told",
        )
    ]


def _coverage(counter: CounterMetrics, source: str) -> list[Problem]:
    cover = counter.coverage
    window = counter.window
    if cover is None or cover.interval is None or window.start is None or window.end is None:
        return []
    lim = limits()
    interval = cover.interval.total_seconds()
    found: list[Problem] = []
    if cover.first is not None and cover.last is not None:
        late = (cover.first - window.start).total_seconds()
        early = (window.end - cover.last).total_seconds()
        if late > lim.edge_intervals * interval or early > lim.edge_intervals * interval:
            found.append(
                _doubt(
                    source,
                    f"the counter log covers {cover.first:%H:%M:%S}-{cover.last:%H:%M:%S} UTC of the "
                    f"collection window {window.start:%H:%M:%S}-{window.end:%H:%M:%S} UTC "
                    f"({cover.share(window):.0%}): a maximum outside it is not seen",
                )
            )
    gap = cover.largest_gap.total_seconds() if cover.largest_gap is not None else 0.0
    if gap > lim.max_gap_intervals * interval:
        found.append(
            _doubt(
                source,
                f"a gap of {gap:g} s without samples in the collection window (after "
                f"{cover.gap_start:%H:%M:%S} UTC; samples every {interval:g} s): a maximum in it is not seen",
            )
        )
    if cover.repeated:
        found.append(
            _doubt(
                source,
                f"{cover.repeated} sample(s) in the collection window repeat the time stamp before them",
            )
        )
    return found


def _disagreements(run: Run, counter: CounterMetrics, source: str, judged: set[str]) -> list[Problem]:
    """Judged figures the report and the log state differently, beyond what rounding explains."""
    lim = limits()
    report_source = run.sources[0] if run.sources else "report"
    found = compare.compare_tables(
        run.tables,
        report_source,
        counter.tables,
        source,
        tolerance=lim.agreement_relative,
        absolute_tolerance=lim.agreement_absolute,
    )
    mine = [d for d in found if d.metric in judged and d.table == TableKind.TRANSACTIONAL.value]
    if not mine:
        return []
    first = mine[0]
    return [
        _doubt(
            source,
            f"{len(mine)} judged figure(s) of the report and the counter log disagree (first: "
            f"{first.instance} {first.metric}: report {first.first_value!r}, log {first.second_value!r})",
        )
    ]


def describe_limits() -> dict[str, Any]:
    """The limits as data, for the JSON and the docs."""
    lim = limits()
    return {f.name: getattr(lim, f.name) for f in fields(lim)}
