"""esrp-report as users install it: a wheel built from the source distribution, installed (not
editable) into a fresh venv outside the checkout, runs build, check, audit and convert.

Before, the wheel carried no templates: installed so, `build` exited 2 "no template 'esrp'".
The build needs the package registry for its build requirements and the wheel's dependencies
(CI has it); without it the test fails, naming pip's error.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(args: list[str], cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the installed esrp-report command, the built wheel)."""
    place = tmp_path_factory.mktemp("wheel")
    dist = place / "dist"
    built = _run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], cwd=place)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheel = next(dist.glob("*.whl"))
    venv = place / "venv"
    assert _run([sys.executable, "-m", "venv", str(venv)], cwd=place).returncode == 0
    pip = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)], cwd=place)
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    return venv / "bin" / "esrp-report", wheel


def test_the_wheel_carries_the_templates_and_every_data_file(installed: tuple[Path, Path]) -> None:
    _command, wheel = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    for template in (ROOT / "templates").rglob("*"):
        if template.is_file():
            assert f"esrp_report/templates/{template.relative_to(ROOT / 'templates').as_posix()}" in names
    for data in (ROOT / "esrp_report").rglob("*.toml"):
        assert data.relative_to(ROOT).as_posix() in names


def test_the_installed_command_builds_checks_audits_and_converts(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    command, _wheel = installed
    work = tmp_path / "work"  # outside the checkout: nothing of it can be found by accident
    shutil.copytree(ROOT / "samples" / "3650-4", work / "3650-4")
    shutil.copy(ROOT / "samples" / "netapp.toml", work / "netapp.toml")
    for extra in ("branding",):
        if (ROOT / "samples" / extra).is_dir():
            shutil.copytree(ROOT / "samples" / extra, work / extra)
    built = _run([str(command), "build", "netapp.toml", "-o", "out", "--allow-fail"], cwd=work)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (work / "out" / "netapp.html").stat().st_size > 10_000
    assert (work / "out" / "netapp.pdf").read_bytes().startswith(b"%PDF")
    checked = _run([str(command), "check", "3650-4"], cwd=work)
    assert checked.returncode in (0, 1, 3), checked.stdout + checked.stderr
    assert "Solution" in checked.stdout
    shutil.copy(ROOT / "tests" / "data" / "published" / "netapp-001.txt", work / "netapp-001.txt")
    audited = _run([str(command), "audit", "netapp-001.txt"], cwd=work)
    assert audited.returncode == 0, audited.stdout + audited.stderr
    shutil.copy(ROOT / "samples" / "EMAIL5" / "Performance_2011_3_11_13_27_46.csv", work / "perf.csv")
    converted = _run([str(command), "convert", "perf.csv", "-o", "perf.parquet"], cwd=work)
    assert converted.returncode == 0, converted.stdout + converted.stderr
    assert (work / "perf.parquet").exists()
