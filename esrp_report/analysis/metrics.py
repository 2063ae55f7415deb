"""Report figures computed from a perfmon counter log, and comparison with the report's own.

Pure functions over the model; no file I/O except reading the packaged counter map.

What is inferred rather than documented (facts §3, §9): Jetstress's Total I/O table holds
window means of the instance counters; the Transactional table is the Total table less
background-maintenance reads (000: 44.658 + 30.814 = 75.472) and less log replication reads
(Jetstress prints transactional log reads as zero). Averages here are arithmetic means of the
cooked samples inside the collection window.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

import numpy as np
import polars as pl

from esrp_report import model as m
from esrp_report.ingest.guards import ascii_int
from esrp_report.model import CounterLog, HostCounter, InstanceRow, InstanceTable, Problem, Run, TableKind
from esrp_report.model.data import package_toml

try:  # the compiled binning (setup.py); without a C compiler the NumPy path gives the same bins
    from esrp_report import _exactsum  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - exercised where the extension is not built
    _exactsum = None


@dataclass(frozen=True)
class CounterMap:
    """Which perfmon counters feed which figures (counters.toml): the instance object and counters by metric
    key, volume counters with their scale, host counters, and each counter's physical range."""

    instance_objects: frozenset[str]
    instance_counters: dict[str, str]
    volume_counters: dict[str, tuple[str, float]]
    host_counters: dict[str, tuple[str, str, str]]
    ranges: dict[str, tuple[float | None, float | None]]  # folded counter name (or "default")

    def bounds(self, counter: str) -> tuple[float | None, float | None]:
        """The physical range (minimum, maximum; None where unbounded) of a counter, compared case- and
        space-insensitively; the default range for a counter not listed."""
        return self.ranges.get(_fold(counter), self.ranges["default"])


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


@cache
def counter_map() -> CounterMap:
    """The counter map read from the package's counters.toml, read once and cached."""
    raw = package_toml("esrp_report.analysis", "counters.toml")
    return CounterMap(
        instance_objects=frozenset(_fold(name) for name in raw["instance_object"]["names"]),
        instance_counters={_fold(k): v for k, v in raw["instance_counters"].items()},
        volume_counters={_fold(k): (v["key"], float(v["scale"])) for k, v in raw["volume_counters"].items()},
        host_counters={k: (v[0], v[1], v[2]) for k, v in raw["host_counters"].items()},
        ranges={_fold(k): (v.get("min"), v.get("max")) for k, v in raw["physical_range"].items()},
    )


def _inside(expr: pl.Expr, bounds: tuple[float | None, float | None]) -> pl.Expr:
    """True where a sample can exist: finite and inside the counter's physical range."""
    low, high = bounds
    condition = expr.is_finite()
    if low is not None:
        condition = condition & (expr >= low)
    if high is not None:
        condition = condition & (expr <= high)
    return condition


def _valid(expr: pl.Expr, bounds: tuple[float | None, float | None]) -> pl.Expr:
    """The sample where it can exist, else null: damage never enters a mean or a maximum."""
    return pl.when(_inside(expr, bounds)).then(expr)


def _out_of_range(expr: pl.Expr, bounds: tuple[float | None, float | None]) -> pl.Expr:
    return expr.is_not_null() & ~_inside(expr, bounds)


@dataclass(frozen=True)
class Window:
    """A collection window: start and end in UTC (None where unknown) and where they came from ("report",
    "test log" or "whole log")."""

    start: datetime | None  # UTC, aware
    end: datetime | None
    origin: str  # where the bounds came from


_STEP_BUCKETS = 10_000  # distinct sample steps kept (0.1 s each): a regular log has a handful


