"""The parts of an ESRP document in reading order (``sections.toml``): one list for the manifest
reader, ``init``, the renderer and the document template, so that a new section is one entry there
and its template markup."""

from __future__ import annotations

from dataclasses import dataclass

from esrp_report.model.data import package_toml


@dataclass(frozen=True)
class DocumentPart:
    """One part of the document: its key (a [sections] key when ``markdown``, the slot a vendor
    section names to follow it), heading, anchor, and how the manifest and ``init`` treat it."""

    key: str
    title: str
    anchor: str
    markdown: bool = False  # filled from the manifest's [sections], left out while empty
    init: bool = False  # `esrp-report init` starts it with a TODO(vendor)
    slot: bool = True  # a vendor section may be placed after it


def _parts() -> tuple[DocumentPart, ...]:
    table = package_toml(__package__ or "esrp_report.model", "sections.toml")
    return tuple(DocumentPart(**entry) for entry in table["part"])


DOCUMENT_PARTS = _parts()
PARTS_BY_KEY = {part.key: part for part in DOCUMENT_PARTS}
# The [sections] keys a manifest may fill with Markdown, in document order.
SECTION_KEYS = tuple(part.key for part in DOCUMENT_PARTS if part.markdown)
# Where a vendor's own section may be placed (``after``) besides after another vendor section:
# just after the table of contents ("contents"), then the slot of each part that takes one, in
# document order; a Markdown part keeps its slot whether or not it is filled.
SECTION_SLOTS = ("contents", *(part.key for part in DOCUMENT_PARTS if part.slot))
# The sections `init` starts for the vendor to write.
INIT_SECTION_KEYS = tuple(part.key for part in DOCUMENT_PARTS if part.init)
