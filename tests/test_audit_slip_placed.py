"""Where a slip is placed when the relation it breaks is a product, a quotient or a checksum row
(issue 30, "Done when": placed at its line or among the two lines named). Each slip is planted in
a seed's line as a reader's typo would be, and the error it raises must name that line."""

from __future__ import annotations

from pathlib import Path

from esrp_report.analysis.rules import load_rules
from esrp_report.audit import AuditResult, audit
from esrp_report.ingest.documents.published import parse_document
from esrp_report.model.findings import ERROR

DATA = Path(__file__).resolve().parent / "data" / "published"
RULES = load_rules(None)


def _planted(name: str, line: int, old: str, new: str) -> AuditResult:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines(keepends=True)
    assert old in lines[line - 1], lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    return audit(parse_document("".join(lines).encode("utf-8"), name), RULES)


def _errors(result: AuditResult, check: str) -> list[tuple[int | None, tuple[int, ...]]]:
    return [(f.line, f.suspects) for f in result.findings if f.severity == ERROR and f.check == check]


def test_a_slip_in_a_products_factor_is_placed_at_the_factor() -> None:
    # 001: 7 disks x 600 GB = 4200 GB. "7" printed as "1": the slope at the printed total put the
    # mend at 0.86 disks, which no digit makes, and the finding stayed at the total (line 197).
    result = _planted("netapp-001.txt", 196, "test\t7", "test\t1")
    assert _errors(result, "config.raw_capacity") == [(196, ())]


def test_a_slip_in_one_databases_checksum_pages_is_placed_at_its_row() -> None:
    # 001's checksum rows: 32,101,698 pages for 1,003,178 MB (32 KB pages). The (Sum) row's sum
    # alone cannot tell which database slipped; the row's own file length can.
    result = _planted("netapp-001.txt", 351, "32101698", "33101698")
    assert _errors(result, "appendix.checksum_sum") == [(351, ())]
    assert [line for line, _s in _errors(result, "appendix.checksum_pages")] == [351]


def test_the_untouched_checksum_rows_fit_their_pages() -> None:
    result = audit(parse_document((DATA / "netapp-001.txt").read_bytes(), "netapp-001.txt"), RULES)
    assert not _errors(result, "appendix.checksum_pages")


def test_a_slip_in_one_instances_log_count_is_told_from_its_neighbours() -> None:
    # 000's Server 4 replays 20 databases; one count printed 209 for 509 moves the mean of
    # seconds / logs by 0.19. The slope of a quotient there is off by half; the exact mend names
    # the count (and the summary figure, the one other single digit that mends the mean).
    result = _planted("vmax-000.txt", 1273, "\t509\t", "\t209\t")
    found = _errors(result, "replay.appendix")
    assert found
    assert all(line == 1273 or (1273 in suspects and len(suspects) <= 2) for line, suspects in found), found
