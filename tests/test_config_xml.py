from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from esrp_report.ingest.jetstress.config_xml import (
    read_config_xml,
    read_config_xml_with_problems,
    sniff_config_xml,
)
from esrp_report.model import ConfigProfile, DatabaseConfig, Thresholds
from esrp_report.model.errors import UnsafeInputError, UnsupportedFormatError
from esrp_synth.jetstress_xml import write_config_xml

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "config" / "JetstressConfig_EMAIL5.xml"

# The element layout of a Jetstress 2013 configuration (facts §4), values this project's own.
CONFIG_2013 = """\
<?xml version="1.0" encoding="utf-8"?>
<configuration xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">
  <JetstressVersionGenerated>15.0.995.0</JetstressVersionGenerated>
  <EseVersionGenerated>15.0.847.30</EseVersionGenerated>
  <TestDesignInfo>
    <Type>Stress</Type>
    <MultiHostBreak>false</MultiHostBreak>
    <Description />
    <Duration>P0Y0M1DT0H0M0S</Duration>
    <BinaryPerfLog>true</BinaryPerfLog>
    <VerifyChecksum>true</VerifyChecksum>
    <LogInterval>15000</LogInterval>
    <LogInterval2>5000</LogInterval2>
    <OperationMix LockOps="false" InsertOps="40" DeleteOps="20" ReplaceOps="5" LazyCommits="70" />
    <MaximumLatencyErrors>6</MaximumLatencyErrors>
    <Thresholds Name="Strict">
      <AverageDatabaseReadLatency>20</AverageDatabaseReadLatency>
      <MaximumDatabaseReadLatency>100</MaximumDatabaseReadLatency>
      <AverageLogWriteLatency>10</AverageLogWriteLatency>
      <MaximumLogWriteLatency>100</MaximumLogWriteLatency>
    </Thresholds>
    <Thresholds Name="Lenient" TestRunTypes="Stress">
      <AverageDatabaseReadLatency>20</AverageDatabaseReadLatency>
      <MaximumDatabaseReadLatency>200</MaximumDatabaseReadLatency>
      <AverageLogWriteLatency>10</AverageLogWriteLatency>
      <MaximumLogWriteLatency>200</MaximumLogWriteLatency>
    </Thresholds>
  </TestDesignInfo>
  <ExchangeProfile>
    <ThreadCount>10</ThreadCount>
    <DatabaseSource>New</DatabaseSource>
    <DatabaseSizing>Profile</DatabaseSizing>
    <MailboxCount>4000</MailboxCount>
    <MailboxQuota>2048</MailboxQuota>
    <MailboxIops>0.12</MailboxIops>
    <MarginIops>0.05</MarginIops>
    <DatabaseCopyCount>2</DatabaseCopyCount>
    <EseInstances>
      <EseInstance IopsBias="1">
        <DatabasePaths>
          <Path>E:\\DB1\\Jetstress001001.edb</Path>
          <Path>E:\\DB1\\Jetstress001002.edb</Path>
        </DatabasePaths>
        <LogPath>F:\\LOG1</LogPath>
        <DatabaseBackupPath />
      </EseInstance>
      <EseInstance IopsBias="1">
        <DatabasePaths>
          <Path>E:\\DB2\\Jetstress002001.edb</Path>
        </DatabasePaths>
        <LogPath>F:\\LOG2</LogPath>
      </EseInstance>
    </EseInstances>
  </ExchangeProfile>
  <JetSystemParams>
    <DatabasePageSize>32768</DatabasePageSize>
    <LogFileSize>1024</LogFileSize>
  </JetSystemParams>
</configuration>
"""

STRICT = Thresholds(20.0, 100.0, 10.0, 100.0)
LENIENT = Thresholds(20.0, 200.0, 10.0, 200.0)


def email5_profile() -> ConfigProfile:
    """The EMAIL5 server of the published VMAX design: 20 databases, 10,000 mailboxes at 0.14 IOPS."""
    return ConfigProfile(
        source="JetstressConfig_EMAIL5.xml",
        test_type="Performance",
        duration="P0Y0M0DT2H0M0S",
        mailbox_count=10000,
        mailbox_iops=0.14,
        mailbox_quota_mb=2048.0,
        thread_count=5,
        database_copy_count=2,
        log_interval_ms=15000,
        jetstress_version="14.01.0225.017",
        threshold_sets={"Strict": (STRICT, []), "Lenient": (LENIENT, ["Stress"])},
        instances=[
            DatabaseConfig(
                f"Instance.{n}", rf"C:\MP\LOG\LOG{n}", [rf"C:\MP\DB\DB{n}\Jetstress{n:03d}001.edb"]
            )
            for n in range(1, 21)
        ],
    )


