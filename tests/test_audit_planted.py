"""A small fixed sample of the planted-error measurement (benchmarks/audit_planted.py, whose full
run records its figures in docs/audit.md): one digit of a number the audit vouches for is
changed, and the changed copy must have a new error at that number's line or naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.audit_planted import Document, candidates, plants, run_plant
from esrp_report.analysis.rules import load_rules

DATA = Path(__file__).parent / "data" / "published"
RULES = load_rules(None)
PLANTS = 30


@pytest.fixture(
    scope="module", params=["vmax-000.txt", "netapp-001.txt", "dellemc-002.txt", "equallogic-004.txt"]
)
def document(request: pytest.FixtureRequest) -> Document:
    return Document.load(DATA / request.param, RULES)


def test_every_planted_slip_in_a_vouched_digit_is_an_error_at_or_naming_its_line(document: Document) -> None:
    outcomes = [run_plant(document, plant) for plant in plants(document, PLANTS, seed=7)]
    placed = [o for o in outcomes if o.placed]
    assert len(placed) >= PLANTS * 0.8, "the plants must land in the cells they were drawn from"
    missed = [(o.plant, o.new_errors) for o in placed if not o.caught]
    assert not missed
    # At its own line, or one of the two figures a copy relation sets against each other: 98 to
    # 100 % of the seeds' plants in the full measurement (docs/audit.md), so at most one of 30
    # here (000 has one, a per-server figure summed into the aggregate that no other relation tells
    # from its neighbours; the other seeds none).
    unnamed = [(o.plant, o.new_errors) for o in placed if not o.named]
    assert len(unnamed) <= 1, unnamed


def test_the_sampler_plants_only_digits_larger_than_the_guard(document: Document) -> None:
    """Of every digit of every checked number, the ones whose unit is within the guard (a sum's
    last digits, a figure whose relations already fail) are left out, and only those."""
    every = {(c[0], c[1], c[3]): c for c in candidates(document, vouched_only=False)}
    chosen = {(c[0], c[1], c[3]) for c in candidates(document)}
    assert chosen < set(every)  # some digits are not vouched for, in every document
    for key, (_line, _column, text, index, place, guard) in every.items():
        assert text[index].isdigit()
        assert (key in chosen) == (10.0**place > guard * (1 + 1e-6)), (text, index, guard)


def test_an_unread_document_gets_no_plants(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(
        (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8"), encoding="utf-8"
    )
    document = Document.load(readme, RULES)
    assert document.baseline.nothing_checked
    assert plants(document, PLANTS, seed=7) == []
