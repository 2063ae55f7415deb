"""One owner per criterion (issue 31, item 1): the verdict, the document's table marks and limit
texts, and the chart limit lines all ask the rule, so a rules file with `operator = "<="` and a
threshold of many digits is honoured alike everywhere.

Before: a value equal to a "<=" limit passed the verdict while the document marked its cell FAIL
(it compared `value >= limit` itself) and printed "< 20 msec"; a 12.25 ms limit was drawn at 12.3.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from esrp_report.analysis.rules import RuleResult, Status, find_rule
from esrp_report.app import api
from esrp_report.render.document import Document, Row
from esrp_report.render.html import view_charts
from tests.conftest import SAMPLES


def _netapp(tmp_path: Path, rules: str | None) -> Path:
    folder = tmp_path / "design"
    if not folder.exists():
        shutil.copytree(SAMPLES / "3650-4", folder / "3650-4")
        shutil.copy(SAMPLES / "netapp.toml", folder / "netapp.toml")
    manifest = folder / "netapp.toml"
    text = (SAMPLES / "netapp.toml").read_text(encoding="utf-8")
    if rules is not None:
        (folder / "rules.toml").write_text(rules, encoding="utf-8")
        text += '\n[rules]\nfile = "rules.toml"\n'
    manifest.write_text(text, encoding="utf-8")
    return manifest


def _read_latency_row(doc: Document, label: str) -> Row:
    table = doc.performance_tables[0]
    return next(row for row in table.rows if row.label == label)


def test_a_value_equal_to_a_lenient_operator_s_limit_is_marked_as_the_verdict_judges_it(
    tmp_path: Path,
) -> None:
    plain = api.build(_netapp(tmp_path, None), tmp_path / "plain", formats=("html",)).document
    label = plain.convention.labels["read_latency"]
    value = _read_latency_row(plain, label).cells[0].value
    assert value is not None
    # The server's own average as the limit, to its last bit: "<=" holds at it, "<" would not.
    rules = (
        '[[rule]]\nid = "db-read-latency-avg"\noperator = "<="\n'
        f"[rule.threshold]\nPerformance = {value!r}\nStress = {value!r}\n"
    )
    doc = api.build(_netapp(tmp_path, rules), tmp_path / "strict", formats=("html",)).document
    rule = find_rule(doc.rules, "db-read-latency-avg")
    assert rule is not None and rule.operator == "<=" and rule.holds(value, value)
    row = _read_latency_row(doc, label)
    assert row.target == f"<= {format(value, ',.15g')} msec"
    assert row.cells[0].value == value
    assert row.cells[0].status is None  # the verdict's operator: equal to the limit holds
    # Every instance above the server's average fails the rule, as the verdict says.
    results = [r for r in doc_results(tmp_path) if r.rule_id == "db-read-latency-avg"]
    assert any(r.status is Status.FAIL for r in results) and all(
        (r.status is Status.FAIL) == (not rule.holds(r.value, value)) for r in results if r.value is not None
    )


def doc_results(tmp_path: Path) -> list[RuleResult]:
    assessment = api.check([tmp_path / "design" / "3650-4"], rules_file=tmp_path / "design" / "rules.toml")
    return assessment.results


def test_chart_limit_lines_are_the_rule_s_threshold_not_its_printed_text(tmp_path: Path) -> None:
    folder = tmp_path / "samples"
    shutil.copytree(SAMPLES, folder, ignore=shutil.ignore_patterns("dellemc*", "trends", "sizing"))
    (folder / "rules.toml").write_text(
        '[[rule]]\nid = "db-read-latency-avg"\n[rule.threshold]\nPerformance = 12.25\nStress = 12.25\n',
        encoding="utf-8",
    )
    manifest = folder / "vmax.toml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8") + '\n[rules]\nfile = "rules.toml"\n', encoding="utf-8"
    )
    doc = api.build(manifest, tmp_path / "out", formats=("html",)).document
    view = next(v for v in doc.servers if any(rv.run.counter_log is not None for rv in v.runs))
    specs = [spec for specs in view_charts(doc, view).values() for spec in specs]
    read = {spec.args[2] for spec in specs if "read" in spec.args[1]}
    assert read == {12.25}  # drawn at the rule's threshold, not at "12.3" parsed back from print
    label = doc.convention.labels["read_latency"]
    assert _read_latency_row(doc, label).target == "< 12.25 msec"
