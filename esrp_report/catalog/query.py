"""Read a catalog: list runs, show one, run SQL, export, and rebuild a run for comparisons."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
from duckdb.sqltypes import DuckDBPyType

from esrp_report.catalog.store import SERIES, Catalog, CatalogError, make_folder
from esrp_report.files.safe import refuse_overwriting
from esrp_report.model import ConfigProfile, InstanceRow, InstanceTable, Run, Sizing, TableKind, TestKind

LIST_COLUMNS = (
    "run_id",
    "design",
    "server",
    "kind",
    "test_start",
    "verdict",
    "overall_result",
    "target_iops",
    "achieved_iops",
    "db_read_latency_ms",
    "db_write_latency_ms",
    "log_write_latency_ms",
    "location",
)
EXPORT_TABLES = (
    "runs",
    "sources",
    "instance_values",
    "verdicts",
    "problems",
    "counters",
    "folders",
    "archives",
    "refusals",
    "schema_migrations",
)


def list_runs(
    catalog: Catalog,
    *,
    failed: bool = False,
    server: str | None = None,
    since: date | datetime | None = None,
    kind: str | None = None,
) -> pl.DataFrame:
    """One row per run, oldest first; ``server`` matches the machine name without case."""
    where: list[str] = []
    params: list[object] = []
    if failed:
        where.append("verdict = 'fail'")
    if server:
        where.append("lower(server) = lower(?)")
        params.append(server)
    if since is not None:
        where.append("test_start >= ?")
        params.append(since if isinstance(since, datetime) else datetime(since.year, since.month, since.day))
    if kind:
        where.append("lower(kind) = lower(?)")
        params.append(kind)
    sql = f"SELECT {', '.join(LIST_COLUMNS)} FROM runs"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY test_start NULLS LAST, design, server, kind, run_id"
    return catalog.frame(sql, params)


def resolve_run(catalog: Catalog, ref: str) -> str:
    """A run id from an id, a unique id prefix, or a run key."""
    rows = catalog.con.execute(
        "SELECT run_id FROM runs WHERE run_id = ? OR run_key = ? OR run_id LIKE ? ORDER BY run_id",
        [ref, ref, ref.replace("%", "").replace("_", "") + "%"],
    ).fetchall()
    exact = [r[0] for r in rows if r[0] == ref]
    if exact:
        return str(exact[0])
    if len(rows) == 1:
        return str(rows[0][0])
    if not rows:
        raise CatalogError(
            catalog.root, f"no run {ref!r} in the catalog", expected="a run id from 'catalog list'"
        )
    raise CatalogError(
        catalog.root, f"{ref!r} names {len(rows)} runs", expected="a longer id prefix", found=rows[0][0]
    )


@dataclass
class RunDetail:
    """One catalogued run as `catalog show` gives it: the run row, verdicts, instance values (a column per
    metric), problems and sources."""

    run: dict[str, object]
    verdicts: pl.DataFrame
    instances: pl.DataFrame  # one row per (origin, table, instance), one column per metric
    problems: pl.DataFrame
    sources: pl.DataFrame


def show_run(catalog: Catalog, ref: str) -> RunDetail:
    """The detail of the run an id, unique id prefix or run key names; raises CatalogError when it names no
    run or several."""
    run_id = resolve_run(catalog, ref)
    run = catalog.frame("SELECT * FROM runs WHERE run_id = ?", [run_id]).row(0, named=True)
    values = catalog.frame(
        "SELECT origin, table_kind, instance, metric, value FROM instance_values WHERE run_id = ?", [run_id]
    )
    instances = (
        values.pivot(on="metric", index=["origin", "table_kind", "instance"], values="value").sort(
            ["origin", "table_kind", "instance"]
        )
        if values.height
        else values
    )
    verdicts = catalog.frame(
        "SELECT rule_id, instance, status, value, operator, threshold, unit, evidence, reason FROM verdicts "
        "WHERE run_id = ? ORDER BY rule_id, instance NULLS FIRST",
        [run_id],
    )
    problems = catalog.frame(
        "SELECT severity, source, message, lost FROM problems WHERE run_id = ? "
        "ORDER BY severity, source, message",
        [run_id],
    )
    sources = catalog.frame(
        "SELECT name, role, size, sha256 FROM sources WHERE run_id = ? ORDER BY role, name", [run_id]
    )
    return RunDetail(run, verdicts, instances, problems, sources)


def run_sql(catalog_dir: Path, sql: str) -> pl.DataFrame:
    """Read-only SQL over the catalog's tables; the ``series`` view reads every run's counters.

    Only queries run (SELECT, DESCRIBE, SHOW, EXPLAIN); and the connection may read nothing
    outside the catalog's series folder, write no file and load no extension.
    """
    with Catalog.open(catalog_dir, read_only=True) as catalog:
        try:
            statements = catalog.con.extract_statements(sql)
        except duckdb.Error as exc:
            raise CatalogError(catalog_dir, f"SQL failed: {_one_line(exc)}") from exc
        refused = [s for s in statements if s.type not in _QUERY_STATEMENTS]
        if refused or not statements:
            kind = refused[0].type.name if refused else "nothing"
            raise CatalogError(
                catalog_dir, f"catalog sql is read-only: {kind} statements are refused", expected="a SELECT"
            )
        series = (catalog.root / SERIES).resolve()
        if series.exists() and any(series.iterdir()):
            pattern = (series / "*" / "*.parquet").as_posix().replace("'", "''")
            catalog.con.execute(
                "CREATE TEMP VIEW series AS SELECT * FROM "
                f"read_parquet('{pattern}', hive_partitioning = true)"
            )
        allowed = (series.as_posix() + "/").replace("'", "''")
        for setting in (
            f"SET allowed_directories = ['{allowed}']",
            "SET enable_external_access = false",
            "SET autoinstall_known_extensions = false",
            "SET autoload_known_extensions = false",
            "SET lock_configuration = true",
        ):
            catalog.con.execute(setting)
        try:
            return _shown(catalog.con.sql(sql))
        except duckdb.Error as exc:
            raise CatalogError(catalog_dir, f"SQL failed: {_one_line(exc)}") from exc


def _one_line(exc: duckdb.Error) -> str:
    """DuckDB's message on one line: its caret line points at a column only on its own line."""
    lines = [line.strip() for line in str(exc).splitlines()]
    return "; ".join(line for line in lines if line and set(line) != {"^"})


