from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from esrp_report import model as m
from esrp_report.ingest.jetstress.result_xml import read_result_xml, sniff_result_xml
from esrp_report.model import InstanceRow, InstanceTable, Run, Sizing, TableKind, TestKind
from esrp_report.model.errors import UnsupportedFormatError, XmlInputError
from esrp_synth.jetstress_xml import write_result_xml

# Shaped like a Jetstress 2013 result XML (facts §2.2) with the spellings a reader must expect:
# "(Attached)" and "(msec)" in counter names, min/max attributes, an unknown section and element.
RESULT_2013 = """\
<?xml version="1.0" encoding="utf-8"?>
<output>
  <test-summary>
    <element name="Overall Test Result" value="Fail" />
    <element name="Machine Name" value="MBX01" />
    <element name="Test Description" value="4 databases, 2 copies" />
    <element name="Test Start Time" value="6/3/2019 7:41:47 PM" />
    <element name="Test End Time" value="6/3/2019 9:47:12 PM" />
    <element name="Collection Start Time" value="6/3/2019 7:45:02 PM" />
    <element name="Collection End Time" value="6/3/2019 9:45:02 PM" />
    <element name="Jetstress Version" value="15.01.0466.031" />
    <element name="ESE Version" value="15.01.1591.010" />
    <element name="Operating System" value="Windows Server 2016 Datacenter (6.2.9200.0)" />
    <element name="Performance Log" value="C:\\Jetstress\\Performance_2019_6_3_19_41_47.blg" />
  </test-summary>
  <test-issues>
    <element value="Fail - The test has 1.05381856535713 Average Database Page Fault Stalls/sec." />
    <element value="" />
  </test-issues>
  <database-sizing>
    <element name="Achieved Transactional I/O per Second" value="1,445.341" />
    <element name="Target Transactional I/O per Second" value="1400" />
    <element name="Capacity Percentage" value="100%" />
    <element name="Throughput Percentage" value="100%" />
    <element name="Final Database Size (bytes)" value="21501899440128" />
    <element name="Database Files (Count)" value="4" />
  </database-sizing>
  <jetstress-system>
    <element name="Thread Count" value="10" />
    <element name="Insert Operations" value="40%" />
    <element name="Run Background Database Maintenance" value="True" />
  </jetstress-system>
  <something-new><element name="x" value="y" /></something-new>
  <disk-subsystem-total>
    <object name="MSExchange Database ==> Instances">
      <instance name="Instance6232.1">
        <counter name="I/O Database Reads (Attached) Average Latency (msec)" average="18.471" maximum="40.2" minimum="" />
        <counter name="I/O Database Writes (Attached) Average Latency" average="2.976" />
        <counter name="I/O Database Reads (Attached)/sec" average="75.472" />
        <counter name="I/O Database Writes (Attached)/sec" average="27.88" />
        <counter name="I/O Database Reads (Recovery) Average Latency" average="9.5" />
        <counter name="I/O Log Writes Average Latency (msec)" average="0.848" />
        <counter name="I/O Log Writes/sec" average="24.988" />
        <counter name="I/O Log Reads/sec" average="0.467" />
      </instance>
      <instance name="Instance6232.2">
        <counter name="I/O Database Reads Average Latency" average="18.353" />
        <counter name="I/O Database Reads/sec" average="not measured" />
        <counter name="I/O Database Writes/sec" />
      </instance>
    </object>
    <object name="LogicalDisk">
      <instance name="E:"><counter name="I/O Database Reads/sec" average="1" /></instance>
    </object>
  </disk-subsystem-total>
  <disk-subsystem-of-dbmaintenance>
    <object name="MSExchange Database ==> Instances">
      <instance name="Instance6232.1">
        <counter name="Database Maintenance IO Reads/sec" average="30.814" />
        <counter name="Database Maintenance IO Reads Average Bytes" average="261912.276" />
      </instance>
    </object>
  </disk-subsystem-of-dbmaintenance>
  <disk-subsystem-of-logreplication>
    <object name="MSExchange Database ==> Instances">
      <instance name="Instance6232.1">
        <counter name="Database Maintenance IO Reads/sec" average="0.467" />
        <counter name="I/O Log Reads Average Bytes" average="180732.473" />
      </instance>
    </object>
  </disk-subsystem-of-logreplication>
</output>
"""


@pytest.fixture
def result_2013(tmp_path: Path) -> Run:
    path = tmp_path / "Performance_2019_6_3_19_41_47.xml"
    path.write_text(RESULT_2013, encoding="utf-8")
    return read_result_xml(path)


