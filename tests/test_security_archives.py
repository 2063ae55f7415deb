"""Archives and folders you can trust (issue 19): colliding members, limits read from the central
directory before anything is extracted, many small folders, and workers that die with the ingest.

Scales here are small, with limits set lower through ``Limits``; the hand measurements at full
scale (50,000 folders, 1,000,000 members) are in docs/catalog.md.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import stat
import struct
import subprocess
import sys
import time
import tracemalloc
import unicodedata
import zipfile
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from esrp_report.app.catalog import ingest
from esrp_report.catalog import archive as arc
from esrp_report.catalog.archive import Limits
from esrp_report.catalog.store import Catalog
from esrp_report.cli.main import app
from esrp_report.model.errors import InputError

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
runner = CliRunner()

Raw = tuple[str, bytes, int, int, int]  # name, stored bytes, expanded size, CRC-32, method


def _raw_zip(
    path: Path,
    members: list[Raw],
    *,
    declared: int | None = None,
    flags: int = 0,
    external_attr: int = 0o644 << 16,
) -> Path:
    """A zip written record by record, so a test can say anything a hostile archive says
    (a member count that lies, precompressed data, flags) and write 70,000 members in a blink.
    More than 65,535 members get the ZIP64 end records, as real tools write them."""
    local = struct.Struct("<4s2B4HL2L2H")
    central = struct.Struct("<4s4B4HL2L5H2L")
    body = bytearray()
    directory = bytearray()
    for name, data, size, crc, method in members:
        raw_name = name.encode("utf-8") if flags & 0x800 else name.encode("cp437")
        offset = len(body)
        body += local.pack(
            b"PK\x03\x04", 20, 0, flags, method, 0, 0x21, crc, len(data), size, len(raw_name), 0
        )
        body += raw_name + data
        directory += central.pack(
            b"PK\x01\x02", 20, 3, 20, 0, flags, method, 0, 0x21, crc, len(data), size,
            len(raw_name), 0, 0, 0, 0, external_attr, offset,
        )  # fmt: skip
        directory += raw_name
    count = len(members) if declared is None else declared
    end = bytearray()
    if count > 0xFFFF:
        zip64_at = len(body) + len(directory)
        end += struct.pack(
            "<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, len(directory), len(body)
        )
        end += struct.pack("<4sLQL", b"PK\x06\x07", 0, zip64_at, 1)
        count = 0xFFFF
    end += struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, len(directory), len(body), 0)
    path.write_bytes(bytes(body + directory + end))
    return path


def _stored(name: str, data: bytes = b"") -> Raw:
    return name, data, len(data), zlib.crc32(data), 0


def _zip(path: Path, names: list[str], data: bytes = b"x") -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name in names:
            zf.writestr(name, data)
    return path


def _no_zipinfo(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("zipfile.ZipFile opened an archive that the end record already refuses")

    monkeypatch.setattr(zipfile, "ZipFile", refuse)


# --- 1. colliding members ------------------------------------------------------------------------

COLLISIONS = {
    "file-and-folder.zip": (["srv/x", "srv/x/y.txt"], "both a file and a folder"),
    "folder-then-file.zip": (["srv/x/", "srv/x"], "both a file and a folder"),
    "case.zip": (["srv/a/b.txt", "srv/A/B.txt"], "name"),
    "case-file.zip": (["srv/Notes.txt", "srv/NOTES.TXT"], "name the same path"),
    "case-folder.zip": (["srv/a/x.txt", "srv/A/y.txt"], "one folder two ways"),
    "backslash.zip": (["srv/a/b.txt", "srv\\a\\b.txt"], "name the same path"),
    "unicode.zip": (
        [
            "srv/" + unicodedata.normalize("NFC", "café.txt"),
            "srv/" + unicodedata.normalize("NFD", "café.txt"),
        ],
        "name the same path",
    ),
    "double-slash.zip": (["srv/a/b.txt", "srv/a//b.txt"], "name the same path"),
}


def test_colliding_members_refuse_their_archive_and_the_other_inputs_are_ingested(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    for name, (members, _) in COLLISIONS.items():
        _raw_zip(inbox / name, [_stored(m, b"lab notes") for m in members], flags=0x800)
    # Not collisions: a folder entry given twice, and a folder entry with its files.
    _raw_zip(inbox / "fine.zip", [_stored("srv/a/"), _stored("srv/a/"), _stored("srv/a/b.txt", b"x")])
    good = tmp_path / "good"
    shutil.copytree(SAMPLES / "3650-4", good / "3650-4")
    catalog_dir = tmp_path / "cat"

    result = runner.invoke(
        app,
        ["catalog", "ingest", str(inbox), str(good), "--catalog", str(catalog_dir), "--json", "--jobs", "1"],
    )

    assert result.exit_code == 1, result.output  # the CLI's "something was refused": see catalog.md
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    report = json.loads(result.output)
    refused = {r["source"]: r["reason"] for r in report["refusals"]}
    assert set(refused) == {f"inbox/{name}" for name in COLLISIONS}, refused
    for name, (members, why) in COLLISIONS.items():
        assert why in refused[f"inbox/{name}"], (name, refused[f"inbox/{name}"])
        assert repr(members[0]) in refused[f"inbox/{name}"] or repr(members[1]) in refused[f"inbox/{name}"]
    assert report["runs_added"] == 5  # the good folder, named in the same command
    assert report["archives"] == len(COLLISIONS) + 1
    assert not (catalog_dir / "staging").exists()


def test_the_file_and_folder_crash_of_the_issue_no_longer_stops_the_command(tmp_path: Path) -> None:
    """The reproduction as reported: `srv/x` and `srv/x/y.txt`, then a good folder."""
    collide = _zip(tmp_path / "collide.zip", ["srv/x", "srv/x/y.txt"])
    good = tmp_path / "good"
    shutil.copytree(SAMPLES / "3650-4", good / "3650-4")
    report = ingest([collide, good], tmp_path / "cat", jobs=1)
    assert [(r.source, r.reason) for r in report.refusals] == [
        ("collide.zip", "member is both a file and a folder: 'srv/x' and 'srv/x/y.txt'")
    ]
    assert report.runs_added == 5


# --- 2. limits from the central directory --------------------------------------------------------


def test_many_small_members_past_the_overall_ratio_are_refused_before_extracting(tmp_path: Path) -> None:
    """1,000 members of 1 MiB of zeros: each is at the per-member floor, the archive is 1.1 MB,
    and it would stage 1 GiB."""
    zeros = bytes(1 << 20)
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = packer.compress(zeros) + packer.flush()
    crc = zlib.crc32(zeros)
    bomb = _raw_zip(
        tmp_path / "zeros.zip", [(f"bomb/z{i:04d}.csv", packed, len(zeros), crc, 8) for i in range(1000)]
    )
    size = bomb.stat().st_size
    assert size < 1_200_000

    report = ingest([bomb], tmp_path / "cat", jobs=1)

    assert [r.source for r in report.refusals] == ["zeros.zip"]
    reason = report.refusals[0].reason
    assert f"archive of {size:,} bytes expands to {1000 << 20:,} bytes" in reason, reason
    assert "limit max_ratio = 200:1" in reason and "zip bomb" in reason
    assert report.files == 0 and not (tmp_path / "cat" / "staging").exists()


def test_a_member_count_past_the_limit_is_refused_from_the_end_record_before_any_zipinfo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """70,000 members (ZIP64 end records) against a limit of 1,000: refused from the 22 + 76
    bytes at the end, with no ZipInfo built and a few kilobytes allocated."""
    many = _raw_zip(tmp_path / "many.zip", [_stored(f"m/{i}") for i in range(70_000)])
    _no_zipinfo(monkeypatch)
    tracemalloc.start()
    try:
        with pytest.raises(arc.HostileArchiveError) as caught:
            arc.extract_zip(many, "many.zip", tmp_path / "staging", Limits(max_members=1000))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "70,000 members, more than the limit max_members = 1,000" in str(caught.value)
    assert peak < 2 << 20, f"{peak:,} bytes allocated to refuse a member count"
    assert not (tmp_path / "staging").exists()


def test_a_member_count_that_lies_is_caught_while_streaming_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The end record says 10 members; the directory holds 5,000: counting stops at the limit."""
    liar = _raw_zip(tmp_path / "liar.zip", [_stored(f"m/{i}") for i in range(5_000)], declared=10)
    _no_zipinfo(monkeypatch)
    with pytest.raises(arc.HostileArchiveError, match=r"1,001 members .*max_members = 1,000"):
        arc.extract_zip(liar, "liar.zip", tmp_path / "staging", Limits(max_members=1000))


