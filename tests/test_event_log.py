"""Event logs: legacy .evt read with libevt; error events counted inside each run's window."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from esrp_report.app.api import check
from esrp_report.ingest.event_log import read_event_log, window_utc
from esrp_report.model.errors import InputError
from esrp_synth.event_log import EventRecord, write_evt

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def test_evt_records_read_back(tmp_path: Path) -> None:
    when = datetime(2011, 3, 14, 14, 2, 3)
    path = tmp_path / "Application.evt"
    path.write_bytes(
        write_evt(
            [
                EventRecord(when, 102, "information", "ESE", "EMAIL2", ["started"]),
                EventRecord(when + timedelta(hours=1), 9, "error", "disk", "EMAIL2"),
            ]
        )
    )
    log = read_event_log(path)
    assert [(e.level, e.event_id, e.source, e.computer) for e in log.events] == [
        ("information", 102, "ESE", "EMAIL2"),
        ("error", 9, "disk", "EMAIL2"),
    ]
    assert log.events[1].time_utc == when + timedelta(hours=1)
    assert [e.event_id for e in log.errors_between(when, when + timedelta(hours=2))] == [9]
    assert log.errors_between(when, when + timedelta(minutes=59)) == []


def test_damaged_event_log_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "System.evt"
    path.write_bytes(b"not an event log at all" * 4)
    with pytest.raises(InputError) as err:
        read_event_log(path)
    assert str(path) in str(err.value)


def test_unknown_offset_widens_the_window() -> None:
    start, end = datetime(2011, 3, 14, 9), datetime(2011, 3, 15, 9)
    assert window_utc(start, end, -300) == (start + timedelta(hours=5), end + timedelta(hours=5), True)
    wide_start, wide_end, exact = window_utc(start, end, None)
    assert not exact and wide_start < start - timedelta(hours=12) and wide_end > end + timedelta(hours=11)


def test_error_inside_the_stress_window_fails_the_event_log_rule(tmp_path: Path) -> None:
    folder = tmp_path / "EMAIL2"
    shutil.copytree(SAMPLES / "vmax" / "EMAIL2", folder)
    clean = check([folder])
    stress = next(r for s in clean.servers for r in s.runs if r.run.kind.value == "Stress")
    assert stress.run.event_log_errors == 0
    # Stress ran 3/14/2011 9:02 to 3/15/2011 9:28 Eastern (UTC-5, from the counter log's bias).
    inside = datetime(2011, 3, 14, 20, 0)  # UTC
    (folder / "System_extra.evt").write_bytes(
        write_evt(
            [
                EventRecord(inside, 11, "error", "disk", "EMAIL2"),
                EventRecord(inside, 7036, "information", "SCM", "EMAIL2"),
            ]
        )
    )
    dirty = check([folder])
    stress = next(r for s in dirty.servers for r in s.runs if r.run.kind.value == "Stress")
    assert stress.run.event_log_errors == 1
    failed = [r for r in stress.results if r.rule_id == "event-log-errors"]
    assert failed and failed[0].status.value == "fail"
    assert any("error event 11 from disk" in p.message for p in dirty.problems)
