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

from esrp_report.audit import audit
from esrp_report.cli import app
from esrp_report.ingest.published import read_document
from esrp_report.rules import load_rules

DATA = Path(__file__).parent / "data" / "published"
runner = CliRunner()
_WORDS = ("the", "quick", "brown", "fox", "storage", "server", "12", "3.5", "lorem", "ipsum")


def _junk_lines(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(10)) for _ in range(count)]


def _text_pdf(pages: list[list[str]]) -> bytes:
    """A PDF whose pages carry the given lines of text (Helvetica), written object by object with
    its cross-reference table, so that PDFium extracts exactly those lines."""
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    font = 3
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    kids = []
    for lines in pages:
        body = (
            "BT /F1 10 Tf 12 TL 40 800 Td "
            + " ".join(
                "(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") Tj T*"
                for line in lines
            )
            + " ET"
        )
        stream = body.encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        content = len(objects)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (content, font)
        )
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids),
        len(kids),
    )
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body_bytes in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body_bytes + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


# --- no verdict without reading anything -----------------------------------------------------------


def test_a_junk_pdf_of_many_pages_exits_2_saying_nothing_was_checked(tmp_path: Path) -> None:
    path = tmp_path / "junk.pdf"
    path.write_bytes(_text_pdf([_junk_lines(40, seed=page) for page in range(30)]))
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
