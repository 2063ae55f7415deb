from __future__ import annotations

from pathlib import Path

import pytest

from esrp_report import model as m
from esrp_report.analysis.rules import RunEvidence, Status, evaluate_run, load_rules, roll_up
from esrp_report.model import InstanceRow, InstanceTable, Run, TableKind, TestKind
from esrp_report.model.errors import RulesError


def _run(
    kind: TestKind = TestKind.PERFORMANCE,
    read_latencies: tuple[float, ...] = (18.0, 19.0),
    version: str = "14.01.0225.017",
) -> Run:
    rows = [
        InstanceRow(
            f"Instance1.{i + 1}",
            {m.DB_READ_LATENCY: lat, m.LOG_WRITE_LATENCY: 0.9, m.DB_READS: 40.0, m.DB_WRITES: 30.0},
        )
        for i, lat in enumerate(read_latencies)
    ]
    run = Run(kind=kind, machine="MBX1", sources=["r.html"], jetstress_version=version, overall_result="Pass")
    run.tables[TableKind.TRANSACTIONAL] = InstanceTable(TableKind.TRANSACTIONAL, rows)
    run.sizing.achieved_iops = 140.0
    run.sizing.target_iops = 120.0
    run.host.append(m.HostCounter("Database Page Fault Stalls/sec", 0.0, 0.0, 0.0))
    return run


def _results(run: Run, rules_file: Path | None = None, target: float | None = 120.0):
    ev = RunEvidence(run=run, server="MBX1", target_iops=target, target_source="report")
    return evaluate_run(ev, load_rules(rules_file))


def test_passing_run_passes_and_maximum_is_not_evaluated_without_samples() -> None:
    results = _results(_run())
    by_rule = {(r.rule_id, r.instance): r for r in results}
    assert by_rule[("db-read-latency-avg", "Instance1.2")].status is Status.PASS
    assert by_rule[("db-read-latency-avg", "Instance1.2")].margin == pytest.approx(1.0)
    assert by_rule[("db-read-latency-max", "Instance1.1")].status is Status.NOT_EVALUATED
    assert "samples" in by_rule[("db-read-latency-max", "Instance1.1")].reason
    assert by_rule[("transactional-iops", None)].status is Status.PASS
    # Nothing failed, but a rule that applies was not evaluated: never PASS.
    assert roll_up(results) is Status.INCOMPLETE
    assert roll_up(r for r in results if r.status is not Status.NOT_EVALUATED) is Status.PASS


def test_one_instance_over_20ms_fails_that_instance_only() -> None:
    results = _results(_run(read_latencies=(18.0, 20.4)))
    failed = [r for r in results if r.status is Status.FAIL]
    assert [(r.rule_id, r.instance, r.value, r.threshold) for r in failed] == [
        ("db-read-latency-avg", "Instance1.2", 20.4, 20.0)
    ]
    assert roll_up(r for r in results if r.instance == "Instance1.1") is Status.INCOMPLETE  # no maxima
    assert roll_up(results) is Status.FAIL


def test_exactly_20ms_fails_because_the_rule_is_strictly_under() -> None:
    results = _results(_run(read_latencies=(20.0,)))
    assert {r.status for r in results if r.rule_id == "db-read-latency-avg"} == {Status.FAIL}


def test_iops_below_target_fails_and_missing_target_is_not_evaluated() -> None:
    run = _run()
    run.sizing.achieved_iops = 119.9
    statuses = {r.rule_id: r.status for r in _results(run)}
    assert statuses["transactional-iops"] is Status.FAIL
    statuses = {r.rule_id: r for r in _results(_run(), target=None)}
    assert statuses["transactional-iops"].status is Status.NOT_EVALUATED
    assert "target" in statuses["transactional-iops"].reason


def test_latency_rules_do_not_apply_to_soft_recovery() -> None:
    run = _run(kind=TestKind.SOFT_RECOVERY, read_latencies=(24.8,))
    assert not any(r.rule_id.startswith("db-read") for r in _results(run))


def test_reported_fail_fails_the_run() -> None:
    run = _run()
    run.overall_result = "Fail"
    statuses = {r.rule_id: r.status for r in _results(run)}
    assert statuses["reported-result"] is Status.FAIL


def test_stress_maximum_threshold_is_lenient_and_2007_is_50() -> None:
    rules = {r.id: r for r in load_rules()}
    rule = rules["db-read-latency-max"]
    assert rule.threshold_for(TestKind.STRESS, m.Generation.JETSTRESS_2010) == 200.0
    assert rule.threshold_for(TestKind.PERFORMANCE, m.Generation.JETSTRESS_2013) == 100.0
    assert rule.threshold_for(TestKind.PERFORMANCE, m.Generation.JETSTRESS_2007) == 50.0


def test_user_rules_tighten_a_threshold(tmp_path: Path) -> None:
    strict = tmp_path / "sla.toml"
    strict.write_text('[[rule]]\nid = "db-read-latency-avg"\n[rule.threshold]\nPerformance = 15.0\n')
    results = _results(_run(read_latencies=(14.0, 16.0)), strict)
    failed = [(r.rule_id, r.instance, r.threshold) for r in results if r.status is Status.FAIL]
    assert failed == [("db-read-latency-avg", "Instance1.2", 15.0)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[rule]]\nid = "x"\n', "new rule 'x' lacks"),
        ('[[rule]]\nid = "db-read-latency-avg"\noperator = "~"\n', "operator must be one of"),
        ('[[rule]]\nid = "db-read-latency-avg"\nmeasure = "nope"\n', "unknown measure 'nope'"),
        ('[[rule]]\nid = "db-read-latency-avg"\n[rule.threshold]\nPerf = 1\n', "unknown test kind 'Perf'"),
        ("[[rule]\n", "not valid TOML"),
    ],
)
def test_bad_rules_files_name_the_file_and_the_fault(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(RulesError, match=r"bad\.toml") as info:
        load_rules(path)
    assert message in str(info.value)
