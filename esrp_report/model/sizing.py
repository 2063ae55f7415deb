"""The sizing model's data: a design's inputs (:class:`SizingSpec`, checked when made), the
figures it gives (:class:`SizingResult`) and the 004 paper's published constants and tables
(``sizing.toml``). The arithmetic is :func:`esrp_report.analysis.sizing.size`; docs/sizing.md
explains both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from functools import cache

from esrp_report.model.data import package_toml
from esrp_report.model.errors import EsrpError

KB_PER_MB = 1000.0
MB_PER_GB = 1000.0
UNITS = {
    "KB": "kilobyte, 1,000 bytes (as the paper: 200 × 75 KB × 14 = 210 MB)",
    "MB": "megabyte, 1,000 KB",
    "GB": "gigabyte, 1,000 MB (decimal, as the paper: 6,900 × 955 MB = 6,590 GB)",
    "IOPS": "I/O operations per second",
}


class SizingError(EsrpError):
    """An input of the sizing model is out of range; ``key`` names it."""

    def __init__(self, key: str, message: str, expected: str | None = None) -> None:
        self.key = key
        self.detail = message
        self.expected = expected
        super().__init__(f"{key}: {message}" + (f"; expected {expected}" if expected else ""))


# --------------------------------------------------------------------------- published data


@dataclass(frozen=True)
class SizingData:
    """The published constants and tables of ``sizing.toml``."""

    single_item_recovery_share: float
    calendar_logging_share: float
    search_catalog_share: float
    log_file_mb: float
    log_overhead_factor: float
    base_message_kb: float
    logs_per_mailbox: tuple[tuple[float, float], ...]  # (messages per day, logs) at base_message_kb
    message_size_factors: tuple[tuple[float, float], ...]  # (average message KB, factor)
    minimum_memory: tuple[tuple[int, float], ...]  # (up to this many databases, GB)

    def size_factor(self, kb: float) -> float | None:
        """The log generation factor of an average message size in KB (75 KB is 1.0); None for a size the
        table does not list."""
        return next((f for size, f in self.message_size_factors if math.isclose(size, kb)), None)

    def table_logs(self, messages_per_day: float, kb: float) -> float | None:
        """Logs per mailbox per day by Microsoft's table (the 75 KB row × the size factor)."""
        factor = self.size_factor(kb)
        logs = next((n for m, n in self.logs_per_mailbox if math.isclose(m, messages_per_day)), None)
        return None if factor is None or logs is None else logs * factor

    def minimum_memory_gb(self, databases: int) -> float | None:
        """The minimum memory in GB of a server holding this many databases, before the database cache; None
        beyond the table."""
        return next((gb for most, gb in sorted(self.minimum_memory) if databases <= most), None)