_QUERY_STATEMENTS = frozenset({duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN})

# DuckDB types whose every value Polars and Python hold as DuckDB printed it. The others are
# handed over as DuckDB's own text: Polars cannot import an INTERVAL or a UNION at all, and
# converting 'infinity'::TIMESTAMP, DATE '-infinity' or a year past 9999 to Python panicked in
# Polars (issue 37); BLOB, BIT and BIGNUM came out as Python bytes, UUID and MAP reshaped, a
# HUGEINT as a rounded float and the largest UHUGEINT as -1.
_AS_STORED = frozenset(
    {
        "boolean",
        "tinyint",
        "smallint",
        "integer",
        "bigint",
        "utinyint",
        "usmallint",
        "uinteger",
        "ubigint",
        "float",
        "double",
        "decimal",
        "varchar",
    }
)


def _as_stored(kind: DuckDBPyType) -> bool:
    if kind.id in _AS_STORED:
        return True
    if kind.id in ("list", "array", "struct"):
        # An ARRAY's children also hold its size, an int.
        types = [child for _name, child in kind.children if isinstance(child, DuckDBPyType)]
        return all(_as_stored(child) for child in types)
    return False


def _shown(result: duckdb.DuckDBPyRelation | None) -> pl.DataFrame:
    """A query's result with every column Polars can hold: a column of any other type (or
    holding one, in a list or struct) is cast to text by DuckDB, so every DuckDB type prints."""
    if result is None:  # a statement with no result set
        return pl.DataFrame()
    columns = []
    for position, (name, kind) in enumerate(zip(result.columns, result.types, strict=True), start=1):
        label = '"' + name.replace('"', '""') + '"'
        # By position: a query may name two columns alike (SELECT 1 AS a, 2 AS a).
        columns.append(
            f"#{position} AS {label}" if _as_stored(kind) else f"CAST(#{position} AS VARCHAR) AS {label}"
        )
    frame = result.project(", ".join(columns)).pl() if columns else result.pl()
    assert isinstance(frame, pl.DataFrame)
    return frame


