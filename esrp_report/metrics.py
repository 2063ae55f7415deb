"""Report figures computed from a perfmon counter log, and comparison with the report's own.

Pure functions over the model; no file I/O except reading the packaged counter map.

What is inferred rather than documented (facts §3, §9): Jetstress's Total I/O table holds
window means of the instance counters; the Transactional table is the Total table less
background-maintenance reads (000: 44.658 + 30.814 = 75.472) and less log replication reads
(Jetstress prints transactional log reads as zero). Averages here are arithmetic means of the
cooked samples inside the collection window.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from importlib import resources
from typing import Any

import polars as pl

from esrp_report import model as m
from esrp_report.model import CounterLog, HostCounter, InstanceRow, InstanceTable, Problem, Run, TableKind


@dataclass(frozen=True)
class CounterMap:
    instance_objects: frozenset[str]
    instance_counters: dict[str, str]
    volume_counters: dict[str, tuple[str, float]]
    host_counters: dict[str, tuple[str, str, str]]


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


@cache
def counter_map() -> CounterMap:
    raw: dict[str, Any] = tomllib.loads(
        resources.files("esrp_report").joinpath("counters.toml").read_text(encoding="utf-8")
    )
    return CounterMap(
        instance_objects=frozenset(_fold(name) for name in raw["instance_object"]["names"]),
        instance_counters={_fold(k): v for k, v in raw["instance_counters"].items()},
        volume_counters={_fold(k): (v["key"], float(v["scale"])) for k, v in raw["volume_counters"].items()},
        host_counters={k: (v[0], v[1], v[2]) for k, v in raw["host_counters"].items()},
    )


@dataclass(frozen=True)
class Window:
    start: datetime | None  # UTC, aware
    end: datetime | None
    origin: str  # where the bounds came from


@dataclass
class CounterMetrics:
    """Everything a counter log says about one run, over its collection window."""

    window: Window
    samples_in_window: int
    tables: dict[TableKind, InstanceTable] = field(default_factory=dict)
    maxima: dict[str, dict[str, float]] = field(default_factory=dict)  # instance -> metric -> max
    latency_samples: dict[str, dict[str, int]] = field(default_factory=dict)  # non-null sample counts
    host: list[HostCounter] = field(default_factory=list)
    volumes: dict[str, dict[str, float]] = field(default_factory=dict)  # LogicalDisk instance -> means
    problems: list[Problem] = field(default_factory=list)


def _to_utc(local: datetime, offset_minutes: int | None) -> datetime:
    offset = timedelta(minutes=offset_minutes or 0)
    return (local - offset).replace(tzinfo=UTC)


def collection_window(run: Run, log: CounterLog) -> Window:
    """The collection window in UTC: the report's, else the test log's, else the whole log."""
    offset = log.utc_offset_minutes
    if run.collection_start and run.collection_end:
        return Window(_to_utc(run.collection_start, offset), _to_utc(run.collection_end, offset), "report")
    test_log = run.test_log
    if test_log and test_log.prerequisites_attained_at:
        ended = next(
            (
                e.timestamp
                for e in test_log.entries
                if "performance logging has ended" in e.message.casefold()
            ),
            None,
        )
        return Window(
            _to_utc(test_log.prerequisites_attained_at, offset),
            _to_utc(ended, offset) if ended else None,
            "test log",
        )
    return Window(None, None, "whole log")


def _window_frame(log: CounterLog, window: Window) -> pl.DataFrame:
    frame = log.samples
    if window.start is not None:
        frame = frame.filter(pl.col("timestamp") >= window.start)
    if window.end is not None:
        frame = frame.filter(pl.col("timestamp") <= window.end)
    return frame


def _first_columns(counters: pl.DataFrame) -> pl.DataFrame:
    """Drop duplicate columns (the reader flags them); the first occurrence speaks."""
    return counters.filter(~pl.col("duplicate"))


def _instance_columns(log: CounterLog) -> dict[str, dict[str, str]]:
    """instance display name -> metric key -> sample column."""
    cmap = counter_map()
    found: dict[str, dict[str, str]] = {}
    for row in _first_columns(log.counters).iter_rows(named=True):
        # Iterates counter definitions (hundreds), not samples.
        if _fold(row["object"]) not in cmap.instance_objects or row["instance"] is None:
            continue
        if row["instance"].casefold() == "_total":
            continue
        key = cmap.instance_counters.get(_fold(row["counter"]))
        if key is None:
            continue
        name = row["instance"].rsplit("/", 1)[-1]
        found.setdefault(name, {}).setdefault(key, row["column"])
    return found


def counter_metrics(run: Run, log: CounterLog) -> CounterMetrics:
    window = collection_window(run, log)
    frame = _window_frame(log, window)
    result = CounterMetrics(window=window, samples_in_window=frame.height)
    if window.origin == "whole log":
        result.problems.append(
            Problem(
                log.source,
                "collection window unknown (no report or test log): all samples used, including "
                "any taken while Jetstress was attaining prerequisites",
                severity="warning",
            )
        )
    if frame.height == 0:
        result.problems.append(
            Problem(log.source, "no samples inside the collection window", severity="error")
        )
        return result

    columns = _instance_columns(log)
    wanted = sorted({col for per in columns.values() for col in per.values()})
    stats = frame.select(
        [pl.col(c).mean().alias(f"mean|{c}") for c in wanted]
        + [pl.col(c).max().alias(f"max|{c}") for c in wanted]
        + [pl.col(c).count().alias(f"n|{c}") for c in wanted]
    ).row(0, named=True)

    # Per-sample derivations (transactional = total - maintenance) need the samples themselves.
    derived = _transactional_reads(frame, columns)

    transactional = InstanceTable(TableKind.TRANSACTIONAL, source=log.source)
    bdm = InstanceTable(TableKind.BACKGROUND_MAINTENANCE, source=log.source)
    replication = InstanceTable(TableKind.LOG_REPLICATION, source=log.source)
    total = InstanceTable(TableKind.TOTAL, source=log.source)
    for name in sorted(columns, key=_natural_key):
        per = columns[name]
        means = {key: stats[f"mean|{col}"] for key, col in per.items() if stats[f"mean|{col}"] is not None}
        result.maxima[name] = {
            key: stats[f"max|{col}"] for key, col in per.items() if stats[f"max|{col}"] is not None
        }
        result.latency_samples[name] = {
            key: stats[f"n|{col}"] for key, col in per.items() if key in m.LATENCY_METRICS
        }
        total.rows.append(
            InstanceRow(name, {k: v for k, v in means.items() if k not in (m.BDM_READS, m.BDM_READ_BYTES)})
        )
        bdm_values = {k: means[k] for k in (m.BDM_READS, m.BDM_READ_BYTES) if k in means}
        if bdm_values:
            bdm.rows.append(InstanceRow(name, bdm_values))
        repl = {
            m.LOG_READS: means.get(m.LOG_READS),
            m.LOG_READ_BYTES: means.get(m.LOG_READ_BYTES),
        }
        replication.rows.append(InstanceRow(name, {k: v for k, v in repl.items() if v is not None}))
        trans = {
            k: v
            for k, v in means.items()
            if k
            in (
                m.DB_READ_LATENCY,
                m.DB_WRITE_LATENCY,
                m.DB_WRITES,
                m.DB_WRITE_BYTES,
                m.LOG_WRITE_LATENCY,
                m.LOG_WRITES,
                m.LOG_WRITE_BYTES,
            )
        }
        trans.update(derived.get(name, {}))
        transactional.rows.append(InstanceRow(name, trans))
    for table in (transactional, bdm, replication, total):
        if table.rows and any(row.values for row in table.rows):
            result.tables[table.kind] = table
    result.host = _host_counters(log, frame)
    result.volumes = _volume_means(log, frame)
    return result


def _transactional_reads(
    frame: pl.DataFrame, columns: dict[str, dict[str, str]]
) -> dict[str, dict[str, float]]:
    exprs: list[pl.Expr] = []
    names: list[str] = []
    for name, per in columns.items():
        if m.DB_READS not in per:
            continue
        total_reads = pl.col(per[m.DB_READS])
        bdm_reads = pl.col(per[m.BDM_READS]) if m.BDM_READS in per else pl.lit(0.0)
        trans_reads = total_reads - bdm_reads
        exprs.append(trans_reads.mean().alias(f"reads|{name}"))
        if m.DB_READ_BYTES in per:
            bdm_bytes = (
                pl.col(per[m.BDM_READS]) * pl.col(per[m.BDM_READ_BYTES])
                if m.BDM_READS in per and m.BDM_READ_BYTES in per
                else pl.lit(0.0)
            )
            per_sample = (total_reads * pl.col(per[m.DB_READ_BYTES]) - bdm_bytes) / trans_reads
            exprs.append(per_sample.filter(trans_reads > 0).mean().alias(f"bytes|{name}"))
        names.append(name)
    if not exprs:
        return {}
    row = frame.select(exprs).row(0, named=True)
    out: dict[str, dict[str, float]] = {}
    for name in names:
        values: dict[str, float] = {}
        if row.get(f"reads|{name}") is not None:
            values[m.DB_READS] = row[f"reads|{name}"]
        if row.get(f"bytes|{name}") is not None:
            values[m.DB_READ_BYTES] = row[f"bytes|{name}"]
        out[name] = values
    return out


def _host_counters(log: CounterLog, frame: pl.DataFrame) -> list[HostCounter]:
    counters = _first_columns(log.counters)
    labels: list[str] = []
    exprs: list[pl.Expr] = []
    for label, (obj, counter, instance) in counter_map().host_counters.items():
        selected = counters.filter(
            (pl.col("object").str.to_lowercase() == obj.lower())
            & (pl.col("counter").str.to_lowercase() == counter.lower())
        )
        if instance == "*":
            selected = selected.filter(
                pl.col("instance").is_not_null() & (pl.col("instance").str.to_lowercase() != "_total")
            )
        elif instance:
            selected = selected.filter(pl.col("instance").str.to_lowercase() == instance.lower())
        else:
            selected = selected.filter(pl.col("instance").is_null())
        cols = selected["column"].to_list()
        if not cols:
            continue
        series = pl.sum_horizontal([pl.col(c) for c in cols]) if len(cols) > 1 else pl.col(cols[0])
        labels.append(label)
        exprs += [
            series.mean().alias(f"avg|{label}"),
            series.min().alias(f"min|{label}"),
            series.max().alias(f"max|{label}"),
        ]
    if not exprs:
        return []
    # One pass over the window for every host counter.
    stats = frame.select(exprs).row(0, named=True)
    return [HostCounter(x, stats[f"avg|{x}"], stats[f"min|{x}"], stats[f"max|{x}"]) for x in labels]


def _volume_means(log: CounterLog, frame: pl.DataFrame) -> dict[str, dict[str, float]]:
    vmap = counter_map().volume_counters
    counters = _first_columns(log.counters).filter(
        (pl.col("object").str.to_lowercase() == "logicaldisk")
        & pl.col("instance").is_not_null()
        & (pl.col("instance").str.to_lowercase() != "_total")
    )
    exprs: list[pl.Expr] = []
    keys: list[tuple[str, str, str]] = []
    for row in counters.iter_rows(named=True):
        spec = vmap.get(_fold(row["counter"]))
        if spec is None:
            continue
        key, scale = spec
        alias = f"{row['instance']}|{key}"
        exprs.append((pl.col(row["column"]) * scale).mean().alias(alias))
        keys.append((row["instance"], key, alias))
    if not exprs:
        return {}
    means = frame.select(exprs).row(0, named=True)
    out: dict[str, dict[str, float]] = {}
    for volume, key, alias in keys:
        if means[alias] is not None:
            out.setdefault(volume, {})[key] = means[alias]
    return out


def _natural_key(name: str) -> list[object]:
    parts: list[object] = []
    for chunk in name.replace(".", " . ").split():
        parts.append((0, int(chunk)) if chunk.isdigit() else (1, chunk))
    return parts


def instance_series(run: Run, log: CounterLog, metric: str, max_points: int = 400) -> pl.DataFrame:
    """One metric over the collection window: ``timestamp`` (UTC) plus one column per instance,
    averaged into at most ``max_points`` equal time buckets (charts need shape, not 5,760 points)."""
    columns = {
        name: cols[metric]
        for name, cols in sorted(_instance_columns(log).items(), key=lambda kv: _natural_key(kv[0]))
        if metric in cols
    }
    frame = _window_frame(log, collection_window(run, log)).select(
        "timestamp", *(pl.col(col).alias(name) for name, col in columns.items())
    )
    if frame.height <= max_points or frame.height < 2:
        return frame
    span = frame["timestamp"][-1] - frame["timestamp"][0]
    every = max(span / max_points, timedelta(seconds=1))
    return (
        frame.sort("timestamp").group_by_dynamic("timestamp", every=every).agg(pl.exclude("timestamp").mean())
    )
