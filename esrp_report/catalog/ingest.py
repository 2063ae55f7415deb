"""Ingest folders and archives into a catalog: scan and hash here, parse in parallel, write here.

Parsing runs in local worker processes, or on a Dask cluster (``dask_address``); the writer is
always this process, so the catalog has one writer whatever does the parsing.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from esrp_report.catalog import archive as arc
from esrp_report.catalog.parse import FolderJob, ParsedFolder, parse_folder
from esrp_report.catalog.store import STAGING, Catalog
from esrp_report.errors import InputError

Progress = Callable[[str, int, int], None]  # (what, done, total)


@dataclass
class IngestReport:
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
        out = {k: v for k, v in self.__dict__.items() if k not in ("refusals", "failures")}
        out["refusals"] = [{"source": r.source, "reason": r.reason} for r in self.refusals]
        out["failures"] = list(self.failures)
        return out


class _Pool(Protocol):
    def submit(self, job: FolderJob) -> Any: ...
    def completed(self, futures: list[Any]) -> Iterator[Any]: ...
    def result(self, future: Any) -> ParsedFolder: ...


class _Done:
    """A result computed on the spot, standing in for a future (hashed by identity)."""

    def __init__(self, value: ParsedFolder | Exception) -> None:
        self.value = value


class _InProcess:
    def submit(self, job: FolderJob) -> Any:
        try:
            return _Done(parse_folder(job))
        except Exception as exc:  # a bug must not stop the batch; reported per folder
            return _Done(exc)

    def completed(self, futures: list[Any]) -> Iterator[Any]:
        return iter(futures)

    def result(self, future: Any) -> ParsedFolder:
        if isinstance(future.value, Exception):
            raise future.value
        return future.value  # type: ignore[no-any-return]


class _Local:
    def __init__(self, executor: ProcessPoolExecutor) -> None:
        self.executor = executor

    def submit(self, job: FolderJob) -> Any:
        return self.executor.submit(parse_folder, job)

    def completed(self, futures: list[Any]) -> Iterator[Any]:
        return as_completed(futures)

    def result(self, future: Any) -> ParsedFolder:
        return future.result()  # type: ignore[no-any-return]


class _Dask:
    def __init__(self, client: Any) -> None:
        self.client = client

    def submit(self, job: FolderJob) -> Any:
        return self.client.submit(parse_folder, job, pure=False)

    def completed(self, futures: list[Any]) -> Iterator[Any]:
        from distributed import as_completed as dask_completed  # noqa: PLC0415 - see _pool

        return iter(dask_completed(futures))  # type: ignore[no-untyped-call]

    def result(self, future: Any) -> ParsedFolder:
        return future.result()  # type: ignore[no-any-return]


@contextmanager
def _pool(jobs: int, dask_address: str | None) -> Iterator[_Pool]:
    if dask_address:
        # Imported only when asked for: distributed takes about a second to import.
        from distributed import Client  # noqa: PLC0415

        try:
            client = Client(dask_address, timeout="20s")  # type: ignore[no-untyped-call]
        except (OSError, TimeoutError) as exc:
            raise InputError(dask_address, f"cannot reach the Dask scheduler: {exc}") from exc
        try:
            yield _Dask(client)
        finally:
            client.close()  # type: ignore[no-untyped-call]
        return
    if jobs <= 1:
        yield _InProcess()
        return
    context = multiprocessing.get_context("spawn")  # the parent runs Polars' threads: no fork
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as executor:
        yield _Local(executor)


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
            size = zip_path.stat().st_size
            digest = arc.sha256_file(zip_path)
            report.archives += 1
            report.bytes_hashed += size
            if catalog.known_archive(name, digest):
                report.archives_unchanged += 1
                continue
            # Staged by name, not content: two archives with the same bytes must not share a folder.
            private = staging / hashlib.sha256(name.encode()).hexdigest()[:16]
            try:
                members = arc.extract_zip(zip_path, name, private, limits)
            except InputError as exc:
                report.refusals.append(
                    arc.Refusal(name, exc.detail + (f": {exc.found}" if exc.found else ""))
                )
                catalog.record_refusal(name, report.refusals[-1].reason)
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


def ingest(
    inputs: Iterable[Path],
    catalog_dir: Path,
    *,
    jobs: int | None = None,
    dask_address: str | None = None,
    limits: arc.Limits | None = None,
    progress: Progress | None = None,
) -> IngestReport:
    """Bring ``inputs`` (folders, files, ``.zip`` archives) into the catalog at ``catalog_dir``."""
    report = IngestReport()
    limits = limits or arc.Limits()
    jobs = jobs or os.cpu_count() or 1
    tell = progress or (lambda _what, _done, _total: None)
    with Catalog.open(catalog_dir, create=True) as catalog:
        try:
            folders, archives = _scan(list(inputs), catalog, limits, report)
            report.folders = len(folders)
            changed = [f for f in folders if not catalog.known_folder(f.location, f.fingerprint)]
            report.folders_unchanged = len(folders) - len(changed)
            pending_by_archive = {
                name: sum(1 for f in changed if _inside(f.location, name)) for name in archives
            }
            tell("parse", 0, len(changed))
            with _pool(jobs, dask_address) as pool:
                for done, (folder, parsed) in enumerate(_parsed(pool, changed, jobs), start=1):
                    if isinstance(parsed, BaseException):
                        report.failures.append(f"{folder.location}: {type(parsed).__name__}: {parsed}")
                        _forget(pending_by_archive, folder.location)
                        tell("parse", done, len(changed))
                        continue
                    _write(catalog, folder, parsed, report)
                    report.folders_parsed += 1
                    for name in _finish(pending_by_archive, folder.location):
                        a = archives[name]
                        catalog.record_archive(a.name, a.sha256, a.size)
                    tell("parse", done, len(changed))
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


def _parsed(
    pool: _Pool, folders: list[arc.ResultsFolder], jobs: int
) -> Iterator[tuple[arc.ResultsFolder, ParsedFolder | BaseException]]:
    """Parsed folders as they complete, with at most two per worker in flight (bounded memory)."""
    window = max(2, 2 * jobs)
    queue = iter(folders)
    in_flight: dict[Any, arc.ResultsFolder] = {}

    def fill() -> None:
        while len(in_flight) < window:
            folder = next(queue, None)
            if folder is None:
                return
            job = FolderJob(
                folder.location, tuple((f.name, str(f.path), f.sha256, f.size) for f in folder.files)
            )
            in_flight[pool.submit(job)] = folder

    fill()
    while in_flight:
        future = next(iter(pool.completed(list(in_flight))))
        folder = in_flight.pop(future)
        try:
            yield folder, pool.result(future)
        except Exception as exc:  # reported per folder, the batch goes on
            yield folder, exc
        fill()


def _write(catalog: Catalog, folder: arc.ResultsFolder, parsed: ParsedFolder, report: IngestReport) -> None:
    for run in parsed.runs:
        outcome = catalog.put_run(run)
        if outcome == "added":
            report.runs_added += 1
        elif outcome == "replaced":
            report.runs_replaced += 1
        else:
            report.runs_unchanged += 1
    report.file_errors += sum(1 for p in parsed.problems if p["severity"] == "error")
    catalog.record_folder(folder.location, folder.fingerprint, len(parsed.runs), parsed.problems)
