"""Faults of the disk are messages (issue 37, item 3): no space, a read-only folder, a file gone.

Each fault is made two ways where it can be: for real (a 400 kB tmpfs, which needs root and a
kernel that lets the test mount; a folder without write permission, which root ignores unless the
command runs without its capabilities) and injected (the lowest write call raising the OSError
the kernel would), so that the behaviour is tested on every machine. Each must end in one line
naming the path and what was kept, exit status 2, and the catalog must stay whole and resume.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner, Result

from esrp_report.catalog import query
from esrp_report.catalog import store as catalog_store
from esrp_report.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
LOG = SAMPLES / "EMAIL5" / "Performance_2011_3_11_13_27_46.csv"
runner = CliRunner()


def _one_line_naming(result: Result, path: Path | str, *words: str) -> str:
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output, result.output
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert str(path) in lines[0], (path, lines[0])
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def _ingest(catalog: Path, *inputs: Path) -> Result:
    return runner.invoke(app, ["catalog", "ingest", *map(str, inputs), "--catalog", str(catalog), "-j", "1"])


def _fault(number: int, path: Path | str | None = None) -> OSError:
    return OSError(number, os.strerror(number), None if path is None else str(path))


# --- catalog ingest ----------------------------------------------------------------------------------


@pytest.mark.parametrize("number", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_an_ingest_the_disk_refuses_is_one_line_and_the_next_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, number: int
) -> None:
    """The second run's series file cannot be written: the first run is kept whole, the line
    says so, and the same ingest later ends with the catalog a clean ingest makes."""
    catalog = tmp_path / "catalog"
    written = {"count": 0}
    real = catalog_store.Catalog._write_series

    # The store writes a run's series either whole or a batch at a time: the fault is raised where
    # both ways begin, with the file name the disk would have refused.
    def refuse_the_second(self: catalog_store.Catalog, run_id: str, content: str, series: object) -> str:
        written["count"] += 1
        if written["count"] == 2:
            raise _fault(number, self.root / "series" / f"run_id={run_id}")
        return real(self, run_id, content, series)  # type: ignore[arg-type]

    monkeypatch.setattr(catalog_store.Catalog, "_write_series", refuse_the_second)
    line = _one_line_naming(_ingest(catalog, SAMPLES / "EMAIL5"), catalog / "series", "kept:", "resumes")
    assert os.strerror(number) in line
    stored = re.search(r"(\d+) run\(s\) stored", line)
    assert stored is not None and int(stored.group(1)) >= 1, line  # the runs before the fault
    monkeypatch.undo()
    resumed = _ingest(catalog, SAMPLES / "EMAIL5")
    assert resumed.exit_code == 0, resumed.output
    clean = tmp_path / "clean"
    assert _ingest(clean, SAMPLES / "EMAIL5").exit_code == 0
    assert query.contents(catalog) == query.contents(clean)


def test_a_commit_the_disk_refuses_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DuckDB says a full disk in its own words, from the commit: named as the database."""
    import duckdb

    catalog = tmp_path / "catalog"
    real = catalog_store.Catalog.put_run
    calls = {"count": 0}

    def full_at_the_second(self: catalog_store.Catalog, parsed: object) -> str:
        calls["count"] += 1
        if calls["count"] == 2:
            raise duckdb.TransactionException(
                f'Failed to commit: Could not write file "{catalog}/catalog.duckdb.wal": No space left on device'
            )
        return real(self, parsed)  # type: ignore[arg-type]

    monkeypatch.setattr(catalog_store.Catalog, "put_run", full_at_the_second)
    _one_line_naming(
        _ingest(catalog, SAMPLES / "EMAIL5"), catalog / "catalog.duckdb", "No space left", "kept:"
    )


def test_a_file_vanishing_mid_ingest_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from esrp_report.catalog import archive

    results = tmp_path / "EMAIL5"
    shutil.copytree(SAMPLES / "EMAIL5", results)
    gone = results / LOG.name
    real = archive.hash_files

    def hash_then_lose_one(paths: list[Path], **options: object) -> list[str]:
        digests = real(paths, **options)  # type: ignore[arg-type]
        gone.unlink()  # after hashing, before the size is read: the file went away mid-run
        return digests

    monkeypatch.setattr(archive, "hash_files", hash_then_lose_one)
    _one_line_naming(_ingest(tmp_path / "catalog", results), gone, "No such file", "kept:")


