"""A truncated document is never `checked` (issue 30): a seed cut at a quarter, half or three
quarters of its lines, or with its appendix removed, misses what its own contents promise, and
the audit says so ("partly read", exit 2) instead of judging the half that is left as a whole.
The uncut seeds keep their verdict."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from esrp_report.analysis.rules import load_rules
from esrp_report.audit import AuditResult, audit
from esrp_report.cli.main import app
from esrp_report.ingest.documents.published import parse_document

DATA = Path(__file__).resolve().parent / "data" / "published"
RULES = load_rules(None)

# Each seed's appendix heading, as its text prints it (the last line of that text: a contents
# entry above it prints the same title with its page number).
APPENDIX = {
    "vmax-000.txt": "## Appendix A: Test reports",
    "netapp-001.txt": "Appendix A – Test Results",
    "dellemc-002.txt": "A Performance testing",
    "equallogic-004.txt": "# Appendix A Configuration details",
}
CUTS = ("25%", "50%", "75%", "no appendix")


def _lines(name: str) -> list[str]:
    return (DATA / name).read_text(encoding="utf-8").splitlines(keepends=True)


def cut(name: str, how: str) -> str:
    lines = _lines(name)
    if how == "no appendix":
        at = max(i for i, line in enumerate(lines) if line.strip() == APPENDIX[name])
        return "".join(lines[:at])
    return "".join(lines[: len(lines) * int(how.rstrip("%")) // 100])


@cache
def audited(name: str, how: str) -> AuditResult:
    text = "".join(_lines(name)) if how == "whole" else cut(name, how)
    return audit(parse_document(text.encode("utf-8"), name), RULES)


@pytest.mark.parametrize("name", sorted(APPENDIX))
def test_an_uncut_seed_keeps_its_verdict(name: str) -> None:
    result = audited(name, "whole")
    assert result.status == "checked", result.partly_read_message() if result.coverage else result
    assert result.coverage is not None and not result.coverage.missing


@pytest.mark.parametrize("how", CUTS)
@pytest.mark.parametrize("name", sorted(APPENDIX))
def test_a_truncated_seed_is_never_checked(name: str, how: str) -> None:
    result = audited(name, how)
    assert result.status != "checked", f"{name} cut at {how}: checked with {result.errors} error(s)"


@pytest.mark.parametrize("name", sorted(APPENDIX))
def test_a_seed_without_its_appendix_names_what_its_contents_promised(name: str) -> None:
    result = audited(name, "no appendix")
    assert result.status == "partly_read"
    assert result.coverage is not None and result.coverage.missing
    message = result.partly_read_message()
    assert "promises" in message and "never come" in message
    title = APPENDIX[name].lstrip("# ").split(" ", 2)
    assert " ".join(title[:2]) in message or "Appendix" in message, message


def test_the_missing_sections_are_counted_against_the_share() -> None:
    # The figures the missing pages would hold are estimated from those read per page: they are
    # result figures not read, and the share falls with them.
    result = audited("netapp-001.txt", "50%")
    assert result.coverage is not None and result.coverage.read_share is not None
    estimate = sum(m.numbers for m in result.coverage.missing)
    assert estimate > 0
    assert result.coverage.unread_numbers >= estimate
    assert result.coverage.read_share < 0.9


def test_a_truncated_seed_exits_2_partly_read_with_its_errors_printed(tmp_path: Path) -> None:
    path = tmp_path / "vmax-000-75.txt"
    path.write_text(cut("vmax-000.txt", "75%"), encoding="utf-8")
    result = CliRunner().invoke(app, ["audit", str(path)])
    assert result.exit_code == 2, result.output
    assert "partly read:" in result.stderr and "result figures" in result.stderr
    assert "never come" in result.stderr
    assert "error(s)" in result.stdout


def test_a_table_referred_to_but_never_captioned_is_missing() -> None:
    # 004's text refers to "Table 29, Table 30, and Table 31"; cut before their captions, the
    # references promise tables the text no longer holds.
    lines = _lines("equallogic-004.txt")
    at = next(i for i, line in enumerate(lines) if line.startswith("**Table 29 "))
    result = audit(parse_document("".join(lines[:at]).encode("utf-8"), "equallogic-004.txt"), RULES)
    assert result.status != "checked"
    assert result.coverage is not None
    assert any("never captioned" in m.what for m in result.coverage.missing)


def test_a_report_cut_inside_lacks_the_table_its_siblings_print() -> None:
    # 002's third server's report cut before its Total I/O table: the other three Performance
    # reports print one, so this one is short, whatever the contents say.
    lines = _lines("dellemc-002.txt")
    at = next(i for i, line in enumerate(lines) if line.startswith("Table 34 Total I/O performance"))
    result = audit(parse_document("".join(lines[:at]).encode("utf-8"), "dellemc-002.txt"), RULES)
    assert result.coverage is not None
    short = [m for m in result.coverage.missing if "report of JS8" in m.what]
    assert len(short) == 1 and "total" in short[0].what and short[0].numbers > 0
    assert result.status == "partly_read"
