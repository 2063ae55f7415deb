"""The catalog on disk: one DuckDB database and counter series as Parquet, partitioned by run.

Layout of a catalog folder::

    catalog.duckdb                     runs, sources, verdicts, ... (see migrations.py)
    series/run_id=<id>/<content>.parquet   one file per run version: timestamp, counter_id, value
    staging/                           archives being read (private; emptied on every open)

Crash safety: a run's Parquet file is written under a temporary name and renamed before the
transaction that records the run; the transaction replaces every row of the run at once. A crash
leaves at most an unreferenced file, which the next open deletes, never a half run.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from esrp_report.catalog.migrations import LATEST, MIGRATIONS
from esrp_report.catalog.parse import SERIES_SCHEMA, ParsedRun, StreamedSeries
from esrp_report.model.errors import InputError

DATABASE = "catalog.duckdb"
SERIES = "series"
STAGING = "staging"

RUN_TABLES = ("sources", "instance_values", "verdicts", "problems", "counters")


class CatalogError(InputError):
    """A catalog folder that cannot be opened or used as asked."""


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [row[0] for row in con.execute(f"DESCRIBE {table}").fetchall()]


class _Columns(dict[str, list[str]]):
    """Each table's column names, read once per open catalog (the schema changes only by migration)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        super().__init__()
        self.con = con

    def __missing__(self, table: str) -> list[str]:
        self[table] = _columns(self.con, table)
        return self[table]


