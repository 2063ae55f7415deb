"""A short, bounded run of every fuzz harness (benchmarks/fuzz.py): the full run is documented in
docs/fuzzing.md. Fixed seed, the `random` engine (no atheris needed), a few hundred inputs per
format: every input must give a result or an InputError, within the time limit.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import pytest

from benchmarks import fuzz
from esrp_report.ingest.perfmon.blg import BlgFile

# The slower readers get fewer inputs, the new multi-file harnesses more; the others get 100.
INPUTS = {"published": 50, "csv": 80, "manifest": 200, "templates": 150, "archive": 200}


@pytest.mark.parametrize("fmt", list(fuzz.FORMATS))
def test_fuzz_harness_finds_no_uncaught_exception(fmt: str) -> None:
    count = INPUTS.get(fmt, 100)
    status = fuzz.run_in_process(fmt, count, seed=20260301, timeout=20.0)
    assert status["count"] == count
    assert status["outcomes"].get("ok", 0) > 0  # the seeds themselves read
    assert {s: e["reproducers"] for s, e in status["findings"].items()} == {}


@pytest.mark.parametrize("fmt", ["config_xml", "archive", "templates", "blg"])
def test_mutator_is_deterministic(fmt: str) -> None:
    seeds = fuzz.SEEDS[fmt]()
    first = list(fuzz.random_inputs(fuzz.FORMATS[fmt], seeds, 50, seed=3))
    assert first == list(fuzz.random_inputs(fuzz.FORMATS[fmt], seeds, 50, seed=3))
    assert first != list(fuzz.random_inputs(fuzz.FORMATS[fmt], seeds, 50, seed=4))


def test_templates_bundle_round_trips() -> None:
    parts = [("manifest", b'[template]\noverride = "override"\n'), ("partials/run.html", b"{{ x }}\n")]
    assert fuzz._unbundle(fuzz._bundle(parts)) == [(name, body) for name, body in parts]
    assert fuzz._unbundle(b"no marks at all") == []


def test_blg_seeds_hold_both_sample_layouts() -> None:
    """Two Vista logs (PERF_DATA_BLOCKs), then the raw-counter layout from a 64-bit writer
    (wildcards, failed statuses) and a 32-bit one (three machines, one offline once)."""
    found = []
    with tempfile.TemporaryDirectory() as folder:
        for number, data in enumerate(fuzz.SEEDS["blg"]()):
            path = Path(folder) / f"seed-{number}.blg"
            path.write_bytes(data)
            with BlgFile(path) as log:
                for _batch in log.batches():
                    pass
                found.append((log.layouts_seen, log.header.pointer_size, log.error_samples > 0))
    assert found == [
        (["perflib"], 4, False),
        (["perflib"], 8, False),
        (["raw"], 8, True),
        (["raw"], 4, True),
    ]


def test_binary_field_mutation_keeps_every_byte_in_place() -> None:
    """The .blg mutation overwrites one field: same length, at most 8 bytes changed."""
    seeds = fuzz.SEEDS["blg"]()
    rng = random.Random(11)
    changed = 0
    for _ in range(300):
        data = rng.choice(seeds)
        out = fuzz._binary_field(data, rng)
        assert len(out) == len(data)
        differ = sum(a != b for a, b in zip(data, out, strict=True))
        assert differ <= 8
        changed += differ > 0
    assert changed > 200