def _write(tmp_path: Path, data: str | bytes, name: str = "JetstressConfig.xml") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def test_a_2013_configuration(tmp_path: Path) -> None:
    profile, problems = read_config_xml_with_problems(_write(tmp_path, CONFIG_2013))
    assert problems == []
    assert (profile.test_type, profile.duration, profile.log_interval_ms) == (
        "Stress",
        "P0Y0M1DT0H0M0S",
        15000,
    )
    assert (profile.mailbox_count, profile.mailbox_iops, profile.mailbox_quota_mb) == (4000, 0.12, 2048.0)
    assert (profile.thread_count, profile.database_copy_count) == (10, 2)
    assert profile.jetstress_version == "15.0.995.0"
    assert profile.threshold_sets == {"Strict": (STRICT, []), "Lenient": (LENIENT, ["Stress"])}
    assert profile.instances == [
        DatabaseConfig(
            "Instance.1", r"F:\LOG1", [r"E:\DB1\Jetstress001001.edb", r"E:\DB1\Jetstress001002.edb"]
        ),
        DatabaseConfig("Instance.2", r"F:\LOG2", [r"E:\DB2\Jetstress002001.edb"]),
    ]
    assert profile.target_iops == pytest.approx(480.0)


def test_read_config_xml_is_the_profile_without_problems(tmp_path: Path) -> None:
    path = _write(tmp_path, CONFIG_2013)
    assert read_config_xml(path) == read_config_xml_with_problems(path)[0]


def test_unknown_elements_are_ignored_and_bad_values_reported(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "<configuration>\n<Future><X/></Future>\n<ExchangeProfile>\n<MailboxCount>many</MailboxCount>\n"
        "<MailboxIops>0.1</MailboxIops>\n<ThreadCount>2.5</ThreadCount>\n</ExchangeProfile>\n"
        "<TestDesignInfo><Type>Marathon</Type><Duration>two hours</Duration>\n"
        "<Thresholds><AverageDatabaseReadLatency>20 ms</AverageDatabaseReadLatency></Thresholds>\n"
        "<Thresholds Name='Strict'/><Thresholds Name='Strict'/></TestDesignInfo>\n</configuration>",
    )
    profile, problems = read_config_xml_with_problems(path)
    assert profile.mailbox_count is None and profile.mailbox_iops == 0.1 and profile.target_iops is None
    assert profile.thread_count is None
    assert profile.test_type == "Marathon" and profile.duration == "two hours"  # kept as written
    assert profile.threshold_sets == {"Thresholds 1": (Thresholds(), []), "Strict": (Thresholds(), [])}
    assert [(p.location, p.message, p.lost) for p in problems] == [
        ("line 4", "ExchangeProfile/MailboxCount: not a number: 'many'; ignored", 1),
        ("line 6", "ExchangeProfile/ThreadCount: not a whole number: '2.5'; ignored", 1),
        ("line 8", "TestDesignInfo/Type 'Marathon' is not a known Jetstress test type; kept as written", 0),
        (
            "line 8",
            "TestDesignInfo/Duration 'two hours' is not an ISO-8601 duration like 'P0Y0M0DT2H0M0S'; kept as written",
            0,
        ),
        ("line 9", "Thresholds/AverageDatabaseReadLatency: not a number: '20 ms'; ignored", 1),
        ("line 9", "<Thresholds> without a Name; called 'Thresholds 1'", 0),
        ("line 10", "second <Thresholds Name='Strict'>; the first is used", 1),
    ]


def test_namespaces_named_instances_and_run_type_lists(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '<c:configuration xmlns:c="urn:jetstress"><c:TestDesignInfo>'
        '<c:Thresholds Name="Lenient" TestRunTypes="Stress, Performance">'
        "<c:MaximumLogWriteLatency>200</c:MaximumLogWriteLatency></c:Thresholds></c:TestDesignInfo>"
        '<c:ExchangeProfile><c:EseInstances><c:EseInstance Name="DB01"><c:LogPath>L:\\</c:LogPath></c:EseInstance>'
        "<c:EseInstance/></c:EseInstances></c:ExchangeProfile></c:configuration>",
    )
    profile, problems = read_config_xml_with_problems(path)
    assert profile.threshold_sets == {
        "Lenient": (Thresholds(log_write_max_ms=200.0), ["Stress", "Performance"])
    }
    assert profile.instances == [DatabaseConfig("DB01", "L:\\", []), DatabaseConfig("Instance.2", None, [])]
    assert [p.message for p in problems] == ["EseInstance 2 names no database or log path"]


