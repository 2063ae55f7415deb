"""Ingest folders and archives into a catalog: scan and hash here, parse in parallel, write here.

Parsing runs in local worker processes, or on a Dask cluster (``dask_address``); the writer is
always this process, so the catalog has one writer whatever does the parsing. What parses a
folder is given by the caller (``parse``: app/catalog.py reads it through the evidence pipeline
every command uses): the catalog stores what it returns and does not read evidence itself.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import duckdb

from esrp_report.catalog import archive as arc
from esrp_report.catalog import lifeline
from esrp_report.catalog.parse import FolderJob, ParsedFolder
from esrp_report.catalog.store import DATABASE, STAGING, Catalog, CatalogError
from esrp_report.model.errors import InputError

Progress = Callable[[str, int, int], None]  # (what, done, total)

# Folders recorded per transaction: a commit per folder was most of the time of many small
# folders; a kill loses at most this many records, which the next ingest redoes.
RECORD_BATCH = 1000
# Folders sent to a worker in one job, up to this many or this many bytes of files. One folder
# per job left the workers waiting on the round trip (0.3 ms of parsing for a one-file folder,
# over 1 ms in all); the byte bound keeps a batch of big folders to one folder's memory.
JOB_FOLDERS = 64
JOB_BYTES = 8 << 20


@dataclass
class IngestReport:
    """What an ingest did: files and bytes hashed, folders and archives parsed or unchanged, runs added,
    replaced or unchanged, refusals and parse failures."""

    files: int = 0
    bytes_hashed: int = 0
    folders: int = 0
    folders_unchanged: int = 0
    folders_parsed: int = 0
    archives: int = 0
    archives_unchanged: int = 0
    runs_added: int = 0
    runs_replaced: int = 0
    runs_unchanged: int = 0
    file_errors: int = 0
    refusals: list[arc.Refusal] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # folders whose parsing raised (a bug)

    def as_dict(self) -> dict[str, Any]:
        """The report as a plain dict for --json, refusals as {source, reason}."""
        out = {k: v for k, v in self.__dict__.items() if k not in ("refusals", "failures")}
        out["refusals"] = [{"source": r.source, "reason": r.reason} for r in self.refusals]
        out["failures"] = list(self.failures)
        return out


Outcome = ParsedFolder | str  # a parsed folder, or why its parsing raised (a bug)
# What parses one folder: a module-level function, so that it pickles to a worker by name.
Parse = Callable[[FolderJob], ParsedFolder]


def parse_batch(parse: Parse, jobs: tuple[FolderJob, ...]) -> list[Outcome]:
    """Parse several folders in one worker job; one folder's failure costs only that folder.

    A failure comes back as text: an exception may not survive pickling back to the parent.
    """
    out: list[Outcome] = []
    for job in jobs:
        try:
            out.append(parse(job))
        except Exception as exc:  # a bug must not stop the batch; reported per folder
            out.append(f"{type(exc).__name__}: {exc}")
    return out


class _Pool(Protocol):
    def submit(self, jobs: tuple[FolderJob, ...]) -> Any: ...
    def completed(self, futures: list[Any]) -> Iterator[Any]: ...
    def result(self, future: Any) -> list[Outcome]: ...


class _Done:
    """A result computed on the spot, standing in for a future (hashed by identity)."""

    def __init__(self, value: list[Outcome]) -> None:
        self.value = value


class _InProcess:
    def __init__(self, parse: Parse) -> None:
        self.parse = parse

    def submit(self, jobs: tuple[FolderJob, ...]) -> Any:
        return _Done(parse_batch(self.parse, jobs))

    def completed(self, futures: list[Any]) -> Iterator[Any]:
        return iter(futures)

    def result(self, future: Any) -> list[Outcome]:
        return future.value  # type: ignore[no-any-return]


class _Local:
    def __init__(self, executor: ProcessPoolExecutor, parse: Parse) -> None:
        self.executor = executor
        self.parse = parse

    def submit(self, jobs: tuple[FolderJob, ...]) -> Any:
        return self.executor.submit(parse_batch, self.parse, jobs)

    def completed(self, futures: list[Any]) -> Iterator[Any]:
        return as_completed(futures)

    def result(self, future: Any) -> list[Outcome]:
        return future.result()  # type: ignore[no-any-return]


class _Dask:
    def __init__(self, client: Any, parse: Parse) -> None:
        self.client = client
        self.parse = parse

    def submit(self, jobs: tuple[FolderJob, ...]) -> Any:
        return self.client.submit(parse_batch, self.parse, jobs, pure=False)

    def completed(self, futures: list[Any]) -> Iterator[Any]:
        from distributed import as_completed as dask_completed  # noqa: PLC0415 - see _pool

        return iter(dask_completed(futures))  # type: ignore[no-untyped-call]

    def result(self, future: Any) -> list[Outcome]:
        return future.result()  # type: ignore[no-any-return]


@contextmanager
def _pool(jobs: int, dask_address: str | None, parse: Parse) -> Iterator[_Pool]:
    if dask_address:
        # Imported only when asked for: distributed takes about a second to import.
        from distributed import Client  # noqa: PLC0415

        try:
            client = Client(dask_address, timeout="20s")  # type: ignore[no-untyped-call]
        except (OSError, TimeoutError) as exc:
            raise InputError(dask_address, f"cannot reach the Dask scheduler: {exc}") from exc
        try:
            yield _Dask(client, parse)
        finally:
            client.close()  # type: ignore[no-untyped-call]
        return
    if jobs <= 1:
        yield _InProcess(parse)
        return
    context = multiprocessing.get_context("spawn")  # the parent runs Polars' threads: no fork
    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=lifeline.tie_to_parent, initargs=(os.getpid(),)
    ) as executor:
        yield _Local(executor, parse)


def _scan(
    inputs: Iterable[Path], catalog: Catalog, limits: arc.Limits, report: IngestReport
) -> tuple[list[arc.ResultsFolder], dict[str, arc.Archive]]:
    """Walk the inputs, extract changed archives, hash every file."""
    found: list[tuple[str, Path]] = []
    archives: dict[str, arc.Archive] = {}
    labels: dict[str, Path] = {}
    staging = catalog.root / STAGING
    for given in inputs:
        if not given.exists() and not given.is_symlink():
            raise InputError(given, "no such file or folder")
        label = given.resolve().name if given.name in ("", ".", "..") else given.name
        if label in labels and labels[label] != given.resolve():
            raise InputError(
                given, f"two inputs are both named {label!r}; the catalog names runs by input name"
            )
        labels[label] = given.resolve()
        files, zips, refused = arc.walk(given, label)
        report.refusals.extend(refused)
        for r in refused:
            catalog.record_refusal(r.source, r.reason)
        found.extend(files)
        for zip_path in zips:
            name = label if zip_path == given else f"{label}/{zip_path.relative_to(given).as_posix()}"
            try:
                size = zip_path.stat().st_size
                digest = arc.sha256_file(zip_path)
            except OSError as exc:  # unreadable: refused alone, the other inputs go on
                _refuse(catalog, report, name, f"cannot be read: {exc.strerror or exc}")
                continue
            report.archives += 1
            report.bytes_hashed += size
            if catalog.known_archive(name, digest):
                report.archives_unchanged += 1
                continue
            # Staged by name, not content: two archives with the same bytes must not share a folder.
            private = staging / hashlib.sha256(name.encode()).hexdigest()[:16]
            try:
                members = arc.extract_zip(zip_path, name, private, limits)
            except InputError as exc:  # every failure of one archive refuses that archive only
                _refuse(catalog, report, name, exc.detail + (f": {exc.found}" if exc.found else ""))
                shutil.rmtree(private, ignore_errors=True)
                continue
            catalog.clear_refusal(name)
            archives[name] = arc.Archive(name, size, digest)
            found.extend(members)
    paths = [p for _, p in found]
    digests = arc.hash_files(paths, threads=min(4, os.cpu_count() or 1))
    sized = []
    for (name, path), digest in zip(found, digests, strict=True):
        size = path.stat().st_size
        report.bytes_hashed += size
        sized.append((name, path, size, digest))
    report.files = len(sized)
    return arc.group_folders(sized), archives


def _refuse(catalog: Catalog, report: IngestReport, name: str, reason: str) -> None:
    report.refusals.append(arc.Refusal(name, reason))
    catalog.record_refusal(name, reason)


def ingest(
    inputs: Iterable[Path],
    catalog_dir: Path,
    *,
    parse: Parse,
    jobs: int | None = None,
    dask_address: str | None = None,
    limits: arc.Limits | None = None,
    progress: Progress | None = None,
) -> IngestReport:
    """Bring ``inputs`` (folders, files, ``.zip`` archives) into the catalog at ``catalog_dir``,
    each changed folder parsed by ``parse``."""
    report = IngestReport()
    try:
        return _ingest(
            inputs,
            catalog_dir,
            report,
            parse=parse,
            jobs=jobs,
            dask_address=dask_address,
            limits=limits,
            tell=progress,
        )
    except OSError as exc:
        raise _disk_fault(
            catalog_dir, exc.filename or catalog_dir, exc.strerror or str(exc), report
        ) from None
    except duckdb.Error as exc:
        if not _DISK_FAULT.search(str(exc)):
            raise
        raise _disk_fault(catalog_dir, catalog_dir / DATABASE, _first_line(exc), report) from None


# What DuckDB says when the disk refuses a write (it raises IOException, or TransactionException
# and FatalException when a commit's write fails); any other DuckDB error is a bug to see whole.
_DISK_FAULT = re.compile(
    r"No space left|Read-only file system|Permission denied|Disk quota|Input/output error|"
    r"No such file or directory|IO Error",
    re.IGNORECASE,
)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _disk_fault(catalog_dir: Path, path: str | Path, reason: str, report: IngestReport) -> CatalogError:
    """The disk refused a write or a file went away: one line naming where, and what was kept.
    Each run is stored in one transaction after its series file is in place (store.py), so the
    catalog holds whole runs only; the next ingest skips what was stored and redoes the rest."""
    stored = report.runs_added + report.runs_replaced
    return CatalogError(
        path,
        f"ingest stopped: {reason}; kept: the catalog {catalog_dir} as it was after the last whole run "
        f"stored ({stored:,} run(s) stored by this ingest before the fault, none half-written); "
        "run the same ingest again once the disk has room or the folder is writable: it resumes",
    )


def _ingest(
    inputs: Iterable[Path],
    catalog_dir: Path,
    report: IngestReport,
    *,
    parse: Parse,
    jobs: int | None,
    dask_address: str | None,
    limits: arc.Limits | None,
    tell: Progress | None,
) -> IngestReport:
    limits = limits or arc.Limits()
    jobs = jobs or os.cpu_count() or 1
    tell = tell or (lambda _what, _done, _total: None)
    with Catalog.open(catalog_dir, create=True) as catalog:
        try:
            folders, archives = _scan(list(inputs), catalog, limits, report)
            report.folders = len(folders)
            known = catalog.folder_fingerprints()
            changed = [f for f in folders if known.get(f.location) != f.fingerprint]
            del known
            report.folders_unchanged = len(folders) - len(changed)
            pending_by_archive = {
                name: sum(1 for f in changed if _inside(f.location, name)) for name in archives
            }
            tell("parse", 0, len(changed))
            records: list[tuple[str, str, int, list[dict[str, Any]]]] = []
            with _pool(jobs, dask_address, parse) as pool:
                for done, (folder, parsed) in enumerate(_parsed(pool, changed, jobs), start=1):
                    if isinstance(parsed, str):
                        report.failures.append(f"{folder.location}: {parsed}")
                        _forget(pending_by_archive, folder.location)
                        tell("parse", done, len(changed))
                        continue
                    records.append(_write(catalog, folder, parsed, report))
                    report.folders_parsed += 1
                    finished = _finish(pending_by_archive, folder.location)
                    if finished or len(records) >= RECORD_BATCH:
                        # An archive is recorded only after every folder of it is.
                        catalog.record_folders(records)
                        records.clear()
                    for name in finished:
                        a = archives[name]
                        catalog.record_archive(a.name, a.sha256, a.size)
                    tell("parse", done, len(changed))
            catalog.record_folders(records)
            for name, left in pending_by_archive.items():
                if left == 0 and name in archives:  # an archive with nothing new inside
                    catalog.record_archive(name, archives[name].sha256, archives[name].size)
        finally:
            shutil.rmtree(catalog.root / STAGING, ignore_errors=True)
    return report


def _inside(location: str, archive: str) -> bool:
    return location == archive or location.startswith(archive + "/")


def _finish(pending: dict[str, int], location: str) -> list[str]:
    done = []
    for name, left in pending.items():
        if _inside(location, name):
            pending[name] = left - 1
            if left == 1:
                done.append(name)
    return done


def _forget(pending: dict[str, int], location: str) -> None:
    """A folder of this archive failed: keep the archive unrecorded so the next ingest retries."""
    for name in pending:
        if _inside(location, name):
            pending[name] = -1_000_000


def _batches(folders: list[arc.ResultsFolder]) -> Iterator[list[arc.ResultsFolder]]:
    batch: list[arc.ResultsFolder] = []
    size = 0
    for folder in folders:
        batch.append(folder)
        size += sum(f.size for f in folder.files)
        if len(batch) >= JOB_FOLDERS or size >= JOB_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _parsed(
    pool: _Pool, folders: list[arc.ResultsFolder], jobs: int
) -> Iterator[tuple[arc.ResultsFolder, Outcome]]:
    """Parsed folders as they complete, with at most two batches per worker in flight (bounded
    memory: a batch holds one big folder or several small ones)."""
    window = max(2, 2 * jobs)
    queue = _batches(folders)
    in_flight: dict[Any, list[arc.ResultsFolder]] = {}

    def fill() -> None:
        while len(in_flight) < window:
            batch = next(queue, None)
            if batch is None:
                return
            job = tuple(
                FolderJob(f.location, tuple((s.name, str(s.path), s.sha256, s.size) for s in f.files))
                for f in batch
            )
            in_flight[pool.submit(job)] = batch

    fill()
    while in_flight:
        future = next(iter(pool.completed(list(in_flight))))
        batch = in_flight.pop(future)
        try:
            outcomes = pool.result(future)
        except Exception as exc:  # the worker itself failed: each folder of the batch reported
            outcomes = [f"{type(exc).__name__}: {exc}"] * len(batch)
        fill()  # the workers go on while this batch is written
        yield from zip(batch, outcomes, strict=True)


def _write(
    catalog: Catalog, folder: arc.ResultsFolder, parsed: ParsedFolder, report: IngestReport
) -> tuple[str, str, int, list[dict[str, Any]]]:
    """Store the folder's runs now; return the folder's record, written later in a batch (after
    its runs, so a folder is never recorded without them)."""
    for run in parsed.runs:
        outcome = catalog.put_run(run)
        if outcome == "added":
            report.runs_added += 1
        elif outcome == "replaced":
            report.runs_replaced += 1
        else:
            report.runs_unchanged += 1
    report.file_errors += sum(1 for p in parsed.problems if p["severity"] == "error")
    return folder.location, folder.fingerprint, len(parsed.runs), parsed.problems
