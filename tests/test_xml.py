from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from esrp_report import model as m
from esrp_report.errors import UnsafeInputError, UnsupportedFormatError, XmlInputError
from esrp_report.ingest.config_xml import read_config_xml, read_config_xml_with_problems
from esrp_report.ingest.result_xml import read_result_xml
from esrp_report.ingest.safe_xml import parse_xml
from esrp_report.model import (
    ConfigProfile,
    DatabaseConfig,
    InstanceRow,
    InstanceTable,
    Run,
    TableKind,
    TestKind,
    Thresholds,
)
from esrp_report.synth.jetstress_xml import write_config_xml, write_result_xml

XXE = b'<?xml version="1.0"?><!DOCTYPE output [<!ENTITY e SYSTEM "file:///etc/passwd">]><output>&e;</output>'
BOMB = (
    b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    + b"".join(
        f'<!ENTITY lol{i} "{"&lol{};".format(i - 1 if i > 1 else "") * 10}">'.encode() for i in range(1, 10)
    )
    + b"]><output>&lol9;</output>"
)
PARAMETER = b'<!DOCTYPE x [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]><output/>'
NETWORK_DTD = b'<?xml version="1.0"?><!DOCTYPE output SYSTEM "http://127.0.0.1:9/evil.dtd"><output/>'
XINCLUDE = (
    b'<output xmlns:xi="http://www.w3.org/2001/XInclude"><test-summary>'
    b'<xi:include href="file:///etc/passwd" parse="text"/></test-summary></output>'
)


@pytest.mark.parametrize(
    "data", [XXE, BOMB, PARAMETER], ids=["external-entity", "billion-laughs", "parameter-entity"]
)
def test_entity_declarations_are_refused(data: bytes) -> None:
    started = time.perf_counter()
    with pytest.raises(UnsafeInputError, match="entity declarations are not allowed") as info:
        parse_xml(data, "evil.xml")
    assert "evil.xml" in str(info.value)
    assert time.perf_counter() - started < 5  # refused before any expansion


def test_a_network_dtd_and_xinclude_are_never_followed(tmp_path: Path) -> None:
    root = parse_xml(NETWORK_DTD, "dtd.xml")
    assert root.tag == "output"
    path = tmp_path / "Performance_x.xml"
    path.write_bytes(XINCLUDE)
    run = read_result_xml(path)
    assert "root:" not in repr(run)


def test_malformed_xml_names_line_and_column() -> None:
    with pytest.raises(XmlInputError, match=r"bad\.xml: line 2, column \d+: malformed XML"):
        parse_xml(b"<output>\n<a></b></output>", "bad.xml")


def test_utf16_xml_is_read() -> None:
    data = '<?xml version="1.0" encoding="utf-16"?><output><x/></output>'.encode("utf-16")
    assert parse_xml(data, "u16.xml").tag == "output"


def test_wrong_root_is_not_a_result_xml(tmp_path: Path) -> None:
    path = tmp_path / "x.xml"
    path.write_bytes(b"<configuration/>")
    with pytest.raises(UnsupportedFormatError, match="expected <output>"):
        read_result_xml(path)


_value = st.floats(min_value=0, max_value=1e9, allow_nan=False)


@given(
    values=st.lists(_value, min_size=4, max_size=4),
    names=st.lists(
        st.from_regex(r"Instance[0-9]{1,5}\.[0-9]{1,2}", fullmatch=True), min_size=1, max_size=4, unique=True
    ),
)
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_result_xml_round_trip(tmp_path: Path, values: list[float], names: list[str]) -> None:
    run = Run(TestKind.PERFORMANCE, "MBX1", overall_result="Pass", jetstress_version="15.00.0995.000")
    run.sizing.achieved_iops, run.sizing.target_iops = values[0], values[1]
    run.tables[TableKind.TOTAL] = InstanceTable(
        TableKind.TOTAL,
        [InstanceRow(n, {m.DB_READS: values[2], m.DB_READ_LATENCY: values[3]}) for n in names],
    )
    run.tables[TableKind.LOG_REPLICATION] = InstanceTable(
        TableKind.LOG_REPLICATION, [InstanceRow(n, {m.LOG_READS: values[3]}) for n in names]
    )
    path = tmp_path / "Performance_2013_6_3_19_41_47.xml"
    path.write_bytes(write_result_xml(run))
    parsed = read_result_xml(path)
    assert parsed.kind is TestKind.PERFORMANCE and parsed.machine == "MBX1"
    assert parsed.sizing.achieved_iops == values[0] and parsed.sizing.target_iops == values[1]
    assert {k: [(r.instance, r.values) for r in t.rows] for k, t in parsed.tables.items()} == {
        k: [(r.instance, r.values) for r in t.rows] for k, t in run.tables.items()
    }


def test_config_round_trip_and_target(tmp_path: Path) -> None:
    profile = ConfigProfile(
        "c.xml",
        test_type="Stress",
        duration="P0Y0M1DT0H0M0S",
        mailbox_count=1000,
        mailbox_iops=0.12,
        mailbox_quota_mb=2000.0,
        thread_count=3,
        database_copy_count=2,
        log_interval_ms=15000,
        jetstress_version="15.0.995.0",
        threshold_sets={
            "Strict": (Thresholds(20.0, 100.0, 10.0, 100.0), []),
            "Lenient": (Thresholds(20.0, 200.0, 10.0, 200.0), ["Stress"]),
        },
        instances=[DatabaseConfig("Instance.1", r"G:\log", [r"E:\db\Jetstress001001.edb"])],
    )
    path = tmp_path / "JetstressConfig.xml"
    path.write_bytes(write_config_xml(profile))
    parsed = read_config_xml(path)
    assert parsed.target_iops == pytest.approx(120.0)
    assert parsed.threshold_sets == profile.threshold_sets
    assert parsed.instances == profile.instances
    assert (parsed.mailbox_count, parsed.thread_count, parsed.duration) == (1000, 3, "P0Y0M1DT0H0M0S")


def test_config_unknown_elements_are_ignored_and_bad_values_reported(tmp_path: Path) -> None:
    path = tmp_path / "JetstressConfig.xml"
    path.write_bytes(
        b"<configuration><Future><X/></Future><ExchangeProfile><MailboxCount>many</MailboxCount>"
        b"<MailboxIops>0.1</MailboxIops></ExchangeProfile></configuration>"
    )
    profile, problems = read_config_xml_with_problems(path)
    assert profile.mailbox_count is None and profile.mailbox_iops == 0.1 and profile.target_iops is None
    assert [p.message for p in problems] == ["ExchangeProfile/MailboxCount: not a number: 'many'; ignored"]
