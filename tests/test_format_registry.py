"""A format is the whole interface (issue 31 item 2): every registered format has each part
(recognise, describe, read, stream, merge) or declares it unsupported with a reason, and a format
added the way docs/architecture.md says (one module, one registry line) is seen by ``inspect``,
``check``, ``convert`` and ``catalog ingest`` without a line anywhere else.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import fields, replace
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from esrp_report.cli.main import app
from esrp_report.ingest import formats
from esrp_report.ingest.formats import Evidence, EvidenceFormat, ReadOptions, Unsupported
from esrp_report.model import COUNTERS_SCHEMA, CounterLog

runner = CliRunner()


def test_every_registered_format_has_every_part_or_says_why_not() -> None:
    assert set(formats.PARTS) == {f.name for f in fields(EvidenceFormat)} - {"name", "looks_like"}
    assert len(formats.FORMATS) >= 7
    for fmt in formats.FORMATS:
        for part in formats.PARTS:
            value = getattr(fmt, part)
            if isinstance(value, Unsupported):
                assert len(value.reason.split()) >= 3, f"{fmt.name}.{part}: say why, in words"
            else:
                assert callable(value), f"{fmt.name}.{part} is {value!r}"


def test_only_the_counter_logs_stream_and_every_format_describes() -> None:
    streaming = {f.name for f in formats.FORMATS if not isinstance(f.stream, Unsupported)}
    assert streaming == {formats.BLG.name, formats.COUNTER_CSV.name}
    assert all(callable(f.describe) for f in formats.FORMATS)


@pytest.mark.parametrize("part", formats.PARTS)
def test_a_format_lacking_a_part_is_refused_at_registration(part: str) -> None:
    whole = formats.REPORT_HTML
    broken = replace(whole, name="broken", **{part: None})
    with pytest.raises(TypeError, match=f"its {part} is None"):
        formats.register(broken)
    assert all(f.name != "broken" for f in formats.FORMATS)


def test_an_unsupported_part_needs_its_reason() -> None:
    with pytest.raises(ValueError, match="reason"):
        Unsupported("  ")


def test_an_event_log_is_described_by_inspect_as_check_reads_it(samples: Path) -> None:
    """Before, ``inspect`` said event logs were "recognised but not read yet" while ``check``
    read them; both now ask the format."""
    from esrp_report.ingest.event_log import read_event_log

    evt = samples / "vmax" / "EMAIL2" / "System_2011_3_15_14_28_41.evt"
    result = runner.invoke(app, ["inspect", "--json", str(evt)])
    assert result.exit_code == 0, result.output
    described = json.loads(result.output)
    log = read_event_log(evt)
    assert described["format"] == formats.EVENT_LOG.name
    assert described["events"] == len(log.events) > 0
    assert described["unreadable_records"] == log.unreadable_records
    assert "not read yet" not in result.output


def test_convert_refuses_a_format_without_samples_with_that_formats_reason(
    samples: Path, tmp_path: Path
) -> None:
    report = samples / "EMAIL5" / "Performance_2011_3_11_13_27_46.html"
    result = runner.invoke(app, ["convert", str(report), "-o", str(tmp_path / "out.csv")])
    assert result.exit_code == 2
    assert "convert takes counter logs" in result.output
    assert formats.REPORT_HTML.stream.reason in " ".join(result.output.split())  # type: ignore[union-attr]
    assert not (tmp_path / "out.csv").exists()


def test_the_architecture_page_gives_the_steps_the_code_takes() -> None:
    """docs/architecture.md names every part, the registry call and this test, and no part the
    code does not have."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    start = page.index("- **A new evidence format:**")
    steps = page[start : page.index("\n- **", start + 1)]
    for part in formats.PARTS:
        assert f"`{part}(" in steps, part
    for keyword in formats.PARTS[1:]:
        assert f"{keyword}=" in steps, keyword
    assert "register(EvidenceFormat(" in steps and "Unsupported(" in steps
    assert "tests/test_format_registry.py" in steps and "app/evidence.py" in steps


# --- a toy format, added as docs/architecture.md says -----------------------------------------------
# Step 1, the module: a recogniser and the four parts. A toy counter log holds a first line
# "TOY1 <machine>" and then one "<ISO time> <value>" line per sample of one disk-latency counter.

TOY_PATH = r"\\{machine}\LogicalDisk(C:)\Avg. Disk sec/Read"