@dataclass
class Coverage:
    """How the samples inside the collection window are spaced: the first and last, every step
    between neighbours (to 0.1 s, counted), the longest one and where it starts, and how many repeat
    the time stamp before them."""

    first: datetime | None = None
    last: datetime | None = None
    steps: dict[float, int] = field(default_factory=dict)  # seconds -> how many
    largest_gap: timedelta | None = None
    gap_start: datetime | None = None
    repeated: int = 0

    @property
    def interval(self) -> timedelta | None:
        """The log's sample interval: its most frequent positive step."""
        positive = {k: v for k, v in self.steps.items() if k > 0}
        if not positive:
            return None
        return timedelta(seconds=max(positive, key=lambda k: (positive[k], -k)))

    def uncovered_seconds(self, longer_than: float) -> float:
        """Seconds of the window inside steps longer than ``longer_than`` seconds."""
        return sum(k * n for k, n in self.steps.items() if k > longer_than)

    def share(self, window: Window, gap_seconds: float | None = None) -> float:
        """The share of the window that samples cover: from the first to the last, less the gaps."""
        if window.start is None or window.end is None or self.first is None or self.last is None:
            return 0.0
        span = (window.end - window.start).total_seconds()
        if span <= 0:
            return 1.0
        covered = (self.last - self.first).total_seconds()
        if gap_seconds is not None:
            covered -= self.uncovered_seconds(gap_seconds)
        return max(0.0, min(1.0, covered / span))

    def see(self, stamps: pl.Series) -> None:
        """The time stamps of one batch of in-window samples, in file order."""
        if stamps.len() == 0:
            return
        previous = self.last
        if self.first is None:
            self.first = stamps[0]
        head = pl.Series([previous], dtype=stamps.dtype) if previous is not None else None
        joined = stamps if head is None else pl.concat([head, stamps])
        steps = joined.diff().drop_nulls()
        self.last = stamps[-1]
        if steps.len() == 0:
            return
        seconds = steps.dt.total_milliseconds() / 1000.0
        self.repeated += int((seconds == 0).sum())
        counted = seconds.round(1).value_counts()
        for step, n in counted.iter_rows():
            if step in self.steps or len(self.steps) < _STEP_BUCKETS:
                self.steps[step] = self.steps.get(step, 0) + n
        longest = seconds.arg_max()
        if longest is not None:
            gap = timedelta(seconds=float(seconds[longest]))
            if self.largest_gap is None or gap > self.largest_gap:
                self.largest_gap = gap
                self.gap_start = joined[longest]


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
    # Damage the verdicts must know of. instance -> metric -> samples in the window that were
    # outside the counter's physical range, not numbers, or missing after the log's first row;
    # host counter label -> the same; the largest values read from samples lost whole.
    damaged: dict[str, dict[str, int]] = field(default_factory=dict)
    host_damaged: dict[str, int] = field(default_factory=dict)
    lost_maxima: dict[str, dict[str, float]] = field(default_factory=dict)
    samples_lost: int = 0  # samples of the log lost whole (placement in time unknown)
    backward_stamps: int = 0  # samples stamped earlier than the one before them
    coverage: Coverage | None = None  # how the window's samples are spaced
    # "utc", or "local" when the log states no offset: its stamps are the writer's wall-clock
    # times (held in the UTC-typed column as they are), and no output may label them UTC.
    time_basis: str = "utc"

    def caveats(self) -> list[str]:
        """Run-wide reasons why any figure from this log may hide a failure."""
        found = []
        if self.samples_lost:
            found.append(f"{self.samples_lost} sample(s) of the counter log were lost whole")
        if self.backward_stamps:
            found.append(f"{self.backward_stamps} time stamp(s) of the counter log run backwards")
        return found


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


def _in_window(frame: pl.DataFrame, window: Window) -> pl.DataFrame:
    if window.start is not None:
        frame = frame.filter(pl.col("timestamp") >= window.start)
    if window.end is not None:
        frame = frame.filter(pl.col("timestamp") <= window.end)
    return frame


@dataclass
class _Tally:
    """Counts over every sample of a log, fed batch by batch: time stamps that run backwards,
    and (inside the window) samples per column that are out of range or missing."""

    checks: dict[str, pl.Expr]
    each: Sequence[Each] = ()  # counted per column, as checks are
    coverage: Coverage = field(default_factory=Coverage)
    counts: dict[str, int] = field(default_factory=dict)
    backward: int = 0
    first_backward: Any = None
    last_stamp: Any = None
    first_row: dict[str, Any] | None = None

    def see(self, batch: pl.DataFrame) -> None:
        """A batch of the whole log, before the window is applied."""
        if batch.height == 0:
            return
        if self.first_row is None:
            self.first_row = batch.head(1).row(0, named=True)
        stamps = batch.get_column("timestamp")
        steps = stamps.diff()
        backward = steps < timedelta(0)
        if self.last_stamp is not None and stamps[0] < self.last_stamp:
            backward[0] = True
        if backward.any():
            self.backward += int(backward.sum())
            if self.first_backward is None:
                self.first_backward = stamps.filter(backward)[0]
        self.last_stamp = stamps[-1]

    def add(self, inside: pl.DataFrame) -> None:
        """A batch of the window."""
        if inside.height == 0:
            return
        self.coverage.see(inside.get_column("timestamp"))
        if not self.checks and not self.each:
            return
        counted = [wide.named(lambda e: e.cast(pl.Int64).sum()) for wide in self.each]
        counted += [expr.cast(pl.Int64).sum().alias(name) for name, expr in self.checks.items()]
        row = inside.select(counted).row(0, named=True)
        for name, value in row.items():
            self.counts[name] = self.counts.get(name, 0) + int(value or 0)


def _window_batches(log: CounterLog, window: Window, tally: _Tally | None = None) -> Iterator[pl.DataFrame]:
    """The samples inside the window, a batch at a time (one batch for a log held whole)."""
    for batch in log.sample_batches():
        if tally is not None:
            tally.see(batch)
        inside = _in_window(batch, window)
        if tally is not None:
            tally.add(inside)
        if inside.height:
            yield inside


