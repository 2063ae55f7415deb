"""Capacity and IOPS sizing of an Exchange 2010 mailbox design: the 004 paper's §6 model.

Pure: :func:`size` turns a :class:`~esrp_report.model.sizing.SizingSpec` into a
:class:`~esrp_report.model.sizing.SizingResult` in which every figure carries its unit, its
formula and the formula worked with the numbers. The inputs, the results and the paper's
published constants (``sizing.toml``) are data, in :mod:`esrp_report.model.sizing`.

Units are the paper's: 1 GB = 1,000 MB and 1 MB = 1,000 KB (decimal). With ``round_up`` (the
default) a figure that a later formula uses is rounded up to a whole unit first, at the points
where the paper's worked example rounds; end figures are exact. docs/sizing.md has the
formulas, the units and every place where the paper's printed figures differ from them.
"""

from __future__ import annotations

import math
from dataclasses import fields, replace
from typing import Any

from esrp_report.model import Manifest, Problem
from esrp_report.model.sizing import (
    KB_PER_MB,
    MB_PER_GB,
    Figure,
    SizingError,
    SizingResult,
    SizingSpec,
    sizing_data,
)

GROUPS = {
    "mailboxes": "Mailboxes",
    "mailbox": "Space per mailbox",
    "capacity": "Capacity",
    "logs": "Transaction logs",
    "performance": "Performance",
    "memory": "Memory",
}