def _toy_log(path: Path) -> CounterLog:
    first, *lines = path.read_text(encoding="ascii").splitlines()
    machine = first.split()[1]
    counter = TOY_PATH.format(machine=machine)
    counters = pl.DataFrame(
        [("c1", counter, machine, "LogicalDisk", "C:", "Avg. Disk sec/Read", False)],
        schema=COUNTERS_SCHEMA,
        orient="row",
    )
    stamps, values = zip(*(line.split() for line in lines), strict=True)
    samples = pl.DataFrame(
        {
            "timestamp": [datetime.fromisoformat(s).replace(tzinfo=UTC) for s in stamps],
            "c1": [float(v) for v in values],
        },
        schema={"timestamp": pl.Datetime("us", "UTC"), "c1": pl.Float64()},
    )
    return CounterLog(str(path), "toy", counters, samples, utc_offset_minutes=0)


def _toy_recognises(head: formats.Head) -> bool:
    return head.data.startswith(b"TOY1 ")


def _toy_describe(path: Path, _options: ReadOptions) -> formats.Description:
    log = _toy_log(path)
    return {
        "machine": log.counters["machine"][0],
        "counters": log.counters.height,
        "samples": log.sample_count,
    }


def _toy_read(path: Path, _options: ReadOptions) -> Evidence:
    return Evidence(counter_logs=[_toy_log(path)])


def _toy_stream(path: Path, _options: ReadOptions) -> CounterLog:
    return _toy_log(path)  # small enough to hold; a real format would hand out batches


@pytest.fixture
def toy() -> Iterator[EvidenceFormat]:
    # Step 2, the registry line (here at test time, removed after; in the product it is one line
    # at the bottom of ingest/formats.py, which is also what spawned catalog workers import).
    fmt = formats.register(
        EvidenceFormat(
            "toy-counters",
            "a toy counter log",
            _toy_recognises,
            describe=_toy_describe,
            read=_toy_read,
            stream=_toy_stream,
            merge=formats.merging("counter_logs"),
        )
    )
    try:
        yield fmt
    finally:
        formats.FORMATS.remove(fmt)


@pytest.fixture
def toy_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "MBX7"
    folder.mkdir()
    lines = [
        "TOY1 MBX7",
        "2011-03-11T13:27:46 0.0125",
        "2011-03-11T13:27:49 0.0140",
        "2011-03-11T13:27:52 0.0075",
    ]
    (folder / "Performance_2011_3_11_13_27_46.toy").write_text("\n".join(lines) + "\n", encoding="ascii")
    return folder


def test_inspect_sees_a_new_format(toy: EvidenceFormat, toy_folder: Path) -> None:
    result = runner.invoke(app, ["inspect", "--json", str(toy_folder / "Performance_2011_3_11_13_27_46.toy")])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {
        "file": str(toy_folder / "Performance_2011_3_11_13_27_46.toy"),
        "format": "toy-counters",
        "machine": "MBX7",
        "counters": 1,
        "samples": 3,
    }


def test_check_sees_a_new_format(toy: EvidenceFormat, toy_folder: Path) -> None:
    result = runner.invoke(app, ["check", "--json", str(toy_folder)])
    found = json.loads(result.output)
    assert [s["name"] for s in found["servers"]] == ["MBX7"], result.output
    assert found["servers"][0]["runs"][0]["kind"] == "Performance"


def test_convert_sees_a_new_format(toy: EvidenceFormat, toy_folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "toy.csv"
    result = runner.invoke(
        app, ["convert", str(toy_folder / "Performance_2011_3_11_13_27_46.toy"), "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    with out.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][1] == TOY_PATH.format(machine="MBX7")
    assert [float(r[1]) for r in rows[1:]] == [0.0125, 0.0140, 0.0075]


def test_catalog_ingest_sees_a_new_format(toy: EvidenceFormat, toy_folder: Path, tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    # One job: the parse runs in this process, where the test registered the toy (see `toy`).
    ingested = runner.invoke(
        app, ["catalog", "ingest", str(toy_folder), "--catalog", str(catalog), "--jobs", "1"]
    )
    assert ingested.exit_code == 0, ingested.output
    listed = runner.invoke(
        app, ["catalog", "sql", "SELECT server, kind, samples FROM runs", "--catalog", str(catalog), "--json"]
    )
    assert json.loads(listed.output) == [{"server": "MBX7", "kind": "Performance", "samples": 3}]


def test_without_its_registration_the_toy_is_no_supported_file(toy_folder: Path) -> None:
    result = runner.invoke(app, ["inspect", str(toy_folder / "Performance_2011_3_11_13_27_46.toy")])
    assert result.exit_code == 2
    assert "not a supported file" in result.output
