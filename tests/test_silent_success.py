"""Never a silent success (issue 32, item 6): each case a new user met that ended in exit 0 (or
a wrong reason) now says what went wrong in one line, with the exit status the command documents.
Each test ran against the code before the change and failed there."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from esrp_report.cli.main import app

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
BLG = ROOT / "tests" / "data" / "blg" / "SampleLog.blg"
PERFORMANCE_CSV = SAMPLES / "EMAIL5" / "Performance_2011_3_11_13_27_46.csv"
runner = CliRunner()


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


# --- build: TODO placeholders, and why it is incomplete --------------------------------------------


def _init_manifest(tmp_path: Path) -> Path:
    manifest = tmp_path / "m.toml"
    made = runner.invoke(app, ["init", str(SAMPLES / "EMAIL5"), "-o", str(manifest)])
    assert made.exit_code == 0, made.output
    return manifest


def test_build_refuses_an_unedited_init_manifest_naming_each_placeholder(tmp_path: Path) -> None:
    manifest = _init_manifest(tmp_path)
    text = manifest.read_text(encoding="utf-8").splitlines()
    expected = [
        n for n, line in enumerate(text, start=1) if "TODO(vendor)" in line and not line.startswith("#")
    ]
    assert len(expected) > 10
    result = runner.invoke(app, ["build", str(manifest), "-o", str(tmp_path / "out"), "--format", "html"])
    assert result.exit_code == 2, result.output
    [line] = _error_lines(result.stderr)
    assert line.startswith(f"error: {manifest}: {len(expected)} TODO(vendor) placeholder(s) left")
    assert [int(n) for n in re.findall(r"line (\d+) \[", line)] == expected
    assert "line 5 [document] vendor" in line and "[sections] overview" in line
    assert "--draft" in line
    assert not (tmp_path / "out" / "m.html").exists()


def test_build_draft_builds_it_and_warns_of_each_placeholder(tmp_path: Path) -> None:
    manifest = _init_manifest(tmp_path)
    result = runner.invoke(
        app, ["build", str(manifest), "-o", str(tmp_path / "out"), "--format", "html", "--draft"]
    )
    assert result.exit_code == 0, result.output
    warned = [line for line in result.stdout.splitlines() if line.startswith("draft: placeholder left:")]
    lines = manifest.read_text(encoding="utf-8").splitlines()
    assert len(warned) == sum(1 for line in lines if "TODO(vendor)" in line and not line.startswith("#"))
    assert f"{manifest} line 5: [document] vendor" in result.stdout
    assert (tmp_path / "out" / "m.html").is_file()


def test_an_incomplete_build_says_why(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["build", str(SAMPLES / "netapp.toml"), "-o", str(tmp_path), "--format", "html", "-j", "1"]
    )
    assert result.exit_code == 3, result.output
    assert ": INCOMPLETE" in result.stdout
    reasons = [line.strip() for line in result.stdout.splitlines() if line.strip().startswith("why:")]
    assert reasons, result.stdout  # before: the verdict alone, no reason
    assert any(r.startswith("why: not evaluated: db-read-latency-max on 3650-4 Performance") for r in reasons)


# --- catalog ingest of nothing ---------------------------------------------------------------------


def test_catalog_ingest_of_an_empty_folder_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    args = ["catalog", "ingest", str(empty), "--catalog", str(tmp_path / "catalog"), "-j", "1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert _error_lines(result.stderr) == [
        f"error: no Jetstress results found in {empty} (no run was read from them)"
    ]


def test_catalog_ingest_of_results_is_not_refused(tmp_path: Path) -> None:
    args = ["catalog", "ingest", str(SAMPLES / "EMAIL5"), "--catalog", str(tmp_path / "catalog"), "-j", "1"]
    assert runner.invoke(app, args).exit_code == 0
    # Unchanged on the second ingest: found, not "nothing found".
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output


# --- check --target-iops ---------------------------------------------------------------------------


def test_check_refuses_a_target_that_is_not_above_zero() -> None:
    for value in ("-5", "0", "-0.0"):
        result = runner.invoke(app, ["check", str(SAMPLES / "EMAIL5"), "--target-iops", value])
        assert result.exit_code == 2, (value, result.output)
        [line] = _error_lines(result.stderr)
        assert "--target-iops" in line and "a target must be greater than 0" in line
    passed = runner.invoke(app, ["check", str(SAMPLES / "EMAIL5"), "--target-iops", "1400"])
    assert passed.exit_code == 0, passed.output


# --- convert with a window outside the log ---------------------------------------------------------


def test_convert_with_a_window_outside_the_log_writes_nothing_and_says_the_span(tmp_path: Path) -> None:
    cases = [
        (BLG, "2007-08-14 15:40:38.659", "2007-08-14 15:50:38.599"),
        (PERFORMANCE_CSV, None, None),
    ]
    for source, first, last in cases:
        out = tmp_path / f"{source.stem}.csv"
        args = ["convert", str(source), "-o", str(out), "--begin", "2030-01-01T00:00:00"]
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        [line] = _error_lines(result.stderr)
        assert "no sample in the window 2030-01-01 00:00:00 to its end; the log runs from " in line
        if first and last:
            assert f"the log runs from {first} to {last} (its local time)" in line
        assert not out.exists()
        inside = runner.invoke(app, ["convert", str(source), "-o", str(out)])
        assert inside.exit_code == 0 and out.is_file(), inside.output


# --- audit of a binary file ------------------------------------------------------------------------


def test_audit_of_an_image_says_what_it_is(tmp_path: Path) -> None:
    png = tmp_path / "screenshot.txt"  # the name says text: the content is told, not the name
    png.write_bytes(
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x81\x8d"
    )
    zipped = tmp_path / "report.pdf"
    zipped.write_bytes(b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(range(256)))
    for path, kind in ((png, "a PNG image"), (zipped, "a ZIP archive, or a Word, Excel or PowerPoint file")):
        result = runner.invoke(app, ["audit", str(path)])
        assert result.exit_code == 2, result.output
        [line] = _error_lines(result.stderr)
        assert line.startswith(f"error: {path}: not a text or PDF document (looks like {kind})"), line
        assert "decode" not in line


# --- check on an 80-column terminal ----------------------------------------------------------------


def _on_terminal(args: list[str], columns: int, term: str = "dumb") -> str:
    """The command's output on a pseudo-terminal ``columns`` wide (Rich sizes tables to it only
    when stdout is a terminal), without its colour codes."""
    main, child = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "50", "TERM": term}
    with subprocess.Popen(
        [sys.executable, "-m", "esrp_report.cli.main", *args],
        stdout=child,
        stderr=child,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
    ) as process:
        os.close(child)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=120)
    os.close(main)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode("utf-8", "replace"))


def test_check_on_an_80_column_terminal_cuts_no_figure() -> None:
    text = _on_terminal(["check", str(SAMPLES / "EMAIL5")], 80)
    assert "Solution EMAIL5: PASS" in text
    assert "…" not in text, text
    assert max(len(line) for line in text.splitlines()) <= 80
    for figure in ("1445.341", "1400.000", "18.471", "2061.852", "498.526", "702.630", "45.341"):
        assert figure in text, figure


# --- api.build from a plain script -----------------------------------------------------------------


def _run_script(tmp_path: Path, call: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "plain.py"
    # A plain script: no `if __name__ == "__main__":`, as a first try of the API is written.
    script.write_text(
        "from pathlib import Path\n"
        "from esrp_report.app import api\n"
        f"built = {call}\n"
        "print('verdict', built.document.verdict.value, 'pages', built.pages)\n",
        encoding="utf-8",
    )
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=300, check=False
    )


def test_api_build_with_its_defaults_works_from_a_plain_script(tmp_path: Path) -> None:
    done = _run_script(tmp_path, f"api.build(Path('samples/netapp.toml'), Path({str(tmp_path / 'out')!r}))")
    assert done.returncode == 0, done.stderr
    assert re.search(r"verdict incomplete pages \d+", done.stdout), done.stdout
    assert (tmp_path / "out" / "netapp.pdf").is_file()


def test_api_build_with_workers_from_a_plain_script_says_what_to_change(tmp_path: Path) -> None:
    call = f"api.build(Path('samples/netapp.toml'), Path({str(tmp_path / 'out')!r}), jobs=2)"
    done = _run_script(tmp_path, call)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "EsrpError" in last and "if __name__ ==" in last and "jobs=1" in last, done.stderr


# --- progress of long work on a terminal, and --quiet ------------------------------------------------


def _progress_shown(args: list[str]) -> str:
    """What a command writes to a real terminal (a pseudo-terminal that says it can draw), where
    progress lines are drawn and then cleared."""
    return _on_terminal(args, 120, term="xterm-256color")


def test_audit_shows_its_progress_on_a_terminal_and_not_with_quiet() -> None:
    document = ROOT / "tests" / "data" / "published" / "vmax-000.txt"
    shown = _progress_shown(["audit", str(document)])
    # The line is redrawn a few times a second, so a stage that ends sooner may not be drawn; the
    # last one is drawn when the line is cleared.
    assert re.search(r"auditing: checking [\d,]+ tables and [\d,]+ reports", shown), shown[-2000:]
    quiet = _progress_shown(["audit", str(document), "--quiet"])
    assert "auditing:" not in quiet
    assert "Audit of" in quiet  # the results themselves are still printed


def test_catalog_ingest_shows_its_progress_on_a_terminal_and_not_with_quiet(tmp_path: Path) -> None:
    args = ["catalog", "ingest", str(SAMPLES / "EMAIL5"), "-j", "1"]
    shown = _progress_shown([*args, "--catalog", str(tmp_path / "shown")])
    assert "parsing results folders" in shown
    quiet = _progress_shown([*args, "--catalog", str(tmp_path / "quiet"), "--quiet"])
    assert "parsing results folders" not in quiet
    assert "files (" in quiet  # the summary is still printed