def _n(value: float) -> str:
    """A number for a worked formula: thousands separators, at most four decimals."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.4f}".rstrip("0").rstrip(".")


def _tidy(value: float) -> float:
    """Drop float noise: a value within a few ulps of a short decimal (1,380.0000000000002) is that
    decimal; any other value keeps its full precision."""
    for decimals in range(10):
        short = round(value, decimals)
        if abs(value - short) <= 8 * math.ulp(value):
            return short + 0.0  # no -0.0
    return value


def _whole_up(value: float) -> float:
    """Round up to a whole unit, ignoring float noise below 1e-6 (1,380.0000000001 stays 1,380)."""
    return float(math.ceil(round(value, 6)))


def _finite(key: str, value: float, label: str) -> None:
    """Every input can be finite and the figures still overflow (a billion users of a 1e300 MB
    quota); such a figure cannot be rounded, printed or used, so the design is refused here."""
    if not math.isfinite(value):
        raise SizingError(
            key,
            f"{label} comes to {value} with these inputs: beyond what the arithmetic can hold",
            "inputs of a real design",
        )


class _Sheet:
    """Collects the figures in order; ``group`` is the heading of the figures added next."""

    def __init__(self, round_up: bool) -> None:
        self.round_up = round_up
        self.group = ""
        self.figures: list[Figure] = []

    def add(self, key: str, value: float, unit: str, *, label: str, formula: str, worked: str) -> float:
        _finite(key, value, label)
        value = _tidy(value)
        worked = f"{worked} = {_n(value)} {unit}"
        self.figures.append(Figure(key, self.group, label, value, unit, formula, worked))
        return value

    def carried(
        self, key: str, value: float, unit: str, *, whole: str, label: str, formula: str, worked: str
    ) -> float:
        """A figure later formulas use: rounded up to a whole ``whole`` when round_up is on."""
        _finite(key, value, label)
        if not self.round_up:
            return self.add(key, value, unit, label=label, formula=formula, worked=worked)
        if _whole_up(value) != _tidy(value):
            worked = f"{worked} = {_n(round(value, 4))}, rounded up to whole {whole}"
        return self.add(key, _whole_up(value), unit, label=label, formula=formula, worked=worked)


def size(spec: SizingSpec) -> SizingResult:
    """Every figure of the §6 model for ``spec``; see docs/sizing.md."""
    d = sizing_data()
    s = spec
    sheet = _Sheet(s.round_up)
    add, carried = sheet.add, sheet.carried
    notes: list[str] = []
    dag = s.dag_copies > 1
    n_db = s.databases

    sheet.group = "mailboxes"
    planned = add(
        "planned_mailboxes",
        _whole_up(s.users * (1 + s.growth_percent / 100)),
        "mailboxes",
        label="Mailboxes planned (users with growth)",
        formula="users × (1 + growth), rounded up to whole mailboxes",
        worked=f"{_n(s.users)} × (1 + {_n(s.growth_percent)} %)",
    )
    add(
        "mailboxes_per_database",
        planned / n_db,
        "mailboxes",
        label="Mailboxes per database",
        formula="planned mailboxes ÷ databases",
        worked=f"{_n(planned)} ÷ {n_db}",
    )
    add(
        "passive_copies",
        n_db * (s.dag_copies - 1),
        "copies",
        label="Passive database copies",
        formula="databases × (copies per database − 1)",
        worked=f"{n_db} × ({s.dag_copies} − 1)",
    )

    sheet.group = "mailbox"
    quota = f"{_n(s.mailbox_quota_mb)} MB"
    dumpster = add(
        "dumpster",
        s.messages_per_day * s.message_size_kb * s.deleted_item_retention_days / KB_PER_MB,
        "MB",
        label="Dumpster (recoverable items)",
        formula="messages per day × average message size × deleted item retention",
        worked=f"{_n(s.messages_per_day)} × {_n(s.message_size_kb)} KB × "
        f"{_n(s.deleted_item_retention_days)} days",
    )
    sir_share, cal_share = d.single_item_recovery_share, d.calendar_logging_share
    sir = add(
        "single_item_recovery",
        s.mailbox_quota_mb * sir_share if s.single_item_recovery else 0.0,
        "MB",
        label="Single item recovery",
        formula=f"mailbox quota × {_n(sir_share)} (0 when off)",
        worked=f"{quota} × {_n(sir_share)}" if s.single_item_recovery else "off",
    )
    calendar = add(
        "calendar_logging",
        s.mailbox_quota_mb * cal_share if s.calendar_logging else 0.0,
        "MB",
        label="Calendar logging",
        formula=f"mailbox quota × {_n(cal_share)} (0 when off)",
        worked=f"{quota} × {_n(cal_share)}" if s.calendar_logging else "off",
    )
    delta = carried(
        "dumpster_delta",
        dumpster + sir + calendar,
        "MB",
        whole="MB",
        label="Dumpster delta",
        formula="dumpster + single item recovery + calendar logging",
        worked=f"{_n(dumpster)} + {_n(sir)} + {_n(calendar)} MB",
    )
    white = carried(
        "white_space",
        s.messages_per_day * s.message_size_kb / KB_PER_MB,
        "MB",
        whole="MB",
        label="White space",
        formula="messages per day × average message size",
        worked=f"{_n(s.messages_per_day)} × {_n(s.message_size_kb)} KB",
    )
    per_mailbox = add(
        "mailbox_size",
        s.mailbox_quota_mb + delta + white,
        "MB",
        label="Mailbox size in the database",
        formula="mailbox quota + dumpster delta + white space",
        worked=f"{_n(s.mailbox_quota_mb)} + {_n(delta)} + {_n(white)} MB",
    )

    sheet.group = "capacity"
    database = carried(
        "database_size",
        planned * per_mailbox / MB_PER_GB,
        "GB",
        whole="GB",
        label="Mailbox databases",
        formula="planned mailboxes × mailbox size in the database",
        worked=f"{_n(planned)} × {_n(per_mailbox)} MB",
    )
    add(
        "database_size_per_database",
        database / n_db,
        "GB",
        label="Database size, each",
        formula="mailbox databases ÷ databases",
        worked=f"{_n(database)} GB ÷ {n_db}",
    )

    sheet.group = "logs"
    factor = d.size_factor(s.message_size_kb) or 1.0  # validate() guarantees a factor
    formula_logs = d.log_overhead_factor * s.messages_per_day * d.base_message_kb * factor / KB_PER_MB
    formula_logs /= d.log_file_mb
    logs_per_mailbox = carried(
        "logs_per_mailbox_per_day",
        formula_logs,
        "logs",
        whole="logs",
        label="Logs per mailbox per day",
        formula=f"{_n(d.log_overhead_factor)} × messages per day × {_n(d.base_message_kb)} KB "
        f"× message size factor ÷ log file size",
        worked=f"{_n(d.log_overhead_factor)} × {_n(s.messages_per_day)} × {_n(d.base_message_kb)} KB × "
        f"{_n(factor)} ÷ {_n(d.log_file_mb)} MB",
    )
    logs_per_day = add(
        "logs_per_day",
        planned * logs_per_mailbox,
        "logs",
        label="Logs per day",
        formula="planned mailboxes × logs per mailbox per day",
        worked=f"{_n(planned)} × {_n(logs_per_mailbox)}",
    )
    table_logs = d.table_logs(s.messages_per_day, s.message_size_kb)
    if table_logs is not None:
        by_table = add(
            "logs_per_day_by_table",
            planned * table_logs,
            "logs",
            label="Logs per day by Microsoft's table (reference)",
            formula="planned mailboxes × logs per mailbox per day from the table",
            worked=f"{_n(planned)} × {_n(table_logs)}",
        )
        if not math.isclose(by_table, logs_per_day):
            notes.append(
                f"Microsoft's table gives {_n(table_logs)} logs per mailbox per day for "
                f"{_n(s.messages_per_day)} messages of {_n(s.message_size_kb)} KB; the "
                f"{_n(d.log_overhead_factor)} formula in decimal units gives {_n(round(formula_logs, 4))}. "
                f"The capacity follows the formula, as the paper does: {_n(logs_per_day)} logs per day, "
                f"{(logs_per_day / by_table - 1) * 100:+.1f} % against the table's {_n(by_table)}."
            )

    sheet.group = "capacity"
    logs = carried(
        "log_capacity",
        logs_per_day * d.log_file_mb * s.log_retention_days / MB_PER_GB,
        "GB",
        whole="GB",
        label="Transaction logs",
        formula="logs per day × log file size × log retention",
        worked=f"{_n(logs_per_day)} × {_n(d.log_file_mb)} MB × {_n(s.log_retention_days)} days",
    )
    add(
        "log_capacity_per_database",
        logs / n_db,
        "GB",
        label="Transaction logs, each database",
        formula="transaction logs ÷ databases",
        worked=f"{_n(logs)} GB ÷ {n_db}",
    )
    catalog = carried(
        "search_catalog",
        d.search_catalog_share * database,
        "GB",
        whole="GB",
        label="Search catalog (content index)",
        formula=f"{_n(d.search_catalog_share)} × mailbox databases",
        worked=f"{_n(d.search_catalog_share)} × {_n(database)} GB",
    )
    add(
        "search_catalog_per_database",
        catalog / n_db,
        "GB",
        label="Search catalog, each database",
        formula="search catalog ÷ databases",
        worked=f"{_n(catalog)} GB ÷ {n_db}",
    )
    total = add(
        "total_capacity",
        database + logs + catalog,
        "GB",
        label="Total capacity",
        formula="mailbox databases + transaction logs + search catalog",
        worked=f"{_n(database)} + {_n(logs)} + {_n(catalog)} GB",
    )
    volume = add(
        "volume_size",
        total / n_db * (1 + s.growth_overhead_percent / 100),
        "GB",
        label="Volume size (one per database)",
        formula="total capacity ÷ databases × (1 + growth overhead)",
        worked=f"{_n(total)} GB ÷ {n_db} × (1 + {_n(s.growth_overhead_percent)} %)",
    )
    add(
        "all_volumes",
        volume * n_db,
        "GB",
        label="All volumes",
        formula="volume size × databases",
        worked=f"{_n(volume)} GB × {n_db}",
    )

    sheet.group = "performance"
    per_mailbox_iops = add(
        "iops_per_mailbox",
        s.iops_per_mailbox * (s.dag_iops_factor if dag else 1.0),
        "IOPS/mailbox",
        label="Transactional IOPS per mailbox" + (" in the DAG" if dag else ""),
        formula="IOPS per mailbox × DAG factor (with more than one copy)",
        worked=f"{_n(s.iops_per_mailbox)} × {_n(s.dag_iops_factor)}"
        if dag
        else f"{_n(s.iops_per_mailbox)}, no DAG",
    )
    transactional = carried(
        "transactional_iops",
        planned * per_mailbox_iops,
        "IOPS",
        whole="IOPS",
        label="Transactional IOPS",
        formula="planned mailboxes × IOPS per mailbox",
        worked=f"{_n(planned)} × {_n(per_mailbox_iops)}",
    )
    log_pc, maint_pc = s.log_iops_percent, s.maintenance_iops_percent
    equated = carried(
        "total_iops_from_transactional",
        transactional * 100 / (100 - log_pc - maint_pc),
        "IOPS",
        whole="IOPS",
        label="Total IOPS equated from transactional",
        formula="transactional IOPS ÷ (1 − log share − maintenance share)",
        worked=f"{_n(transactional)} ÷ (1 − {_n(log_pc)} % − {_n(maint_pc)} %)",
    )
    dag_log = s.dag_log_iops_percent if dag else 0.0
    log_iops = carried(
        "log_iops",
        equated * (log_pc + dag_log + s.layout_log_iops_percent) / 100,
        "IOPS",
        whole="IOPS",
        label="Log IOPS",
        formula="total IOPS equated × (log share + DAG adjustment + layout adjustment)",
        worked=f"{_n(equated)} × ({_n(log_pc)} + {_n(dag_log)} + {_n(s.layout_log_iops_percent)}) %",
    )
    differential = carried(
        "differential_iops",
        equated * (maint_pc + s.layout_maintenance_iops_percent) / 100,
        "IOPS",
        whole="IOPS",
        label="Differential IOPS (maintenance)",
        formula="total IOPS equated × (maintenance share + layout adjustment)",
        worked=f"{_n(equated)} × ({_n(maint_pc)} + {_n(s.layout_maintenance_iops_percent)}) %",
    )
    add(
        "total_iops",
        transactional + log_iops + differential,
        "IOPS",
        label="Total IOPS",
        formula="transactional + log + differential IOPS",
        worked=f"{_n(transactional)} + {_n(log_iops)} + {_n(differential)}",
    )

    sheet.group = "memory"
    from_table = s.minimum_memory_gb is None
    minimum = add(
        "minimum_memory",
        (d.minimum_memory_gb(n_db) or 0.0) if s.minimum_memory_gb is None else s.minimum_memory_gb,
        "GB",
        label="Minimum memory before the cache",
        formula="by the number of databases (or stated)",
        worked=f"{n_db} databases, by the table" if from_table else "as stated",
    )
    cache_gb = add(
        "database_cache",
        planned * s.cache_per_user_mb / MB_PER_GB,
        "GB",
        label="Database cache",
        formula="planned mailboxes × cache per mailbox",
        worked=f"{_n(planned)} × {_n(s.cache_per_user_mb)} MB",
    )
    add(
        "memory",
        minimum + cache_gb,
        "GB",
        label="Memory",
        formula="minimum memory + database cache",
        worked=f"{_n(minimum)} + {_n(cache_gb)} GB",
    )
    if s.round_up:
        notes.append(
            "Figures that later formulas use are rounded up to whole units (MB per mailbox, logs, GB, "
            "IOPS), as the paper's worked example does; round_up = false gives exact arithmetic."
        )
    return SizingResult(s, tuple(sheet.figures), tuple(notes))


def spec_values(spec: SizingSpec) -> dict[str, Any]:
    """The inputs by name, as a spec file states them."""
    return {f.name: getattr(spec, f.name) for f in fields(spec)}


def design_profile(result: SizingResult) -> dict[str, float | int]:
    """What a solution manifest's [profile] takes from the sizing (docs/manifest.md)."""
    return {
        "mailboxes": result.planned_mailboxes,
        "iops_per_mailbox": result.value("iops_per_mailbox"),
        "mailbox_size_gb": result.spec.mailbox_quota_mb / MB_PER_GB,
        "copies_per_database": result.spec.dag_copies,
    }


def sized_manifest(manifest: Manifest) -> Manifest:
    """The manifest with its [sizing] worked out, if it has one: the profile keys the sizing gives
    are taken from it; a stated key that disagrees is reported, and the sizing's value is the one
    the document uses (it is what the targets must follow)."""
    if manifest.sizing_spec is None:
        return manifest
    result = size(manifest.sizing_spec)
    sized = design_profile(result)
    problems = list(manifest.problems)
    for key, value in sized.items():
        stated = manifest.stated_profile.get(key)
        if stated is not None and not math.isclose(stated, value, rel_tol=1e-9):
            problems.append(
                Problem(
                    manifest.path,
                    f"{stated:g} stated, but the [sizing] gives {value:g}; "
                    "the document's targets use the sizing's value",
                    location=f"[profile] {key}",
                    severity="error",
                )
            )
    profile = replace(
        manifest.profile,
        mailboxes=int(sized["mailboxes"]),
        iops_per_mailbox=float(sized["iops_per_mailbox"]),
        mailbox_size_gb=float(sized["mailbox_size_gb"]),
        copies_per_database=int(sized["copies_per_database"]),
    )
    return replace(manifest, profile=profile, sizing=result, problems=problems)
