"""A .blg header's time zone resolved to its IANA zone, daylight saving applied per sample (issue 29
item 4): synthetic logs from the project's writer in a DST zone (summer, winter, across the change),
a tzres.dll reference, an unknown tzres id, a name in another language, a header that contradicts
the zone, and samples whose own UTC clock disagrees with the zone. Real files: tests/test_blg.py,
tests/test_conformance.py and the last test here."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from typer.testing import CliRunner

from esrp_report.cli.main import app
from esrp_report.ingest.perfmon.blg import read_blg, resolve_zone
from esrp_report.ingest.perfmon.blg.filetime import local_offsets
from esrp_synth import blg_raw_writer as rw
from esrp_synth.blg_container import TimeZone
from esrp_synth.blg_raw_writer import Clock, LogHeader, RawCounter, RawValue

SEC = 10_000_000
MINUTE = 60 * SEC
PERF_FREQ = 2_630_633
PACIFIC = TimeZone(480, "@tzres.dll,-212", "@tzres.dll,-211", daylight_bias=-60)
runner = CliRunner()


def _write(path: Path, zone: TimeZone, stamps: list[datetime], clock_offset: int | None = None) -> Path:
    """A raw-counter log whose samples are at ``stamps`` (local wall-clock); with ``clock_offset``
    (local minus UTC, minutes) a 100 ns counter carries the samples' own UTC clock, else none."""
    counters = [RawCounter("m", "o", "count", 0x00010000)]
    if clock_offset is not None:
        counters.append(RawCounter("m", "o", "idle", 0x21510500, "y"))
    samples = []
    for k, moment in enumerate(stamps):
        local = rw.filetime(moment)
        if clock_offset is None:
            values = [RawValue(k, 0)]
        else:
            clock = Clock(perf_time=k * 5 * PERF_FREQ, time_100ns=local - clock_offset * MINUTE + 9_999)
            values = rw.sample_values(counters, clock, [k, k * SEC])
        samples.append(rw.RawSample(values, local))
    header = LogHeader(perf_freq=PERF_FREQ, time_zone=zone)
    rw.write_raw_blg(path, counters, samples, header=header, object_time_base=10_000_000)
    return path


