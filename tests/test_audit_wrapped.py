"""Table rows wrapped over lines are joined back from the column count their table established
(issue 30, item 1), and say so; a row whose pieces do not make that count is named, never joined
into shifted columns."""

from __future__ import annotations

import re
from pathlib import Path

from esrp_report.app.api import audit_document
from esrp_report.ingest.documents.cells import clean_line
from esrp_report.ingest.documents.published import parse_lines, read_document
from esrp_report.model import DocLine
from esrp_report.model.findings import ERROR, Finding
from esrp_synth.copies import rewrapped

DATA = Path(__file__).resolve().parent / "data" / "published"


def _rewrapped(tmp_path: Path, name: str, width: int) -> Path:
    path = tmp_path / f"wrapped{width}-{name}"
    path.write_text(rewrapped((DATA / name).read_text(encoding="utf-8"), width), encoding="utf-8")
    return path


def test_wrapped_instance_rows_are_read_into_their_own_columns(tmp_path: Path) -> None:
    whole = read_document(DATA / "vmax-000.txt").reports[0]
    wrapped = read_document(_rewrapped(tmp_path, "vmax-000.txt", 72))
    report = wrapped.reports[0]
    # The same figures under the same (table, instance, column) keys: nothing moved a column.
    transactional = {k: v.text for k, v in whole.cells.items() if k[:2] == ("instance", "transactional")}
    assert len(transactional) == 240
    assert {
        k: v.text for k, v in report.cells.items() if k[:2] == ("instance", "transactional")
    } == transactional
    assert any("wrapped over lines joined back to the 13 cells" in p.message for p in wrapped.problems)


def _doc(*rows: str):  # type: ignore[no-untyped-def]
    return parse_lines([clean_line(DocLine(no, raw)) for no, raw in enumerate(rows, start=1)], "t", "text")


def test_a_wrapped_row_of_another_width_is_named_not_joined() -> None:
    doc = _doc(
        "Instance1.1\t1.25\t2.25\t3.25",
        "4.25\t5.25",
        "Instance1.2\t1.25\t2.25\t3.25",
        "4.25\t5.25",
        "Instance1.3\t1.25\t2.25",
        "4.25\t5.25\t6.25\t7.25",
    )
    by_no = {line.no: line for line in doc.lines}
    assert by_no[1].cells == ["Instance1.1", "1.25", "2.25", "3.25", "4.25", "5.25"]
    assert by_no[2].cells is None
    assert by_no[5].cells == ["Instance1.3", "1.25", "2.25"]  # 7 cells where the table has 6
    assert any("makes 7 cells where its table's rows have 6" in p.message for p in doc.problems)


def test_a_lone_labelled_row_over_figures_establishes_no_width() -> None:
    doc = _doc("IOPS\t1000", "800\t600", "", "Other text")
    assert {line.no: line.cells for line in doc.lines}[1] == ["IOPS", "1000"]


def test_a_markdown_row_cut_before_its_closing_pipe_is_one_row() -> None:
    doc = _doc("| Label | 1.5 | 2.5", "| 3.5 |", "| Next | 4.5 | 5.5 | 6.5 |")
    assert doc.lines[0].cells == ["Label", "1.5", "2.5", "3.5"]
    assert doc.lines[1].cells is None


def test_a_rewrapped_002_at_72_columns_is_read_with_no_false_error(tmp_path: Path) -> None:
    # Before: 002 re-wrapped at 72 columns was partly read (75 % of its result figures, 148 relations).
    whole = audit_document(DATA / "dellemc-002.txt")
    result = audit_document(_rewrapped(tmp_path, "dellemc-002.txt", 72))
    assert result.status == "checked"
    assert result.checked >= 240
    checks = {f.check for f in whole.findings if f.severity == ERROR}
    assert {f.check for f in result.findings if f.severity == ERROR} <= checks


def test_a_fact_whose_label_was_wrapped_keeps_its_value_and_its_error(tmp_path: Path) -> None:
    """002 states 0.10 IOPS per mailbox in a row whose label a 72-column copy wraps mid-way
    ("... (IOPS, include 20%" / "headroom)  .084 (.10 tested)"): the value is read from the second
    line and the document's real error (its reports' target IOPS against mailboxes x IOPS) is
    still found, instead of a clean "checked"."""
    source = DATA / "dellemc-002.txt"
    wrapped = tmp_path / "002-72.txt"
    wrapped.write_text(rewrapped(source.read_text(encoding="utf-8"), 72), encoding="utf-8")
    original = {f.check for f in audit_document(source).findings if f.severity == "error"}
    result = audit_document(wrapped)
    assert "config.report_target" in original
    assert {f.check for f in result.findings if f.severity == "error"} == original
    assert any("its label was wrapped" in p.message for p in result.unread + read_document(wrapped).problems)


def test_a_pipe_table_whose_rows_wrap_at_or_before_a_pipe_is_read_as_printed(tmp_path: Path) -> None:
    """004's Table 23 re-wrapped at 72 columns: every row is cut in two lines that each look like
    a row ("| IOPS planned | 39% [360 IOps] | 39% [360 IOps]" over "| 80% [720 IOps] | 100% ... |").
    Joined to the header's width, its trend figures give the document's two real slips (39
    printed, 40 expected), not ten false ones read a column off."""
    original = audit_document(DATA / "equallogic-004.txt")
    result = audit_document(_rewrapped(tmp_path, "equallogic-004.txt", 72))

    def trend_errors(found: list[Finding]) -> list[str]:
        # Line numbers differ between the copies: the words and figures must not.
        return sorted(
            re.sub(r"line \d+", "line N", f.message)
            for f in found
            if f.severity == ERROR and f.check == "trend.percentage"
        )

    assert len(trend_errors(original.findings)) == 2
    assert trend_errors(result.findings) == trend_errors(original.findings)


def test_wrapped_formulas_are_joined_and_give_no_false_error(tmp_path: Path) -> None:
    """004's sizing formulas re-wrapped mid-expression ("= 6900 \\*" / "955 MB = 6590 GB", a LaTeX
    block closed a line below): joined, with a note. At 80 columns every error of the original is
    found; at 72 and 100 columns none is added."""
    original = audit_document(DATA / "equallogic-004.txt")
    errors = sorted(f.check for f in original.findings if f.severity == ERROR)
    for width in (72, 80, 100):
        path = _rewrapped(tmp_path, "equallogic-004.txt", width)
        result = audit_document(path)
        found = sorted(f.check for f in result.findings if f.severity == ERROR)
        assert not set(found) - set(errors), width
        if width == 80:
            assert found == errors
            assert any("it was wrapped" in p.message for p in read_document(path).problems)
