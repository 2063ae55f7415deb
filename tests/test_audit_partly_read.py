"""Coverage decides the exit status (issue 30, item 4): a verdict only from a document read well.

`audit` gives a verdict (exit 0 or 1) only when it read at least `min_read_share` of the result
figures it can see (esrp_report/audit/coverage.toml); under it the exit is 2, "partly read: N of M
result figures", with every finding still printed. Front matter alone is never checked.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from esrp_report.app.api import audit_document
from esrp_report.audit.result import min_read_share
from esrp_report.cli.main import app
from esrp_synth.copies import rewrapped

DATA = Path(__file__).resolve().parent / "data" / "published"
runner = CliRunner()


def _rewrapped(tmp_path: Path, name: str, width: int) -> Path:
    """The text as a PDF viewer's copy gives it: every line wrapped at ``width`` columns."""
    path = tmp_path / f"wrapped-{name}"
    path.write_text(rewrapped((DATA / name).read_text(encoding="utf-8"), width), encoding="utf-8")
    return path


def _audit_json(path: Path) -> tuple[int, dict[str, object]]:
    result = runner.invoke(app, ["audit", str(path), "--json"])
    return result.exit_code, json.loads(result.stdout)


def test_a_clean_document_read_whole_gets_its_verdict() -> None:
    code, data = _audit_json(DATA / "netapp-001.txt")
    assert (code, data["status"]) == (0, "checked")
    share = data["coverage"]["read_share"]  # type: ignore[index]
    assert share >= min_read_share()


def test_a_rewrapped_document_is_partly_read_never_clean(tmp_path: Path) -> None:
    # Before: 002 re-wrapped at 80 columns exited 0, "0 errors from 48 relations" (282 whole).
    path = _rewrapped(tmp_path, "dellemc-002.txt", 80)
    result = audit_document(path)
    assert result.status == "partly_read"
    assert result.coverage is not None and result.coverage.read_share is not None
    assert result.coverage.read_share < min_read_share()
    cli = runner.invoke(app, ["audit", str(path)])
    assert cli.exit_code == 2
    assert "partly read:" in cli.stderr and "result figures" in cli.stderr
    assert "error(s)" in cli.stdout  # what was found is printed all the same


def test_errors_found_in_a_partly_read_document_are_printed_but_give_no_verdict(tmp_path: Path) -> None:
    path = _rewrapped(tmp_path, "vmax-000.txt", 80)
    code, data = _audit_json(path)
    assert code == 2 and data["status"] == "partly_read"
    assert str(data["message"]).startswith("partly read:")
    assert any(f["severity"] == "error" for f in data["findings"])  # type: ignore[union-attr]


def test_front_matter_alone_is_never_checked_even_with_an_error(tmp_path: Path) -> None:
    lines = (DATA / "dellemc-002.txt").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "front.txt"
    path.write_text("\n".join(lines[:150]) + "\n", encoding="utf-8")
    code, data = _audit_json(path)
    assert code == 2 and data["status"] == "nothing_checked"


def test_title_pages_contents_and_configuration_tables_do_not_count_against_the_share() -> None:
    result = audit_document(DATA / "equallogic-004.txt")
    assert result.coverage is not None
    not_results = [b for b in result.coverage.unread if not b.results]
    assert any("table of contents" in b.reason for b in not_results)
    assert result.status == "checked"
