r"""Every real perfmon file the project can read, each against its truth (issue 29, "a corpus").

A real file is one written by Windows on someone's machine, not by this project: tests/data/blg,
tests/data/csv, and ../shared/data beside the repository (read from there, never copied, where
no licence allows a copy). samples/ and tests/data/fuzz are this project's own and not listed.

Each entry of :data:`CORPUS` names a file and its truth, one of:

- a Windows twin (``twin``): the same samples exported by Windows (Export-Counter, relog); every
  counter path, time stamp (to the millisecond) and value (at the twin's printed precision, a
  blank where it has none) must agree;
- counts another project's tests assert, or figures checked by hand, written in the entry with
  where they come from (``samples``, ``counters``, ``first``, ``last``, ``refused``...).

Add a real file by adding a line. ``pending`` marks an entry expected to fail until the work it
names lands (tests/test_conformance.py makes it a strict xfail). ``python -m benchmarks.corpus``
(run by ``make bench``) prints "N real files, M exact".
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
PS = "tests/data/blg/powershell"


@dataclass(frozen=True)
class Entry:
    """One real file and its truth (see the module docstring)."""

    path: str  # relative to the repository; "../shared/..." for the shared corpus
    source: str  # where the truth comes from
    twin: str | None = None  # a Windows export of the same samples
    encoding: str | None = None  # the code page the file is in, as inspect names it
    samples: int | None = None
    counters: int | None = None
    first: str | None = None  # local time of the first sample, as perfmon prints it
    last: str | None = None
    duplicates: int | None = None
    non_ascii_names: int | None = None
    refused: bool = False  # Windows itself refuses it: the reader must refuse it by name
    pending: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def file(self) -> Path:
        return (ROOT / self.path).resolve()


CORPUS: tuple[Entry, ...] = (
    Entry(f"{PS}/CounterSamples.csv", "PowerShell's Import-Counter test: 25 samples, oldest 13:46:30.874, "
          "newest 13:47:42.983; 10 counters", samples=25, counters=10, encoding="ascii",
          first="11/26/2016 13:46:30.874", last="11/26/2016 13:47:42.983"),
    Entry(f"{PS}/CounterSamples.tsv", "twin: the CSV exported from the same samples",
          twin=f"{PS}/CounterSamples.csv", samples=25, counters=10),
    Entry(f"{PS}/CounterSamples.blg", "twin: Export-Counter's CSV of the same samples",
          twin=f"{PS}/CounterSamples.csv", samples=25, counters=10),
    Entry(f"{PS}/BadCounterSamples.blg", "PowerShell's test: 275 sample sets (and 5 errors); 26 machines' "
          "Processor(_Total)", samples=275, counters=26, first="07/02/2007 14:20:12.734",
          last="07/04/2007 12:00:13.578"),
    Entry(f"{PS}/CorruptBlg.blg", "PowerShell's test expects a PDH error: a CSV without its signature",
          refused=True),
    Entry("tests/data/blg/SampleLog.blg", "hand-checked (tests/data/blg/README.md): 11 samples at 60 s of "
          "\\\\ZACH-PC", samples=11, extra={"machines": ["ZACH-PC"], "interval_seconds": 60.0}),
    Entry("tests/data/csv/ysu_disk_zh-CN.csv", "hand-checked (tests/data/csv/README.md: awk)",
          samples=120, counters=30, duplicates=7, encoding="ascii", first="10/09/2022 18:45:27.748",
          last="10/09/2022 18:55:22.755", extra={"utc_offset_minutes": None}),
    Entry("../shared/data/blg/win11/babylon-og.csv", "relog's CSV (../shared/data/blg/win11/README.md): "
          "33 rows x 290 counters, Windows-1250; 13 Polish names", samples=33, counters=290,
          encoding="windows-1250", non_ascii_names=13, first="08/13/2024 19:55:39.780"),
    Entry("../shared/data/blg/win11/three-ssx2.csv", "relog's CSV (README beside it): 89 rows x 262 "
          "counters, Windows-1250; 13 Polish names", samples=89, counters=262, encoding="windows-1250",
          non_ascii_names=13),
    Entry("../shared/data/blg/win11/babylon-og.blg", "twin: relog's CSV of this log",
          twin="../shared/data/blg/win11/babylon-og.csv"),
    Entry("../shared/data/blg/win11/three-ssx2.blg", "twin: relog's CSV of this log",
          twin="../shared/data/blg/win11/three-ssx2.csv"),
)  # fmt: skip


def present(entry: Entry) -> bool:
    return entry.file.is_file() and (entry.twin is None or (ROOT / entry.twin).is_file())


def _read(path: Path) -> Any:
    if path.suffix.casefold() == ".blg":
        from esrp_report.ingest.perfmon.blg import stream

        return stream.read_blg_log(path)
    from esrp_report.ingest.perfmon import counter_csv

    return counter_csv.read_counter_csv(path)


def _local(log: Any) -> list[str]:
    from datetime import timedelta

    offset = timedelta(minutes=log.utc_offset_minutes or 0)
    stamps = log.samples.get_column("timestamp").to_list()
    return [(s.replace(tzinfo=None) + offset).strftime("%m/%d/%Y %H:%M:%S.%f")[:-3] for s in stamps]


def _twin_rows(path: Path) -> list[list[str]]:
    from esrp_report.ingest.perfmon import counter_csv

    codec = counter_csv._encoding(path).codec
    text = path.read_bytes().decode("utf-8" if codec == "latin-1" else codec)
    separator = "\t" if text.lstrip('\ufeff"').startswith("(PDH-TSV") else ","
    return list(csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""), delimiter=separator))


def _same_value(value: float | None, printed: str) -> bool:
    """Equal at the twin's printed precision (half its last digit), or both blank."""
    text = printed.strip()
    if not text:
        return value is None
    if value is None:
        return False
    if float(text) == value:  # 17 printed digits name the same double as its 16-digit repr
        return True
    exponent = Decimal(text).as_tuple().exponent
    places = -exponent if isinstance(exponent, int) and exponent < 0 else 0
    return abs(Decimal(repr(value)) - Decimal(text)) <= Decimal(5) * Decimal(10) ** -(places + 1)


