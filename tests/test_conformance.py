"""Every real perfmon file the project can read, each against its truth: the table is
benchmarks/corpus.py (add a real file by adding a line there). Files of ../shared are read from
there: a missing one fails under CI (env CI set) and skips elsewhere, with its reason."""

from __future__ import annotations

import os

import pytest

from benchmarks import corpus


def _param(entry: corpus.Entry) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=entry.pending)] if entry.pending else []
    return pytest.param(entry, id=entry.path.rsplit("/", 1)[-1], marks=marks)


@pytest.mark.parametrize("entry", [_param(e) for e in corpus.CORPUS])
def test_real_file_against_its_truth(entry: corpus.Entry) -> None:
    if not corpus.present(entry):
        reason = f"{entry.path} (or its twin) is not here: ../shared/data is beside the repository on CI"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    assert corpus.check(entry) == [], entry.source


def test_every_real_file_present_is_in_the_table() -> None:
    """A real file dropped into tests/data or ../shared/data without its line fails here."""
    assert corpus.unlisted() == []


def test_a_wrong_truth_is_caught(tmp_path: object) -> None:
    """The check can fail: the same file against a figure it does not have."""
    entry = next(e for e in corpus.CORPUS if e.path.endswith("ysu_disk_zh-CN.csv"))
    wrong = corpus.Entry(entry.path, "deliberately wrong", samples=121, encoding="windows-1252")
    assert corpus.check(wrong) == ["samples: 120, expected 121", "encoding: 'ascii', expected 'windows-1252'"]