@cache
def sizing_data() -> SizingData:
    """The published constants and tables of the package's sizing.toml, read once and cached."""
    raw = package_toml("esrp_report.model", "sizing.toml")
    capacity, logs, memory = raw["capacity"], raw["logs"], raw["memory"]
    return SizingData(
        single_item_recovery_share=float(capacity["single_item_recovery_share"]),
        calendar_logging_share=float(capacity["calendar_logging_share"]),
        search_catalog_share=float(capacity["search_catalog_share"]),
        log_file_mb=float(logs["file_mb"]),
        log_overhead_factor=float(logs["overhead_factor"]),
        base_message_kb=float(logs["base_message_kb"]),
        logs_per_mailbox=tuple(
            (float(row["messages_per_day"]), float(row["logs"])) for row in logs["per_mailbox"]
        ),
        message_size_factors=tuple((float(row["kb"]), float(row["factor"])) for row in logs["message_size"]),
        minimum_memory=tuple((int(row["max_databases"]), float(row["gb"])) for row in memory["minimum"]),
    )


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class SizingSpec:
    """A design's sizing inputs. Defaults: the worked example of the 004 paper, §6.3."""

    users: int = 6000  # mailboxes today
    growth_percent: float = 15.0  # expected growth of the user count
    messages_per_day: float = 200.0  # sent and received per mailbox per day
    message_size_kb: float = 75.0  # average message size; a size of the logs table
    mailbox_quota_mb: float = 700.0
    deleted_item_retention_days: float = 14.0
    single_item_recovery: bool = True
    calendar_logging: bool = True
    databases: int = 7  # active mailbox databases (one volume each)
    dag_copies: int = 4  # copies of each database; 1 = no DAG
    log_retention_days: float = 3.0  # days of logs the volume holds
    growth_overhead_percent: float = 20.0  # free space on each volume over the planned data
    iops_per_mailbox: float = 0.24  # transactional IOPS per mailbox without a DAG
    dag_iops_factor: float = 0.20 / 0.24  # a mailbox in a DAG needs 0.20 where a standalone needs 0.24
    cache_per_user_mb: float = 12.0  # database cache per mailbox
    minimum_memory_gb: float | None = None  # None: by the number of databases (sizing.toml)
    log_iops_percent: float = 20.0  # log share of the total IOPS
    maintenance_iops_percent: float = 10.0  # maintenance (differential) share of the total IOPS
    layout_log_iops_percent: float = 2.0  # database layout adjustment of the log IOPS
    layout_maintenance_iops_percent: float = 3.0  # database layout adjustment of the differential IOPS
    dag_log_iops_percent: float = 3.0  # DAG replication adjustment of the log IOPS (with copies > 1)
    round_up: bool = True  # round figures that later formulas use up to whole units, as §6.3 does

    def __post_init__(self) -> None:
        validate(self)


INPUTS: dict[str, tuple[str, str]] = {
    "users": ("mailboxes", "mailboxes (users) today"),
    "growth_percent": ("%", "expected growth of the user count"),
    "messages_per_day": ("messages/mailbox/day", "messages sent and received per mailbox per day"),
    "message_size_kb": ("KB", "average message size (a size of the logs table: 75, 150 or 300)"),
    "mailbox_quota_mb": ("MB", "mailbox storage quota"),
    "deleted_item_retention_days": ("days", "deleted item retention"),
    "single_item_recovery": ("", "single item recovery enabled"),
    "calendar_logging": ("", "calendar version logging enabled"),
    "databases": ("databases", "active mailbox databases, one volume each"),
    "dag_copies": ("copies", "copies of each database (1 = no DAG)"),
    "log_retention_days": ("days", "days of transaction logs each volume holds"),
    "growth_overhead_percent": ("%", "space on each volume over the planned data"),
    "iops_per_mailbox": ("IOPS/mailbox", "transactional IOPS per mailbox without a DAG"),
    "dag_iops_factor": ("", "factor on the IOPS per mailbox in a DAG (0.20 / 0.24)"),
    "cache_per_user_mb": ("MB/mailbox", "database cache per mailbox"),
    "minimum_memory_gb": ("GB", "server memory before the database cache (default: by databases)"),
    "log_iops_percent": ("% of total IOPS", "transaction log share of the total IOPS"),
    "maintenance_iops_percent": ("% of total IOPS", "maintenance (differential) share of the total IOPS"),
    "layout_log_iops_percent": ("% of total IOPS", "database layout adjustment of the log IOPS"),
    "layout_maintenance_iops_percent": (
        "% of total IOPS",
        "database layout adjustment of the differential IOPS",
    ),
    "dag_log_iops_percent": ("% of total IOPS", "DAG replication adjustment of the log IOPS"),
    "round_up": ("", "round figures that later formulas use up to whole units, as the paper does"),
}
WHOLE = ("users", "databases", "dag_copies")
MAX_EXACT_WHOLE = 2**53  # the largest whole number every float between 0 and it holds exactly
FLAGS = ("single_item_recovery", "calendar_logging", "round_up")
POSITIVE = (
    "messages_per_day",
    "mailbox_quota_mb",
    "log_retention_days",
    "iops_per_mailbox",
    "dag_iops_factor",
)