def _inspect(path: Path) -> dict[str, object]:
    result = runner.invoke(app, ["inspect", str(path), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


def _converted(path: Path, tmp_path: Path) -> list[list[str]]:
    out = tmp_path / f"{path.stem}.csv"
    result = runner.invoke(app, ["convert", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return list(csv.reader(io.StringIO(out.read_text("utf-8"), newline="")))


@pytest.mark.parametrize(
    ("month", "utc_hour", "name", "bias"),
    [(7, 19, "Pacific Daylight Time", 420), (1, 20, "Pacific Standard Time", 480)],
)
def test_summer_and_winter_logs_differ_by_the_daylight_hour(
    tmp_path: Path, month: int, utc_hour: int, name: str, bias: int
) -> None:
    noon = [datetime(2024, month, 15, 12, 0, s) for s in (0, 5, 10)]
    path = _write(tmp_path / f"m{month}.blg", PACIFIC, noon)
    log = read_blg(path)
    assert log.samples.get_column("timestamp")[0] == datetime(2024, month, 15, utc_hour, 0, 0, tzinfo=UTC)
    assert log.utc_offset_minutes == -bias
    facts = _inspect(path)
    assert facts["time_zone_written"] == {"standard": "@tzres.dll,-212", "daylight": "@tzres.dll,-211"}
    assert (facts["time_zone_iana"], facts["time_zone_unresolved"]) == ("America/Los_Angeles", None)
    assert (facts["time_zone"], facts["time_basis"]) == (name, "utc")
    rows = _converted(path, tmp_path)
    assert rows[0][0] == f"(PDH-CSV 4.0) ({name})({bias})"  # as relog writes it (CounterSamples.csv)
    assert [r[0] for r in rows[1:]] == [m.strftime("%m/%d/%Y %H:%M:%S.000") for m in noon]


def test_each_sample_takes_its_own_offset_across_the_change(tmp_path: Path) -> None:
    # 2024-03-10 02:00 PST -> 03:00 PDT: 01:59 local is 09:59Z, 03:00 local is 10:00Z.
    stamps = [datetime(2024, 3, 10, 1, 58), datetime(2024, 3, 10, 1, 59), datetime(2024, 3, 10, 3, 0)]
    path = _write(tmp_path / "spring.blg", PACIFIC, stamps)
    got = read_blg(path).samples.get_column("timestamp").to_list()
    assert got == [
        datetime(2024, 3, 10, 9, 58, tzinfo=UTC),
        datetime(2024, 3, 10, 9, 59, tzinfo=UTC),
        datetime(2024, 3, 10, 10, 0, tzinfo=UTC),
    ]
    rows = _converted(path, tmp_path)  # back to local per stamp: the source's wall-clock times
    assert [r[0] for r in rows[1:]] == [m.strftime("%m/%d/%Y %H:%M:%S.000") for m in stamps]


def test_the_repeated_hour_second_pass_is_the_later_instant() -> None:
    zone = ZoneInfo("America/Los_Angeles")  # 2024-11-03 02:00 PDT -> 01:00 PST
    local = [datetime(2024, 11, 3, 1, 30), datetime(2024, 11, 3, 1, 45), datetime(2024, 11, 3, 1, 15)]
    offsets = local_offsets(np.array([rw.filetime(m) for m in local], np.int64), zone)
    assert offsets.tolist() == [-420, -420, -480]  # the third went back: the second 01:15


def test_a_windows_zone_name_in_plain_text_resolves(tmp_path: Path) -> None:
    zone = TimeZone(
        -60, "Central European Standard Time", "Central European Daylight Time", daylight_bias=-60
    )
    path = _write(tmp_path / "cest.blg", zone, [datetime(2024, 8, 13, 19, 55, s) for s in (0, 3)])
    facts = _inspect(path)
    assert facts["time_zone_iana"] == "Europe/Warsaw"
    assert facts["utc_offset_minutes"] == 120
    assert _converted(path, tmp_path)[0][0] == "(PDH-CSV 4.0) (Central European Daylight Time)(-120)"


def test_an_unknown_tzres_id_is_unresolved_and_the_bias_stays_fixed(tmp_path: Path) -> None:
    zone = TimeZone(480, "@tzres.dll,-99992", "@tzres.dll,-99991", daylight_bias=-60)
    path = _write(tmp_path / "unknown.blg", zone, [datetime(2024, 7, 15, 12, 0, s) for s in (0, 5)])
    facts = _inspect(path)
    assert facts["time_zone_iana"] is None
    assert "-99992" in str(facts["time_zone_unresolved"]) and "not in the table" in str(
        facts["time_zone_unresolved"]
    )
    assert facts["utc_offset_minutes"] == -480  # the header's bias, as stated: no daylight guessed
    log = read_blg(path)
    assert log.samples.get_column("timestamp")[0] == datetime(2024, 7, 15, 20, 0, tzinfo=UTC)
    (note,) = [p for p in log.problems if "UTC offset" in p.message]
    assert "daylight saving not applied" in note.message and "-99992" in note.message


@pytest.mark.parametrize(
    ("bias", "std", "dlt", "month", "iana", "shown", "offset"),
    [
        (-60, 322, 321, 7, "Europe/Berlin", "W. Europe Daylight Time", 120),
        (-60, 302, 301, 1, "Europe/Paris", "Romance Standard Time", 60),
        (0, 262, 261, 7, "Europe/London", "GMT Daylight Time", 60),
        (0, 262, 261, 1, "Europe/London", "GMT Standard Time", 0),
        (-540, 632, 631, 7, "Asia/Tokyo", "Tokyo Standard Time", 540),
        (-330, 492, 491, 1, "Asia/Calcutta", "India Standard Time", 330),
        (420, 192, 191, 7, "America/Denver", "Mountain Daylight Time", -360),
        (420, 202, 201, 7, "America/Phoenix", "US Mountain Standard Time", -420),
        (-180, 1832, 1831, 7, "Europe/Moscow", "Russia TZ 2 Standard Time", 180),
        (-480, 592, 591, 1, "Asia/Singapore", "Malay Peninsula Standard Time", 480),
    ],
)
def test_the_registry_ids_past_fiji_resolve(
    tmp_path: Path, bias: int, std: int, dlt: int, month: int, iana: str, shown: str, offset: int
) -> None:
    """Ids of the whole Windows 10 Time Zones dump (tzres.toml), from common zones past Fiji: the
    key's IANA zone, daylight saving in July where the zone has it, the English text relog prints."""
    zone = TimeZone(bias, f"@tzres.dll,-{std}", f"@tzres.dll,-{dlt}", daylight_bias=-60)
    path = _write(tmp_path / f"z{std}.blg", zone, [datetime(2024, month, 15, 12, 0, s) for s in (0, 5)])
    facts = _inspect(path)
    assert (facts["time_zone_iana"], facts["time_zone_unresolved"]) == (iana, None)
    assert (facts["time_zone"], facts["utc_offset_minutes"]) == (shown, offset)
    assert _converted(path, tmp_path)[0][0] == f"(PDH-CSV 4.0) ({shown})({-offset})"


def test_ids_the_dump_does_not_name_as_a_zone_name_stay_unresolved() -> None:
    # -320 is W. Europe's MUI_Display (the "(UTC+01:00) Amsterdam, ..." line), not a zone name;
    # -2142 is no value of the dump at all. Both are named as unknown, never guessed.
    for written in ("@tzres.dll,-320", "@tzres.dll,-2142"):
        found = resolve_zone(_header(TimeZone(-60, written, written)), rw.filetime(datetime(2024, 7, 1)))
        assert (found.iana, found.windows) == (None, None)
        assert f"{written} is a tzres.dll resource id not in the table of known ids" in str(found.why)


def test_an_obsolete_key_of_the_dump_is_named_but_not_mapped() -> None:
    found = resolve_zone(_header(TimeZone(-720, "@tzres.dll,-982", "@tzres.dll,-981")), None)
    assert (found.windows, found.iana) == ("Kamchatka Standard Time", None)
    assert "CLDR maps no IANA zone to 'Kamchatka Standard Time'" in str(found.why)


def test_a_zone_name_in_another_language_is_unresolved_by_name(tmp_path: Path) -> None:
    zone = TimeZone(-60, "Mitteleuropäische Zeit", "Mitteleuropäische Sommerzeit", daylight_bias=-60)
    path = _write(tmp_path / "de.blg", zone, [datetime(2024, 7, 15, 12, 0, s) for s in (0, 5)])
    facts = _inspect(path)
    assert facts["time_zone_written"] == {
        "standard": "Mitteleuropäische Zeit",
        "daylight": "Mitteleuropäische Sommerzeit",
    }
    assert facts["time_zone_iana"] is None and "another display language" in str(
        facts["time_zone_unresolved"]
    )
    assert facts["utc_offset_minutes"] == 60 and facts["daylight_saving_applied"] is False


def test_a_header_bias_that_contradicts_the_zone_is_not_resolved() -> None:
    header = _header(TimeZone(-60, "@tzres.dll,-212", "@tzres.dll,-211"))
    found = resolve_zone(header, rw.filetime(datetime(2024, 7, 1)))
    assert found.iana is None and found.windows == "Pacific Standard Time"
    assert "not at the header's bias (-60 min)" in str(found.why)


def test_the_samples_own_clock_wins_and_a_disagreement_is_named(tmp_path: Path) -> None:
    summer = [datetime(2024, 7, 15, 12, 0, s) for s in (0, 5, 10)]
    agreeing = read_blg(_write(tmp_path / "agree.blg", PACIFIC, summer, clock_offset=-420))
    assert agreeing.utc_offset_minutes == -420
    assert not any("UTC offset" in p.message for p in agreeing.problems)
    path = _write(tmp_path / "disagree.blg", PACIFIC, summer, clock_offset=-480)
    log = read_blg(path)
    assert log.utc_offset_minutes == -480
    assert log.samples.get_column("timestamp")[0] == datetime(2024, 7, 15, 20, 0, tzinfo=UTC)
    (problem,) = [p for p in log.problems if "disagrees" in p.message]
    assert "America/Los_Angeles" in problem.message and problem.location
    assert _inspect(path)["daylight_saving_applied"] is False


@pytest.mark.parametrize(
    ("name", "iana", "shown"),
    [
        ("SampleLog.blg", "America/New_York", "Eastern Daylight Time"),
        ("powershell/CounterSamples.blg", "America/Los_Angeles", "Pacific Standard Time"),
        ("powershell/BadCounterSamples.blg", "America/Cayenne", "SA Eastern Standard Time"),
    ],
)
def test_the_real_logs_resolve_and_agree_with_their_own_clocks(name: str, iana: str, shown: str) -> None:
    facts = _inspect(Path(__file__).resolve().parent / "data" / "blg" / name)
    assert (facts["time_zone_iana"], facts["time_zone"]) == (iana, shown)
    assert facts["daylight_saving_applied"] is True  # the clock and the zone agree
    assert not any("disagrees" in str(p) for p in facts["problems"])  # type: ignore[attr-defined]


def _header(zone: TimeZone):  # type: ignore[no-untyped-def]
    from esrp_report.ingest.perfmon.blg.header import BlgHeader

    return BlgHeader(
        buffer_size=65536,
        pointer_size=8,
        os_version="10.0.1.5",
        os_build=22631,
        processors=1,
        cpu_mhz=1,
        start=None,
        end=None,
        boot=None,
        perf_frequency=PERF_FREQ,
        buffers_written=1,
        events_lost=0,
        buffers_lost=0,
        bias_minutes=zone.bias,
        standard_name=zone.standard_name,
        daylight_name=zone.daylight_name,
        daylight_bias=zone.daylight_bias,
        logger="",
        log_file="",
    )


def test_an_unresolved_zone_with_a_daylight_rule_is_noted_when_the_clock_gives_the_offset(
    tmp_path: Path,
) -> None:
    zone = TimeZone(480, "@tzres.dll,-99992", "@tzres.dll,-99991", daylight_bias=-60)
    log = read_blg(
        _write(tmp_path / "clock.blg", zone, [datetime(2024, 7, 15, 12, 0, s) for s in (0, 5)], -420)
    )
    assert log.utc_offset_minutes == -420  # the clock's, not the header's bias
    (note,) = [p for p in log.problems if "UTC offset" in p.message]
    assert (
        note.severity == "note" and "-99992" in note.message and "daylight saving not applied" in note.message
    )
