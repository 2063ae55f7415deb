"""The parts of an ESRP document in reading order, and the forms it is printed in
(``sections.toml``): one list for the manifest reader, ``init``, the renderer and the document
templates, so that a new section is one entry there and its template markup, and one table that
says which template an ESRP version prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
    forms: tuple[str, ...] = ()  # the forms that print it; () is every form


@dataclass(frozen=True)
class OutlineEntry:
    """One numbered heading of a form: a part (``key``) or one of the form's own headings, its
    level (1 is "3", 2 is "3.1"), its words when they are the form's own, and an appendix letter."""

    key: str
    level: int
    title: str = ""
    anchor: str = ""
    letter: str = ""


@dataclass(frozen=True)
class TableWords:
    """A [tables.*] key's heading and caption in a form."""

    key: str
    title: str
    caption: str


@dataclass(frozen=True)
class Form:
    """A form a document is printed in: the ESRP version and Exchange versions that choose it, its
    templates, and (when it numbers its headings) its outline and its own words."""

    esrp_version: str
    exchange_versions: tuple[str, ...]
    template: str
    appendix: str
    charts: bool = True
    outline: tuple[OutlineEntry, ...] = ()
    tables: tuple[TableWords, ...] = ()
    server_table: str = ""
    server_heading: str = ""
    run_results: str = ""
    run_log: str = ""
    parts: tuple[DocumentPart, ...] = field(default=(), compare=False)

    @property
    def numbered(self) -> bool:
        """Whether the form numbers its headings ("1", "1.1", "A.1")."""
        return bool(self.outline)

    @property
    def section_keys(self) -> tuple[str, ...]:
        """The [sections] keys a manifest printed in this form may fill, in document order."""
        return tuple(part.key for part in self.parts if part.markdown)

    @property
    def slots(self) -> tuple[str, ...]:
        """Where a vendor's own section may be placed in this form (see ``SECTION_SLOTS``); in a
        numbered form only after a part its outline numbers (not after the 4.0 title page's
        disclaimer)."""
        numbered = {entry.key for entry in self.outline}
        return (
            "contents",
            *(part.key for part in self.parts if part.slot and (not self.numbered or part.key in numbered)),
        )


def _parts() -> tuple[DocumentPart, ...]:
    table = package_toml(__package__ or "esrp_report.model", "sections.toml")
    return tuple(
        DocumentPart(**(entry | {"forms": tuple(entry.get("forms", ()))})) for entry in table["part"]
    )


def _forms(parts: tuple[DocumentPart, ...]) -> tuple[Form, ...]:
    table = package_toml(__package__ or "esrp_report.model", "sections.toml")
    forms = []
    for entry in table["form"]:
        data: dict[str, Any] = dict(entry)
        version = data["esrp_version"]
        data["exchange_versions"] = tuple(data["exchange_versions"])
        data["outline"] = tuple(OutlineEntry(**e) for e in data.get("outline", ()))
        data["tables"] = tuple(TableWords(**e) for e in data.get("tables", ()))
        data["parts"] = tuple(p for p in parts if not p.forms or version in p.forms)
        forms.append(Form(**data))
    return tuple(forms)


DOCUMENT_PARTS = _parts()
PARTS_BY_KEY = {part.key: part for part in DOCUMENT_PARTS}
FORMS = _forms(DOCUMENT_PARTS)
# The [sections] keys a manifest may fill with Markdown, in document order.
SECTION_KEYS = tuple(part.key for part in DOCUMENT_PARTS if part.markdown)
# Where a vendor's own section may be placed (``after``) besides after another vendor section:
# just after the table of contents ("contents"), then the slot of each part that takes one, in
# document order; a Markdown part keeps its slot whether or not it is filled.
SECTION_SLOTS = ("contents", *(part.key for part in DOCUMENT_PARTS if part.slot))
# The sections `init` starts for the vendor to write.
INIT_SECTION_KEYS = tuple(part.key for part in DOCUMENT_PARTS if part.init)


def form_for(esrp_version: str, exchange_version: str = "") -> Form:
    """The form a document is printed in: the one its ESRP version names, else the one its
    Exchange version belongs to, else the first (ESRP 3.0, also the form of older versions)."""
    for form in FORMS:
        if form.esrp_version == esrp_version.strip():
            return form
    for form in FORMS:
        if exchange_version.strip() in form.exchange_versions:
            return form
    return FORMS[0]
