"""Partial evidence is judged, not refused (issue "One evidence pipeline").

The folder of the issue: a server whose Stress report lost its Test Summary and whose
SoftRecovery report lost its statistics table (as happens with reports rebuilt from a scanned
document). Its Performance run is whole and is judged; the missing sections are named; the
verdict is INCOMPLETE (exit 3), never a refusal and never PASS; every command takes the folder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from esrp_report.cli.main import app

runner = CliRunner()
STRESS = "Stress_2011_3_14_9_2_3.html"
RECOVERY = "SoftRecovery_2011_3_16_13_19_46.html"


def _without_section(text: str, legend: str) -> str:
    start = text.rindex("<fieldset>", 0, text.index(f"<legend>{legend}</legend>"))
    end = text.index("</fieldset>", start) + len("</fieldset>")
    return text[:start] + text[end:]


@pytest.fixture
def partial(samples: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "EMAIL5"
    shutil.copytree(samples / "EMAIL5", folder)
    for name, legend in ((STRESS, "Test Summary"), (RECOVERY, "Soft Recovery Statistics - All")):
        path = folder / name
        path.write_text(_without_section(path.read_text(encoding="utf-8"), legend), encoding="utf-8")
    return folder


def test_the_partial_folder_is_judged_and_its_gaps_named(partial: Path) -> None:
    result = runner.invoke(app, ["check", str(partial), "--json"])
    assert result.exit_code == 3, result.output
    out = json.loads(result.output)
    assert out["solution"]["status"] == "incomplete"
    assert "part(s) of the evidence not read" in out["solution"]["reason"]
    (server,) = out["servers"]
    runs = {run["kind"]: run for run in server["runs"]}
    assert set(runs) == {"Performance", "Stress", "DatabaseBackup", "SoftRecovery"}
    assert runs["Performance"]["status"] == "pass"
    assert runs["Stress"]["status"] == "incomplete"
    missing = [
        (kind, p["message"].split(" (")[0])
        for kind, run in runs.items()
        for p in run["problems"]
        if p["message"].startswith("required section missing")
    ]
    assert sorted(missing) == [
        ("SoftRecovery", "required section missing: Soft Recovery Statistics"),
        ("Stress", "required section missing: Test Summary"),
    ]
    stress = {(r["rule"], r["status"]) for r in runs["Stress"]["results"] if r["instance"] is None}
    assert ("reported-result", "not evaluated") in stress
    assert server["soft_recovery"] is None or server["soft_recovery"]["seconds_per_log"] is None


def test_the_text_verdict_names_what_was_not_read(partial: Path) -> None:
    result = runner.invoke(app, ["check", str(partial)])
    assert result.exit_code == 3
    text = " ".join(result.output.split())  # the console wraps long lines
    assert "INCOMPLETE" in text and "required section missing: Test Summary" in text


def test_init_compare_and_catalog_take_the_partial_folder(partial: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "m.toml"
    made = runner.invoke(app, ["init", str(partial), "-o", str(manifest)])
    assert made.exit_code == 0, made.output
    assert manifest.exists()
    compared = runner.invoke(app, ["compare", str(partial), str(partial), "--json"])
    assert compared.exit_code in (0, 1), compared.output
    catalog = tmp_path / "catalog"
    ingested = runner.invoke(
        app, ["catalog", "ingest", str(partial), "--catalog", str(catalog), "--jobs", "1"]
    )
    assert ingested.exit_code == 0, ingested.output
    listed = runner.invoke(app, ["catalog", "list", "--catalog", str(catalog), "--json"])
    assert len(json.loads(listed.output)) == 4  # every run kept, partial ones with their problems


def test_an_unreadable_file_is_reported_while_the_others_are_judged(partial: Path) -> None:
    (partial / "Performance_2011_3_11_13_27_46.csv").write_bytes(b'"(PDH-CSV 4.0)"\r\n"garbage')
    result = runner.invoke(app, ["check", str(partial), "--json"])
    assert result.exit_code == 3, result.output
    out = json.loads(result.output)
    assert any(
        p["source"].endswith("Performance_2011_3_11_13_27_46.csv") and p["severity"] == "error"
        for p in out["problems"]
    )
    runs = {run["kind"]: run for run in out["servers"][0]["runs"]}
    assert runs["Performance"]["status"] == "incomplete"  # its maxima lost their samples


def test_json_is_written_even_when_nothing_could_be_evaluated(tmp_path: Path) -> None:
    bad = tmp_path / "Performance_x.csv"
    bad.write_bytes(b'"(PDH-CSV 4.0)"\r\n"garbage')
    result = runner.invoke(app, ["check", str(bad), "--json"])
    assert result.exit_code == 2
    out = json.loads(result.stdout)
    assert out["solution"]["status"] == "not evaluated" and out["servers"] == []
    assert out["problems"][0]["source"] == str(bad) and out["problems"][0]["severity"] == "error"
