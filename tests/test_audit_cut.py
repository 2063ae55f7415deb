"""Figures cut at a row's end (issue 21, item 1): damaged copies of the seeds' text.

A wide table loses the end of its last column at the page edge. A figure whose rest went to the
next line is joined back; one cut without its rest is not read (never read as another number)
and named; a figure with fewer decimals than its row's others is read as printed only where its
table drops trailing zeros elsewhere. A PDF keeps the characters past its page's edge: they are
read whole.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from esrp_report.app.api import audit_document
from esrp_report.audit import AuditResult
from esrp_report.ingest.documents.published import read_document

DATA = Path(__file__).resolve().parent / "data" / "published"

# 000's 2-hour report, Transactional table: the row's last cell is I/O Log Writes Average Bytes,
# which the Total I/O table repeats (appendix.total_table holds it to its copy).
ROW_000 = "Instance2756.3\t18.448\t2.982\t45.119\t28.317\t35645.983\t36437.997\t0.000\t0.855\t0.000\t25.342\t0.000\t"
LAST_000 = "4575.940"


def _variant(tmp_path: Path, name: str, old: str, new: str) -> Path:
    text = (DATA / name).read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / f"cut-{name}"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def _errors(result: AuditResult, shift_after: int = 0) -> set[tuple[str, int | None, str | None]]:
    """The errors, with lines after ``shift_after`` moved up one (a line was inserted there)."""
    return {
        (f.check, (f.line - 1) if shift_after and f.line and f.line > shift_after else f.line, f.column)
        for f in result.findings
        if f.severity == "error"
    }


def _line_of(path: Path, start: str) -> int:
    return next(
        n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line.startswith(start)
    )


@pytest.mark.parametrize(
    ("first", "rest"),
    [
        ("4575.", "940"),  # cut after the decimal point
        ("4575", ".940"),  # the point went with the rest
        ("4575.9", "40"),  # a figure short of the row's three decimals, its rest alone below
    ],
)
def test_a_figure_going_on_at_the_next_line_is_joined(tmp_path: Path, first: str, rest: str) -> None:
    untouched = audit_document(DATA / "vmax-000.txt")
    path = _variant(tmp_path, "vmax-000.txt", ROW_000 + LAST_000, f"{ROW_000}{first}\n{rest}")
    row = _line_of(path, ROW_000)
    joined = audit_document(path)
    assert joined.checked == untouched.checked
    assert _errors(joined, shift_after=row) == _errors(untouched)
    document = read_document(path)
    cells = next(r.cells for r in document.reports if r.first_line < row < r.last_line)
    figure = cells[("instance", "transactional", "Instance2756.3", "log_writes_avg_bytes")]
    assert (figure.text, figure.line) == (LAST_000, row)
    assert not [p for p in joined.unread if p.location == f"line {row + 1}"]


@pytest.mark.parametrize("cut", ["4575.", "4575,", "4,57"])
def test_a_figure_cut_by_its_form_is_not_read_and_named(tmp_path: Path, cut: str) -> None:
    untouched = audit_document(DATA / "vmax-000.txt")
    path = _variant(tmp_path, "vmax-000.txt", ROW_000 + LAST_000, ROW_000 + cut)
    row = _line_of(path, ROW_000)
    result = audit_document(path)
    assert _errors(result) == _errors(untouched)  # no new finding, none lost
    assert result.checked == untouched.checked - 1  # the Total table's copy of it is not checked
    named = [p for p in result.unread if p.location == f"line {row}"]
    assert len(named) == 1 and repr(cut) in named[0].message and "not read" in named[0].message


@pytest.mark.parametrize("kept", ["4575.9", "4575.96", "4575."])
def test_a_short_figure_at_the_rows_end_is_never_read_as_another_number(tmp_path: Path, kept: str) -> None:
    """'4575.9' of a cut '4575.940' would claim 4575.85 to 4575.95 and miss nothing here, but of a
    cut '4575.960' it would miss: read as printed, its copy in the Total table (4575.960) would be
    a false finding. It is not read: the relation is left out, not failed."""
    untouched = audit_document(DATA / "vmax-000.txt")
    path = _variant(tmp_path, "vmax-000.txt", ROW_000 + LAST_000, ROW_000 + kept)
    total_copy = f"0.469\t25.342\t178916.534\t{LAST_000}"  # the Total table's row of Instance2756.3
    text = path.read_text(encoding="utf-8")
    assert text.count(total_copy) == 1
    path.write_text(text.replace(total_copy, total_copy[: -len(LAST_000)] + "4575.960"), encoding="utf-8")
    result = audit_document(path)
    assert _errors(result) == _errors(untouched)
    row = _line_of(path, ROW_000)
    assert [p.location for p in result.unread if "is not read" in p.message] == [f"line {row}"]


def test_a_short_figure_in_a_table_that_drops_trailing_zeros_is_read_as_printed() -> None:
    """000's per-server table prints 899.57 and 552.65 inside its rows: its writer drops trailing
    zeros (or slips), so Server 5's 498.52 at a row's end is read as printed, and the slips of
    that table (Server 4's 498.536, a warning: inside worst-case rounding) are still found."""
    result = audit_document(DATA / "vmax-000.txt")
    assert not [p for p in result.unread if "is not read" in p.message]
    found = {(f.check, f.line, f.column) for f in result.findings if f.severity == "warning"}
    assert ("server.appendix", 414, "Server 4") in found


def test_netapps_short_log_write_sizes_are_listed_as_not_read() -> None:
    """001's 2-hour report prints I/O Log Writes Average Bytes as '4570.83' and '4591.07' at the
    end of 13-column rows of three-decimal figures, where its other reports print '4602.047': cut
    at the page edge, or without a trailing zero. Not read, each named; still no error."""
    result = audit_document(DATA / "netapp-001.txt")
    assert result.errors == 0
    cut = sorted(p.location or "" for p in result.unread if "is not read" in p.message)
    assert cut == ["line 581", "line 582", "line 599", "line 600"]


def test_a_cut_figure_in_a_per_server_row_keeps_the_columns_aligned(tmp_path: Path) -> None:
    """000's achieved row has a numeric target (1400) before the servers: Server 5's cut figure
    stays Server 5's slot, unread, and Server 1 is not given the target."""
    old = "1445.341\t1446.975"
    path = _variant(tmp_path, "vmax-000.txt", old, "1445.341\t1446.")
    table = next(t for t in read_document(path).summary_tables if t.kind == "server")
    achieved = next(r for r in table.rows if r.key == "achieved")
    assert [v.text if v else None for v in achieved.values] == [
        "1424.414",
        "1448.535",
        "1442.904",
        "1445.341",
        None,
    ]
    assert achieved.target is not None and achieved.target.text == "1400"
    untouched = audit_document(DATA / "vmax-000.txt")
    # Server 5's reads slip (9890.577) was found by achieved = reads + writes, whose achieved is
    # now unread; the aggregate still finds it, at its cell. No other line gets an error.
    result = audit_document(path)
    assert {line for _c, line, _col in _errors(result)} == {line for _c, line, _col in _errors(untouched)}
    assert any(
        f.line == 409 and "9890.577" in f.message for f in result.findings if f.check == "aggregate.servers"
    )


def test_a_pdf_row_running_past_the_page_edge_is_read_whole(tmp_path: Path) -> None:
    """WeasyPrint draws a table wider than the page past its edge; PDFium's page-bounded text cuts
    the last figures there ('1446.' of '1446.975'). The reader takes the characters past the edge."""
    import pypdfium2 as pdfium
    import weasyprint

    rows = "".join(
        f"<tr><td>{label}</td><td>N/A</td>" + "".join(f"<td>{v}</td>" for v in values) + "</tr>"
        for label, values in (
            (
                "Achieved transactional I/O per sec",
                ("1424.414", "1448.535", "1442.904", "1445.341", "1446.975"),
            ),
            ("Database reads/sec", ("877.436", "891.734", "888.039", "889.570", "890.576")),
            ("Database writes/sec", ("546.977", "556.801", "554.865", "555.771", "556.399")),
        )
    )
    html = (
        "<html><head><style>@page{size:A4;margin:1cm} table{width:24cm} td{white-space:nowrap}</style></head>"
        "<body><h2>Individual server metrics</h2><table><tr><td>Database I/O</td><td>Target values</td>"
        "<td>Server 1</td><td>Server 2</td><td>Server 3</td><td>Server 4</td><td>Server 5</td></tr>"
        f"{rows}</table></body></html>"
    )
    path = tmp_path / "wide.pdf"
    weasyprint.HTML(string=html).write_pdf(path)
    page = pdfium.PdfDocument(path)[0]
    assert "1446.975" not in page.get_textpage().get_text_bounded()  # the page's bounds cut it
    table = next(t for t in read_document(path).summary_tables if t.kind == "server")
    assert [v.text for v in table.rows[0].values if v] == [
        "1424.414",
        "1448.535",
        "1442.904",
        "1445.341",
        "1446.975",
    ]


def test_a_short_figure_closing_a_pipe_row_is_read_as_printed(tmp_path: Path) -> None:
    """A row closed by its pipe was printed past its last figure: no page edge cut "4575.94", so it
    is read as printed (and its copy in the Total table, 4575.940, agrees)."""
    cells = ROW_000.rstrip("\t").split("\t")
    piped = "| " + " | ".join([*cells, "4575.94"]) + " |"
    path = _variant(tmp_path, "vmax-000.txt", ROW_000 + LAST_000, piped)
    result = audit_document(path)
    row = _line_of(path, piped)
    assert not [p for p in result.unread if "is not read" in p.message and p.location == f"line {row}"]