def validate(spec: SizingSpec) -> None:
    """Raise :class:`SizingError` naming the first input out of range."""
    for f in fields(spec):
        value = getattr(spec, f.name)
        if f.name in FLAGS:
            if not isinstance(value, bool):
                raise SizingError(f.name, f"must be true or false, got {value!r}", "true or false")
            continue
        if value is None and f.name == "minimum_memory_gb":
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            expected = INPUTS[f.name][0] or "a number"
            raise SizingError(f.name, f"must be a finite number, got {value!r}", expected)
        # Checked before isfinite, which raises OverflowError for an int past the float range; the
        # arithmetic is in floats, exact for whole numbers up to 2**53 only.
        if isinstance(value, int) and abs(value) > MAX_EXACT_WHOLE:
            shown = f"{value}" if len(str(value)) <= 30 else f"a {len(str(abs(value)))}-digit number"
            raise SizingError(f.name, f"is too large: {shown}", f"at most {MAX_EXACT_WHOLE:,}")
        if not math.isfinite(value):
            expected = INPUTS[f.name][0] or "a number"
            raise SizingError(f.name, f"must be a finite number, got {value!r}", expected)
        if f.name in WHOLE:
            if not isinstance(value, int) or value < 1:
                message = f"must be a whole number of at least 1, got {value!r}"
                raise SizingError(f.name, message, "1, 2, 3 ...")
        elif f.name in POSITIVE:
            if value <= 0:
                raise SizingError(f.name, f"must be greater than 0, got {value!r}", "a number > 0")
        elif value < 0:
            raise SizingError(f.name, f"must not be negative, got {value!r}", "a number ≥ 0")
    if spec.single_item_recovery and spec.deleted_item_retention_days == 0:
        raise SizingError(
            "deleted_item_retention_days",
            "is 0 with single item recovery on: recovery keeps deleted items for the retention period",
            "a retention above 0 days, or single_item_recovery = false",
        )
    if spec.log_iops_percent + spec.maintenance_iops_percent >= 100:
        raise SizingError(
            "log_iops_percent",
            f"log ({spec.log_iops_percent:g} %) and maintenance ({spec.maintenance_iops_percent:g} %) "
            "shares leave no transactional share of the total IOPS",
            "the two shares summing to less than 100",
        )
    data = sizing_data()
    if data.size_factor(spec.message_size_kb) is None:
        known = ", ".join(f"{kb:g}" for kb, _ in data.message_size_factors)
        raise SizingError(
            "message_size_kb",
            f"unknown average message size {spec.message_size_kb:g} KB: the logs table has no factor for it",
            f"one of {known} KB",
        )
    if spec.minimum_memory_gb is None and data.minimum_memory_gb(spec.databases) is None:
        most = max(n for n, _ in data.minimum_memory)
        raise SizingError(
            "minimum_memory_gb",
            f"the memory table covers up to {most} databases, not {spec.databases}",
            "minimum_memory_gb stated for this many databases",
        )


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Figure:
    """One figure of a trend table: its key, the row label 004 prints, its unit, and the decimals of its
    absolute value."""

    key: str
    group: str
    label: str
    value: float
    unit: str
    formula: str  # in words
    worked: str  # with this design's numbers


@dataclass(frozen=True)
class SizingResult:
    """A sized design: the spec it came from, every figure, and notes."""

    spec: SizingSpec
    figures: tuple[Figure, ...]
    notes: tuple[str, ...]

    def figure(self, key: str) -> Figure:
        """The figure of this key; raises KeyError when there is none."""
        for f in self.figures:
            if f.key == key:
                return f
        raise KeyError(key)

    def value(self, key: str) -> float:
        """The value of the figure of this key, in its unit; raises KeyError when there is none."""
        return self.figure(key).value

    @property
    def planned_mailboxes(self) -> int:
        return int(self.value("planned_mailboxes"))


# The [profile] keys of a solution manifest that its [sizing] gives (analysis.sizing.design_profile),
# with the type each is stated in.
SIZED_PROFILE_KEYS: dict[str, type[float] | type[int]] = {
    "mailboxes": int,
    "iops_per_mailbox": float,
    "mailbox_size_gb": float,
    "copies_per_database": int,
}
