"""A short, bounded run of every fuzz harness (benchmarks/fuzz.py): the full run is documented in
docs/fuzzing.md. Fixed seed, the `random` engine (no atheris needed), a few hundred inputs per
format: every input must give a result or an InputError, within the time limit.
"""

from __future__ import annotations

import pytest

from benchmarks import fuzz

INPUTS = {"published": 50, "csv": 80}  # the slower readers; the others get 100


@pytest.mark.parametrize("fmt", list(fuzz.FORMATS))
def test_fuzz_harness_finds_no_uncaught_exception(fmt: str) -> None:
    count = INPUTS.get(fmt, 100)
    status = fuzz.run_in_process(fmt, count, seed=20260301, timeout=20.0)
    assert status["count"] == count
    assert status["findings"] == {}, {s: e["reproducers"] for s, e in status["findings"].items()}
    assert status["outcomes"].get("ok", 0) > 0  # the seeds themselves read


def test_mutator_is_deterministic() -> None:
    fmt = fuzz.FORMATS["config_xml"]
    seeds = fuzz.SEEDS["config_xml"]()
    first = list(fuzz.random_inputs(fmt, seeds, 50, seed=3))
    assert first == list(fuzz.random_inputs(fmt, seeds, 50, seed=3))
    assert first != list(fuzz.random_inputs(fmt, seeds, 50, seed=4))
