"""One results folder's runs as catalog rows: what the evidence pipeline read, assembled and
judged (app/catalog.py, in a local process or a Dask worker) turned into rows here.

Everything returned is plain data (dicts, lists, Polars frames) so it pickles to any worker and
back; the single writer in the client turns it into DuckDB rows and Parquet files. Reading and
judging are the app layer's (the same pipeline ``check`` uses): the catalog stores their results.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

from esrp_report.analysis import aggregate as agg
from esrp_report.ingest.jetstress.names import normalized_stem
from esrp_report.model import CounterLog, InstanceTable, Problem, Run, Solution, TableKind, TestKind

if TYPE_CHECKING:
    from esrp_report.analysis.assess import RunAssessment

SERIES_SCHEMA = {"timestamp": pl.Datetime("us", "UTC"), "counter_id": pl.Int32(), "value": pl.Float64()}
INSTANCE_SCHEMA = {
    "origin": pl.String(),
    "table_kind": pl.String(),
    "instance": pl.String(),
    "metric": pl.String(),
    "value": pl.Float64(),
}


@dataclass(frozen=True)
class FolderJob:
    """One results folder to parse: its location and files as (catalog name, readable path, sha256, size)."""

    location: str
    files: tuple[tuple[str, str, str, int], ...]  # (catalog name, readable path, sha256, size)


@dataclass
class ParsedRun:
    """One run as catalog rows: the run row, its sources, instance values, verdicts, problems and, from a
    counter log, its counters and series."""

    run: dict[str, Any]
    sources: list[dict[str, Any]]
    instance_values: pl.DataFrame
    verdicts: list[dict[str, Any]]
    problems: list[dict[str, Any]]
    counters: pl.DataFrame | None = None  # counter_id, path, machine, object, instance, counter
    # timestamp, counter_id, value (missing samples absent), made a slice at a time when written
    series: pl.DataFrame | StreamedSeries | None = None


@dataclass
class ParsedFolder:
    """What parsing one folder gave: its runs, and the problems not tied to a run."""

    location: str
    runs: list[ParsedRun] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)  # not tied to a run


def run_id_for(run_key: str) -> str:
    """The run id of a run key: the first 16 hex digits of its SHA-256, so the same run keeps its id across
    ingests."""
    return hashlib.sha256(run_key.encode()).hexdigest()[:16]


def design_of(location: str) -> str:
    """The design a results location belongs to: the location's parent folder, or the location itself when it
    has none."""
    return location.rsplit("/", 1)[0] if "/" in location else location


def problem_row(location: str, p: Problem) -> dict[str, Any]:
    """A problem as a row of the problems table."""
    return {
        "location": location,
        "source": p.source,
        "severity": p.severity,
        "message": p.message if not p.location else f"{p.location}: {p.message}",
        "lost": p.lost,
    }


def file_problem(location: str, name: str, severity: str, message: str) -> dict[str, Any]:
    """A problem with one file of a folder, by the name the catalog gives it: a file no format
    takes (a note) or one that could not be read (an error; the file is lost)."""
    return {
        "location": location,
        "source": name,
        "severity": severity,
        "message": message,
        "lost": 1 if severity == "error" else 0,
    }


Assess = Callable[[str, Run], "RunAssessment"]  # (server, run) -> its verdicts, as check judges them


def folder_rows(job: FolderJob, parsed: ParsedFolder, solution: Solution, assess: Assess) -> ParsedFolder:
    """Add a folder's runs (``solution``: what the evidence pipeline assembled of it; ``assess``:
    how each run is judged) to ``parsed``, with the problems met assembling them."""
    by_path = {path: (name, digest, size) for name, path, digest, size in job.files}
    parsed.problems.extend(problem_row(job.location, p) for p in solution.problems)
    runs = [run for server in solution.servers for run in server.runs]
    claimed = {path for run in runs for path in _run_paths(run)}
    shared = sorted((by_path[p] for p in by_path if p not in claimed), key=lambda t: t[0])
    for server in solution.servers:
        for run in server.runs:
            assessed = assess(server.name, run)
            parsed.runs.append(_parse_run(job.location, server.name, run, assessed, by_path, shared))
    return parsed


def _run_paths(run: Run) -> list[str]:
    paths = list(dict.fromkeys(run.sources))
    if run.config is not None and run.config.source not in paths:
        paths.append(run.config.source)
    return paths


def _role(path: str, run: Run) -> str:
    if run.sources and path == run.sources[0] and not path.casefold().endswith(".xml"):
        return "report"  # a report carries its own test log; it is still the report
    if run.counter_log is not None and path == run.counter_log.source:
        return "counter log"
    if run.test_log is not None and path == run.test_log.source:
        return "test log"
    if run.config is not None and path == run.config.source:
        return "config"
    return "result xml" if path.casefold().endswith(".xml") else "report"


def _parse_run(  # noqa: PLR0917 - one run's parts, each needed for its rows
    location: str,
    server: str,
    run: Run,
    assessed: RunAssessment,
    by_path: dict[str, tuple[str, str, int]],
    shared: list[tuple[str, str, int]],
) -> ParsedRun:
    paths = [p for p in _run_paths(run) if p in by_path]
    primary = by_path[paths[0]][0] if paths else f"{location}/{run.kind.value}"
    run_key = f"{location}/{normalized_stem(primary.rsplit('/', 1)[-1])}"
    run_id = run_id_for(run_key)
    sources: list[dict[str, Any]] = [
        {
            "run_id": run_id,
            "name": by_path[p][0],
            "role": _role(p, run),
            "sha256": by_path[p][1],
            "size": by_path[p][2],
        }
        for p in paths
    ] + [{"run_id": run_id, "name": n, "role": "shared", "sha256": d, "size": s} for n, d, s in shared]
    digest = hashlib.sha256()
    for source in sorted(sources, key=lambda r: str(r["name"])):
        digest.update(f"{source['name']}\0{source['sha256']}\n".encode())

    counter_tables = assessed.counter.tables if assessed.counter else None
    row: dict[str, Any] = {
        "run_id": run_id,
        "run_key": run_key,
        "location": location,
        "design": design_of(location),
        "server": server,
        "kind": run.kind.value,
        "test_start": run.test_start,
        "test_end": run.test_end,
        "overall_result": run.overall_result,
        "verdict": assessed.status.value,
        "jetstress_version": run.jetstress_version,
        "ese_version": run.ese_version,
        "operating_system": run.operating_system,
        "mailboxes": run.config.mailbox_count if run.config else None,
        "iops_per_mailbox": run.config.mailbox_iops if run.config else None,
        "target_iops": assessed.evidence.target_iops,
        "content_sha256": digest.hexdigest(),
    }
    row.update(_figures(server, run, assessed.evidence.target_iops, counter_tables))
    instance_values = _instance_values(run.tables, "report")
    if counter_tables:
        instance_values = pl.concat([instance_values, _instance_values(counter_tables, "counter log")])
    verdicts = [
        {
            "run_id": run_id,
            "rule_id": r.rule_id,
            "instance": r.instance,
            "status": r.status.value,
            "value": r.value,
            "threshold": r.threshold,
            "operator": r.operator,
            "unit": r.unit,
            "evidence": r.evidence,
            "reason": r.reason,
        }
        for r in assessed.results
    ]
    problems = [{"run_id": run_id, **problem_row(location, p)} for p in assessed.problems]
    for p in problems:
        if p["source"] in by_path:
            p["source"] = by_path[p["source"]][0]
    parsed = ParsedRun(row, sources, instance_values.with_columns(run_id=pl.lit(run_id)), verdicts, problems)
    if run.counter_log is not None:
        parsed.counters, parsed.series = _series(run.counter_log)
    row["samples"] = run.counter_log.sample_count if run.counter_log is not None else None
    return parsed


def _figures(
    server: str, run: Run, target: float | None, counter_tables: dict[TableKind, InstanceTable] | None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "achieved_iops": None,
        "figures_source": None,
        "instances": None,
        "db_reads": None,
        "db_writes": None,
        "db_read_latency_ms": None,
        "db_write_latency_ms": None,
        "log_writes": None,
        "log_write_latency_ms": None,
        "total_reads": None,
        "total_writes": None,
        "total_log_reads": None,
        "total_log_writes": None,
        "backup_mb_per_sec": None,
        "replay_seconds_per_log": None,
    }
    if run.kind in (TestKind.PERFORMANCE, TestKind.STRESS) and (
        run.tables.get(TableKind.TRANSACTIONAL) or counter_tables
    ):
        summary = agg.server_summary(server, run, target, counter_tables)
        out["achieved_iops"] = summary.achieved_iops
        out["figures_source"] = summary.source
        t = summary.conventions.get("transactional")
        if t is not None:
            out.update(
                instances=t.instances,
                db_reads=t.reads,
                db_writes=t.writes,
                db_read_latency_ms=t.read_latency_ms,
                db_write_latency_ms=t.write_latency_ms,
                log_writes=t.log_writes,
                log_write_latency_ms=t.log_write_latency_ms,
            )
        tables = run.tables if summary.source == "report" else (counter_tables or {})
        total = tables.get(TableKind.TOTAL)
        if total is not None and total.rows:
            figures = agg.figures_from_table(total)
            out.update(
                total_reads=figures.reads,
                total_writes=figures.writes,
                total_log_reads=figures.log_reads,
                total_log_writes=figures.log_writes,
            )
    backup = agg.backup_figures(run)
    if backup is not None:
        out["backup_mb_per_sec"] = backup.mb_per_sec_per_database
    recovery = agg.recovery_figures(run)
    if recovery is not None:
        out["replay_seconds_per_log"] = recovery.seconds_per_log
    return out


def _instance_values(tables: dict[TableKind, InstanceTable], origin: str) -> pl.DataFrame:
    rows = [
        (origin, kind.value, row.instance, metric, value)
        for kind, table in tables.items()
        for row in table.rows
        for metric, value in row.values.items()
        if value is not None
    ]
    return pl.DataFrame(rows, schema=INSTANCE_SCHEMA, orient="row")


SERIES_SLICE_CELLS = 4_000_000  # samples x counters turned into series rows at a time


@dataclass
class StreamedSeries:
    """A log's series as the catalog's writer makes it: a slice of samples at a time turned into
    series rows and written as it comes (:meth:`frames`), so no one holds the whole series (two to
    three times the samples' size as rows). A streamed log (one too large to hold) is read from its
    file again; a smaller one travels from the worker as its samples, not as its series."""

    log: CounterLog
    ids: dict[str, int]

    def frames(self) -> Iterator[pl.DataFrame]:
        """The series in sample order, a slice of samples at a time (``SERIES_SCHEMA``)."""
        for batch in self.log.sample_batches():
            rows = max(1, SERIES_SLICE_CELLS // max(1, batch.width))
            for piece in batch.iter_slices(rows):
                yield _long_form(piece, self.ids)


def _series(log: CounterLog) -> tuple[pl.DataFrame, StreamedSeries]:
    counters = (
        log.counters.with_row_index("counter_id")
        .with_columns(pl.col("counter_id").cast(pl.Int32))
        .select("counter_id", "column", "path", "machine", "object", "instance", "counter")
    )
    ids = dict(zip(counters["column"].to_list(), counters["counter_id"].to_list(), strict=True))
    return counters.drop("column"), StreamedSeries(log, ids)


def _long_form(samples: pl.DataFrame, ids: dict[str, int]) -> pl.DataFrame:
    """Samples as series rows (timestamp, counter_id, value), missing samples left out."""
    value_columns = [c for c in samples.columns if c != "timestamp" and c in ids]
    return (
        samples.select(["timestamp", *value_columns])
        .unpivot(index="timestamp", variable_name="column", value_name="value")
        .drop_nulls("value")
        .with_columns(
            pl.col("column").replace_strict(ids, return_dtype=pl.Int32).alias("counter_id"),
            pl.col("timestamp").cast(pl.Datetime("us", "UTC")),
        )
        .select(list(SERIES_SCHEMA))
    )
