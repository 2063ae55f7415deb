"""`make test` tests the HTML in a browser on every machine: without chromium the browser tests
fail, naming the command that installs it; they are skipped only when asked (ESRP_SKIP_BROWSER=1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _browser_tests(**env: str) -> subprocess.CompletedProcess[str]:
    # A PATH holding only the interpreter's folder: no chromium on it.
    bare = {k: v for k, v in os.environ.items() if k not in ("PATH", "ESRP_SKIP_BROWSER")}
    bare.update(PATH=str(Path(sys.executable).parent), **env)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-x",
            "-rs",
            "tests/test_browser.py",
        ],
        cwd=ROOT,
        env=bare,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_without_chromium_the_browser_tests_fail_naming_the_install_command() -> None:
    run = _browser_tests()
    assert run.returncode == 1, run.stdout[-2000:]
    assert "chromium is not installed" in run.stdout and "apt-get install" in run.stdout


def test_they_are_skipped_only_when_asked() -> None:
    run = _browser_tests(ESRP_SKIP_BROWSER="1")
    assert run.returncode == 0, run.stdout[-2000:]
    assert "ESRP_SKIP_BROWSER=1 asks to skip" in run.stdout