def check(entry: Entry) -> list[str]:
    """What disagrees with the entry's truth; empty when the file reads exactly."""
    from esrp_report.model.errors import EsrpError

    try:
        log = _read(entry.file)
    except EsrpError as exc:
        return [] if entry.refused and str(entry.file) in str(exc) else [f"refused: {exc}"]
    if entry.refused:
        return ["read, though Windows refuses it"]
    found: list[str] = []

    def expect(what: str, got: object, want: object) -> None:
        if want is not None and got != want:
            found.append(f"{what}: {got!r}, expected {want!r}")

    paths = log.counters.get_column("path").to_list()
    stamps = _local(log)
    expect("samples", log.sample_count, entry.samples)
    expect("counters", len(paths), entry.counters)
    expect("encoding", getattr(log, "encoding", None), entry.encoding)
    expect("duplicates", int(log.counters.get_column("duplicate").sum()), entry.duplicates)
    expect("names outside ASCII", sum(not p.isascii() for p in paths), entry.non_ascii_names)
    expect("first sample", stamps[0] if stamps else None, entry.first)
    expect("last sample", stamps[-1] if stamps else None, entry.last)
    if any("\ufffd" in p for p in paths):
        found.append("a counter name holds U+FFFD")
    for key, want in entry.extra.items():
        if key == "machines":
            got: object = sorted(m for m in log.counters.get_column("machine").unique().to_list() if m)
        elif key == "interval_seconds":
            steps = log.samples.get_column("timestamp").diff().dt.total_milliseconds().drop_nulls()
            got = float(steps.median()) / 1000 if len(steps) else None
        else:
            got = getattr(log, key)
        expect(key, got, want)
    if entry.twin is not None:
        found += _against_twin(log, paths, stamps, _twin_rows(ROOT / entry.twin))
    return found


def _against_twin(log: Any, paths: list[str], stamps: list[str], rows: list[list[str]]) -> list[str]:
    header, body = rows[0], [r for r in rows[1:] if r]
    # Matched by path, not by place: relog's column order follows no rule seen across its logs
    # (docs/blg.md), and the order is not the data.
    mine = {p.casefold(): i for i, p in enumerate(paths)}
    theirs = [p.casefold() for p in header[1:]]
    if len(mine) != len(paths) or sorted(mine) != sorted(theirs):
        return [f"counter paths differ from the twin's ({len(paths)} against {len(header) - 1})"]
    if stamps != [r[0] for r in body]:
        return [f"time stamps differ from the twin's ({len(stamps)} against {len(body)} rows)"]
    columns = log.counters.get_column("column").to_list()
    order = [columns[mine[p]] for p in theirs]
    values = log.samples.select(order).rows()
    wrong = sum(
        not _same_value(value, printed)
        for row, twin in zip(values, body, strict=True)
        for value, printed in zip(row, twin[1:], strict=True)
    )
    return [f"{wrong} value(s) differ from the twin's"] if wrong else []


def identity(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def unlisted() -> list[Path]:
    """Real files present that no entry lists (by content: ../shared holds copies of tests/data)."""
    listed = {identity(e.file) for e in CORPUS if e.file.is_file()}
    places = [ROOT / "tests" / "data" / "blg", ROOT / "tests" / "data" / "csv", SHARED]
    files = [
        p
        for place in places
        if place.is_dir()
        for p in sorted(place.rglob("*"))
        if p.is_file() and p.suffix.casefold() in (".blg", ".csv", ".tsv")
    ]
    return [p for p in files if identity(p) not in listed]


def main() -> dict[str, object]:
    present_entries = [e for e in CORPUS if present(e)]
    exact = [e for e in present_entries if not check(e)]
    print(f"{len(present_entries)} real files, {len(exact)} exact", flush=True)
    return {
        "real_files": len(present_entries),
        "exact": len(exact),
        "not_exact": [e.path for e in present_entries if e not in exact],
        "checked_at": datetime.now().astimezone().isoformat(timespec="seconds"),
    }


if __name__ == "__main__":
    main()
