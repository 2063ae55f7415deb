"""Golden files for the table partials: deterministic output from fixed inputs.

Regenerate after a deliberate change with ESRP_UPDATE_GOLDEN=1, look at the diff, commit it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from esrp_report.analysis.rules import Status
from esrp_report.render.appendix import AppendixRow, AppendixTable
from esrp_report.render.document import Cell, Failure, Row, SummaryTable, load_convention
from esrp_report.render.html import environment

GOLDEN = Path(__file__).resolve().parent / "golden"
CONV = load_convention("esrp-3.0")

SUMMARY = SummaryTable(
    "Individual server metrics for Server 1 through Server 2",
    "Target values",
    ["Server 1", "Server <2>"],
    [
        Row(
            "Achieved transactional I/O per sec",
            "1,400",
            [Cell(1424.4135, 3, CONV), Cell(1399.9, 3, CONV, status=Status.FAIL)],
        ),
        Row(
            "I/O database reads average latency (msec)",
            "< 20 msec",
            [Cell(18.5465, 3, CONV), Cell(None, 3, CONV)],
        ),
        Row("Transaction log I/O", "", [], heading=True),
        Row("Log writes/sec", "N/A", [Cell(4978.2229, 3, CONV), Cell(0.0005, 3, CONV)]),
    ],
    note="Rates are summed over servers.",
)
INSTANCES = AppendixTable(
    "Transactional I/O Performance",
    (
        "MSExchange Database ==> Instances",
        "I/O Database Reads Average Latency (msec)",
        "I/O Database Reads/sec",
    ),
    (False, True, True),
    (
        AppendixRow(("Instance3100.1", "18.651", "44.049")),
        AppendixRow(("Instance<3100>.2", "21.400", "1234.567")),
    ),
    wide=True,
)
KEY_VALUES = AppendixTable(
    "Test summary",
    (),
    (False, False),
    (AppendixRow(("Machine Name", "EMAIL2")), AppendixRow(("Notes", "a & b"))),
)
CASES = {
    "appendix_table_screen": (
        "partials/appendix_table.html",
        {"table": INSTANCES, "for_pdf": False},
    ),
    "appendix_table_print": (
        "partials/appendix_table.html",
        {"table": INSTANCES, "for_pdf": True},
    ),
    "appendix_kv_print": (
        "partials/appendix_table.html",
        {"table": KEY_VALUES, "for_pdf": True},
    ),
    # The reviewer's report marks the cells a rule fails; the vendor's document (unmarked) does not.
    "summary_table": (
        "partials/summary_table.html",
        {
            "table": SUMMARY,
            "table_id": "t1",
            "first_heading": "Database I/O",
            "Status": Status,
            "marks": True,
        },
    ),
    "summary_table_captioned": (
        "partials/summary_table.html",
        {
            "table": SUMMARY,
            "table_id": "t1",
            "first_heading": "Database I/O",
            "Status": Status,
            "caption": "Servers <1> & 2",
        },
    ),
    "kv_table": ("partials/kv_table.html", {"rows": [("Storage cache", "352 GB"), ("<b>x</b>", "a & b")]}),
    "kv_table_captioned": (
        "partials/kv_table.html",
        {"rows": [("Storage cache", "352 GB")], "caption": "Storage <hardware>"},
    ),
    "failures": (
        "partials/failures.html",
        {
            "failures": [
                Failure(
                    "Server 4",
                    "Performance",
                    "Instance2756.3",
                    "Database read average latency",
                    "db-read-latency-avg",
                    "21.400 ms",
                    "< 20.000 ms",
                    "report",
                )
            ]
        },
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_partial_matches_golden(name: str) -> None:
    template, context = CASES[name]
    rendered = environment(None, "esrp").get_template(template).render(**context)
    golden = GOLDEN / f"{name}.html"
    if os.environ.get("ESRP_UPDATE_GOLDEN"):
        golden.write_text(rendered, encoding="utf-8")
    assert rendered == golden.read_text(encoding="utf-8")
