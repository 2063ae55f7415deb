"""The document's number conventions found from its own figures (issue 30, item 3).

The seeds are converted to decimal-comma form (thousands as '.', a thin space, or none) and must
read as the originals do: the same relations, the same errors. Before, decimal commas gave 4 false
errors on the clean 001, 22 on 002 and 26 on 000.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from esrp_report.app.api import audit_document
from esrp_report.ingest.documents.cells import clean_line
from esrp_report.ingest.documents.marks import find_marks, rewrite
from esrp_report.ingest.documents.published import read_document
from esrp_report.model import DocLine
from esrp_report.model.findings import ERROR

DATA = Path(__file__).resolve().parent / "data" / "published"
SEEDS = ["vmax-000.txt", "netapp-001.txt", "dellemc-002.txt", "equallogic-004.txt"]
# A figure as this project's seeds print it: "1,446.975", "14,000", "0.873" (not a label's
# "Instance2756.1", a path, a version "15.00.1236.000", a damaged "0.30.441").
_FIGURE = re.compile(r"(?<![\w.,:/\\])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+)(?![\w]|[.,]\d)")


def decimal_comma(text: str, thousands: str, every: int = 1) -> str:
    """The text with every ``every``-th figure printed the European way."""
    count = 0

    def convert(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        if count % every:
            return match.group(0)
        whole, point, decimals = match.group(0).partition(".")
        return whole.replace(",", thousands) + ("," + decimals if point else "")

    return _FIGURE.sub(convert, text)


def _errors(path: Path) -> tuple[set[tuple[int, str]], int, str]:
    result = audit_document(path)
    return {(f.line, f.check) for f in result.findings if f.severity == ERROR}, result.checked, result.status


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("thousands", [".", "\u202f", " ", ""], ids=["dot", "thin", "space", "none"])
def test_a_decimal_comma_copy_reads_as_the_original(tmp_path: Path, seed: str, thousands: str) -> None:
    text = (DATA / seed).read_text(encoding="utf-8")
    converted = decimal_comma(text, thousands)
    assert converted != text and "0,8" in converted  # the copy really prints decimal commas
    path = tmp_path / seed
    path.write_text(converted, encoding="utf-8")
    assert _errors(path) == _errors(DATA / seed)
    notes = [p.message for p in read_document(path).problems if p.severity == "note"]
    assert any(n.startswith("decimal comma:") for n in notes)


def test_a_mixed_document_is_named_and_gives_no_false_error(tmp_path: Path) -> None:
    text = (DATA / "netapp-001.txt").read_text(encoding="utf-8")
    path = tmp_path / "mixed.txt"
    path.write_text(decimal_comma(text, ".", every=2), encoding="utf-8")  # every other figure
    result = audit_document(path)
    assert any(p.message.startswith("number convention mixed:") for p in result.unread)
    errors = {(f.line, f.check) for f in result.findings if f.severity == ERROR}
    assert errors <= _errors(DATA / "netapp-001.txt")[0]  # no false error (001 has none)


def _lines(*rows: str) -> list[DocLine]:
    return [clean_line(DocLine(no, raw)) for no, raw in enumerate(rows, start=1)]


def test_figures_that_could_be_read_either_way_alone_are_undecidable_and_not_read() -> None:
    lines = _lines("Mailboxes\t1,000\t2,500", "Servers\t4\t8")
    marks = find_marks(lines)
    assert marks.decimal is None and marks.problem is not None
    assert marks.problem.startswith("number convention undecidable:")
    assert rewrite("Mailboxes\t1,000\t2,500", marks) == "Mailboxes\t1,000\u2026\t2,500\u2026"


def test_labels_versions_and_damaged_figures_keep_their_form() -> None:
    marks = find_marks(_lines("Latency\t0,873\t12,5", "Rate\t1.446,975\t1.234.567"))
    assert (marks.decimal, marks.thousands) == (",", ".")
    assert (
        rewrite("Instance2756.1\t0,873\t1.446,975\t0.30.441", marks)
        == "Instance2756.1\t0.873\t1446.975\t0.30.441"
    )
    assert rewrite("Version 15.00.1236.000 on 4.3", marks) == "Version 15.00.1236.000 on 4.3"
    point = find_marks(_lines("Latency\t0.873\t12.5", "Rate\t1,446.975\t14,000"))
    assert (point.decimal, point.thousands) == (".", ",")
