"""The document's section list has one owner (issue 31, item 4): ``model/sections.toml``. The
manifest reader, ``init``, the table of contents and the template all ask it; the template
writes no section's heading or anchor of its own."""

from __future__ import annotations

import re
from pathlib import Path

from esrp_report.model.sections import (
    DOCUMENT_PARTS,
    INIT_SECTION_KEYS,
    PARTS_BY_KEY,
    SECTION_KEYS,
    SECTION_SLOTS,
    form_for,
)

TEMPLATES = Path(__file__).resolve().parents[1] / "templates" / "esrp"
TEMPLATE = TEMPLATES / "document.html"


def _with_partials(text: str) -> str:
    """The template with each partial it includes written in place (the appendix's heading is in
    one, shared by the body and the PDF's first appendix piece)."""
    return re.sub(
        r'\{% include "(partials/[\w.-]+)" %\}',
        lambda m: _with_partials((TEMPLATES / m.group(1)).read_text(encoding="utf-8")),
        text,
    )


def test_the_template_places_every_part_by_its_key_and_writes_no_heading_of_its_own() -> None:
    text = _with_partials(TEMPLATE.read_text(encoding="utf-8"))
    placed = [
        match.group(1) or match.group(2)
        for match in re.finditer(r'\{\{ prose\("(\w+)"\) \}\}|<h1 id="\{\{ parts\.(\w+)\.anchor \}\}">', text)
    ]
    form = form_for("3.0")
    assert form.template == TEMPLATE.name
    assert placed == [part.key for part in form.parts]  # each once, in reading order
    for part in DOCUMENT_PARTS:
        assert f">{part.title}<" not in text, part.title
        assert f'id="{part.anchor}"' not in text, part.anchor


def test_the_keys_and_slots_follow_the_parts() -> None:
    markdown = [p.key for p in DOCUMENT_PARTS if p.markdown]
    assert tuple(markdown) == SECTION_KEYS
    assert SECTION_SLOTS[0] == "contents" and "appendix" not in SECTION_SLOTS
    assert set(INIT_SECTION_KEYS) <= set(SECTION_KEYS)
    assert DOCUMENT_PARTS[-1].key == "appendix" and not DOCUMENT_PARTS[-1].slot
    assert len({p.anchor for p in DOCUMENT_PARTS}) == len(DOCUMENT_PARTS)


def test_the_numbered_form_places_its_parts_in_its_outlines_order() -> None:
    """The 4.0 template places each part the outline numbers by its key, in the outline's order,
    and writes none of their headings (render/outline.py numbers and words them)."""
    form = form_for("4.0")
    text = (TEMPLATES / form.template).read_text(encoding="utf-8")
    placed = [
        match.group(1)
        for match in re.finditer(r'\{\{ (?:prose|heading)\("(\w+)"\) \}\}', text)
        if match.group(1) in PARTS_BY_KEY
    ]
    numbered = [e.key for e in form.outline if e.key in PARTS_BY_KEY]
    # Appendices A and B have partials of their own (a piece of the PDF may print them).
    assert placed == [key for key in numbered if key not in {"appendix", "contact"}]
    for key, partial in (("appendix", "appendix_intro-4.0.html"), ("contact", "contact-4.0.html")):
        assert f"heads.{key}." in (TEMPLATES / "partials" / partial).read_text(encoding="utf-8")
    # The one part the outline leaves unnumbered is the disclaimer, printed on the title page.
    assert {p.key for p in form.parts} - set(numbered) == {"disclaimer"}
    assert "sections.disclaimer" in text
    for part in form.parts:
        assert f">{part.title}<" not in text, part.title
