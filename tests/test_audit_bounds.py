"""`esrp-report audit` gives no verdict without reading anything, and its cost is bounded.

No test here times anything: the linear cost is shown by counting the work done (lines kept,
cells split) and the bounds by the limits being named in the errors. The timings of a 50 MB
text are in benchmarks/audit_document.py and docs/benchmarks.md.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks.audit_document import text_pdf
from esrp_report.analysis.rules import load_rules
from esrp_report.audit import audit
from esrp_report.cli.main import app
from esrp_report.ingest.documents import cells, limits, lines, trends
from esrp_report.ingest.documents.published import parse_document, read_document
from esrp_report.model import DocLine
from esrp_report.model.errors import InputError

DATA = Path(__file__).parent / "data" / "published"
runner = CliRunner()
_WORDS = ("the", "quick", "brown", "fox", "storage", "server", "12", "3.5", "lorem", "ipsum")


def _junk_lines(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(10)) for _ in range(count)]


# --- no verdict without reading anything -----------------------------------------------------------


def test_a_junk_pdf_of_many_pages_exits_2_saying_nothing_was_checked(tmp_path: Path) -> None:
    path = tmp_path / "junk.pdf"
    path.write_bytes(text_pdf([_junk_lines(40, seed=page) for page in range(30)]))
    assert len(read_document(path).lines) >= 30 * 40  # it was read: the text is there
    done = runner.invoke(app, ["audit", str(path)])
    assert done.exit_code == 2, done.output
    assert "no ESRP tables recognised" in done.output and "nothing was checked" in done.output
    assert "0 error(s)" not in done.output


def test_a_junk_text_exits_2_in_text_and_json(tmp_path: Path) -> None:
    path = tmp_path / "junk.txt"
    path.write_text("\n".join(_junk_lines(2000)), encoding="utf-8")
    done = runner.invoke(app, ["audit", str(path)])
    assert done.exit_code == 2 and "nothing was checked" in done.output
    as_json = runner.invoke(app, ["audit", str(path), "--json"])
    assert as_json.exit_code == 2
    data = json.loads(as_json.stdout)
    assert data["status"] == "nothing_checked" and data["relations_checked"] == 0
    assert "no ESRP tables recognised" in data["message"]


def test_no_audit_report_is_written_when_nothing_was_checked(tmp_path: Path) -> None:
    path = tmp_path / "junk.txt"
    path.write_text("\n".join(_junk_lines(50)), encoding="utf-8")
    done = runner.invoke(app, ["audit", str(path), "-o", str(tmp_path / "out"), "--format", "html"])
    assert done.exit_code == 2
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_tables_found_but_nothing_checkable_says_what_was_found(tmp_path: Path) -> None:
    # One fact, no second figure to hold it against: recognised, yet no relation can be checked.
    path = tmp_path / "facts.txt"
    path.write_text("Number of Exchange mailboxes simulated\t5000\n", encoding="utf-8")
    result = audit(read_document(path), load_rules(None))
    assert result.nothing_checked and result.recognised == ["1 configuration fact(s)"]
    assert "1 configuration fact(s) recognised" in result.nothing_checked_message()
    done = runner.invoke(app, ["audit", str(path), "--json"])
    assert done.exit_code == 2 and json.loads(done.stdout)["status"] == "nothing_checked"


@pytest.mark.parametrize(
    ("name", "status"),
    [("vmax-000.txt", 1), ("netapp-001.txt", 0), ("equallogic-004.txt", 1), ("esrp40-total.txt", 0)],
)
def test_the_published_documents_still_get_their_verdict(name: str, status: int) -> None:
    done = runner.invoke(app, ["audit", str(DATA / name), "--json"])
    assert done.exit_code == status, done.output
    data = json.loads(done.stdout)
    assert data["status"] == "checked" and data["message"] is None and data["relations_checked"] > 30


def test_a_document_with_some_relations_checked_is_not_unusable(tmp_path: Path) -> None:
    # The real document buried in junk: what can be checked is checked, the verdict stands.
    text = (DATA / "netapp-001.txt").read_text(encoding="utf-8")
    path = tmp_path / "buried.txt"
    path.write_text("\n".join(_junk_lines(3000)) + "\n" + text, encoding="utf-8")
    done = runner.invoke(app, ["audit", str(path)])
    assert done.exit_code == 0 and "relations checked" in done.output


# --- bounded cost: counted, not timed --------------------------------------------------------------


def test_a_file_without_newlines_is_one_prose_line_never_split_into_cells() -> None:
    # 2 MB of words and figures on one line: read as prose, its text cut to MAX_ROW_CHARS, so no
    # later pass splits or copies more than that per line (the old reader built a string per word).
    data = ("alpha 12.5 | Server 1 \t 1,234 = beta " * 60_000).encode()
    doc = parse_document(data, "one-line.txt")
    assert len(doc.lines) == 1
    assert doc.lines[0].cells is None and len(doc.lines[0].text) <= limits.MAX_ROW_CHARS
    assert doc.lines[0].raw == data.decode()  # kept as it was: nothing is lost from the line's number


def test_lines_are_cut_as_splitlines_cuts_them_a_chunk_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines, "_CHUNK_CHARS", 7)  # many chunks, cut at every kind of newline
    text = "a\r\nbb\rccc\n\nd\x0cé\u2028f\r\n" * 5 + "last"
    assert list(lines.text_lines(text)) == text.splitlines()
    assert list(lines.text_lines("")) == []


def test_cleaning_work_grows_linearly_with_the_document(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each line is cleaned once, and a clean line shares one string for raw and text: the work and
    # the strings held are proportional to the lines, however many copies of a document there are.
    calls = {"n": 0}
    clean = cells.clean_line

    def counting(line: DocLine) -> DocLine:
        calls["n"] += 1
        return clean(line)

    monkeypatch.setattr(lines, "clean_line", counting)
    one = (DATA / "netapp-001.txt").read_text(encoding="utf-8")
    sizes = []
    for copies in (1, 4):
        calls["n"] = 0
        doc = parse_document(("\n".join(_junk_lines(500)) + "\n" + one).encode() * copies, "x.txt")
        assert calls["n"] == len(doc.lines)
        sizes.append(len(doc.lines))
        junk = [line for line in doc.lines if line.raw == line.text]
        assert junk and all(line.text is line.raw for line in junk)
    assert sizes[1] == 4 * sizes[0]


def test_a_long_run_of_digits_in_a_trend_cell_does_not_backtrack() -> None:
    # "[\d,]*\.?\d+\s*" could split a run of digits in every way and retry the unit after each:
    # cubic. Counted structurally: the cell pattern now has one way to read the digits.
    cell = trends._TREND_CELL
    assert cell.match("39% [360 IOPS]") and cell.match("40%[1,380.5MB]")
    assert cell.match("1% [" + "1" * 60 + "x") is None
    long_cell = "1% [" + "1" * 5000 + "x]"
    assert len(long_cell) > limits.MAX_TREND_CELL_CHARS  # not even tried (see trend_tables)
    doc = parse_document(f"Users\tA\tB\nrow\t{long_cell}\t{long_cell}\n".encode(), "t.txt")
    assert not doc.trend_tables


def test_a_pdf_over_the_page_cap_is_refused_before_extraction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "MAX_PDF_PAGES", 5)
    path = tmp_path / "many.pdf"
    path.write_bytes(text_pdf([["page"]] * 6))
    with pytest.raises(InputError, match=r"the PDF has 6 pages; at most 5 are read \(MAX_PDF_PAGES\)"):
        read_document(path)
    done = runner.invoke(app, ["audit", str(path)])
    assert done.exit_code == 2 and "at most 5 are read" in done.output


def test_a_pdf_over_the_text_cap_stops_extracting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_PDF_TEXT_CHARS", 1000)
    path = tmp_path / "wordy.pdf"
    path.write_bytes(text_pdf([_junk_lines(20, seed=page) for page in range(10)]))
    with pytest.raises(InputError, match=r"passes 1,000 characters by page 1; no more is read"):
        read_document(path)
