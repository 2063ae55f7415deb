from __future__ import annotations

import shutil
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.fixture
def samples() -> Path:
    return SAMPLES


@pytest.fixture
def email5_copy(tmp_path: Path) -> Path:
    """A private copy of the EMAIL5 sample folder that a test may change."""
    target = tmp_path / "EMAIL5"
    shutil.copytree(SAMPLES / "EMAIL5", target)
    return target
