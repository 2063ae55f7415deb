"""docs/api.md's examples run as they stand (in a scratch folder that sees the samples)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "api.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_every_example_of_the_api_page_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("samples", "tests"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    blocks = _blocks()
    assert len(blocks) >= 8
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    from esrp_report.analysis.rules import Status

    assert namespace["assessment"].status is Status.PASS  # type: ignore[attr-defined]
    assert namespace["info"]["format"] == "perfmon-csv"  # type: ignore[index]
    assert namespace["built"].document.verdict is Status.PASS  # type: ignore[attr-defined]
    assert (tmp_path / "out" / "vmax.html").exists() and (tmp_path / "out" / "email5.parquet").exists()