def test_the_streamed_central_directory_reads_what_zipfile_reads(tmp_path: Path) -> None:
    """ZIP64 end records (70,000 members), a ZIP64 size field, UTF-8 and cp437 names, a
    comment and bytes prepended (as a self-extracting archive has): the same members."""
    big = _raw_zip(tmp_path / "zip64.zip", [_stored(f"m/{i}.txt", b"x" * (i % 3)) for i in range(70_000)])
    mixed = tmp_path / "mixed.zip"
    with zipfile.ZipFile(mixed, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.comment = b"a comment at the end"
        zf.writestr("a/caf\u00e9.csv", b"1,2,3\n" * 1000)
        zf.writestr(zipfile.ZipInfo("a/plain.txt"), b"plain")
        with zf.open("a/forced.bin", "w", force_zip64=True) as sink:
            sink.write(b"z" * 5000)
    prefixed = tmp_path / "prefixed.zip"
    prefixed.write_bytes(b"MZ" + bytes(4096) + mixed.read_bytes())
    for path in (big, mixed, prefixed):
        with path.open("rb") as handle:
            ours = [
                (m.filename, m.file_size, m.compress_size)
                for m in arc.read_central_directory(handle, path.stat().st_size, path.name, Limits())
            ]
        with zipfile.ZipFile(path) as zf:
            theirs = [(i.filename, i.file_size, i.compress_size) for i in zf.infolist()]
        assert ours == theirs, path.name


def test_total_expansion_and_each_limit_are_named_with_their_value_and_the_figure(tmp_path: Path) -> None:
    data = os.urandom(300_000)
    archive = _zip(tmp_path / "big.zip", ["a/x.csv", "a/y.csv"], data)
    with pytest.raises(arc.HostileArchiveError) as caught:
        arc.extract_zip(archive, "big.zip", tmp_path / "s", Limits(max_total_bytes=500_000))
    assert "600,000 bytes expanded (or more), more than the limit max_total_bytes = 500,000" in str(
        caught.value
    )
    with pytest.raises(arc.HostileArchiveError) as caught:
        arc.extract_zip(archive, "big.zip", tmp_path / "s", Limits(max_member_bytes=200_000))
    assert "300,000 bytes, more than the limit max_member_bytes = 200,000" in str(caught.value)
    with pytest.raises(arc.HostileArchiveError) as caught:
        arc.extract_zip(archive, "big.zip", tmp_path / "s", Limits(max_name_length=5))
    assert "7 characters, more than the limit max_name_length = 5" in str(caught.value)
    assert not (tmp_path / "s").exists()


def test_odd_members_are_refused_with_a_reason_never_a_traceback(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    _raw_zip(inbox / "nul.zip", [_stored("srv/a\0b.txt", b"x")])
    _raw_zip(inbox / "encrypted.zip", [_stored("srv/a.txt", b"x")], flags=0x1)
    _raw_zip(inbox / "method.zip", [("srv/a.txt", b"x", 1, zlib.crc32(b"x"), 99)])
    _raw_zip(inbox / "badcrc.zip", [("srv/a.txt", b"x", 1, 12345, 0)])
    raw_utf8 = inbox / "utf8.zip"
    _raw_zip(raw_utf8, [_stored("srv/ab.txt", b"x")], flags=0x800)
    raw_utf8.write_bytes(raw_utf8.read_bytes().replace(b"srv/ab.txt", b"srv/\xff\xfe.txt"))
    (inbox / "garbage.zip").write_bytes(b"PK\x03\x04 not really a zip" * 10)
    (inbox / "cut.zip").write_bytes(_zip(tmp_path / "whole.zip", ["srv/a.txt"]).read_bytes()[:-30])
    fifo_zip = _raw_zip(inbox / "fifo.zip", [_stored("srv/pipe")], external_attr=(stat.S_IFIFO | 0o644) << 16)
    assert fifo_zip.exists()
    catalog_dir = tmp_path / "cat"
    result = runner.invoke(app, ["catalog", "ingest", str(inbox), "--catalog", str(catalog_dir), "--json"])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    refused = {r["source"]: r["reason"] for r in json.loads(result.output)["refusals"]}
    assert "control character" in refused["inbox/nul.zip"]
    assert "encrypted" in refused["inbox/encrypted.zip"]
    assert "unsupported method 99" in refused["inbox/method.zip"]
    assert "cannot be extracted" in refused["inbox/badcrc.zip"] and "CRC" in refused["inbox/badcrc.zip"]
    assert "not valid UTF-8" in refused["inbox/utf8.zip"]
    assert "not a readable zip" in refused["inbox/garbage.zip"]
    assert "not a readable zip" in refused["inbox/cut.zip"]
    assert "special file" in refused["inbox/fifo.zip"]


def test_damaged_archives_only_ever_raise_input_errors(tmp_path: Path) -> None:
    """500 random mutations of a small zip (bytes flipped, runs zeroed, cut short): each is
    extracted or refused with an InputError, never anything else, never outside staging."""
    whole = tmp_path / "whole.zip"
    with zipfile.ZipFile(whole, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("srv/a.csv", b"1,2,3\n" * 200)
        zf.writestr("srv/b.txt", b"notes")
        zf.writestr("srv/sub/", b"")
    data = whole.read_bytes()
    chance = random.Random(19)
    outcomes = {"extracted": 0, "refused": 0}
    for attempt in range(500):
        damaged = bytearray(data)
        for _ in range(chance.randint(1, 6)):
            at = chance.randrange(len(damaged))
            if chance.random() < 0.5:
                damaged[at] = chance.randrange(256)
            else:
                damaged[at : at + 4] = bytes(4) if chance.random() < 0.5 else b"\xff\xff\xff\xff"
        if chance.random() < 0.1:
            damaged = damaged[: chance.randrange(len(damaged))]
        path = tmp_path / "damaged.zip"
        path.write_bytes(bytes(damaged))
        staging = tmp_path / "staging" / str(attempt)
        try:
            files = arc.extract_zip(path, "damaged.zip", staging, Limits(max_total_bytes=1 << 20))
        except InputError:
            outcomes["refused"] += 1
            continue
        outcomes["extracted"] += 1
        assert all(p.resolve().is_relative_to(staging.resolve()) for _, p in files)
    assert outcomes["refused"] > 100, outcomes


# --- 3. many small folders -----------------------------------------------------------------------


def test_many_small_folders_cost_a_few_transactions_not_one_per_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,000 one-file folders: recorded in a couple of transactions and found unchanged with one
    query (one per folder was 11 ms a folder; 50,000 folders are timed by hand, docs/catalog.md)."""
    root = tmp_path / "lab"
    for i in range(2000):
        folder = root / f"design{i // 100:02d}" / f"srv{i:04d}"
        folder.mkdir(parents=True)
        (folder / "notes.txt").write_text(f"server {i}\n", "utf-8")
    calls = {"transaction": 0, "one": 0}
    transaction, one = Catalog.transaction, Catalog._one

    def counted_transaction(self: Catalog) -> object:
        calls["transaction"] += 1
        return transaction(self)

    def counted_one(self: Catalog, *args: object) -> object:
        calls["one"] += 1
        return one(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Catalog, "transaction", counted_transaction)
    monkeypatch.setattr(Catalog, "_one", counted_one)
    first = ingest([root], tmp_path / "cat", jobs=1)
    assert (first.folders, first.folders_parsed, first.refusals) == (2000, 2000, [])
    assert calls["transaction"] < 20, calls  # migrations, and one per 1,000 folders
    calls.update(transaction=0, one=0)
    again = ingest([root], tmp_path / "cat", jobs=1)
    assert (again.folders_unchanged, again.folders_parsed) == (2000, 0)
    assert calls["one"] < 20 and calls["transaction"] < 5, calls
    with Catalog.open(tmp_path / "cat", read_only=True) as catalog:
        assert catalog.frame("SELECT count(*) FROM folders").item() == 2000
        notes = catalog.frame("SELECT count(*) FROM problems WHERE run_id IS NULL").item()
        assert notes == 2000  # each folder's "not a supported file" note, recorded once


# --- 4. workers die with the ingest --------------------------------------------------------------


def _children(pid: int) -> list[int]:
    """Every process descended from ``pid`` (psutil when installed, /proc otherwise)."""
    try:
        import psutil  # optional: the suite runs without it

        try:
            return [p.pid for p in psutil.Process(pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            return []
    except ImportError:
        parents: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                parents[int(entry.name)] = int(fields[1])
        found, frontier = [], [pid]
        while frontier:
            here = frontier.pop()
            kids = [p for p, parent in parents.items() if parent == here]
            found += kids
            frontier += kids
        return found


def _alive(pid: int) -> bool:
    """Running, not merely a zombie waiting for a container's init to reap it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _is_worker(pid: int) -> bool:
    try:
        return b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_9_of_the_ingest_leaves_no_worker_behind(tmp_path: Path) -> None:
    root = tmp_path / "lab"
    for i in range(6000):
        folder = root / f"d{i // 500:02d}" / f"srv{i:04d}"
        folder.mkdir(parents=True)
        (folder / "notes.txt").write_text(f"server {i}\n", "utf-8")
    command = [sys.executable, "-c", "from esrp_report.cli.main import main; main()"]
    command += ["catalog", "ingest", str(root), "--catalog", str(tmp_path / "cat"), "--jobs", "2"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len([p for p in _children(process.pid) if _is_worker(p)]) < 2:
            assert process.poll() is None, "the ingest ended before its workers were seen"
            assert time.monotonic() < deadline, "no workers after 60 s"
            time.sleep(0.05)
        descendants = _children(process.pid)
        assert process.poll() is None, "the ingest ended before it could be killed"
        os.kill(process.pid, signal.SIGKILL)  # the main process only, as a user or the OOM killer would
        process.wait()
        deadline = time.monotonic() + 5
        while [p for p in descendants if _alive(p)] and time.monotonic() < deadline:
            time.sleep(0.05)
        survivors = [p for p in descendants if _alive(p)]
    finally:
        if process.poll() is None:  # a failed wait: end what this test started
            for pid in _children(process.pid):
                os.kill(pid, signal.SIGKILL)
            process.kill()
            process.wait()
    for pid in survivors:  # clean up before failing, so an old build's orphans do not linger
        os.kill(pid, signal.SIGKILL)
    assert not survivors, f"{len(survivors)} of {len(descendants)} processes outlived the ingest"
    # The next ingest starts from a clean staging folder and finishes the work.
    staging = tmp_path / "cat" / "staging"
    staging.mkdir(parents=True, exist_ok=True)
    (staging / "left-over").write_text("from the killed ingest")
    ingest([], tmp_path / "cat", jobs=1)
    assert not staging.exists()
