"""Every CLI command, given a user's mistake, exits 2 with one line naming the path: no traceback
(issue 22, item 6).

The commands are enumerated from the Typer app, so a new command fails `test_every_command_is_covered`
until its paths are described in COMMANDS; each path parameter is then tried with the mistakes of its
role: a missing file, a folder where a file is expected, a file where a folder is expected, an
unreadable file, and (for `build`) an unreadable logo or template.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
import typer
from typer.testing import CliRunner

from esrp_report.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
runner = CliRunner()


@dataclass(frozen=True)
class PathParam:
    """One path a command takes: its option (None for the argument), its role, and a good value."""

    option: str | None
    role: str  # "in-file" | "in-any" (file or folder) | "in-folder" | "out-file" | "out-folder"
    good: Callable[[Path], Path]


def _results(tmp: Path) -> Path:
    target = tmp / "good" / "3650-4"
    if not target.exists():
        shutil.copytree(SAMPLES / "3650-4", target)
    return target


def _manifest(tmp: Path) -> Path:
    _results(tmp)
    target = tmp / "good" / "netapp.toml"
    shutil.copy(SAMPLES / "netapp.toml", target)
    return target


def _copy(source: Path, name: str) -> Callable[[Path], Path]:
    def good(tmp: Path) -> Path:
        target = tmp / "good" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
        return target

    return good


def _catalog(tmp: Path) -> Path:
    target = tmp / "good" / "catalog"
    target.mkdir(parents=True, exist_ok=True)
    return target


def _new(name: str) -> Callable[[Path], Path]:
    """A path to write to, in a folder that exists."""

    def good(tmp: Path) -> Path:
        (tmp / "new").mkdir(exist_ok=True)
        return tmp / "new" / name

    return good


def _ingested(tmp: Path) -> Path:
    """A catalog holding one run, for the commands that read one."""
    target = tmp / "good" / "ingested"
    if not target.exists():
        done = runner.invoke(
            app, ["catalog", "ingest", str(_results(tmp)), "--catalog", str(target), "-j", "1"]
        )
        assert done.exit_code == 0, done.output
    return target


RULES = PathParam(
    "--rules", "in-file", _copy(ROOT / "esrp_report/analysis/rules/thresholds.toml", "rules.toml")
)
REPORT = _copy(SAMPLES / "3650-4" / "Performance_2012_4_25_15_29_35.html", "Performance.html")
DOCUMENT = _copy(ROOT / "tests/data/published/netapp-001.txt", "netapp-001.txt")
CATALOG_IN = PathParam("--catalog", "in-folder", _catalog)

# Every command: its path parameters by name, and any other arguments it needs.
COMMANDS: dict[str, tuple[dict[str, PathParam], list[str]]] = {
    "version": ({}, []),
    "doctor": ({}, []),
    "check": ({"paths": PathParam(None, "in-any", _results), "rules": RULES}, []),
    "build": (
        {
            "manifest": PathParam(None, "in-file", _manifest),
            "out": PathParam("-o", "out-folder", _new("out")),
        },
        ["--format", "html"],
    ),
    "init": (
        {
            "results": PathParam(None, "in-any", _results),
            "out": PathParam("-o", "out-file", _new("m.toml")),
        },
        [],
    ),
    "audit": (
        {
            "document": PathParam(None, "in-file", DOCUMENT),
            "rules": RULES,
            "out": PathParam("-o", "out-folder", _new("audit")),
        },
        [],
    ),
    "inspect": ({"file": PathParam(None, "in-file", REPORT)}, []),
    "convert": (
        {
            "source": PathParam(
                None, "in-file", _copy(SAMPLES / "EMAIL5/Stress_2011_3_14_9_2_3.csv", "s.csv")
            ),
            "output": PathParam("-o", "out-file", _new("out.tsv")),
        },
        [],
    ),
    "size": (
        {"spec": PathParam(None, "in-file", _copy(SAMPLES / "sizing/equallogic-6900.toml", "spec.toml"))},
        [],
    ),
    "compare": (
        {
            "runs": PathParam(None, "in-any", _results),
            "out": PathParam("-o", "out-folder", _new("compare")),
            "published": PathParam("--published", "in-file", DOCUMENT),
            "catalog": CATALOG_IN,
        },
        [],
    ),
    "catalog ingest": (
        {
            "archives": PathParam(None, "in-any", _results),
            "catalog": PathParam("--catalog", "out-folder", _catalog),
        },
        [],
    ),
    "catalog list": ({"catalog": CATALOG_IN}, []),
    "catalog sql": ({"catalog": CATALOG_IN}, ["SELECT 1"]),
    "catalog export": (
        {
            "catalog": PathParam("--catalog", "in-folder", _ingested),
            "parquet": PathParam("--parquet", "out-folder", _new("parquet")),
        },
        [],
    ),
    "catalog show": ({"catalog": CATALOG_IN}, ["0123"]),
}

MISTAKES = {
    "in-file": ("missing", "folder", "unreadable"),
    "in-any": ("missing", "unreadable"),
    "in-folder": ("missing", "file"),
    "out-file": ("folder", "under a file"),
    "out-folder": ("file", "under a file"),
}


def _commands() -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}

    def walk(command: click.Command, path: list[str]) -> None:
        if hasattr(command, "commands"):  # a group (Typer's own click)
            for name, sub in command.commands.items():
                walk(sub, [*path, name])
        else:
            found[" ".join(path)] = command

    walk(typer.main.get_command(app), [])
    return found


def _path_params(command: click.Command) -> set[str]:
    """The parameters of a command whose type is a path (or a list of paths)."""
    assert command.callback is not None
    hints = typing.get_type_hints(command.callback)
    return {
        p.name
        for p in command.params
        if p.name and "Path" in str(hints.get(p.name, "")) and "bool" not in str(hints.get(p.name, ""))
    }


def test_every_command_is_covered() -> None:
    commands = _commands()
    assert set(commands) == set(COMMANDS), "describe each command's paths in COMMANDS"
    for name, command in commands.items():
        assert _path_params(command) == set(COMMANDS[name][0]), name


def _mistake(tmp: Path, mistake: str) -> Path:
    bad = tmp / "bad"
    bad.mkdir(exist_ok=True)
    if mistake == "missing":
        return bad / "no-such-thing.toml"
    if mistake == "folder":
        (bad / "a-folder").mkdir(exist_ok=True)
        return bad / "a-folder"
    if mistake in ("file", "unreadable"):
        target = bad / "a-file.toml"
        target.write_text("[document]\n", encoding="utf-8")
        if mistake == "unreadable":
            target.chmod(0)
        return target
    assert mistake == "under a file"
    (bad / "plain").write_text("x", encoding="utf-8")
    return bad / "plain" / "inside"


def _args(name: str, tmp: Path, replaced: str, value: Path) -> list[str]:
    """The command line: the mistaken path, good values for the other paths it requires."""
    params, extra = COMMANDS[name]
    required = {p.name for p in _commands()[name].params if p.required}
    args = name.split()
    for param_name, param in params.items():
        if param_name != replaced and param_name not in required:
            continue
        path = value if param_name == replaced else param.good(tmp)
        args += [str(path)] if param.option is None else [param.option, str(path)]
    if name == "compare" and replaced == "published":
        args += ["--table", "x"]
    return args + extra


CASES = [
    pytest.param(name, param_name, mistake, id=f"{name}-{param_name}-{mistake}")
    for name, (params, _extra) in COMMANDS.items()
    for param_name, param in params.items()
    for mistake in MISTAKES[param.role]
]


def _can_make_unreadable() -> str | None:
    """Why an unreadable file cannot be made here, or None. As root, the mode bits do not stop a
    read: the command then runs without the capabilities that override them (setpriv)."""
    if os.geteuid() != 0:
        return None
    if shutil.which("setpriv") is None:
        return "running as root without setpriv: a chmod 000 file stays readable"
    return None


def _run(args: list[str], tmp: Path, unreadable: bool) -> tuple[int, str]:
    if not unreadable:
        result = runner.invoke(app, args)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"{args}: {result.exception!r}") from result.exception
        return result.exit_code, result.output
    command = [sys.executable, "-m", "esrp_report.cli.main", *args]
    if os.geteuid() == 0:
        command = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", *command]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp, env=env, timeout=120, check=False)
    return done.returncode, done.stdout + done.stderr


def _assert_one_line_naming(code: int, output: str, path: Path, args: list[str]) -> None:
    lines = [line for line in output.splitlines() if line.strip()]
    assert "Traceback" not in output, (args, output)
    assert code == 2, (args, code, output)
    assert len(lines) == 1, (args, output)
    assert str(path) in lines[0], (args, output)


@pytest.mark.parametrize(("name", "param_name", "mistake"), CASES)
def test_a_mistaken_path_is_one_line_naming_it(
    tmp_path: Path, name: str, param_name: str, mistake: str
) -> None:
    if mistake == "unreadable" and (why := _can_make_unreadable()):
        pytest.skip(why)
    path = _mistake(tmp_path, mistake)
    args = _args(name, tmp_path, param_name, path)
    code, output = _run(args, tmp_path, unreadable=mistake == "unreadable")
    _assert_one_line_naming(code, output, path, args)


@pytest.mark.parametrize("what", ["logo", "template"])
@pytest.mark.parametrize("mistake", ["missing", "unreadable"])
def test_build_with_an_unreadable_logo_or_template_is_one_line_naming_it(
    tmp_path: Path, what: str, mistake: str
) -> None:
    if mistake == "unreadable" and (why := _can_make_unreadable()):
        pytest.skip(why)
    manifest = _manifest(tmp_path)
    folder = manifest.parent
    if what == "logo":
        path = folder / "logo.png"
        shutil.copy(SAMPLES / "branding/esrp-report-logo.svg", path.with_suffix(".svg"))
        path = path.with_suffix(".svg")
        extra = '\n[branding]\nlogo = "logo.svg"\n'
    else:
        (folder / "mine/partials").mkdir(parents=True)
        path = folder / "mine/partials/kv_table.html"
        shutil.copy(ROOT / "templates/esrp/partials/kv_table.html", path)
        extra = '\n[template]\noverride = "mine"\n'
    manifest.write_text(manifest.read_text(encoding="utf-8") + extra, encoding="utf-8")
    if mistake == "missing" and what == "template":
        shutil.rmtree(folder / "mine")  # a missing partial is taken from the built-in templates
        path = folder / "mine"
    elif mistake == "missing":
        path.unlink()
    else:
        path.chmod(0)
    args = ["build", str(manifest), "-o", str(tmp_path / "out"), "--format", "html"]
    code, output = _run(args, tmp_path, unreadable=mistake == "unreadable")
    _assert_one_line_naming(code, output, path, args)