def test_wrong_root_and_unsafe_files(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFormatError, match=r"expected <configuration>, found '<output>'"):
        read_config_xml(_write(tmp_path, "<output/>"))
    with pytest.raises(UnsafeInputError, match=r"JetstressConfig\.xml: line 1: entity declarations"):
        read_config_xml(_write(tmp_path, '<!DOCTYPE configuration [<!ENTITY a "b">]><configuration/>'))


def test_utf16_configuration(tmp_path: Path) -> None:
    data = CONFIG_2013.replace('encoding="utf-8"', 'encoding="utf-16"').encode("utf-16")
    assert read_config_xml(_write(tmp_path, data)).mailbox_count == 4000


def test_sniff() -> None:
    assert sniff_config_xml(CONFIG_2013.encode()[:300])
    assert sniff_config_xml(b"\xef\xbb\xbf<configuration>")
    assert not sniff_config_xml(b"<output/>")


def test_bundled_email5_configuration() -> None:
    profile, problems = read_config_xml_with_problems(SAMPLE)
    assert problems == []
    assert (profile.test_type, profile.duration) == ("Performance", "P0Y0M0DT2H0M0S")
    assert len(profile.instances) == 20 and profile.instances[19].log_path == r"C:\MP\LOG\LOG20"
    assert (profile.mailbox_count, profile.mailbox_iops) == (10000, 0.14)
    # 10000 * 0.14 in binary floating point is 1400.0000000000002; the model multiplies as is.
    assert profile.target_iops == pytest.approx(1400.0, rel=1e-15)
    assert profile.threshold_sets == {"Strict": (STRICT, []), "Lenient": (LENIENT, ["Stress"])}
    # The file is exactly what the writer makes of the profile, so it can be regenerated.
    assert SAMPLE.read_bytes() == write_config_xml(email5_profile())


_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs", "Cc", "Cn", "Zs", "Zl", "Zp"]),
    min_size=1,
    max_size=20,
)
_limit = st.none() | st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)


@st.composite
def _profiles(draw: st.DrawFn) -> ConfigProfile:
    instance_count = draw(st.integers(min_value=0, max_value=4))
    instances = [
        DatabaseConfig(
            draw(st.sampled_from([f"Instance.{n}", f"Instance4760.{n}"])),
            draw(st.none() | _text),
            draw(st.lists(_text, max_size=3)),
        )
        for n in range(1, instance_count + 1)
    ]
    sets = draw(
        st.dictionaries(
            _text,
            st.tuples(
                st.builds(Thresholds, _limit, _limit, _limit, _limit),
                st.lists(
                    st.sampled_from(["Performance", "Stress", "DatabaseBackup", "SoftRecovery"]), max_size=2
                ),
            ),
            max_size=3,
        )
    )
    return ConfigProfile(
        source="ignored",
        test_type=draw(
            st.none() | st.sampled_from(["Performance", "Stress", "DatabaseBackup", "SoftRecovery"])
        ),
        duration=draw(st.none() | st.from_regex(r"P0Y0M[0-9]DT[0-9]{1,2}H0M0S", fullmatch=True)),
        mailbox_count=draw(st.none() | st.integers(min_value=0, max_value=10**6)),
        mailbox_iops=draw(_limit),
        mailbox_quota_mb=draw(_limit),
        thread_count=draw(st.none() | st.integers(min_value=0, max_value=1000)),
        database_copy_count=draw(st.none() | st.integers(min_value=1, max_value=16)),
        log_interval_ms=draw(st.none() | st.integers(min_value=1, max_value=600_000)),
        threshold_sets={name: (t, list(kinds)) for name, (t, kinds) in sets.items()},
        instances=[db for db in instances if db.log_path is not None or db.database_paths],
        jetstress_version=draw(
            st.none() | st.from_regex(r"1[45]\.0[01]\.[0-9]{3,4}\.[0-9]{1,3}", fullmatch=True)
        ),
    )


@given(profile=_profiles())
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_config_round_trip(tmp_path: Path, profile: ConfigProfile) -> None:
    path = tmp_path / "JetstressConfig.xml"
    path.write_bytes(write_config_xml(profile))
    back, problems = read_config_xml_with_problems(path)
    assert problems == []
    back.source = profile.source
    assert back == profile
