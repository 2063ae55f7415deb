"""The library entry points the CLI (and anyone else) calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from esrp_report.assess import SolutionAssessment, assess
from esrp_report.ingest import config_xml, counter_csv, report_html, result_xml, test_log
from esrp_report.ingest import evidence as ev
from esrp_report.render import payload
from esrp_report.rules import load_rules


def check(
    paths: list[Path],
    *,
    rules_file: Path | None = None,
    target_iops: float | None = None,
    name: str | None = None,
) -> SolutionAssessment:
    """Read the evidence under ``paths`` and judge it."""
    rules = load_rules(rules_file)
    solution = ev.load_solution(paths, name or ", ".join(p.name or str(p) for p in paths))
    return assess(solution, rules, target_iops)


def inspect(path: Path) -> dict[str, Any]:
    """Describe any supported file: its format and what it holds."""
    fmt = ev.detect_format(path)
    out: dict[str, Any] = {"file": str(path), "format": fmt}
    if fmt == ev.REPORT_HTML:
        out.update(payload.describe_run(report_html.read_report(path)))
    elif fmt == ev.RESULT_XML:
        out.update(payload.describe_run(result_xml.read_result_xml(path)))
    elif fmt == ev.CONFIG_XML:
        profile, problems = config_xml.read_config_xml_with_problems(path)
        out.update(
            {
                "test_type": profile.test_type,
                "duration": profile.duration,
                "mailbox_count": profile.mailbox_count,
                "mailbox_iops": profile.mailbox_iops,
                "target_iops": profile.target_iops,
                "mailbox_quota_mb": profile.mailbox_quota_mb,
                "thread_count": profile.thread_count,
                "log_interval_ms": profile.log_interval_ms,
                "threshold_sets": {
                    name: {"thresholds_ms": vars(t), "test_run_types": kinds}
                    for name, (t, kinds) in profile.threshold_sets.items()
                },
                "instances": len(profile.instances),
                "problems": [payload.problem_dict(p) for p in problems],
            }
        )
    elif fmt == ev.COUNTER_CSV:
        out.update(counter_csv.describe_counter_log(counter_csv.read_counter_csv(path)))
    elif fmt == ev.TEST_LOG:
        out.update(payload.describe_test_log(test_log.read_test_log(path)))
    else:
        out["problems"] = [{"message": f"{fmt} files are recognised but not read yet"}]
    return out
