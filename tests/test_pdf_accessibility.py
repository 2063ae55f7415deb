"""The PDFs are accessible: tagged (PDF/UA-1), in a stated language, titled, bookmarked and with
every font inside the file. Read from the PDF's own structure with pypdf, on each bundled
sample's document (laid out in pieces and joined, so the join must carry the pieces' tags), on
the VMAX sample with all ten servers' appendices (eleven pieces) and on an audit report (one
WeasyPrint document)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader
from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject

from esrp_report.app.api import audit_document, write_audit_report

PUBLISHED = Path(__file__).resolve().parent / "data" / "published"
EVERY_SERVER = "vmax-every-server"


@pytest.fixture(scope="module", params=["vmax", "netapp", "dellemc", EVERY_SERVER])
def document(request: pytest.FixtureRequest) -> tuple[PdfReader, str]:
    """A sample's joined PDF and its screen HTML (the same headings, the same title)."""
    if request.param == EVERY_SERVER:
        out, stem = request.getfixturevalue("vmax_all_build"), "vmax"
    else:
        build: Callable[[str], Path] = request.getfixturevalue("sample_build")
        out, stem = build(request.param), request.param
    html = (out / f"{stem}.html").read_text(encoding="utf-8")
    return PdfReader(out / f"{stem}.pdf"), html


@pytest.fixture(scope="module")
def audit_report(tmp_path_factory: pytest.TempPathFactory) -> PdfReader:
    """The audit report of a published document, as PDF."""
    out = tmp_path_factory.mktemp("audit-report")
    result = audit_document(PUBLISHED / "equallogic-004.txt")
    (pdf,) = write_audit_report(result, out, formats=("pdf",))
    return PdfReader(pdf)


def check_tagged(reader: PdfReader) -> None:
    """The catalog entries of a tagged PDF/UA-1 document, and a title for the window to show."""
    catalog = reader.root_object
    assert "/StructTreeRoot" in catalog
    assert catalog["/MarkInfo"]["/Marked"].value is True
    assert str(catalog["/Lang"]) == "en"
    assert catalog["/ViewerPreferences"]["/DisplayDocTitle"].value is True
    assert reader.metadata is not None and (reader.metadata.title or "").strip()
    assert b'pdfuaid:part="1"' in catalog["/Metadata"].get_object().get_data()


def fonts_of(resources: Any, seen: set[int]) -> Iterator[DictionaryObject]:
    """Every font dictionary reachable from a resource dictionary: its own fonts, and those of its
    form XObjects (charts, images drawn as forms), each object once."""
    if resources is None:
        return
    resources = resources.get_object()
    for ref in (resources.get("/Font") or DictionaryObject()).get_object().values():
        font = ref.get_object()
        if isinstance(ref, IndirectObject):
            if ref.idnum in seen:
                continue
            seen.add(ref.idnum)
        yield font
        if font.get("/Subtype") == "/Type3":
            yield from fonts_of(font.get("/Resources"), seen)
    for ref in (resources.get("/XObject") or DictionaryObject()).get_object().values():
        if isinstance(ref, IndirectObject):
            if ref.idnum in seen:
                continue
            seen.add(ref.idnum)
        xobject = ref.get_object()
        if xobject.get("/Subtype") == "/Form":
            yield from fonts_of(xobject.get("/Resources"), seen)


def unembedded_fonts(reader: PdfReader) -> list[str]:
    """The fonts whose glyphs are not in the file (a Type 3 font's glyphs are its own procedures)."""
    missing: list[str] = []
    seen: set[int] = set()
    for page in reader.pages:
        for font in fonts_of(page.get("/Resources"), seen):
            if font.get("/Subtype") == "/Type3":
                continue
            described = font["/DescendantFonts"][0].get_object() if "/DescendantFonts" in font else font
            descriptor = described.get("/FontDescriptor")
            descriptor = descriptor.get_object() if descriptor is not None else {}
            if not any(key in descriptor for key in ("/FontFile", "/FontFile2", "/FontFile3")):
                missing.append(str(font.get("/BaseFont")))
    return missing


def check_structure(reader: PdfReader) -> None:
    """The structure tree holds together: each page's /StructParents key is its own and maps to
    elements of the tree that name that page; each link annotation's /StructParent maps to a Link
    element whose object reference is that annotation; the tree holds headings and tables."""
    root = reader.root_object["/StructTreeRoot"].get_object()
    nums = root["/ParentTree"].get_object()["/Nums"]
    parents = {int(nums[i]): nums[i + 1] for i in range(0, len(nums) - 1, 2)}
    page_ids = {page.indirect_reference.idnum: n for n, page in enumerate(reader.pages)}
    keys = [int(page["/StructParents"]) for page in reader.pages]
    assert len(set(keys)) == len(keys), "two pages share a parent-tree key"
    for number, (page, key) in enumerate(zip(reader.pages, keys, strict=True), start=1):
        elements = parents[key].get_object()
        assert isinstance(elements, ArrayObject)
        for element in elements:
            page_of = element.get_object().get("/Pg")
            # An element's /Pg is where its content starts, which may be an earlier page.
            assert page_of is None or page_ids[page_of.idnum] <= number - 1, f"page {number}"
        for reference in page.get("/Annots") or []:
            annotation = reference.get_object()
            if annotation.get("/Subtype") != "/Link":
                continue
            assert "/StructParent" in annotation, f"an untagged link on page {number}"
            link = parents[int(annotation["/StructParent"])].get_object()
            assert link["/S"] == "/Link"
            objects = [k.get_object() for k in _kids(link) if isinstance(k.get_object(), DictionaryObject)]
            assert any(
                o.get("/Type") == "/OBJR" and o.raw_get("/Obj").idnum == annotation.indirect_reference.idnum
                for o in objects
            ), f"a link on page {number} is not its element's object"
    if "/ParentTreeNextKey" in root:  # optional; the joined documents state it
        assert int(root["/ParentTreeNextKey"]) == max(parents) + 1
    kinds = _element_kinds(root)
    assert {"/Document", "/H1", "/H2", "/Table", "/TH", "/TD", "/P"} <= kinds


