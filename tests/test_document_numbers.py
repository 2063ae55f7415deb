"""The computed document content of the two sample solutions against their published figures."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from esrp_report.analysis.assess import assess
from esrp_report.analysis.rules import Status, load_rules
from esrp_report.app.api import solution_from_manifest
from esrp_report.ingest.config.manifest import read_manifest
from esrp_report.render.document import Document, SummaryTable, build_document

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def _document(name: str) -> Document:
    manifest = read_manifest(SAMPLES / f"{name}.toml")
    solution, labels = solution_from_manifest(manifest)
    rules = load_rules(None)
    return build_document(manifest, assess(solution, rules), rules, labels)


@pytest.fixture(scope="module")
def vmax() -> Document:
    return _document("vmax")


@pytest.fixture(scope="module")
def netapp() -> Document:
    return _document("netapp")


def _row(table: SummaryTable, label_start: str) -> list[str]:
    for row in table.rows:
        if row.label.startswith(label_start):
            return [cell.text for cell in row.cells]
    raise AssertionError(f"no row {label_start!r} in {table.title}")


def test_vmax_aggregate_agrees_with_the_published_table(vmax: Document) -> None:
    table = vmax.aggregate_table
    assert table is not None
    assert table.target_heading == "Target values for 10 servers"
    assert _row(table, "Achieved") == ["14,422.400"]
    assert table.rows[0].target == "14,000"
    assert _row(table, "Database reads") == ["8,877.636"]
    assert _row(table, "Database writes") == ["5,544.760"]
    assert _row(table, "I/O database reads") == ["18.391"]
    assert _row(table, "I/O database writes") == ["3.425"]
    assert _row(table, "I/O log writes") == ["0.891"]


def test_vmax_aggregate_log_writes_are_the_sum_of_the_servers(vmax: Document) -> None:
    per_server = [
        float(text.replace(",", "")) for t in vmax.performance_tables for text in _row(t, "Log writes")
    ]
    assert len(per_server) == 10
    assert vmax.aggregate_table is not None
    assert _row(vmax.aggregate_table, "Log writes") == [f"{sum(per_server):,.3f}"]
    # The published aggregate (4,975.233) does not add up; the evidence's sum is printed instead.
    assert _row(vmax.aggregate_table, "Log writes") == ["4,978.223"]


def test_vmax_per_server_tables_print_the_evidence_not_the_published_slips(vmax: Document) -> None:
    first, second = vmax.performance_tables
    assert first.columns == ["Server 1", "Server 2", "Server 3", "Server 4", "Server 5"]
    assert second.columns == ["Server 6", "Server 7", "Server 8", "Server 9", "Server 10"]
    reads = _row(first, "Database reads")
    assert reads[3] == "889.570"  # published 899.57; EMAIL5's appendix instances sum to 889.570
    assert reads[4] == "890.577"  # published 9890.577
    assert _row(first, "Log writes")[3] == "498.526"  # published 498.536
    assert _row(first, "Achieved") == ["1,424.414", "1,448.535", "1,442.904", "1,445.341", "1,446.975"]
    assert first.rows[0].target == "1,400"


def test_vmax_backup_and_replay(vmax: Document) -> None:
    assert vmax.backup_across is not None
    assert [c.text for c in vmax.backup_across] == ["23.70", "474.00"]
    replay = [c.text for t in vmax.recovery_tables for c in t.rows[0].cells]
    assert replay == ["3.70", "3.73", "3.75", "3.73", "3.69", "3.71", "3.73", "3.68", "3.73", "3.81"]


def test_vmax_profile_is_computed(vmax: Document) -> None:
    rows = dict(vmax.profile_rows)
    assert rows["Number of databases/host"] == "20"
    assert rows["Number of mailboxes/database"] == "500"
    assert rows["Target transactional IOPS per server"] == "1,400"  # as the summary tables print it
    assert rows["Target transactional IOPS, all tested servers"] == "14,000"
    assert rows["% formatted storage capacity used by Exchange databases"].endswith("%")
    assert vmax.verdict is Status.PASS


def test_netapp_figures(netapp: Document) -> None:
    (table,) = netapp.performance_tables
    values = {row.label: row.cells[0].text for row in table.rows if row.cells}
    assert list(values.values()) == ["185.74", "113.14", "72.60", "14.96", "1.02", "61.96", "0.99"]
    assert netapp.backup_table is not None
    assert [row.cells[0].text for row in netapp.backup_table.rows] == ["32.875", "65.750"]
    assert [c.text for c in netapp.recovery_tables[0].rows[0].cells] == ["3.599"]


def test_reliability_statements_come_from_the_evidence(vmax: Document, netapp: Document) -> None:
    vmax_text = " ".join(s.text for s in vmax.reliability)
    assert "No errors were reported in the event logs" in vmax_text  # nine servers' .evt files
    assert "No database checksum report" in vmax_text
    netapp_text = {s.text: s.status for s in netapp.reliability}
    assert netapp_text["No errors were reported for the database checksum."] == "pass"
    assert any("event logs" in t and status == "unknown" for t, status in netapp_text.items())


@pytest.mark.parametrize("summary", ["transactional", "total"])
def test_an_esrp_4_table_opens_with_the_transfers_of_its_own_reads_and_writes(summary: str) -> None:
    """ESRP 4.0 prints "Database Disks Transfers/sec" = reads + writes of the same I/O table (seed
    002: 433.496 = 317.776 + 115.72). The achieved transactional IOPS under that label made
    Transfers < Reads in a total-convention document."""
    manifest = read_manifest(SAMPLES / "netapp.toml")
    manifest = dataclasses.replace(
        manifest, convention_overrides={**manifest.convention_overrides, "summary": summary}
    )
    solution, labels = solution_from_manifest(manifest)
    rules = load_rules(None)
    document = build_document(manifest, assess(solution, rules), rules, labels)
    (table,) = document.performance_tables
    transfers, reads, writes = (
        float(_row(table, label)[0])
        for label in ("Database Disks Transfers", "Database Disks Reads", "Database Disks Writes")
    )
    assert transfers == pytest.approx(reads + writes, abs=0.011)  # two decimals each
    assert transfers >= reads
    assert table.rows[0].target == "N/A"
