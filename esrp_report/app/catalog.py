"""The catalog commands' library API: ingest through the one evidence pipeline, and the queries.

A folder is parsed here (in a local worker or on Dask): its files read and merged by their
formats a file at a time (app/evidence.py), so one damaged file costs only itself; its runs
assembled and judged with the rules ``check`` uses; and the results handed to the catalog
(catalog/parse.py turns them into rows, catalog/ingest.py writes them). The catalog below reads
no evidence of its own.

The catalog's DuckDB is imported by the functions that need it, not with this module.
"""

from __future__ import annotations

# ruff: noqa: PLC0415 - imports inside functions: `esrp-report --help` must not load DuckDB
from datetime import date, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from esrp_report.app import evidence
from esrp_report.model.errors import InputError, UnsupportedFormatError

if TYPE_CHECKING:
    from collections.abc import Iterable

    import polars as pl

    from esrp_report.analysis.assess import RunAssessment
    from esrp_report.analysis.rules import Rule
    from esrp_report.catalog.archive import Limits
    from esrp_report.catalog.ingest import IngestReport, Progress
    from esrp_report.catalog.parse import FolderJob, ParsedFolder
    from esrp_report.catalog.query import RunDetail
    from esrp_report.model import Run

__all__ = ["export", "ingest", "list_runs", "parse_folder", "run_sql", "show_run"]


@cache
def _rules() -> list[Rule]:
    from esrp_report.analysis.rules import load_rules

    return load_rules()


def _assess(server: str, run: Run) -> RunAssessment:
    from esrp_report.analysis.assess import assess_run

    return assess_run(server, run, _rules())


def parse_folder(job: FolderJob) -> ParsedFolder:
    """Read one folder's files (each on its own), assemble and judge its runs, and return them as
    catalog rows with the folder's problems."""
    from esrp_report.catalog.parse import ParsedFolder, file_problem, folder_rows, problem_row

    parsed = ParsedFolder(job.location)
    whole = evidence.Evidence()
    for name, path, _digest, _size in job.files:
        try:
            fmt, one = evidence.read_file(Path(path))
        except UnsupportedFormatError as exc:  # a README or a screenshot beside the results
            parsed.problems.append(file_problem(job.location, name, "note", exc.detail))
            continue
        except InputError as exc:  # recorded under the name it is catalogued by
            parsed.problems.append(file_problem(job.location, name, "error", str(exc).replace(path, name)))
            continue
        evidence.merge(whole, fmt, one)
    if not whole.runs and not whole.result_xmls and not whole.counter_logs:
        parsed.problems.extend(problem_row(job.location, p) for p in whole.problems)
        return parsed  # no run to catalogue: a folder of notes or screenshots
    return folder_rows(job, parsed, evidence.assemble(whole, job.location), _assess)


def ingest(
    inputs: Iterable[Path],
    catalog_dir: Path,
    *,
    jobs: int | None = None,
    dask_address: str | None = None,
    limits: Limits | None = None,
    progress: Progress | None = None,
) -> IngestReport:
    """``catalog ingest``: bring ``inputs`` (folders, files, ``.zip`` archives) into the catalog
    at ``catalog_dir``, each changed folder parsed by :func:`parse_folder`."""
    from esrp_report.catalog import ingest as catalog_ingest

    return catalog_ingest.ingest(
        inputs,
        catalog_dir,
        parse=parse_folder,
        jobs=jobs,
        dask_address=dask_address,
        limits=limits,
        progress=progress,
    )


def list_runs(
    catalog_dir: Path,
    *,
    failed: bool = False,
    server: str | None = None,
    since: date | datetime | None = None,
    kind: str | None = None,
) -> pl.DataFrame:
    """``catalog list``: one row per run, oldest first."""
    from esrp_report.catalog import query
    from esrp_report.catalog.store import Catalog

    with Catalog.open(catalog_dir, read_only=True) as opened:
        return query.list_runs(opened, failed=failed, server=server, since=since, kind=kind)


def run_sql(catalog_dir: Path, statement: str) -> pl.DataFrame:
    """``catalog sql``: read-only SQL against the catalog (DuckDB dialect)."""
    from esrp_report.catalog import query

    return query.run_sql(catalog_dir, statement)


def export(catalog_dir: Path, out_dir: Path) -> list[Path]:
    """``catalog export``: every table as Parquet, with the counter series; the files written."""
    from esrp_report.catalog import query
    from esrp_report.catalog.store import Catalog

    with Catalog.open(catalog_dir, read_only=True) as opened:
        return query.export(opened, out_dir)


def show_run(catalog_dir: Path, ref: str) -> RunDetail:
    """``catalog show``: one run (a run id or a unique prefix) with its verdicts, tables, sources."""
    from esrp_report.catalog import query
    from esrp_report.catalog.store import Catalog

    with Catalog.open(catalog_dir, read_only=True) as opened:
        return query.show_run(opened, ref)
