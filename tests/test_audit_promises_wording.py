"""A contents entry worded otherwise than its heading ("Appendix C – Database backup tests" over
"Appendix C – EXMBX01 database backup test") is found, so an intact document is not called partly
read; the same document cut before that appendix still is."""

from __future__ import annotations

from pathlib import Path

from esrp_report.app.api import audit_document

HELD_OUT = Path(__file__).resolve().parent / "data" / "holdout" / "kestrel-3servers-esrp40.clean.txt"


def test_an_intact_document_whose_headings_reword_its_contents_is_checked() -> None:
    result = audit_document(HELD_OUT)
    assert result.status == "checked"
    assert not result.coverage.missing


def test_the_same_document_cut_before_its_backup_appendix_is_partly_read(tmp_path: Path) -> None:
    lines = HELD_OUT.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if line.startswith("## Appendix C"))
    path = tmp_path / "cut.txt"
    path.write_text("".join(lines[:cut]), encoding="utf-8")
    result = audit_document(path)
    assert result.status == "partly_read"
    missing = " ".join(m.what for m in result.coverage.missing)
    assert "Appendix C" in missing and "Appendix D" in missing and "Appendix B" not in missing