def _kids(element: DictionaryObject) -> list[Any]:
    kids = element.get("/K")
    return list(kids) if isinstance(kids, ArrayObject) else [kids] if kids is not None else []


def _element_kinds(root: DictionaryObject) -> set[str]:
    kinds: set[str] = set()
    stack = list(_kids(root))
    while stack:
        element = stack.pop()
        if not isinstance(element, IndirectObject):
            continue  # a marked-content id on the element's page
        element = element.get_object()
        if isinstance(element, DictionaryObject) and element.get("/Type") not in ("/MCR", "/OBJR"):
            kinds.add(str(element["/S"]))
            stack.extend(_kids(element))
    return kinds


class _Headings(HTMLParser):
    """The h1 and h2 headings of a page, with their level, outside the title page and the table of
    contents (the style sheet gives those no bookmark: a contents page lists the contents); a
    table's caption standing in for a heading (class ``heading-1`` or ``heading-2``) is one."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[tuple[int, str]] = []
        self._skipping: list[str] = []
        self._open: tuple[int, list[str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        starts = (tag == "header" and "title-page" in classes) or (tag == "nav" and "toc" in classes)
        if starts or (self._skipping and tag == self._skipping[0]):  # a nested one of the same tag
            self._skipping.append(tag)
        elif tag in ("h1", "h2") and not self._skipping:
            self._open = (int(tag[1]), [])
        elif tag == "caption" and not self._skipping and {"heading-1", "heading-2"} & set(classes):
            self._open = (1 if "heading-1" in classes else 2, [])

    def handle_endtag(self, tag: str) -> None:
        if self._skipping and tag == self._skipping[0]:
            self._skipping.pop()
        elif tag in ("h1", "h2", "caption") and self._open is not None:
            level, parts = self._open
            self.headings.append((level, re.sub(r"\s+", " ", "".join(parts)).strip()))
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open[1].append(data)


def outline_of(reader: PdfReader) -> list[tuple[int, str]]:
    """The bookmarks of levels 1 and 2, in order, with their level."""
    entries: list[tuple[int, str]] = []

    def walk(items: list[Any], level: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
            elif level <= 2:
                entries.append((level, re.sub(r"\s+", " ", item.title).strip()))

    walk(reader.outline, 1)
    return entries


def test_a_sample_document_is_tagged_with_a_language_and_its_title_shown(
    document: tuple[PdfReader, str],
) -> None:
    reader, html = document
    check_tagged(reader)
    title = re.search(r"<title>(.*?)</title>", html, re.S)
    assert title is not None
    assert reader.metadata is not None
    assert reader.metadata.title == re.sub(r"\s+", " ", title.group(1)).strip().replace("&amp;", "&")


def test_a_sample_document_keeps_each_piece_s_structure_when_joined(document: tuple[PdfReader, str]) -> None:
    check_structure(document[0])


def test_a_sample_document_has_a_bookmark_for_each_heading_of_levels_1_and_2(
    document: tuple[PdfReader, str],
) -> None:
    reader, html = document
    parser = _Headings()
    parser.feed(html)
    assert parser.headings, "no headings read from the HTML"
    assert outline_of(reader) == parser.headings


def test_every_font_of_a_sample_document_is_embedded(document: tuple[PdfReader, str]) -> None:
    assert unembedded_fonts(document[0]) == []


def test_the_audit_report_is_tagged_with_every_font_embedded(audit_report: PdfReader) -> None:
    check_tagged(audit_report)
    check_structure(audit_report)
    assert unembedded_fonts(audit_report) == []


def test_the_font_check_sees_an_unembedded_standard_font() -> None:
    """The check above could fail: a page using Helvetica, which a PDF may name without embedding
    (as the page numbers once did), is reported."""
    from pypdf import PdfWriter
    from pypdf.generic import NameObject

    writer = PdfWriter()
    page = writer.add_blank_page(100, 100)
    helvetica = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    fonts = DictionaryObject({NameObject("/F1"): writer._add_object(helvetica)})
    page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
    assert unembedded_fonts(PdfReader(_written(writer))) == ["/Helvetica"]


def _written(writer: Any) -> Any:
    import io

    out = io.BytesIO()
    writer.write(out)
    out.seek(0)
    return out