def test_summary_sizing_and_parameters(result_2013: Run) -> None:
    run = result_2013
    assert (run.kind, run.machine, run.overall_result) == (TestKind.PERFORMANCE, "MBX01", "Fail")
    assert run.jetstress_version == "15.01.0466.031" and run.ese_version == "15.01.1591.010"
    assert run.test_start == datetime(2019, 6, 3, 19, 41, 47)
    assert run.collection_end == datetime(2019, 6, 3, 21, 45, 2)
    assert run.performance_log == r"C:\Jetstress\Performance_2019_6_3_19_41_47.blg"
    assert run.summary["Machine Name"] == "MBX01" and len(run.summary) == 11
    assert run.issues == ["Fail - The test has 1.05381856535713 Average Database Page Fault Stalls/sec."]
    assert run.sizing == Sizing(
        achieved_iops=1445.341, target_iops=1400.0, final_database_bytes=21501899440128.0, database_files=4
    )
    assert run.parameters == {
        "Capacity Percentage": "100%",
        "Throughput Percentage": "100%",
        "Thread Count": "10",
        "Insert Operations": "40%",
        "Run Background Database Maintenance": "True",
    }


def test_instance_tables_with_name_variants(result_2013: Run) -> None:
    total = result_2013.tables[TableKind.TOTAL]
    assert total.instances() == [
        "Instance6232.1",
        "Instance6232.2",
    ]  # the LogicalDisk object is not a database
    assert total.rows[0].values == {
        m.DB_READ_LATENCY: 18.471,
        m.DB_WRITE_LATENCY: 2.976,
        m.DB_READS: 75.472,
        m.DB_WRITES: 27.88,
        m.LOG_WRITE_LATENCY: 0.848,
        m.LOG_WRITES: 24.988,
        m.LOG_READS: 0.467,
    }
    assert total.rows[1].values == {m.DB_READ_LATENCY: 18.353}  # damaged cells absent, never 0
    bdm = result_2013.tables[TableKind.BACKGROUND_MAINTENANCE].rows[0].values
    assert bdm == {m.BDM_READS: 30.814, m.BDM_READ_BYTES: 261912.276}
    # The replication table's header may repeat the maintenance names (facts §9).
    replication = result_2013.tables[TableKind.LOG_REPLICATION].rows[0].values
    assert replication == {m.LOG_READS: 0.467, m.LOG_READ_BYTES: 180732.473}
    assert TableKind.TRANSACTIONAL not in result_2013.tables


def test_damaged_values_are_problems_with_lines(result_2013: Run) -> None:
    messages = {p.message: p for p in result_2013.problems}
    bad = next(p for msg, p in messages.items() if "'not measured' is not a number" in msg)
    line = next(n for n, text in enumerate(RESULT_2013.splitlines(), 1) if "not measured" in text)
    assert bad.location == f"line {line}, <counter>" and bad.lost == 1
    assert any("has no average" in msg for msg in messages)
    other = next(p for msg, p in messages.items() if "besides the average" in msg)
    assert other.severity == "note" and other.message.startswith("1 counter(s)")
    assert any("'LogicalDisk' is not per database instance" in msg for msg in messages)
    assert all(p.source.endswith("Performance_2019_6_3_19_41_47.xml") for p in result_2013.problems)


def test_a_transactional_section_and_kind_from_the_name(tmp_path: Path) -> None:
    path = tmp_path / "Stress_2019_6_4_8_0_0.xml"
    path.write_bytes(
        b'<output><test-summary><element name="Machine Name" value="MBX02"/></test-summary>'
        b'<disk-subsystem-transactional><object name="MSEXchange Database ==&gt; Instances">'
        b'<instance name="Instance1.1"><counter name="I/O Database Reads/ sec" average="44.658"/></instance>'
        b'<instance name="_Total"><counter name="I/O Database Reads/sec" average="44.658"/></instance>'
        b"</object></disk-subsystem-transactional></output>"
    )
    run = read_result_xml(path)
    assert run.kind is TestKind.STRESS
    assert [(r.instance, r.values) for r in run.tables[TableKind.TRANSACTIONAL].rows] == [
        ("Instance1.1", {m.DB_READS: 44.658})
    ]
    assert any("'_Total' is a total" in p.message for p in run.problems)
    assert run.overall_result is None and run.test_start is None


def test_missing_facts_are_absent_and_noted(tmp_path: Path) -> None:
    path = tmp_path / "results.xml"
    path.write_bytes(
        b'<output><test-summary><element name="Test Start Time" value="yesterday"/>'
        b'<element value="no name"/></test-summary></output>'
    )
    run = read_result_xml(path)
    assert run.kind is TestKind.PERFORMANCE and run.machine == ""
    assert run.test_start is None and run.tables == {} and run.sizing == Sizing()
    messages = [p.message for p in run.problems]
    assert any("taken as Performance" in msg for msg in messages)
    assert any("no 'Machine Name'" in msg for msg in messages)
    assert any("'yesterday'" in msg for msg in messages)
    assert any("has no name attribute" in msg for msg in messages)


