"""Inputs the fuzzer (benchmarks/fuzz.py, docs/fuzzing.md) found to crash a reader, one test each.

Each input is saved under tests/data/fuzz/; the reader must answer with an InputError (a clear
user error), never with another exception.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from esrp_report.errors import InputError
from esrp_report.ingest.manifest import ManifestError, read_manifest

DATA = Path(__file__).parent / "data" / "fuzz"


def test_manifest_integer_past_float_range_is_an_input_error() -> None:
    # iops_per_mailbox = 999...9 (400 digits): float(int) raised OverflowError.
    with pytest.raises(ManifestError, match="iops_per_mailbox out of range"):
        read_manifest(DATA / "manifest-integer-past-float.toml")


def test_manifest_integer_of_5000_digits_is_an_input_error() -> None:
    # tomllib raises a plain ValueError (not TOMLDecodeError) past Python's 4,300-digit limit.
    with pytest.raises(InputError, match="not valid TOML"):
        read_manifest(DATA / "manifest-integer-5000-digits.toml")