def make_folder(path: Path, what: str, option: str) -> None:
    """Make the folder a user named (``what``, given with ``option``), parents too; a file in its
    place or on its way, or no permission, is a CatalogError that says which option to change."""
    if path.exists() and not path.is_dir():
        raise CatalogError(path, f"is a file, not a folder: name {what} with {option}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file on the way, or no permission
        raise CatalogError(
            path, f"cannot make {what}: {exc.strerror or exc}; name another with {option}"
        ) from None


class Catalog:
    """An open catalog folder: the DuckDB connection and the counter series beside it. Use as a context
    manager, or close it."""

    def __init__(self, root: Path, con: duckdb.DuckDBPyConnection) -> None:
        self.root = root
        self.con = con
        self.columns = _Columns(con)

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, root: Path, *, create: bool = False, read_only: bool = False) -> Catalog:
        """Open the catalog in ``root``; opened for writing, it is migrated to the latest schema and cleared
        of what a crash left, and with ``create`` a missing one is made. Raises CatalogError when there is no
        catalog and ``create`` is false, when it cannot be opened, or when a read-only one needs migrating."""
        database = root / DATABASE
        if not database.exists():
            if not create:
                raise CatalogError(root, "no catalog here", expected=f"a folder holding {DATABASE}")
            make_folder(root, "the catalog folder", "--catalog")
        try:
            con = duckdb.connect(str(database), read_only=read_only)
        except duckdb.Error as exc:
            raise CatalogError(database, f"cannot open the catalog: {exc}") from exc
        catalog = cls(root, con)
        if read_only:
            if catalog.version() < LATEST:
                raise CatalogError(
                    database,
                    f"catalog schema is version {catalog.version()}; "
                    f"run 'catalog ingest' to migrate it to {LATEST}",
                )
        else:
            catalog.migrate()
            catalog.collect_garbage()
        return catalog

    def close(self) -> None:
        """Close the database connection."""
        self.con.close()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _one(self, sql: str, params: list[Any] | None = None) -> tuple[Any, ...] | None:
        rows = self.con.execute(sql, params or []).fetchall()
        return rows[0] if rows else None

    def frame(self, sql: str, params: list[Any] | None = None) -> pl.DataFrame:
        """A query's result as a Polars frame, through Arrow (no row-by-row conversion)."""
        frame = self.con.sql(sql, params=params or None).pl()
        assert isinstance(frame, pl.DataFrame)
        return frame

    def version(self) -> int:
        """The catalog's schema version: the last migration applied, 0 for a new database."""
        exists = self._one(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'"
        )
        if not exists or not exists[0]:
            return 0
        row = self._one("SELECT max(version) FROM schema_migrations")
        return int(row[0]) if row and row[0] is not None else 0

    def migrate(self, up_to: int = LATEST) -> list[int]:
        """Apply the missing migrations up to ``up_to``, each in one transaction."""
        self.con.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMP NOT NULL)"
        )
        applied: list[int] = []
        current = self.version()
        for migration in MIGRATIONS:
            if migration.version <= current or migration.version > up_to:
                continue
            with self.transaction():
                self.con.execute(migration.sql)
                self.con.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?, now()::TIMESTAMP)",
                    [migration.version, migration.name],
                )
            applied.append(migration.version)
        return applied

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A transaction around the block: committed when it ends, rolled back and re-raised on any
        exception."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            # A write the disk refused may have ended the transaction (or the database) already;
            # the rollback's own error would then hide the one that says why.
            with suppress(duckdb.Error):
                self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    def collect_garbage(self) -> int:
        """Delete what a crash can leave: staged archives, temporary and unreferenced series files."""
        shutil.rmtree(self.root / STAGING, ignore_errors=True)
        series_root = self.root / SERIES
        if not series_root.exists():
            return 0
        referenced = {
            row[0]
            for row in self.con.execute(
                "SELECT series_file FROM runs WHERE series_file IS NOT NULL"
            ).fetchall()
        }
        removed = 0
        for path in sorted(series_root.rglob("*")):
            if path.is_file() and path.relative_to(self.root).as_posix() not in referenced:
                path.unlink()
                removed += 1
        for folder in sorted(series_root.iterdir()):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        return removed

    # ------------------------------------------------------------------ writing

    def known_archive(self, name: str, sha256: str) -> bool:
        """Is this archive recorded with this SHA-256 (unchanged since it was last ingested)?"""
        row = self._one("SELECT sha256 FROM archives WHERE name = ?", [name])
        return row is not None and row[0] == sha256

    def record_archive(self, name: str, sha256: str, size: int) -> None:
        """Record an archive's name, SHA-256 and size, replacing an earlier record of the name."""
        with self.transaction():
            self.con.execute("DELETE FROM archives WHERE name = ?", [name])
            self.con.execute("INSERT INTO archives VALUES (?, ?, ?)", [name, sha256, size])

    def folder_fingerprints(self) -> dict[str, str]:
        """Every recorded folder's fingerprint, in one query: asking per folder costs a DuckDB
        round trip each (0.35 ms; 17 s for 50,000 folders)."""
        return dict(self.con.execute("SELECT location, fingerprint FROM folders").fetchall())

    def record_folders(self, records: list[tuple[str, str, int, list[dict[str, Any]]]]) -> None:
        """Record many folders (location, fingerprint, runs, problems) in one transaction.

        One transaction per folder cost about 5 ms (a commit, three statements, an Arrow
        insert), most of 50,000 small folders' ingest time; batched, the cost is per batch.
        """
        if not records:
            return
        locations = pl.DataFrame({"location": [r[0] for r in records]}, schema={"location": pl.String()})
        folders = pl.DataFrame(
            {
                "location": [r[0] for r in records],
                "fingerprint": [r[1] for r in records],
                "runs": [r[2] for r in records],
            },
            schema={"location": pl.String(), "fingerprint": pl.String(), "runs": pl.Int64()},
        )
        problems = [{"run_id": None, **p} for r in records for p in r[3]]
        with self.transaction():
            self.con.register("recorded", locations.to_arrow())
            try:
                self.con.execute("DELETE FROM folders WHERE location IN (SELECT location FROM recorded)")
                self.con.execute(
                    "DELETE FROM problems WHERE run_id IS NULL"
                    " AND location IN (SELECT location FROM recorded)"
                )
            finally:
                self.con.unregister("recorded")
            self._insert_frame("folders", folders)
            self._insert_dicts("problems", problems)

    def record_refusal(self, source: str, reason: str) -> None:
        """Record that an input was refused and why, replacing an earlier refusal of it."""
        with self.transaction():
            self.con.execute("DELETE FROM refusals WHERE source = ?", [source])
            self.con.execute("INSERT INTO refusals VALUES (?, ?)", [source, reason])

    def clear_refusal(self, source: str) -> None:
        """Forget an earlier refusal of this input (it was read this time)."""
        self.con.execute("DELETE FROM refusals WHERE source = ?", [source])

    def run_version(self, run_id: str) -> tuple[str, str | None] | None:
        """The stored version of a run, (content SHA-256, series file or None), or None when the run is not
        catalogued."""
        row = self._one("SELECT content_sha256, series_file FROM runs WHERE run_id = ?", [run_id])
        return None if row is None else (row[0], row[1])

    def put_run(self, parsed: ParsedRun) -> str:
        """Store one run, replacing its earlier version. Returns 'added', 'replaced' or 'unchanged'."""
        run_id = parsed.run["run_id"]
        earlier = self.run_version(run_id)
        if earlier is not None and earlier[0] == parsed.run["content_sha256"]:
            return "unchanged"
        series_file = None
        if parsed.series is not None:
            series_file = self._write_series(run_id, parsed.run["content_sha256"], parsed.series)
        row = dict(parsed.run, series_file=series_file)
        with self.transaction():
            self.con.execute("DELETE FROM runs WHERE run_id = ?", [run_id])
            for table in RUN_TABLES:
                self.con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
            self._insert_dicts("runs", [row])
            self._insert_dicts("sources", parsed.sources)
            self._insert_frame("instance_values", parsed.instance_values)
            self._insert_dicts("verdicts", parsed.verdicts)
            self._insert_dicts("problems", parsed.problems)
            if parsed.counters is not None:
                self._insert_frame("counters", parsed.counters.with_columns(run_id=pl.lit(run_id)))
        if earlier is not None and earlier[1] and earlier[1] != series_file:
            (self.root / earlier[1]).unlink(missing_ok=True)
        return "added" if earlier is None else "replaced"

    def _write_series(self, run_id: str, content: str, series: pl.DataFrame | StreamedSeries) -> str:
        folder = self.root / SERIES / f"run_id={run_id}"
        folder.mkdir(parents=True, exist_ok=True)
        final = folder / f"{content[:16]}.parquet"
        temporary = folder / f".{content[:16]}.parquet.tmp"
        if isinstance(series, pl.DataFrame):
            series.write_parquet(temporary, compression="zstd", statistics=True)
        else:
            _write_streamed(temporary, series)
        with temporary.open("rb") as handle:
            os.fsync(handle.fileno())
        temporary.replace(final)
        return final.relative_to(self.root).as_posix()

    def _insert_dicts(self, table: str, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        columns = self.columns[table]
        frame = pl.DataFrame([{c: r.get(c) for c in columns} for r in rows], infer_schema_length=None)
        self._insert_frame(table, frame)

    def _insert_frame(self, table: str, frame: pl.DataFrame) -> None:
        if frame.height == 0:
            return
        columns = self.columns[table]
        self.con.register("incoming", frame.select(columns).to_arrow())
        try:
            self.con.execute(f"INSERT INTO {table} SELECT * FROM incoming")
        finally:
            self.con.unregister("incoming")


def _write_streamed(path: Path, series: StreamedSeries) -> None:
    """A streamed log's series written a batch at a time: one Parquet file, the rows in the order a
    whole write would give them, memory bounded by the batch."""
    import pyarrow.parquet as pq  # noqa: PLC0415 - only a log too large to hold needs it

    schema = pl.DataFrame(schema=SERIES_SCHEMA).to_arrow().schema
    with pq.ParquetWriter(path, schema, compression="zstd", write_statistics=True) as writer:
        for frame in series.frames():
            writer.write_table(frame.to_arrow().cast(schema))
