"""server.target_text: a latency target a summary table prints is the rules' pass threshold for
that measure; a document that prints another states a criterion ESRP does not apply."""

from __future__ import annotations

from pathlib import Path

from esrp_report.app.api import audit_document
from esrp_report.model.findings import ERROR

DATA = Path(__file__).resolve().parent / "data" / "published"


def _target_errors(path: Path) -> list[tuple[int | None, str | None]]:
    result = audit_document(path)
    return [
        (f.line, f.printed)
        for f in result.findings
        if f.check == "server.target_text" and f.severity == ERROR
    ]


def test_the_seeds_print_the_rules_thresholds() -> None:
    for name in ("vmax-000.txt", "netapp-001.txt", "dellemc-002.txt"):
        assert _target_errors(DATA / name) == [], name


def test_a_log_write_target_printed_as_20_msec_is_an_error_at_its_row(tmp_path: Path) -> None:
    lines = (DATA / "vmax-000.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    row = next(
        i
        for i, line in enumerate(lines)
        if line.startswith("I/O log writes average latency") and "< 10 msec" in line
    )
    lines[row] = lines[row].replace("< 10 msec", "< 20 msec")
    path = tmp_path / "vmax-000.txt"
    path.write_text("".join(lines), encoding="utf-8")
    assert _target_errors(path) == [(row + 1, "< 20 msec")]
