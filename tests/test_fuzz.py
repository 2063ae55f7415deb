"""A short, bounded run of every fuzz harness (benchmarks/fuzz.py): the full run is documented in
docs/fuzzing.md. Fixed seed, the `random` engine (no atheris needed), a few hundred inputs per
format: every input must give a result or an InputError, within the time limit.
"""

from __future__ import annotations

import pytest

from benchmarks import fuzz

# The slower readers get fewer inputs, the new multi-file harnesses more; the others get 100.
INPUTS = {"published": 50, "csv": 80, "manifest": 200, "templates": 150, "archive": 200}


@pytest.mark.parametrize("fmt", list(fuzz.FORMATS))
def test_fuzz_harness_finds_no_uncaught_exception(fmt: str) -> None:
    count = INPUTS.get(fmt, 100)
    status = fuzz.run_in_process(fmt, count, seed=20260301, timeout=20.0)
    assert status["count"] == count
    assert status["outcomes"].get("ok", 0) > 0  # the seeds themselves read
    assert {s: e["reproducers"] for s, e in status["findings"].items()} == {}


@pytest.mark.parametrize("fmt", ["config_xml", "archive", "templates"])
def test_mutator_is_deterministic(fmt: str) -> None:
    seeds = fuzz.SEEDS[fmt]()
    first = list(fuzz.random_inputs(fuzz.FORMATS[fmt], seeds, 50, seed=3))
    assert first == list(fuzz.random_inputs(fuzz.FORMATS[fmt], seeds, 50, seed=3))
    assert first != list(fuzz.random_inputs(fuzz.FORMATS[fmt], seeds, 50, seed=4))


def test_templates_bundle_round_trips() -> None:
    parts = [("manifest", b'[template]\noverride = "override"\n'), ("partials/run.html", b"{{ x }}\n")]
    assert fuzz._unbundle(fuzz._bundle(parts)) == [(name, body) for name, body in parts]
    assert fuzz._unbundle(b"no marks at all") == []