def test_wrong_root_and_malformed_files(tmp_path: Path) -> None:
    path = tmp_path / "x.xml"
    path.write_bytes(b"<configuration/>")
    with pytest.raises(UnsupportedFormatError, match=r"x\.xml: line 1, root element: .*expected <output>"):
        read_result_xml(path)
    path.write_bytes(b"<output>\n<test-summary>\n</output>")
    with pytest.raises(XmlInputError, match=r"x\.xml: line 3, column \d+"):
        read_result_xml(path)
    with pytest.raises(XmlInputError, match="cannot read file"):
        read_result_xml(tmp_path / "missing.xml")


def test_sniff() -> None:
    assert sniff_result_xml(RESULT_2013.encode()[:200])
    assert sniff_result_xml(RESULT_2013.encode("utf-16")[:400])
    assert not sniff_result_xml(b"<?xml version='1.0'?><configuration>")
    assert not sniff_result_xml(b"<html><body>output</body></html>")


def test_bundled_email5_result_xml(samples: Path) -> None:
    run = read_result_xml(samples / "EMAIL5" / "Performance_2011_3_11_13_27_46.xml")
    assert run.machine == "EMAIL5" and run.sizing.achieved_iops == 1445.341
    assert {kind: len(table.rows) for kind, table in run.tables.items()} == dict.fromkeys(TableKind, 20)
    assert run.problems == []


# Metric keys each table can hold without the log-replication alias changing them.
_TABLE_KEYS = {
    TableKind.TRANSACTIONAL: [k for k in m.INSTANCE_METRICS if not k.startswith("bdm")],
    TableKind.TOTAL: [k for k in m.INSTANCE_METRICS if not k.startswith("bdm")],
    TableKind.BACKGROUND_MAINTENANCE: [m.BDM_READS, m.BDM_READ_BYTES],
    TableKind.LOG_REPLICATION: [m.LOG_READS, m.LOG_READ_BYTES],
}
_value = st.floats(min_value=0, max_value=1e12, allow_nan=False, allow_infinity=False)
_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs", "Cc", "Cn", "Zs", "Zl", "Zp"]),
    min_size=1,
    max_size=20,
)
_stamp = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2040, 1, 1)).map(
    lambda d: d.replace(microsecond=0)
)


@st.composite
def _runs(draw: st.DrawFn) -> Run:
    names = draw(
        st.lists(
            st.from_regex(r"Instance[0-9]{1,5}\.[0-9]{1,2}", fullmatch=True),
            min_size=1,
            max_size=5,
            unique=True,
        )
    )
    run = Run(
        kind=draw(st.sampled_from(list(TestKind))),
        machine=draw(_text),
        overall_result=draw(st.none() | st.sampled_from(["Pass", "Fail"])),
        test_description=draw(st.none() | _text),
        jetstress_version=draw(
            st.none() | st.from_regex(r"1[45]\.0[01]\.[0-9]{4}\.[0-9]{3}", fullmatch=True)
        ),
        ese_version=draw(st.none() | _text),
        operating_system=draw(st.none() | _text),
        test_start=draw(st.none() | _stamp),
        test_end=draw(st.none() | _stamp),
        collection_start=draw(st.none() | _stamp),
        collection_end=draw(st.none() | _stamp),
        issues=draw(st.lists(_text, max_size=3)),
        parameters=draw(st.dictionaries(_text.map(lambda t: "p " + t), _text, max_size=3)),
        sizing=Sizing(
            achieved_iops=draw(st.none() | _value),
            target_iops=draw(st.none() | _value),
            initial_database_bytes=draw(st.none() | _value),
            final_database_bytes=draw(st.none() | _value),
            database_files=draw(st.none() | st.integers(min_value=0, max_value=10_000)),
        ),
    )
    for kind in draw(st.sets(st.sampled_from(list(TableKind)), max_size=4)):
        keys = _TABLE_KEYS[kind]
        rows = [
            InstanceRow(n, draw(st.dictionaries(st.sampled_from(keys), _value, max_size=len(keys))))
            for n in names
        ]
        run.tables[kind] = InstanceTable(kind, rows)
    return run


@given(run=_runs())
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_result_xml_round_trip(tmp_path: Path, run: Run) -> None:
    path = tmp_path / f"{run.kind.value}_2019_6_3_19_41_47.xml"
    path.write_bytes(write_result_xml(run))
    back = read_result_xml(path)
    for field in (
        "kind",
        "machine",
        "overall_result",
        "test_description",
        "jetstress_version",
        "ese_version",
        "operating_system",
        "test_start",
        "test_end",
        "collection_start",
        "collection_end",
        "issues",
        "parameters",
        "sizing",
    ):
        assert getattr(back, field) == getattr(run, field), field
    assert {k: [(r.instance, r.values) for r in t.rows] for k, t in back.tables.items()} == {
        k: [(r.instance, r.values) for r in t.rows] for k, t in run.tables.items()
    }
    assert back.problems == []