_EXPONENTS = 2_100  # frexp exponents of finite doubles (-1073..1024), shifted by 1074
_SHIFT = 1_074 + 53  # a value is mantissa * 2**(exponent + 1074 - _SHIFT), mantissa an integer
_SPLIT = 26  # mantissas split in two halves so per-batch bin sums stay exact in float64
_ROWS = 1 << 24  # rows per bincount at most: 2**24 halves of < 2**27 sum exactly in float64
_CELLS = 1 << 20  # values split and summed at a time


@dataclass(frozen=True)
class Each:
    """One expression over many sample columns (``expr`` built on ``pl.col(columns)``), its
    outputs named ``prefix`` + column. Polars plans it once instead of once per column: about
    400 per-column expressions of a Jetstress log cost twice the time (docs/benchmarks.md,
    "Stop 40: check and start-up"). The columns are the logs' own ids (c00001...), never
    patterns."""

    prefix: str
    columns: list[str]
    expr: pl.Expr

    def names(self) -> list[str]:
        """The outputs' names, in the columns' order (the order Polars gives them in)."""
        return [self.prefix + column for column in self.columns]

    def named(self, then: Callable[[pl.Expr], pl.Expr]) -> pl.Expr:
        """``then`` applied to the expression, each output named prefix + column."""
        return then(self.expr).name.prefix(self.prefix)


