"""`esrp-report --help` and `version` start at once: importing the CLI, or asking it for help,
imports no data or document library (esrp_report/cli.py's docstring says why). Each check runs in
a fresh interpreter, since this test session has imported those libraries long ago."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = [
    "polars",
    "duckdb",
    "pyarrow",
    "weasyprint",
    "numpy",
    "pandas",
    "dask",
    "lxml",
    "pypdf",
    "pypdfium2",
    "jinja2",
]
REPORT_HEAVY = f"import sys; print(sorted(m for m in sys.modules if m.split('.')[0] in {set(HEAVY)!r}))"
PROGRAM = Path(sys.executable).with_name("esrp-report")


def _env() -> dict[str, str]:
    """This checkout first on the path, as the test session has it."""
    path = os.environ.get("PYTHONPATH")
    return os.environ | {"PYTHONPATH": os.pathsep.join([str(ROOT), *([path] if path else [])])}


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_env(), check=True, timeout=60
    )


def test_importing_the_cli_imports_no_heavy_library() -> None:
    result = _python("import esrp_report.cli.main; " + REPORT_HEAVY)
    assert result.stdout.strip() == "[]"


def test_asking_for_help_imports_no_heavy_library() -> None:
    code = (
        "from esrp_report.cli.main import app\n"
        "try:\n"
        "    app(['--help'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n" + REPORT_HEAVY.replace("; ", "\n")
    )
    lines = _python(code).stdout.strip().splitlines()
    assert "Usage" in "\n".join(lines[:-1])  # the help was printed
    assert lines[-1] == "[]"


@pytest.mark.skipif(not PROGRAM.exists(), reason="the esrp-report script is not installed beside Python")
@pytest.mark.parametrize("args", [["--help"], ["version"], ["--version"]])
def test_the_installed_program_answers(args: list[str]) -> None:
    result = subprocess.run(
        [str(PROGRAM), *args], capture_output=True, text=True, env=_env(), check=False, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def test_the_fast_version_answer_is_the_cli_s() -> None:
    """`esrp-report version` and `--version` are answered before Typer is imported
    (esrp_report/command.py); the CLI's own command and option say the same."""
    from typer.testing import CliRunner

    from esrp_report import __version__
    from esrp_report.cli.main import app

    fast = _python(
        "import sys; sys.argv = ['esrp-report', 'version']\n"
        "from esrp_report.command import main; main()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'typer', 'rich'}))"
    ).stdout.splitlines()
    assert fast == [__version__, "[]"]
    runner = CliRunner()
    for args in (["version"], ["--version"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0
        assert result.stdout == f"{__version__}\n"


SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.mark.parametrize(
    "args",
    [
        ["inspect", str(SAMPLES / "EMAIL5" / "Performance_2011_3_11_13_27_46.csv"), "--json"],
        ["inspect", "--json", str(SAMPLES / "EMAIL5" / "JetstressConfig.xml")],
        ["inspect", str(SAMPLES / "netapp.toml")],  # not evidence: an error, exit 2
        ["inspect", str(SAMPLES / "nowhere.csv")],
    ],
)
def test_the_fast_inspect_path_answers_as_the_cli_does(args: list[str]) -> None:
    """`inspect FILE [--json]` skips Typer's dispatch (esrp_report/command.py): same output,
    same exit status as through Typer."""
    env = {**_env(), "COLUMNS": "200"}
    fast = subprocess.run([str(PROGRAM), *args], capture_output=True, text=True, env=env, timeout=120, check=False)
    typer_path = subprocess.run(
        [sys.executable, "-c", "from esrp_report.cli.main import main; main()", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        typer_path.returncode,
        typer_path.stdout,
        typer_path.stderr,
    )
    assert fast.returncode in (0, 2)
