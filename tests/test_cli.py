from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from esrp_report.cli.main import app

runner = CliRunner()
PERF = "Performance_2011_3_11_13_27_46"


@pytest.mark.parametrize(
    ("name", "fmt", "key", "expected"),
    [
        (f"EMAIL5/{PERF}.html", "jetstress-report-html", "instances", 20),
        (
            f"EMAIL5/{PERF}.xml",
            "jetstress-result-xml",
            "tables",
            {"total": 20, "background_maintenance": 20, "log_replication": 20, "transactional": 20},
        ),
        ("EMAIL5/JetstressConfig.xml", "jetstress-config-xml", "target_iops", 1400.0),
        (f"EMAIL5/{PERF}.csv", "perfmon-csv", "machines", ["EMAIL5"]),
        ("3650-4/DBChecksum_2012_4_24_8_14_1.html", "jetstress-report-html", "checksum_rows", 3),
    ],
)
def test_inspect_every_format(samples: Path, name: str, fmt: str, key: str, expected: object) -> None:
    result = runner.invoke(app, ["inspect", str(samples / name), "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["format"] == fmt
    value = info[key]
    if key == "instances":
        value = len(value)
    assert value == (pytest.approx(expected) if isinstance(expected, float) else expected)


def test_inspect_a_test_log_and_table_output(samples: Path, tmp_path: Path) -> None:
    log = tmp_path / "Performance.txt"
    log.write_text("3/11/2011 1:28:05 PM -- Performance logging started (interval: 15000 ms).\n")
    info = json.loads(runner.invoke(app, ["inspect", str(log), "--json"]).output)
    assert info["format"] == "jetstress-test-log" and info["logging_intervals_ms"] == [15000]
    table = runner.invoke(app, ["inspect", str(samples / "EMAIL5" / f"{PERF}.csv")])
    assert table.exit_code == 0 and "interval_seconds" in table.output and "15.000" in table.output


def _error_line(result_output: str) -> str:
    lines = [line for line in result_output.splitlines() if line.strip()]
    assert "Traceback" not in result_output
    return " ".join(lines)


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        (b"<html><body>Hello</body></html>", "page.html", "not a supported file"),
        (
            b'<?xml version="1.0"?><!DOCTYPE output [<!ENTITY e SYSTEM "file:///etc/passwd">]><output>&e;</output>',
            "Performance_1.xml",
            "entity declarations are not allowed",
        ),
        (b"", "empty.csv", "not a supported file"),
        (b"PDH-BIN\x00\x00", "old.blg", "older (Windows XP / Server 2003)"),
    ],
)
def test_unusable_input_exits_2_with_one_clear_line(
    tmp_path: Path, content: bytes, name: str, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    result = runner.invoke(app, ["check", str(path)])
    assert result.exit_code == 2
    text = _error_line(result.output)
    assert "error:" in text and name in text and message in text
    assert "root:" not in result.output


def test_empty_folder_and_missing_path(tmp_path: Path) -> None:
    result = runner.invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 2 and "no Jetstress evidence found" in _error_line(result.output)
    result = runner.invoke(app, ["check", str(tmp_path / "nope")])
    assert result.exit_code == 2 and "no such file or folder" in _error_line(result.output)


def test_unsupported_files_inside_a_folder_are_noted_not_fatal(email5_copy: Path) -> None:
    (email5_copy / "notes.docx").write_bytes(b"PK\x03\x04 not a report")
    result = runner.invoke(app, ["check", str(email5_copy), "--json"])
    assert result.exit_code == 0
    problems = json.loads(result.output)["problems"]
    assert any(p["source"].endswith("notes.docx") and p["message"].startswith("skipped") for p in problems)


def test_truncated_counter_log_is_a_partial_result_with_the_loss_counted(email5_copy: Path) -> None:
    csv = email5_copy / f"{PERF}.csv"
    data = csv.read_bytes()
    csv.write_bytes(data[: len(data) - 100])
    payload = json.loads(runner.invoke(app, ["check", str(email5_copy), "--json"]).output)
    perf = next(r for r in payload["servers"][0]["runs"] if r["kind"] == "Performance")
    lost = [p for p in perf["problems"] if p["lost"]]
    assert len(lost) == 1 and lost[0]["lost"] == 1 and lost[0]["location"].startswith("line ")


def test_stricter_rules_file_fails_the_design(samples: Path, tmp_path: Path) -> None:
    rules = tmp_path / "sla.toml"
    rules.write_text('[[rule]]\nid = "db-read-latency-avg"\n[rule.threshold]\nPerformance = 18.4\n')
    result = runner.invoke(
        app, ["check", str(samples / "EMAIL5" / f"{PERF}.html"), "--rules", str(rules), "--json"]
    )
    assert result.exit_code == 1
    failing = [
        r["instance"]
        for r in json.loads(result.output)["servers"][0]["runs"][0]["results"]
        if r["status"] == "fail"
    ]
    assert failing == [
        "Instance2756.1",
        "Instance2756.3",
        "Instance2756.5",
        "Instance2756.13",
        "Instance2756.15",
        "Instance2756.20",
    ]


def test_bad_rules_file_exits_2(samples: Path, tmp_path: Path) -> None:
    rules = tmp_path / "bad.toml"
    rules.write_text('[[rule]]\nid = "new-rule"\n')
    result = runner.invoke(app, ["check", str(samples / "EMAIL5"), "--rules", str(rules)])
    assert result.exit_code == 2 and "new rule 'new-rule' lacks" in _error_line(result.output)


def test_target_iops_option_overrides(samples: Path) -> None:
    result = runner.invoke(
        app, ["check", str(samples / "EMAIL5" / f"{PERF}.html"), "--target-iops", "1500", "--json"]
    )
    assert result.exit_code == 1
    run = json.loads(result.output)["servers"][0]["runs"][0]
    iops = next(r for r in run["results"] if r["rule"] == "transactional-iops")
    assert (iops["status"], iops["threshold"], run["target_source"]) == ("fail", 1500.0, "--target-iops")


def test_every_command_has_help_and_is_in_the_readme() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    for command in ("check", "inspect", "doctor"):
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0 and len(result.output) > 100
        assert f"esrp-report {command}" in readme


def test_json_schema_doc_names_every_top_level_field(samples: Path) -> None:
    doc = (Path(__file__).resolve().parent.parent / "docs" / "check-json.md").read_text(encoding="utf-8")
    payload = json.loads(runner.invoke(app, ["check", str(samples / "3650-4"), "--json"]).output)
    for key in [*payload, *payload["servers"][0], *payload["servers"][0]["runs"][0]]:
        assert f'"{key}"' in doc, key


def test_demo_folder_copy_is_self_contained(samples: Path, tmp_path: Path) -> None:
    shutil.copytree(samples / "3650-4", tmp_path / "3650-4")
    result = runner.invoke(app, ["check", str(tmp_path / "3650-4")])
    # Reports without counter logs: nothing fails, the maxima cannot be checked (exit 3).
    assert result.exit_code == 3 and "INCOMPLETE" in result.output
    assert "not evaluated: db-read-latency-max, log-write-latency-max" in result.output
