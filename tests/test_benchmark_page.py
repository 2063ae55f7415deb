"""The benchmarks page is written from the measured results, and the scaling series' generator
makes solutions the tool reads as that many distinct servers."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from benchmarks import page, scaling
from esrp_report.ingest.config.manifest import read_manifest
from esrp_report.ingest.jetstress.report_html import read_report

RESULTS = json.loads(page.RESULTS.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", page.PAGES, ids=lambda p: p.name)
def test_the_committed_page_holds_the_committed_results(path: Path) -> None:
    """A number edited by hand inside a marked block, or results.json changed without the page,
    fails here: `python -m benchmarks.run --page` writes the page again."""
    text = path.read_text(encoding="utf-8")
    assert "<!-- bench:" in text
    assert page.update(text, page.render_blocks(RESULTS)) == text


def test_update_rewrites_only_the_marked_blocks() -> None:
    text = "intro 1.0 s\n<!-- bench:csv -->\nold 9.9 s\n<!-- /bench:csv -->\noutro 2.0 s\n"
    assert page.update(text, {"csv": "new 3.3 s\n"}) == (
        "intro 1.0 s\n<!-- bench:csv -->\nnew 3.3 s\n<!-- /bench:csv -->\noutro 2.0 s\n"
    )
    with pytest.raises(KeyError, match="bench:nothing"):
        page.update("<!-- bench:nothing -->\nx\n<!-- /bench:nothing -->\n", {"csv": ""})


def test_a_missed_target_says_by_how_much() -> None:
    results = copy.deepcopy(RESULTS)
    results["benchmarks.build_document"]["html,pdf"]["median_s"] = 20.9
    results["benchmarks.blg_decode"]["mb_per_s"] = 240.0
    block = page.targets(results)
    assert "| 20.90 s | < 15 s | **missed by 39 %** |" in block
    assert "| 240 MB/s | ≥ 300 MB/s | **missed by 20 %** |" in block


def test_growth_is_cost_per_unit_against_the_smallest_point() -> None:
    points: list[dict[str, object]] = [
        {"servers": 1, "s": 2.0},
        {"servers": 10, "s": 20.0},
        {"servers": 40, "s": 100.0},
    ]
    scaling._growth(points, "servers", lambda p: p["s"])
    assert [p["cost_per_unit_vs_smallest"] for p in points] == [1.0, 1.0, 1.25]


def test_a_generated_solution_has_that_many_distinct_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scaling, "DATA", tmp_path)
    manifest_path = scaling.solution(12, stress=False)
    manifest = read_manifest(manifest_path)
    assert len(manifest.servers) == 12
    assert manifest.profile.mailboxes == 120_000
    folders = [manifest_path.parent / server.results[0] for server in manifest.servers]
    machines = {read_report(next(f.glob("Performance_*.html"))).machine for f in folders}
    assert len(machines) == 12
    copy_log = next((tmp_path / "performance-12" / "servers" / "EMAIL3-1").glob("Performance_*.csv"))
    header = copy_log.read_text(encoding="utf-8").splitlines()[0]
    assert "\\\\EMAIL3-1\\" in header and "\\\\EMAIL3\\" not in header
