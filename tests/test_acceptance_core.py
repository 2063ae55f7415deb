"""Issue "Core" acceptance: the published per-server figures reproduce from the bundled evidence,
a counter log gives the same figures and verdicts, planted differences and failures are caught."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from esrp_report.analysis.rules import Status
from esrp_report.app import api
from esrp_report.cli.main import app
from esrp_report.ingest.jetstress.report_html import read_report
from esrp_report.model import TableKind
from esrp_report.model.numbers import fmt_number
from esrp_report.render.jetstress_text import timestamp
from esrp_synth.jetstress_counters import synthesize, write_log
from esrp_synth.jetstress_html import write_report_html

PERF = "Performance_2011_3_11_13_27_46"
runner = CliRunner()


def _figures(summary_conventions: dict, decimals: int) -> dict[str, str]:  # type: ignore[type-arg]
    t = summary_conventions["transactional"]
    return {k: fmt_number(v, decimals) for k, v in t.items() if k != "instances"}


def test_000_email5_performance_figures_at_printed_precision(samples: Path) -> None:
    result = runner.invoke(app, ["check", str(samples / "EMAIL5"), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    (server,) = payload["servers"]
    perf = server["summaries"]["Performance"]
    assert _figures(perf["conventions"], 3) == {
        "transfers_per_sec": "1445.341",
        "reads_per_sec": "889.570",
        "writes_per_sec": "555.771",
        "read_latency_ms": "18.369",
        "write_latency_ms": "3.227",
        "log_writes_per_sec": "498.526",
        "log_write_latency_ms": "0.860",
    }
    assert fmt_number(perf["achieved_iops"], 3) == "1445.341"
    assert perf["target_iops"] == 1400
    # Soft recovery as the summary prints it for server 4 (EMAIL5): 3.73 s per log.
    assert fmt_number(server["soft_recovery"]["seconds_per_log"], 2) == "3.73"
    assert server["status"] == "pass"


def test_001_netapp_figures_at_printed_precision(samples: Path) -> None:
    assessment = api.check([samples / "3650-4"])
    (server,) = assessment.servers
    t = server.summaries["Performance"].conventions["transactional"]
    printed = [
        fmt_number(v, 2)
        for v in (
            t.transfers,
            t.reads,
            t.writes,
            t.read_latency_ms,
            t.write_latency_ms,
            t.log_writes,
            t.log_write_latency_ms,
        )
    ]
    assert printed == ["185.74", "113.14", "72.60", "14.96", "1.02", "61.96", "0.99"]
    assert server.backup is not None and server.recovery is not None
    assert fmt_number(server.backup.mb_per_sec_per_database, 3) == "32.875"
    assert fmt_number(server.backup.mb_per_sec_per_server, 3) == "65.750"
    assert fmt_number(server.recovery.seconds_per_log, 3) == "3.599"
    checksum = [r for run in server.runs for r in run.results if r.rule_id == "checksum-bad-pages"]
    assert [(r.status, r.value) for r in checksum] == [(Status.PASS, 0.0)]
    # NetApp published its reports without counter logs: the maxima cannot be checked.
    assert assessment.status is Status.INCOMPLETE
    unevaluated = {r.rule_id for r in assessment.results if r.status is Status.NOT_EVALUATED}
    assert unevaluated == {"db-read-latency-max", "log-write-latency-max"}


def test_report_and_its_counter_log_agree_and_maxima_come_from_samples(samples: Path) -> None:
    assessment = api.check([samples / "EMAIL5"])
    perf = next(r for r in assessment.servers[0].runs if r.run.kind.value == "Performance")
    assert perf.run.counter_log is not None
    assert perf.disagreements == []
    assert perf.counter is not None and perf.counter.window.origin == "report"
    maxima = [r for r in perf.results if r.rule_id == "db-read-latency-max"]
    assert len(maxima) == 20 and all(r.status is Status.PASS and r.evidence == "counter log" for r in maxima)


def test_counter_log_alone_with_its_test_log_gives_the_same_figures_and_verdicts(
    samples: Path, tmp_path: Path
) -> None:
    shutil.copy(samples / "EMAIL5" / f"{PERF}.csv", tmp_path)
    report = read_report(samples / "EMAIL5" / f"{PERF}.html")
    assert report.test_log is not None
    lines = [f"{timestamp(e.timestamp)} -- {e.message}" for e in report.test_log.entries]
    (tmp_path / f"{PERF}.txt").write_text("\n".join(lines), encoding="utf-8")

    from_log = api.check([tmp_path], target_iops=1400)
    from_report = api.check([samples / "EMAIL5" / f"{PERF}.html", samples / "EMAIL5" / f"{PERF}.csv"])
    log_run = from_log.servers[0].runs[0]
    assert log_run.counter is not None and log_run.counter.window.origin == "test log"
    a = from_log.servers[0].summaries["Performance"].conventions["transactional"]
    b = from_report.servers[0].summaries["Performance"].conventions["transactional"]
    for attr in (
        "reads",
        "writes",
        "read_latency_ms",
        "write_latency_ms",
        "log_writes",
        "log_write_latency_ms",
    ):
        assert fmt_number(getattr(a, attr), 3) == fmt_number(getattr(b, attr), 3), attr
    verdicts = {(r.rule_id, r.instance): r.status for r in log_run.results}
    # Only Jetstress's own verdict needs the report; every other rule is judged from the log.
    assert {k[0] for k, v in verdicts.items() if v is not Status.PASS} == {"reported-result"}
    report_verdicts = {(r.rule_id, r.instance): r.status for r in from_report.servers[0].runs[0].results}
    common = (set(verdicts) & set(report_verdicts)) - {("reported-result", None)}
    assert {verdicts[k] for k in common} == {report_verdicts[k] for k in common} == {Status.PASS}
    assert verdicts[("db-read-latency-avg", "Instance2756.1")] is Status.PASS
    assert from_log.status is Status.INCOMPLETE  # Jetstress's own verdict is in the report only


def test_counter_log_alone_without_a_window_says_so(samples: Path, tmp_path: Path) -> None:
    shutil.copy(samples / "EMAIL5" / f"{PERF}.csv", tmp_path)
    assessment = api.check([tmp_path])
    problems = [p.message for r in assessment.servers[0].runs for p in r.problems]
    assert any("collection window unknown" in m for m in problems)


def test_a_planted_one_percent_difference_is_reported(email5_copy: Path) -> None:
    run = read_report(email5_copy / f"{PERF}.html")
    planted = synthesize(run, plant={("Instance2756.3", "I/O Database Reads Average Latency"): 1.01})
    write_log(email5_copy / f"{PERF}.csv", planted)
    assessment = api.check([email5_copy])
    perf = next(r for r in assessment.servers[0].runs if r.run.kind.value == "Performance")
    found = {(d.table, d.instance, d.metric): round(d.relative_difference, 4) for d in perf.disagreements}
    assert found == {
        ("transactional", "Instance2756.3", "db_reads_avg_latency_ms"): 0.0099,
        ("total", "Instance2756.3", "db_reads_avg_latency_ms"): 0.0099,
    }
    result = runner.invoke(app, ["check", str(email5_copy)])
    assert "Sources disagree" in result.output and "Instance2756.3" in result.output


def test_one_instance_at_20_4_ms_fails_instance_server_and_solution(samples: Path, tmp_path: Path) -> None:
    run = read_report(samples / "EMAIL5" / f"{PERF}.html")
    row = run.tables[TableKind.TRANSACTIONAL].row("Instance2756.7")
    assert row is not None
    row.values["db_reads_avg_latency_ms"] = 20.4
    (tmp_path / f"{PERF}.html").write_text(write_report_html(run), encoding="utf-8")

    result = runner.invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 1
    failing = [line for line in result.output.splitlines() if "FAIL" in line and "Instance2756.7" in line]
    assert len(failing) == 1
    assert "db-read-latency-avg" in failing[0] and "20.400" in failing[0] and "< 20.000 ms" in failing[0]
    [verdict] = [line for line in result.output.splitlines() if line.startswith("Solution")]
    assert verdict.endswith("FAIL")

    payload = json.loads(runner.invoke(app, ["check", str(tmp_path), "--json"]).output)
    assert payload["solution"]["status"] == "fail"
    (server,) = payload["servers"]
    assert server["status"] == "fail"
    instances = {i["name"]: i["status"] for i in server["runs"][0]["instances"]}
    # The report alone: the maxima are not evaluated, so the others are incomplete, not pass.
    assert instances["Instance2756.7"] == "fail" and instances["Instance2756.6"] == "incomplete"