def export(catalog: Catalog, out_dir: Path) -> list[Path]:
    """Every table as a Parquet file, and the counter series as they are stored. The catalog's own
    files are never written over (an export into the catalog's folder would copy its series onto
    themselves)."""
    series = catalog.root / SERIES
    copies = [out_dir / SERIES / path.relative_to(series) for path in series.rglob("*")]
    targets = [out_dir / f"{table}.parquet" for table in EXPORT_TABLES]
    refuse_overwriting([*targets, *copies], [catalog.root], option="--parquet")
    make_folder(out_dir, "the export folder", "--parquet")
    written = []
    for table in EXPORT_TABLES:
        target = out_dir / f"{table}.parquet"
        catalog.frame(f"SELECT * FROM {table}").write_parquet(target)
        written.append(target)
    if series.exists():
        shutil.copytree(series, out_dir / SERIES, dirs_exist_ok=True)
        written.append(out_dir / SERIES)
    return written


def load_runs(catalog: Catalog, ref: str, kind: str = "Performance") -> list[Run]:
    """A design's runs of one test kind (``ref`` names a design), or the one run ``ref`` names."""
    ids = catalog.frame(
        "SELECT run_id FROM runs WHERE design = ? AND kind = ? ORDER BY server, run_id", [ref, kind]
    )["run_id"].to_list()
    return [load_run(catalog, run_id) for run_id in ids] if ids else [load_run(catalog, ref)]


def load_run(catalog: Catalog, ref: str) -> Run:
    """The run as the model knows it, from what the catalog stored (report tables first)."""
    run_id = resolve_run(catalog, ref)
    row = catalog.frame("SELECT * FROM runs WHERE run_id = ?", [run_id]).row(0, named=True)
    values = catalog.con.execute(
        "SELECT origin, table_kind, instance, metric, value FROM instance_values WHERE run_id = ? "
        "ORDER BY origin DESC, table_kind, instance, metric",
        [run_id],
    ).fetchall()
    origin = "report" if any(v[0] == "report" for v in values) else "counter log"
    tables: dict[TableKind, InstanceTable] = {}
    rows: dict[tuple[str, str], InstanceRow] = {}
    for source, table_kind, instance, metric, value in values:
        if source != origin:
            continue
        kind = TableKind(table_kind)
        table = tables.setdefault(kind, InstanceTable(kind, source=origin))
        key = (table_kind, instance)
        if key not in rows:
            rows[key] = InstanceRow(instance)
            table.rows.append(rows[key])
        rows[key].values[metric] = value
    config = ConfigProfile(
        source=f"catalog:{run_id}", mailbox_count=row["mailboxes"], mailbox_iops=row["iops_per_mailbox"]
    )
    return Run(
        kind=TestKind(row["kind"]),
        machine=row["server"],
        sources=[f"catalog:{run_id}"],
        overall_result=row["overall_result"],
        jetstress_version=row["jetstress_version"],
        ese_version=row["ese_version"],
        operating_system=row["operating_system"],
        test_start=row["test_start"],
        test_end=row["test_end"],
        sizing=Sizing(achieved_iops=row["achieved_iops"], target_iops=row["target_iops"]),
        tables=tables,
        config=config,
    )


def contents(catalog_dir: Path) -> dict[str, Any]:
    """Everything a catalog holds, in a canonical order, to compare two catalogs (the migration
    clock excepted): every table's rows, and per stored series its rows, value sum and first stamp."""
    out: dict[str, Any] = {}
    with Catalog.open(catalog_dir, read_only=True) as catalog:
        for table in EXPORT_TABLES:
            frame = catalog.frame(f"SELECT * FROM {table}")
            if table == "schema_migrations":
                frame = frame.drop("applied_at")
            out[table] = sorted(frame.rows(), key=repr)
        stored = catalog.frame("SELECT run_id, series_file FROM runs WHERE series_file IS NOT NULL").rows()
    for run_id, series_file in stored:
        series = pl.read_parquet(catalog_dir / series_file)
        out[f"series:{run_id}"] = (series.height, series["value"].sum(), series["timestamp"].min())
    root = catalog_dir / SERIES
    out["series files"] = (
        sorted(p.relative_to(catalog_dir).as_posix() for p in root.rglob("*")) if root.exists() else []
    )
    return out