def _mount_tmpfs(where: Path, size: str) -> str | None:
    """Why a tmpfs cannot be mounted here, or None once it is."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return "a small filesystem needs root to mount (the injected faults above still run)"
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    return f"cannot mount a tmpfs here: {done.stderr.strip()}" if done.returncode else None


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "small"
    if why := _mount_tmpfs(where, "400k"):
        pytest.skip(why)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_an_ingest_onto_a_really_full_disk_is_one_line_and_resumes_once_there_is_room(
    small_disk: Path, tmp_path: Path
) -> None:
    catalog = small_disk / "catalog"
    inputs = (SAMPLES / "EMAIL5", SAMPLES / "3650-4")
    line = _one_line_naming(_ingest(catalog, *inputs), catalog, "No space left on device", "kept:")
    assert "resumes" in line
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    assert _ingest(catalog, *inputs).exit_code == 0
    clean = tmp_path / "clean"
    assert _ingest(clean, *inputs).exit_code == 0
    assert query.contents(catalog) == query.contents(clean)


def _without_root_powers(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str] | None:
    """Run the CLI so that file modes bind (as root: without the capabilities that override them);
    None when that cannot be done here."""
    command = [sys.executable, "-m", "esrp_report.cli.main", *args]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            return None
        command = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", *command]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=300, check=False)


def test_an_ingest_into_a_catalog_made_read_only_is_one_line(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    first, second = tmp_path / "first" / "EMAIL5", tmp_path / "second" / "EMAIL6"
    shutil.copytree(SAMPLES / "EMAIL5", first)
    shutil.copytree(SAMPLES / "EMAIL5", second)  # another input name: new runs, new series folders
    assert _ingest(catalog, first).exit_code == 0
    (catalog / "series").chmod(0o555)
    try:
        done = _without_root_powers(
            ["catalog", "ingest", str(first), str(second), "--catalog", str(catalog), "-j", "1"], tmp_path
        )
    finally:
        (catalog / "series").chmod(0o755)
    if done is None:
        pytest.skip("running as root without setpriv: a read-only folder stays writable")
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert len(lines) == 1 and "Permission denied" in lines[0] and "kept:" in lines[0], lines
    # Whole runs only: once writable again, the same ingest ends where a clean one does.
    assert _ingest(catalog, first, second).exit_code == 0
    clean = tmp_path / "clean"
    assert _ingest(clean, first, second).exit_code == 0
    assert query.contents(catalog) == query.contents(clean)


# --- convert and build -------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_convert_onto_a_full_disk_is_one_line_and_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / f"out{suffix}"
    if suffix == ".csv":

        def full(*_args: object, **_options: object) -> None:
            raise _fault(errno.ENOSPC)

        monkeypatch.setattr(pl.DataFrame, "write_csv", full)
    else:
        monkeypatch.setattr(
            pq.ParquetWriter, "write_table", lambda *_a, **_k: (_ for _ in ()).throw(_fault(errno.ENOSPC))
        )
    result = runner.invoke(app, ["convert", str(LOG), "-o", str(out)])
    _one_line_naming(result, out, "No space left on device", "nothing was kept")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_convert_onto_a_really_full_disk_is_one_line(small_disk: Path) -> None:
    (small_disk / "filler").write_bytes(b"\0" * 300_000)
    out = small_disk / "out.csv"
    result = runner.invoke(app, ["convert", str(LOG), "-o", str(out)])
    _one_line_naming(result, out, "No space left on device", "nothing was kept")
    assert not out.exists()


def test_build_onto_a_full_disk_names_the_file_and_what_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from esrp_report.app import api

    folder = tmp_path / "m"
    folder.mkdir()
    shutil.copytree(SAMPLES / "3650-4", folder / "3650-4")
    shutil.copy(SAMPLES / "netapp.toml", folder / "netapp.toml")
    real = Path.write_text

    def full_for_html(path: Path, data: str, **options: object) -> int:
        if path.suffix == ".html":
            path.write_bytes(data[:100].encode())  # a partial file, as a full disk leaves one
            raise _fault(errno.ENOSPC)
        return real(path, data, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(api.Path, "write_text", full_for_html)
    out = folder / "out"
    result = runner.invoke(
        app, ["build", str(folder / "netapp.toml"), "-o", str(out), "--format", "html", "-j", "1"]
    )
    _one_line_naming(
        result, out / "netapp.html", "No space left on device", "partial file was removed", "kept:"
    )
    assert not (out / "netapp.html").exists()


def test_any_other_os_error_in_a_command_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's last net: an OSError no command foresaw still names its path in one line."""
    from esrp_report.app import api

    def vanished(*_args: object, **_options: object) -> object:
        raise _fault(errno.ENOENT, "/results/gone.html")

    monkeypatch.setattr(api, "check", vanished)
    _one_line_naming(
        runner.invoke(app, ["check", str(SAMPLES / "3650-4")]), "/results/gone.html", "No such file"
    )
