"""`esrp-report --help` and `version` start at once: importing the CLI, or asking it for help,
imports no data or document library (esrp_report/cli.py's docstring says why). Each check runs in
a fresh interpreter, since this test session has imported those libraries long ago."""

from __future__ import annotations

import ast
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
    "matplotlib",
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
        ["check", str(SAMPLES / "EMAIL5")],
        ["check", "--json", str(SAMPLES / "EMAIL5"), str(SAMPLES / "vmax" / "EMAIL2")],
        ["check", str(SAMPLES / "netapp.toml"), "--json"],  # nothing to judge: exit 2, a document
        ["check", str(SAMPLES / "nowhere")],
        ["inspect", str(SAMPLES / "EMAIL5" / "Performance_2011_3_11_13_27_46.csv"), "--json"],
        ["inspect", "--json", str(SAMPLES / "EMAIL5" / "JetstressConfig.xml")],
        ["inspect", str(SAMPLES / "netapp.toml")],  # not evidence: an error, exit 2
        ["inspect", str(SAMPLES / "nowhere.csv")],
    ],
)
def test_the_fast_paths_answer_as_the_cli_does(args: list[str]) -> None:
    """`inspect FILE [--json]` and `check PATH... [--json]` skip Typer's dispatch
    (esrp_report/command.py): same output, same exit status as through Typer."""
    env = {**_env(), "COLUMNS": "200"}
    fast = subprocess.run(
        [str(PROGRAM), *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )
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
    assert fast.returncode in (0, 1, 2, 3)
    assert fast.stdout or fast.stderr


def test_the_fast_inspect_of_a_counter_log_imports_no_numpy_typer_or_rich() -> None:
    """The compiled parser hands its rows to Polars through the Arrow C data interface (no
    NumPy) and the description is drawn without Rich (cli/output.py): docs/benchmarks.md."""
    csv = SAMPLES / "EMAIL5" / "Performance_2011_3_11_13_27_46.csv"
    code = (
        f"import sys; sys.argv = ['esrp-report', 'inspect', {str(csv)!r}]\n"
        "from esrp_report.command import main; main()\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'typer', 'rich', 'pyarrow', 'click'}))"
    )
    lines = _python(code).stdout.splitlines()
    assert "counter_columns" in "\n".join(lines[:-1])
    from esrp_report.ingest.perfmon import counter_csv

    assert lines[-1] == ("[]" if counter_csv.native_parser_available() else "['pyarrow']")


def test_a_field_table_fits_its_width_and_keeps_every_word() -> None:
    from esrp_report.cli.output import field_table

    fields = [("file", "x.csv"), ("objects", "word " * 60 + "z" * 90), ("problems", "first line\nsecond")]
    table = field_table("x.csv", fields, 60)
    lines = table.splitlines()
    assert lines[0].strip() == "x.csv"
    assert all(len(line) <= 60 for line in lines)
    assert len({len(line) for line in lines[1:]}) == 1  # every row of the box as wide
    body = "".join(line.split("│")[2] for line in lines if line.startswith("│"))
    words = body.split()
    assert words[:61] == ["x.csv", *["word"] * 60]
    assert words[-3:] == ["first", "line", "second"]
    assert "".join(words[61:-3]) == "z" * 90  # a word longer than its column is cut, not lost
    assert [
        line.split("│")[1].strip() for line in lines if line.startswith("│") and line.split("│")[1].strip()
    ] == [
        "file",
        "objects",
        "problems",
    ]


def _commands() -> list[list[str]]:
    """Every command and catalog subcommand of the CLI, as Typer has them."""
    import typer

    from esrp_report.cli.main import app

    group = typer.main.get_command(app)
    names = [[name] for name in group.commands if name != "catalog"]  # type: ignore[attr-defined]
    catalog = group.commands["catalog"]  # type: ignore[attr-defined]
    return names + [["catalog", name] for name in catalog.commands]


def _modules_after(code: str) -> set[str]:
    """The top-level packages imported by a fresh interpreter after ``code`` (printed last)."""
    done = _python(code + "\nimport sys\nprint(sorted({m.split('.')[0] for m in sys.modules}))")
    return set(ast.literal_eval(done.stdout.strip().splitlines()[-1]))


def test_every_command_is_listed() -> None:
    """A new command is held to the start-up rule below without anyone remembering to add it."""
    assert ["check"] in _commands() and ["catalog", "ingest"] in _commands()


@pytest.mark.parametrize("command", _commands(), ids=" ".join)
def test_a_command_s_help_imports_no_heavy_library_and_no_rich(command: list[str]) -> None:
    """`esrp-report COMMAND --help` prints Typer's plain help: nothing of the data and document
    libraries, and not Rich, which the commands import only when they print a table."""
    code = (
        "from esrp_report.cli.main import app\n"
        "try:\n"
        f"    app({[*command, '--help']!r}, standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass"
    )
    assert _modules_after(code) & {*HEAVY, "rich"} == set()


# What running a command may import of HEAVY (beyond it, nothing), and why it needs each.
USES = {
    ("check",): {"polars": "the counter logs", "numpy": "the exact means", "lxml": "the reports"},
    ("inspect",): {"polars": "the counter log's samples"},
    ("version",): {},
}


@pytest.mark.parametrize(
    ("command", "args"),
    [
        (("check",), [str(SAMPLES / "EMAIL5")]),
        (("check",), ["--json", str(SAMPLES / "EMAIL5")]),
        (("inspect",), [str(SAMPLES / "EMAIL5" / "Stress_2011_3_14_9_2_3.csv")]),
        (("version",), []),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else "",
)
def test_a_command_imports_only_the_libraries_it_uses(command: tuple[str, ...], args: list[str]) -> None:
    """Run as the installed program runs it (esrp_report/command.py): `check` of a folder with
    no event log imports neither the .evtx readers nor Typer's Pydantic, nor any document library."""
    code = (
        f"import sys; sys.argv = ['esrp-report', *{[*command, *args]!r}]\n"
        "from esrp_report.command import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass"
    )
    imported = _modules_after(code)
    assert imported & set(HEAVY) <= set(USES[command])
    assert imported & {"typer", "pydantic", "Evtx", "pyevt"} == set()