class Reduction:
    """Count, mean, minimum and maximum of per-sample expressions, fed batch by batch.

    Means are exact: each finite value is split into an integer mantissa and a power of two,
    the mantissas are summed per power of two in integers, and the total is divided by the
    count once, correctly rounded. So the figures do not depend on how the samples were cut
    into batches (a log read whole and the same log streamed agree to the last bit). A NaN or
    infinite sample makes the mean NaN or infinite, as summing floats would; null is no sample.
    """

    def __init__(
        self, expressions: dict[str, pl.Expr], *, each: Sequence[Each] = (), engine: str = "native"
    ) -> None:
        """``each``: expressions over many columns at once, reduced as one per column (named
        prefix + column), before ``expressions``. ``engine``: "native" bins the mantissas in C
        when the extension is built, "numpy" always in NumPy; both leave the same integers in
        the bins."""
        self.engine = engine
        self.names = [name for wide in each for name in wide.names()] + list(expressions)
        # A figure is asked for by name a few times per column: a list's index() made that
        # quadratic in the columns (about 900 of them in a Jetstress log).
        self._position = {name: i for i, name in enumerate(self.names)}
        self.expressions = [wide.named(lambda e: e.cast(pl.Float64)) for wide in each]
        self.expressions += [e.cast(pl.Float64).alias(n) for n, e in expressions.items()]
        width = len(self.names)
        self.rows = 0
        self.counts = np.zeros(width, np.int64)
        self.high = np.zeros(width * _EXPONENTS, np.int64)
        self.low = np.zeros(width * _EXPONENTS, np.int64)
        self.nan = np.zeros(width, bool)
        self.plus_inf = np.zeros(width, bool)
        self.minus_inf = np.zeros(width, bool)
        self._extremes: pl.DataFrame | None = None
        self._extreme_row: tuple[Any, ...] | None = None  # the extremes as Python values, once read

    def add(self, frame: pl.DataFrame) -> None:
        """Feed one batch of samples into every expression's count, extremes and exact mantissa sums."""
        self.rows += frame.height
        if not self.names or frame.height == 0:
            return
        derived = frame.select(self.expressions)
        if derived.columns != self.names:  # the bins are kept by position
            raise AssertionError(
                f"reduced columns out of order: {derived.columns[:3]}... != {self.names[:3]}..."
            )
        extremes = derived.select(
            [pl.col(n).min().alias(f"min|{i}") for i, n in enumerate(self.names)]
            + [pl.col(n).max().alias(f"max|{i}") for i, n in enumerate(self.names)]
        )
        self._extreme_row = None
        both = extremes if self._extremes is None else pl.concat([self._extremes, extremes])
        self._extremes = both.select(
            [pl.col(c).min() if c.startswith("min|") else pl.col(c).max() for c in both.columns]
        )
        nulls = np.asarray(derived.null_count().row(0), dtype=np.int64)
        self.counts += frame.height - nulls
        values = derived.to_numpy()  # a null becomes NaN: a column holds a NaN sample when it has more
        self.nan |= np.isnan(values).sum(axis=0) > nulls
        self.plus_inf |= (values == np.inf).any(axis=0)
        self.minus_inf |= (values == -np.inf).any(axis=0)
        if _exactsum is not None and self.engine == "native":
            by_column = values.flags.f_contiguous and not values.flags.c_contiguous
            contiguous = values if by_column or values.flags.c_contiguous else np.ascontiguousarray(values)
            _exactsum.bin_mantissas(
                contiguous.astype(np.float64, copy=False),
                len(values),
                len(self.names),
                by_column,
                self.high,
                self.low,
            )
            return
        step = max(1, min(_ROWS, _CELLS // len(self.names)))  # bounded temporaries
        offsets = np.arange(len(self.names), dtype=np.int64) * _EXPONENTS + 1_074
        size = len(self.high)
        for at in range(0, len(values), step):
            part = values[at : at + step]
            # Not finite (or null) counts as 0.0: frexp gives mantissa 0, which adds nothing.
            mantissas, exponents = np.frexp(np.where(np.isfinite(part), part, 0.0))
            whole = (mantissas * float(1 << 53)).astype(np.int64).ravel()
            high = whole >> _SPLIT
            bins = (exponents + offsets).ravel()
            self.high += np.bincount(bins, weights=high, minlength=size).astype(np.int64)
            self.low += np.bincount(bins, weights=whole - (high << _SPLIT), minlength=size).astype(np.int64)

    def count(self, name: str) -> int:
        """How many samples of this expression were not null, over every batch fed."""
        return int(self.counts[self._position[name]])

    def mean(self, name: str) -> float | None:
        """The exact mean of this expression over every non-null sample fed; None with no sample, NaN or
        infinite when such a sample was fed."""
        index = self._position[name]
        count = int(self.counts[index])
        if count == 0:
            return None
        plus, minus = bool(self.plus_inf[index]), bool(self.minus_inf[index])
        if self.nan[index] or (plus and minus):
            return math.nan
        if plus or minus:
            return math.inf if plus else -math.inf
        span = slice(index * _EXPONENTS, (index + 1) * _EXPONENTS)
        high, low = self.high[span], self.low[span]
        used = np.flatnonzero(high | low)
        if not len(used):
            return 0.0
        base = int(used[0])
        total = sum(((int(high[b]) << _SPLIT) + int(low[b])) << (int(b) - base) for b in used)
        power = base - _SHIFT
        try:
            return (total << power) / count if power >= 0 else total / (count << -power)
        except OverflowError:
            return math.inf if total > 0 else -math.inf

    def _extreme(self, kind: str, name: str) -> float | None:
        if self._extremes is None:
            return None
        if self._extreme_row is None:
            self._extreme_row = self._extremes.row(0)
        # Columns: every name's minimum, then every name's maximum (add's select).
        value = self._extreme_row[self._position[name] + (len(self.names) if kind == "max" else 0)]
        return None if value is None else float(value)

    def min(self, name: str) -> float | None:
        """The smallest value of this expression over every batch fed; None when there was none."""
        return self._extreme("min", name)

    def max(self, name: str) -> float | None:
        """The largest value of this expression over every batch fed; None when there was none."""
        return self._extreme("max", name)


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
    """What the counter log says about the run over its collection window, in one pass: per-instance tables,
    maxima, host and volume figures, damage and problems. With no sample inside the window the tables stay
    empty and an error problem says so."""
    window = collection_window(run, log)
    columns = _instance_columns(log)
    wanted = sorted({col for per in columns.values() for col in per.values()})
    cmap = counter_map()
    sample_bounds = cmap.ranges["default"]  # instance counters: latencies, rates, sizes
    host = _host_expressions(log)
    volumes = _volume_expressions(log)
    reads = _transactional_expressions(columns, lambda c: _valid(pl.col(c), sample_bounds))
    reads |= _totals_if_transactional_only(columns, lambda c: _valid(pl.col(c), sample_bounds))
    host_bounds = {label: cmap.bounds(cmap.host_counters[label][1]) for label in host}
    # The instance counters' columns share their bounds: one expression each over all of them.
    every = pl.col(wanted)
    valid = [Each("col|", wanted, _valid(every, sample_bounds))] if wanted else []
    damage = [
        Each("out|", wanted, _out_of_range(every, sample_bounds)),
        Each("miss|", wanted, every.is_null()),
    ]
    expressions = {f"host|{label}": _valid(e, host_bounds[label]) for label, e in host.items()}
    expressions |= {f"vol|{key}": _valid(e, sample_bounds) for key, e in volumes.items()}
    expressions |= reads
    checks = {f"out|host|{label}": _out_of_range(e, host_bounds[label]) for label, e in host.items()}
    # One pass over the log (the samples held, or read again from the file batch by batch).
    reduced = Reduction(expressions, each=valid)
    tally = _Tally(checks, each=damage if wanted else [])
    for batch in _window_batches(log, window, tally):
        reduced.add(batch)

    result = CounterMetrics(
        window=window,
        samples_in_window=reduced.rows,
        coverage=tally.coverage,
        time_basis="utc" if log.utc_offset_minutes is not None else "local",
    )
    _account_for_damage(result, log, window, columns, tally)
    if window.origin == "whole log":
        result.problems.append(
            Problem(
                log.source,
                "collection window unknown (no report or test log): all samples used, including "
                "any taken while Jetstress was attaining prerequisites",
                severity="warning",
            )
        )
    if reduced.rows == 0:
        result.problems.append(
            Problem(log.source, "no samples inside the collection window", severity="error", doubt=True)
        )
        return result

    readings = _reads_readings(reduced, columns)
    composition = _decide_composition(run, readings)
    if composition.severity != "note" or composition.reading != INCLUDES_MAINTENANCE:
        # The expected reading, confirmed by the report, is no news: saying so for every log
        # filled the document's evidence notes. Any other outcome is stated.
        result.problems.append(Problem(log.source, composition.statement, severity=composition.severity))
    transactional = InstanceTable(TableKind.TRANSACTIONAL, source=log.source)
    bdm = InstanceTable(TableKind.BACKGROUND_MAINTENANCE, source=log.source)
    replication = InstanceTable(TableKind.LOG_REPLICATION, source=log.source)
    total = InstanceTable(TableKind.TOTAL, source=log.source)
    for name in sorted(columns, key=_natural_key):
        per = columns[name]
        means = {key: v for key, col in per.items() if (v := reduced.mean(f"col|{col}")) is not None}
        result.maxima[name] = {
            key: v for key, col in per.items() if (v := reduced.max(f"col|{col}")) is not None
        }
        result.latency_samples[name] = {
            key: reduced.count(f"col|{col}") for key, col in per.items() if key in m.LATENCY_METRICS
        }
        chosen = readings.get(name, {}).get(composition.reading, {})
        total_values = {k: v for k, v in means.items() if k not in (m.BDM_READS, m.BDM_READ_BYTES)}
        total_values.update(chosen.get("total", {}))
        total.rows.append(InstanceRow(name, total_values))
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
        trans.update(chosen.get("transactional", {}))
        transactional.rows.append(InstanceRow(name, trans))
    _drop_impossible_figures(result, log.source, (transactional, bdm, replication, total))
    for table in (transactional, bdm, replication, total):
        if table.rows and any(row.values for row in table.rows):
            result.tables[table.kind] = table
    result.host = [
        HostCounter(x, reduced.mean(f"host|{x}"), reduced.min(f"host|{x}"), reduced.max(f"host|{x}"))
        for x in host
    ]
    for key in volumes:
        value = reduced.mean(f"vol|{key}")
        if value is not None:
            volume, metric = key.rsplit("|", 1)
            result.volumes.setdefault(volume, {})[metric] = value
    return result


def _transactional_expressions(
    columns: dict[str, dict[str, str]], sample: Callable[[str], pl.Expr]
) -> dict[str, pl.Expr]:
    """Per-sample transactional reads (total less maintenance) and their bytes per read;
    ``sample`` gives a column's valid samples (damage left out)."""
    exprs: dict[str, pl.Expr] = {}
    for name, per in columns.items():
        if m.DB_READS not in per:
            continue
        total_reads = sample(per[m.DB_READS])
        bdm_reads = sample(per[m.BDM_READS]) if m.BDM_READS in per else pl.lit(0.0)
        trans_reads = total_reads - bdm_reads
        exprs[f"reads|{name}"] = trans_reads
        if m.DB_READ_BYTES in per:
            bdm_bytes = (
                sample(per[m.BDM_READS]) * sample(per[m.BDM_READ_BYTES])
                if m.BDM_READS in per and m.BDM_READ_BYTES in per
                else pl.lit(0.0)
            )
            per_sample = (total_reads * sample(per[m.DB_READ_BYTES]) - bdm_bytes) / trans_reads
            exprs[f"bytes|{name}"] = pl.when(trans_reads > 0).then(per_sample)
    return exprs


def _account_for_damage(
    result: CounterMetrics,
    log: CounterLog,
    window: Window,
    columns: dict[str, dict[str, str]],
    tally: _Tally,
) -> None:
    """Per instance and metric, the samples of the window that are damage: outside the
    counter's physical range, not numbers (the reader left them empty), or missing. The log's
    first row is exempt when every instance counter is empty there: averages and rates need a
    sample before them, so Windows writes none. Problems say what was found and where."""
    counts = tally.counts
    first = tally.first_row
    wanted = [col for per in columns.values() for col in per.values()]
    first_is_blank = (
        first is not None
        and all(first.get(col) is None for col in wanted)
        and (window.start is None or first["timestamp"] >= window.start)
        and (window.end is None or first["timestamp"] <= window.end)
    )
    out_total = missing_total = 0
    example = ""
    for name, per in columns.items():
        for metric, col in per.items():
            out = counts.get(f"out|{col}", 0)
            # Cells the reader could not read are empty in the samples, so they count here, and
            # only inside the window, like every other kind of damage.
            missing = counts.get(f"miss|{col}", 0) - (1 if first_is_blank else 0)
            if out and not example:
                example = f"{name} {metric}"
            out_total += out
            missing_total += missing
            if out + missing:
                result.damaged.setdefault(name, {})[metric] = out + missing
            lost = log.damage.lost_maxima.get(col)
            if lost is not None:
                result.lost_maxima.setdefault(name, {})[metric] = lost
    for label in _host_expressions(log):
        out = counts.get(f"out|host|{label}", 0)
        if out:
            result.host_damaged[label] = out
            result.problems.append(
                Problem(
                    log.source,
                    f"{out} sample(s) of {label} outside the counter's physical range: damage, left out",
                    severity="error",
                    lost=out,
                )
            )
    if out_total:
        result.problems.append(
            Problem(
                log.source,
                f"{out_total} instance counter sample(s) in the collection window are outside their "
                f"physical range (negative, or not finite; first: {example}): damage, left out of "
                "every figure",
                severity="error",
                lost=out_total,
            )
        )
    if missing_total:
        result.problems.append(
            Problem(
                log.source,
                f"{missing_total} instance counter sample(s) in the collection window are missing or "
                "unreadable (empty cells after the log's first row): the figures rest on the samples "
                "present",
                severity="error",
                lost=missing_total,
            )
        )
    result.samples_lost = log.damage.rows_lost
    result.backward_stamps = tally.backward
    if tally.backward:
        result.problems.append(
            Problem(
                log.source,
                f"{tally.backward} time stamp(s) earlier than the sample before them (first: "
                f"{tally.first_backward}); the collection window may hold the wrong samples",
                severity="error",
                doubt=True,
            )
        )


def _totals_if_transactional_only(
    columns: dict[str, dict[str, str]], sample: Callable[[str], pl.Expr]
) -> dict[str, pl.Expr]:
    """The Total I/O reads and read size per sample if ``I/O Database Reads/sec`` counts
    transactional reads only (the other reading of the counters: total = it + maintenance)."""
    exprs: dict[str, pl.Expr] = {}
    for name, per in columns.items():
        if m.DB_READS not in per or m.BDM_READS not in per:
            continue
        reads, bdm = sample(per[m.DB_READS]), sample(per[m.BDM_READS])
        exprs[f"treads|{name}"] = reads + bdm
        if m.DB_READ_BYTES in per and m.BDM_READ_BYTES in per:
            moved = reads * sample(per[m.DB_READ_BYTES]) + bdm * sample(per[m.BDM_READ_BYTES])
            exprs[f"tbytes|{name}"] = pl.when((reads + bdm) > 0).then(moved / (reads + bdm))
    return exprs


INCLUDES_MAINTENANCE = "includes maintenance reads"
TRANSACTIONAL_ONLY = "transactional reads only"
_Reading = dict[str, dict[str, float]]  # "transactional" | "total" -> metric -> mean


def _reads_readings(reduced: Reduction, columns: dict[str, dict[str, str]]) -> dict[str, dict[str, _Reading]]:
    """Per instance, the database reads of the Transactional and Total tables under each reading
    of ``I/O Database Reads/sec``: it includes background-maintenance reads (transactional = it
    less maintenance; facts §3, inferred from seed 000) or it counts transactional reads only
    (total = it plus maintenance). Without maintenance counters both readings are the same."""
    out: dict[str, dict[str, _Reading]] = {}
    for name, per in columns.items():
        if m.DB_READS not in per:
            continue
        raw_reads = reduced.mean(f"col|{per[m.DB_READS]}")
        raw_bytes = reduced.mean(f"col|{per[m.DB_READ_BYTES]}") if m.DB_READ_BYTES in per else None
        includes: _Reading = {"transactional": {}, "total": {}}
        only: _Reading = {"transactional": {}, "total": {}}
        _put(includes["transactional"], m.DB_READS, reduced.mean(f"reads|{name}"))
        _put(includes["total"], m.DB_READS, raw_reads)
        _put(only["transactional"], m.DB_READS, raw_reads)
        if m.DB_READ_BYTES in per:
            _put(includes["transactional"], m.DB_READ_BYTES, reduced.mean(f"bytes|{name}"))
            _put(includes["total"], m.DB_READ_BYTES, raw_bytes)
            _put(only["transactional"], m.DB_READ_BYTES, raw_bytes)
        if m.BDM_READS in per:
            _put(only["total"], m.DB_READS, reduced.mean(f"treads|{name}"))
            if m.DB_READ_BYTES in per and m.BDM_READ_BYTES in per:
                _put(only["total"], m.DB_READ_BYTES, reduced.mean(f"tbytes|{name}"))
        else:
            only = includes
        out[name] = {INCLUDES_MAINTENANCE: includes, TRANSACTIONAL_ONLY: only}
    return out


def _put(values: dict[str, float], key: str, value: float | None) -> None:
    if value is not None:
        values[key] = value


@dataclass(frozen=True)
class Composition:
    """How ``I/O Database Reads/sec`` was read (with or without maintenance reads), the statement of what was
    decided and why, and its severity."""

    reading: str  # INCLUDES_MAINTENANCE or TRANSACTIONAL_ONLY
    statement: str  # what was decided, on what basis; both readings when undecided
    severity: str = "note"


_AGREES = 0.02  # a reading agrees with the report when the sums differ by at most 2 %


def _decide_composition(run: Run, readings: dict[str, dict[str, _Reading]]) -> Composition:
    """Which reading of ``I/O Database Reads/sec`` the log follows: by comparing the log's
    transactional reads with the report's when the run has a report, else by which reading
    gives figures that can exist; undecided, the inferred reading is used and both are shown."""
    sums = {
        reading: sum(r[reading]["transactional"].get(m.DB_READS, 0.0) for r in readings.values())
        for reading in (INCLUDES_MAINTENANCE, TRANSACTIONAL_ONLY)
    }
    if abs(sums[INCLUDES_MAINTENANCE] - sums[TRANSACTIONAL_ONLY]) <= 1e-9 * max(1.0, *sums.values()):
        return Composition(INCLUDES_MAINTENANCE, "the counter log has no maintenance reads to tell apart")
    report = run.tables.get(TableKind.TRANSACTIONAL)
    printed = [row.values.get(m.DB_READS) for row in report.rows] if report else []
    if printed and all(v is not None for v in printed):
        target = sum(v for v in printed if v is not None)
        gaps = {reading: abs(total - target) / max(abs(target), 1e-12) for reading, total in sums.items()}
        best = min(gaps, key=lambda reading: gaps[reading])
        other = TRANSACTIONAL_ONLY if best == INCLUDES_MAINTENANCE else INCLUDES_MAINTENANCE
        if gaps[best] <= _AGREES and gaps[other] > 2 * gaps[best]:
            return Composition(
                best,
                f"the counter log's I/O Database Reads/sec {best}: its transactional reads "
                f"({sums[best]:.3f}/s in all) agree with the report's ({target:.3f}/s) within "
                f"{gaps[best]:.2%}; the other reading is {gaps[other]:.2%} off",
            )
    impossible = {
        reading
        for reading in sums
        if any(v < 0 for r in readings.values() for v in r[reading]["transactional"].values())
    }
    if len(impossible) == 1:
        (bad,) = impossible
        good = TRANSACTIONAL_ONLY if bad == INCLUDES_MAINTENANCE else INCLUDES_MAINTENANCE
        return Composition(
            good,
            f"the counter log's I/O Database Reads/sec is read as {good}: read as {bad}, "
            "transactional reads or read sizes would be negative",
            severity="warning",
        )
    return Composition(
        INCLUDES_MAINTENANCE,
        "cannot tell whether the counter log's I/O Database Reads/sec includes maintenance reads: "
        f"transactional reads are {sums[INCLUDES_MAINTENANCE]:.3f}/s in all if it does (the reading "
        f"used, inferred from published reports), {sums[TRANSACTIONAL_ONLY]:.3f}/s if it does not",
        severity="warning",
    )


def _drop_impossible_figures(result: CounterMetrics, source: str, tables: tuple[InstanceTable, ...]) -> None:
    """A mean that cannot exist (negative, not finite) is never a figure: it is left out and
    named, whatever produced it."""
    for table in tables:
        for row in table.rows:
            for key, value in list(row.values.items()):
                if not math.isfinite(value) or value < 0:
                    del row.values[key]
                    result.problems.append(
                        Problem(
                            source,
                            f"{table.kind.value} {row.instance} {key}: {value!r} cannot exist; not used",
                            severity="error",
                            lost=1,
                        )
                    )


def _host_expressions(log: CounterLog) -> dict[str, pl.Expr]:
    """Host counter label -> its per-sample value (several instances summed)."""
    # The counter definitions (hundreds) are matched in Python: a Polars filter per host counter
    # cost about 1 ms each in plan overhead alone, a tenth of a catalog worker's time per run.
    rows = list(_first_columns(log.counters).select("object", "counter", "instance", "column").iter_rows())
    exprs: dict[str, pl.Expr] = {}
    for label, (obj, counter, instance) in counter_map().host_counters.items():
        cols = [
            column
            for o, c, i, column in rows
            if o is not None
            and c is not None
            and o.lower() == obj.lower()
            and c.lower() == counter.lower()
            and _instance_matches(i, instance)
        ]
        if cols:
            exprs[label] = pl.sum_horizontal([pl.col(c) for c in cols]) if len(cols) > 1 else pl.col(cols[0])
    return exprs


def _instance_matches(instance: str | None, wanted: str) -> bool:
    """``wanted`` "*": any instance but _Total; a name: that instance; empty: no instance."""
    if wanted == "*":
        return instance is not None and instance.lower() != "_total"
    if wanted:
        return instance is not None and instance.lower() == wanted.lower()
    return instance is None


def _volume_expressions(log: CounterLog) -> dict[str, pl.Expr]:
    """``volume|metric`` -> the per-sample value in report units."""
    vmap = counter_map().volume_counters
    counters = _first_columns(log.counters).filter(
        (pl.col("object").str.to_lowercase() == "logicaldisk")
        & pl.col("instance").is_not_null()
        & (pl.col("instance").str.to_lowercase() != "_total")
    )
    exprs: dict[str, pl.Expr] = {}
    for row in counters.iter_rows(named=True):
        spec = vmap.get(_fold(row["counter"]))
        if spec is None:
            continue
        key, scale = spec
        exprs.setdefault(f"{row['instance']}|{key}", pl.col(row["column"]) * scale)
    return exprs


def _natural_key(name: str) -> list[object]:
    parts: list[object] = []
    for chunk in name.replace(".", " . ").split():
        # Instance names come from the logs: ASCII digits only ('²'.isdigit() is true, int('²') fails).
        number = ascii_int(chunk)
        parts.append((0, number) if number is not None else (1, chunk))
    return parts


def instance_series(run: Run, log: CounterLog, metric: str, max_points: int = 400) -> pl.DataFrame:
    """One metric over the collection window: ``timestamp`` (UTC) plus one column per instance,
    averaged into at most ``max_points`` equal time buckets (charts need shape, not 5,760 points)."""
    columns = {
        name: cols[metric]
        for name, cols in sorted(_instance_columns(log).items(), key=lambda kv: _natural_key(kv[0]))
        if metric in cols
    }
    selection = ["timestamp", *(pl.col(col).alias(name) for name, col in columns.items())]
    window = collection_window(run, log)
    if log.streamed:
        return _streamed_series(log, window, selection, max_points)
    key = (metric, max_points, window)
    kept = log.chart_series.get(key)
    if kept is not None:
        return kept
    if log.released:
        raise RuntimeError(
            f"{log.source}: its counter samples were released after the charts were worked out, "
            f"and no series of {metric} at {max_points} points was kept"
        )
    frame = _in_window(log.samples, window).select(selection)
    if frame.height > max_points and frame.height >= 2:
        frame = _buckets(frame, _bucket_width(frame["timestamp"][0], frame["timestamp"][-1], max_points))
    log.chart_series[key] = frame
    return frame


def _bucket_width(first: Any, last: Any, max_points: int) -> timedelta:
    span: timedelta = last - first
    return max(span / max_points, timedelta(seconds=1))


def _buckets(frame: pl.DataFrame, every: timedelta) -> pl.DataFrame:
    return (
        frame.sort("timestamp").group_by_dynamic("timestamp", every=every).agg(pl.exclude("timestamp").mean())
    )


def _streamed_series(log: CounterLog, window: Window, selection: list[Any], max_points: int) -> pl.DataFrame:
    """:func:`instance_series` from a log read batch by batch: a first pass finds the window's
    first and last samples, a second sums each bucket (the buckets ``group_by_dynamic`` makes:
    time stamps truncated to the bucket width)."""
    rows, first, last = 0, None, None
    kept: list[pl.DataFrame] = []
    for batch in _window_batches(log, window):
        stamps = batch.get_column("timestamp")
        first = stamps[0] if first is None else first
        last = stamps[-1]
        rows += batch.height
        if rows <= max_points:
            kept.append(batch.select(selection))
    if rows <= max_points or rows < 2:
        return pl.concat(kept) if kept else next(log.sample_batches()).head(0).select(selection)
    every = _bucket_width(first, last, max_points)
    parts = []
    for batch in _window_batches(log, window):
        frame = batch.select(selection).with_columns(pl.col("timestamp").dt.truncate(every))
        values = frame.columns[1:]
        parts.append(
            frame.group_by("timestamp").agg(
                [pl.col(c).sum().alias(f"sum|{c}") for c in values]
                + [pl.col(c).count().alias(f"n|{c}") for c in values]
            )
        )
        names = values
    summed = pl.concat(parts).group_by("timestamp").agg(pl.exclude("timestamp").sum()).sort("timestamp")
    return summed.select(
        "timestamp",
        *(pl.when(pl.col(f"n|{c}") > 0).then(pl.col(f"sum|{c}") / pl.col(f"n|{c}")).alias(c) for c in names),
    )
