"""PDF output through WeasyPrint, with a URL fetcher that reads nothing outside allowed folders.

The HTML is self-contained, so a normal build fetches only ``data:`` URLs. Anything else a
template or a manifest might name (``file:///etc/passwd``, ``http://...``) is refused and
recorded, never read. A ``file:`` URL is read by the fetcher itself, not by urllib: the path is
resolved and must be a regular file inside an allowed folder (a link out, a folder, a FIFO that
would block the layout forever, a device: refused unopened), and a file of the manifest's folder
must be that folder's own (one hard link, the folder's device: files.safe.identity_problem). This
is where every resource of the PDF passes, attachments (``<a rel=attachment>``) included.

An image WeasyPrint cannot load or draw is logged by it and left out of the page; that log is
caught here (``PdfResult.failed_images``) so that the build can refuse a document with a gap
instead of publishing it.
"""

from __future__ import annotations

import io
import logging
import mimetypes
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from esrp_report.files.safe import Tree, read_regular_file
from esrp_report.model.errors import InputError
from esrp_report.render.slots import TOC_SLOT_PREFIX, fill_charts

_PX = 0.75  # one CSS px in PDF points


@dataclass(frozen=True)
class TextSlot:
    """Room a piece's layout left for text written in after joining: the page (0-based, in the
    piece), the slot's left and right edges and its baseline in PDF points from the page's
    bottom-left corner, the font size in points and the text colour (RGB, 0 to 1)."""

    page: int
    left: float
    right: float
    baseline: float
    size: float
    colour: tuple[float, float, float]


@dataclass
class PdfResult:
    """A laid-out PDF: its bytes and page count, the URLs the fetcher refused, WeasyPrint's warnings
    and the page-number slots it holds (by element id)."""

    pdf: bytes
    pages: int
    refused: list[str] = field(default_factory=list)  # URLs the fetcher would not read
    warnings: list[str] = field(default_factory=list)  # WeasyPrint warnings, shown to the user
    slots: dict[str, TextSlot] = field(default_factory=dict)
    # Images (by URL, with WeasyPrint's reason) it could not load or draw, beyond those refused.
    failed_images: list[tuple[str, str]] = field(default_factory=list)


# WeasyPrint's log lines for an image it leaves out (weasyprint/images.py): the URL is the first
# argument of each.
_LOAD_FAILED = "Failed to load image at %r: %s"
_DRAW_FAILED = "Failed to render SVG image %s"


class _ImageFailures(logging.Handler):
    """Collects WeasyPrint's log records of images it could not load or draw."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.failed: list[tuple[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        if record.msg == _LOAD_FAILED and len(args) == 2:
            error = args[1]
            # WeasyPrint's ImageLoadingError is often empty; what went wrong is its cause.
            reason = str(error) or str(getattr(error, "__cause__", None) or "") or type(error).__name__
            self.failed.append((str(args[0]), f"it could not be loaded: {reason}"))
        elif record.msg == _DRAW_FAILED and args:
            self.failed.append((str(args[0]), "the PDF engine failed while drawing it"))


def render_pdf(
    html: str, *, allowed_roots: list[Path], base_url: Path | None = None, tree: Tree | None = None
) -> PdfResult:
    """Lay out HTML as a PDF with WeasyPrint. Only data: URLs and regular files inside ``allowed_roots`` are
    fetched (a file inside ``tree`` only when it is that folder's own); every other URL is
    refused and listed, not read. Images that fail to load or draw are listed in the result."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from weasyprint import HTML  # noqa: PLC0415 - imports Pango; keep `esrp-report check` light
        from weasyprint.urls import URLFetcher, URLFetcherResponse  # noqa: PLC0415

    refused: list[str] = []

    class RestrictedFetcher(URLFetcher):  # type: ignore[misc]
        def fetch(self, url: str, headers: Any = None) -> Any:
            parts = urlsplit(url)
            if parts.scheme == "data":
                return super().fetch(url, headers)
            if parts.scheme == "file" and not parts.netloc and allowed_roots:
                path = Path(unquote(parts.path))
                try:
                    data = read_regular_file(path, within=allowed_roots, tree=tree)
                except InputError:
                    pass  # outside the allowed folders, missing, or not a regular file
                else:
                    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
                    return URLFetcherResponse(url, data, {"Content-Type": kind})
            refused.append(url)
            raise ValueError(f"esrp-report refuses to fetch {url}")

    failures = _ImageFailures()
    weasyprint_log = logging.getLogger("weasyprint")
    weasyprint_log.addHandler(failures)
    try:
        with warnings.catch_warnings(record=True) as rendering:
            warnings.simplefilter("always")
            document = HTML(
                string=html,
                base_url=str(base_url) + "/" if base_url else None,
                url_fetcher=RestrictedFetcher(allowed_protocols=("data", "file")),
            ).render()
            # PDF/UA-1: tagged (a structure tree of the HTML's headings, paragraphs, tables and
            # figures), the <html lang> as /Lang, the <title> shown as the window's title.
            pdf = document.write_pdf(pdf_variant="pdf/ua-1")
    finally:
        weasyprint_log.removeHandler(failures)
    notes = sorted({str(w.message) for w in [*caught, *rendering]})
    # A refused URL is already listed as refused; what is left failed in WeasyPrint itself.
    failed = [(url, why) for url, why in dict(failures.failed).items() if url not in refused]
    return PdfResult(
        pdf=pdf,
        pages=len(document.pages),
        refused=refused,
        warnings=notes,
        slots=_text_slots(document),
        failed_images=failed,
    )


def _text_slots(document: Any) -> dict[str, TextSlot]:
    """Every element of the laid-out document whose id starts with ``TOC_SLOT_PREFIX``, as a
    ``TextSlot``. WeasyPrint's public anchors give an element's box but not its baseline or font,
    so the slot's inline box is read from the page's box tree, on the pages that hold one."""
    slots: dict[str, TextSlot] = {}
    for index, page in enumerate(document.pages):
        if not any(name.startswith(TOC_SLOT_PREFIX) for name in page.anchors):
            continue
        height = page.height * _PX
        for box in page._page_box.descendants():
            element = getattr(box, "element", None)
            ident = element.get("id") if element is not None and box.element_tag == "span" else None
            if not ident or not ident.startswith(TOC_SLOT_PREFIX) or ident in slots:
                continue
            left = box.content_box_x()
            slots[ident] = TextSlot(
                page=index,
                left=left * _PX,
                right=(left + box.width) * _PX,
                baseline=height - (box.position_y + box.baseline) * _PX,
                size=box.style["font_size"] * _PX,
                colour=_rgb(box.style["color"]),
            )
    return slots


def _rgb(colour: Any) -> tuple[float, float, float]:
    """A CSS colour as RGB from 0 to 1 (tinycss2's colour, or the RGBA tuple of older WeasyPrint)."""
    if hasattr(colour, "to"):
        red, green, blue = colour.to("srgb").coordinates
    else:
        red, green, blue = colour[:3]
    return float(red), float(green), float(blue)


# ---------------------------------------------------------------------------------------------
# A document in pieces: laid out in parallel, joined, numbered.
#
# WeasyPrint lays out one document on one core. An ESRP document is mostly its appendix, one
# independent piece per server, so the pieces are laid out in worker processes and joined with
# pypdf. Page numbers are global ("Page 37 of 117"), and no piece knows where it will start, so
# the pieces carry none; they are written onto the joined pages afterwards.


@dataclass
class PartJob:
    """Everything a worker needs to lay out one piece: plain, picklable data."""

    html: str  # with chart markers
    charts: list[Any]  # ChartSpec
    allowed_roots: list[Path]
    base_url: Path | None
    tree: Tree | None = None  # the manifest's folder, whose files must be its own


@dataclass
class PartResult:
    """One laid-out piece of a document: its PDF bytes and page count, the charts drawn (key to SVG), refused
    URLs, warnings and the page-number slots it left (by element id)."""

    pdf: bytes
    pages: int
    drawn: dict[str, str]  # chart key -> SVG, reused by the screen HTML
    refused: list[str]
    warnings: list[str]
    slots: dict[str, TextSlot] = field(default_factory=dict)
    failed_images: list[tuple[str, str]] = field(default_factory=list)  # URL, why


def render_part(job: PartJob) -> PartResult:
    """Draw a piece's charts, put them in place and lay the piece out (runs in a worker)."""
    from esrp_report.render.charts import draw  # noqa: PLC0415 - matplotlib loads in the worker

    drawn = {spec.key: draw(spec) for spec in job.charts}
    result = render_pdf(
        fill_charts(job.html, drawn, for_pdf=True),
        allowed_roots=job.allowed_roots,
        base_url=job.base_url,
        tree=job.tree,
    )
    return PartResult(
        result.pdf, result.pages, drawn, result.refused, result.warnings, result.slots, result.failed_images
    )


def render_whole(job: PartJob, *, number_from: int = 1) -> PartResult:
    """Lay out a document that is one piece (the reviewer's report) and number its pages from
    ``number_from``, all in the worker: its joining runs beside the other pieces' layout instead
    of after it in the building process. The result's PDF is the finished document."""
    piece = render_part(job)
    joiner = PdfJoiner()
    joiner.add(piece)
    joined = joiner.finish(appendix_title="", anchors=[()], number_from=number_from)
    return PartResult(
        joined.pdf, joined.pages, piece.drawn, piece.refused, piece.warnings, {}, piece.failed_images
    )


def warm_up() -> None:
    """Load WeasyPrint and matplotlib and use each once (fontconfig and Pango set up, matplotlib's
    font cache read): about 2 s of CPU that every worker would otherwise pay before its first
    piece. Run once, in the process the workers are forked from (render/print_worker.py)."""
    from esrp_report.render.charts import ChartSpec, draw  # noqa: PLC0415

    render_pdf(
        "<p style=\"font-family: 'DejaVu Sans'\">warm <b>up</b></p>"
        "<pre style=\"font-family: 'DejaVu Sans Mono'\">0.000</pre>",
        allowed_roots=[],
    )
    draw(ChartSpec("warm-up", "achieved", (["a"], [1.0], [1.0])))


@dataclass
class Joined:
    """The joined document: its PDF bytes and page count."""

    pdf: bytes
    pages: int


PAGE_NUMBER_FONT = "/EsrpPageNo"
# What the stamped numbers are written with: "Page n of N" and a table-of-contents entry's dots
# and digits.
_STAMP_CHARACTERS = "Page of 0123456789."


class PdfJoiner:
    """Joins the pieces in document order, one at a time: a piece can be appended as soon as it is
    laid out, while the workers are still laying out the later ones."""

    def __init__(self) -> None:
        from pypdf import PdfWriter  # noqa: PLC0415

        self.writer = PdfWriter()
        self.readers: list[Any] = []
        self.starts: list[int] = []
        self.slots: dict[str, tuple[int, TextSlot]] = {}  # by id: page of the joined document, slot

    def add(self, result: PartResult) -> None:
        """Append the next piece's pages, in document order."""
        from pypdf import PdfReader  # noqa: PLC0415

        reader = PdfReader(io.BytesIO(result.pdf))
        start = len(self.writer.pages)
        self.starts.append(start)
        for ident, slot in result.slots.items():
            self.slots.setdefault(ident, (start + slot.page, slot))
        self.writer.append(reader, import_outline=False)
        self.readers.append(reader)

    def finish(
        self,
        *,
        appendix_title: str,
        anchors: list[tuple[str, ...]],
        number_from: int = 1,
        margin_mm: tuple[float, float] = (16.0, 20.0),
        top_level: Sequence[str] = (),
    ) -> Joined:
        """Outline (each server's bookmarks under ``appendix_title``, wherever that heading is: the
        body's, or the first server's piece; but a bookmark titled as in ``top_level``, a part
        printed after the servers such as the ESRP 4.0 form's appendix B, at the top), links to
        each piece's ``anchors`` pointed at its first page, the page number of each in its
        table-of-contents slot (and the page of any other anchor a slot names, laid out in a later
        piece), and "Page n of N" on every page from ``number_from`` (0-based; the title page has
        none)."""
        from pypdf.generic import ArrayObject, FloatObject, NameObject, NullObject, TextStringObject  # noqa: PLC0415

        writer, readers, starts = self.writer, self.readers, self.starts
        appendix_item = _copy_outline(
            writer, readers[0], readers[0].outline, offset=0, parent=None, find=appendix_title
        )
        chapters = frozenset(top_level)
        for reader, start in zip(readers[1:], starts[1:], strict=True):
            # The appendix's heading may open the first server's piece instead (the ESRP 4.0 form).
            found = _copy_outline(
                writer,
                reader,
                reader.outline,
                offset=start,
                parent=appendix_item,
                find=None if appendix_item else appendix_title,
                top=chapters,
            )
            appendix_item = appendix_item or found

        names = writer.get_named_dest_root()
        for anchor, start in ((a, s) for piece, s in zip(anchors, starts, strict=True) for a in piece):
            for i in range(len(names) - 2, -1, -2):
                if str(names[i]) == anchor:
                    del names[i : i + 2]
            page = writer.pages[start]
            top = float(page.mediabox.top)
            writer.add_named_destination_array(
                TextStringObject(anchor),
                ArrayObject(
                    [
                        page.indirect_reference,
                        NameObject("/XYZ"),
                        NullObject(),
                        FloatObject(top),
                        NullObject(),
                    ]
                ),
            )
        first_pages = {
            f"{TOC_SLOT_PREFIX}{anchor}": start + 1
            for piece, start in zip(anchors, starts, strict=True)
            for anchor in piece
        }
        named = _named_pages(writer)
        for ident in self.slots:
            target = ident.removeprefix(TOC_SLOT_PREFIX)
            if ident not in first_pages and target in named:
                first_pages[ident] = named[target] + 1
        stamp_font = _embedded_font(writer)
        _stamp_slots(writer, self.slots, first_pages, stamp_font)
        _stamp_page_numbers(writer, number_from, margin_mm, stamp_font)
        if readers[0].metadata:  # the body's title, author, subject, keywords and dates
            writer.add_metadata(dict(readers[0].metadata))
        _join_structure(writer, readers, starts)
        out = io.BytesIO()
        writer.write(out)
        return Joined(out.getvalue(), len(writer.pages))


def join_parts(
    results: list[PartResult],
    *,
    appendix_title: str,
    anchors: list[tuple[str, ...]],
    number_from: int = 1,
    margin_mm: tuple[float, float] = (16.0, 20.0),
    top_level: Sequence[str] = (),
) -> Joined:
    """Join the pieces in order (see ``PdfJoiner``)."""
    joiner = PdfJoiner()
    for result in results:
        joiner.add(result)
    return joiner.finish(
        appendix_title=appendix_title,
        anchors=anchors,
        number_from=number_from,
        margin_mm=margin_mm,
        top_level=top_level,
    )


def _copy_outline(
    writer: Any,
    reader: Any,
    items: list[Any],
    *,
    offset: int,
    parent: Any,
    find: str | None,
    top: frozenset[str] = frozenset(),
) -> Any:
    """Copy a piece's outline into the joined document, pages shifted by ``offset``, a bookmark
    titled as in ``top`` at the top level; returns the copied item titled ``find`` (the appendix
    heading) when there is one."""
    found = None
    last = parent
    for item in items:
        if isinstance(item, list):
            inner = _copy_outline(writer, reader, item, offset=offset, parent=last, find=find, top=top)
            found = found or inner
            continue
        page = reader.get_destination_page_number(item)
        home = None if item.title in top else parent
        last = writer.add_outline_item(title=item.title, page_number=page + offset, parent=home)
        if find is not None and item.title == find:
            found = last
    return found


def _named_pages(writer: Any) -> dict[str, int]:
    """The page (0-based) of each named destination of the joined document: every id WeasyPrint
    laid out, in whichever piece."""
    pages = {page.indirect_reference.idnum: i for i, page in enumerate(writer.pages)}
    names = writer.get_named_dest_root()
    found: dict[str, int] = {}
    for i in range(0, len(names) - 1, 2):
        dest = names[i + 1].get_object()
        if hasattr(dest, "get") and "/D" in dest:
            dest = dest["/D"].get_object()
        try:
            target = dest[0]
        except (IndexError, KeyError, TypeError):
            continue
        index = pages.get(getattr(target, "idnum", None))
        if index is not None:
            found.setdefault(str(names[i]), index)
    return found


def _stamp_page_numbers(
    writer: Any, number_from: int, margin_mm: tuple[float, float], font: _StampFont
) -> None:
    """Write "Page n of N" at the bottom right of each page, in ``font``, grey, 7.5 pt like the
    rest of the footer."""
    total = len(writer.pages)
    size = 7.5
    right_mm, bottom_mm = margin_mm
    for number, page in enumerate(writer.pages, start=1):
        if number - 1 < number_from:
            continue
        text = f"Page {number} of {total}"
        width = font.width(text) * size / 1000
        box = page.mediabox
        x = float(box.right) - right_mm * 72 / 25.4 - width
        y = float(box.bottom) + bottom_mm * 72 / 25.4 / 2 - size / 3
        _overlay(
            writer,
            page,
            font,
            # A pagination artifact: not part of the structure tree, skipped by a screen reader.
            "/Artifact <</Type /Pagination /Subtype /Footer>> BDC "
            f"BT {font.name} {size} Tf 0.4 g {x:.2f} {y:.2f} Td {font.encode(text)} Tj ET EMC",
        )


def _stamp_slots(
    writer: Any, slots: Mapping[str, tuple[int, TextSlot]], numbers: Mapping[str, int], fallback: _StampFont
) -> None:
    """Write each number into its slot (by slot id; a number without a slot is left out): right
    aligned, in the slot's size and colour, in the font of the page's text when that font holds
    the digits (else ``fallback``), and the slot's room left of it filled with leader dots, so the
    entry reads like its neighbours whose numbers WeasyPrint wrote."""
    for ident, number in numbers.items():
        placed = slots.get(ident)
        if placed is None:
            continue
        index, slot = placed
        page = writer.pages[index]
        digits = str(number)
        font = _page_font(page, f"{digits}.") or fallback
        scale = slot.size / 1000
        number_left = slot.right - font.width(digits) * scale
        dots, dots_left = _leader_dots(slot.left, slot.right, number_left, font.width(".") * scale)
        box = page.mediabox
        x = float(box.left) + (dots_left if dots else number_left)
        y = float(box.bottom) + slot.baseline
        red, green, blue = slot.colour
        text = f"{font.encode('.' * dots)} Tj {number_left - dots_left:.3f} 0 Td " if dots else ""
        _overlay(
            writer,
            page,
            font,
            # An artifact: the entry's link, tagged, leads to the page; the number written after
            # layout has no place in the structure tree WeasyPrint built.
            f"/Artifact BMC BT {font.name} {slot.size:.3f} Tf {red:.3f} {green:.3f} {blue:.3f} rg "
            f"{x:.3f} {y:.3f} Td {text}{font.encode(digits)} Tj ET EMC",
        )


def _leader_dots(left: float, right: float, number_left: float, dot: float) -> tuple[int, float]:
    """How many leader dots go between ``left`` and ``number_left`` and where the first starts.
    WeasyPrint puts a leader's dots in cells counted back from the line's right end, drops any
    cell that would cross the text after it and, where a cell ends just at that text, may draw it
    or not as its rounding falls. The slot ends at the line's end, so the cells here continue the
    leader's own: the cell ending at the slot's left edge is drawn too (drawn twice, a dot looks
    the same), and the cell ending at the number is dropped, the gap WeasyPrint leaves before the
    numbers it writes."""
    tolerance = 1e-3
    count, first, position = 0, right, right
    while position - dot >= left - dot - tolerance:
        position -= dot
        if position + dot <= number_left - tolerance:
            count, first = count + 1, position
    return count, first


@dataclass
class _StampFont:
    """A font to write with: its resource name, advance widths (1/1000 em) and, for a font the page
    already has (Type0, Identity-H), each character's glyph code; ``codes`` is None for the
    embedded stamp font, written as WinAnsi text and added to the page's resources (``font`` is
    its object)."""

    name: str
    widths: dict[str, float]
    codes: dict[str, int] | None = None
    font: Any = None

    def width(self, text: str) -> float:
        """The text's advance width in 1/1000 em."""
        return sum(self.widths[c] for c in text)

    def encode(self, text: str) -> str:
        """The text as a PDF string operand for this font."""
        if self.codes is None:
            return f"({text})"
        return "<" + "".join(f"{self.codes[c]:04x}" for c in text) + ">"


def _stamp_font_file() -> Path:
    """DejaVu Sans, the body's own face, from the copy matplotlib (a dependency, for the charts)
    ships: there whatever fonts the system has, and found without importing matplotlib."""
    from importlib.util import find_spec  # noqa: PLC0415

    spec = find_spec("matplotlib")
    folders = spec.submodule_search_locations if spec is not None else None
    if not folders:
        # A dependency missing: a broken installation, not a fault of the user's input.
        raise RuntimeError("matplotlib is not installed: the page numbers' font (DejaVu Sans) ships with it")
    return Path(next(iter(folders))) / "mpl-data" / "fonts" / "ttf" / "DejaVuSans.ttf"


def _embedded_font(writer: Any) -> _StampFont:
    """DejaVu Sans cut down to ``_STAMP_CHARACTERS``, embedded (PDF/UA wants every font in the
    file; a standard font such as Helvetica is drawn with whatever the reader substitutes) as a
    simple TrueType font with WinAnsi codes, one object in ``writer`` for every page that uses it."""
    from fontTools import subset  # noqa: PLC0415 - WeasyPrint's own dependency for its subsets
    from fontTools.ttLib import TTFont  # noqa: PLC0415
    from pypdf.generic import (  # noqa: PLC0415
        ArrayObject,
        DictionaryObject,
        FloatObject,
        NameObject,
        NumberObject,
        StreamObject,
    )

    # Read into memory (a lazy TTFont would keep the file open); only the tables kept are parsed.
    font = TTFont(io.BytesIO(_stamp_font_file().read_bytes()), lazy=True)
    options = subset.Options()
    # Plain digits and letters need no shaping tables nor hinting (a PDF viewer scales outlines
    # itself); FFTM, FontForge's timestamps, fontTools warns it cannot cut.
    options.drop_tables += ["FFTM", "GSUB", "GPOS", "GDEF", "kern"]
    options.layout_features = []
    options.hinting = False
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=_STAMP_CHARACTERS)
    subsetter.subset(font)
    data = io.BytesIO()
    font.save(data)
    scale = 1000 / font["head"].unitsPerEm
    cmap = font.getBestCmap()
    widths = {c: font["hmtx"][cmap[ord(c)]][0] * scale for c in _STAMP_CHARACTERS}
    first, last = min(map(ord, widths)), max(map(ord, widths))
    head, os2 = font["head"], font["OS/2"]
    name = NameObject("/ESRPPN+DejaVuSans")  # a subset's tag: six capitals and a plus
    file = StreamObject()
    file.set_data(data.getvalue())
    file[NameObject("/Length1")] = NumberObject(len(data.getvalue()))
    file = file.flate_encode()
    descriptor = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/FontDescriptor"),
            NameObject("/FontName"): name,
            NameObject("/Flags"): NumberObject(32),  # non-symbolic: codes are WinAnsi
            NameObject("/FontBBox"): ArrayObject(
                FloatObject(v * scale) for v in (head.xMin, head.yMin, head.xMax, head.yMax)
            ),
            NameObject("/ItalicAngle"): NumberObject(0),
            NameObject("/Ascent"): FloatObject(os2.sTypoAscender * scale),
            NameObject("/Descent"): FloatObject(os2.sTypoDescender * scale),
            # DejaVu's OS/2 table is too old to state a cap height: a capital's top.
            NameObject("/CapHeight"): FloatObject(font["glyf"][cmap[ord("P")]].yMax * scale),
            NameObject("/StemV"): NumberObject(80),  # not in the font file; a regular weight's
            NameObject("/FontFile2"): writer._add_object(file),
        }
    )
    dictionary = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/TrueType"),
                NameObject("/BaseFont"): name,
                NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
                NameObject("/FirstChar"): NumberObject(first),
                NameObject("/LastChar"): NumberObject(last),
                NameObject("/Widths"): ArrayObject(
                    FloatObject(widths.get(chr(code), 0)) for code in range(first, last + 1)
                ),
                NameObject("/FontDescriptor"): writer._add_object(descriptor),
            }
        )
    )
    return _StampFont(PAGE_NUMBER_FONT, widths, font=dictionary)


def _join_structure(writer: Any, readers: list[Any], starts: list[int]) -> None:
    """One structure tree for the joined document from the pieces' own (pypdf joins pages, not
    structure): each piece's elements under one Document element, in order, their pages and link
    annotations those of the joined document, and the parent tree's keys renumbered, since each
    piece counts its pages' and links' keys from 0. The tagged document's catalog entries (the
    language, the title shown, "marked") and its PDF/UA metadata come from the first piece. An
    untagged piece leaves the joined document untagged."""
    from pypdf.generic import (  # noqa: PLC0415
        ArrayObject,
        DictionaryObject,
        NameObject,
        NumberObject,
    )

    if not readers or any("/StructTreeRoot" not in reader.root_object for reader in readers):
        return
    root = DictionaryObject({NameObject("/Type"): NameObject("/StructTreeRoot")})
    root_ref = writer._add_object(root)
    kids = ArrayObject()
    document_ref = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/StructElem"),
                NameObject("/S"): NameObject("/Document"),
                NameObject("/P"): root_ref,
                NameObject("/K"): kids,
            }
        )
    )
    root[NameObject("/K")] = ArrayObject([document_ref])
    nums = ArrayObject()
    key = 0
    for reader, start in zip(readers, starts, strict=True):
        old_root = reader.root_object.raw_get("/StructTreeRoot")
        translated = writer._id_translated.setdefault(id(reader), {"PreventGC": reader})
        # The piece's root and Document element are the joined document's own; its pages and
        # link annotations are the copies pypdf made (it forgets a page's copy once made).
        translated[old_root.idnum] = root_ref.idnum
        old_documents = old_root.get_object()["/K"]
        for element in old_documents:
            translated[element.idnum] = document_ref.idnum
        annotations: dict[int, Any] = {}  # the piece's parent-tree key of a link: its copy
        for index, page in enumerate(reader.pages):
            copy = writer.pages[start + index]
            translated[page.indirect_reference.idnum] = copy.indirect_reference.idnum
            old_annots = list(page.get("/Annots", ArrayObject()).get_object())
            new_annots = list(copy.get("/Annots", ArrayObject()).get_object())
            if len(old_annots) != len(new_annots):
                continue  # pypdf left some out: which copy is which is not known
            for old, new in zip(old_annots, new_annots, strict=True):
                if "/StructParent" in old.get_object():
                    translated[old.idnum] = new.idnum
                    annotations[int(old.get_object()["/StructParent"])] = new.get_object()
        for element in old_documents:
            for kid in element.get_object()["/K"]:
                kids.append(kid.clone(writer))
        old_nums = old_root.get_object()["/ParentTree"].get_object()["/Nums"]
        pages = {int(page.get("/StructParents", -1)): start + i for i, page in enumerate(reader.pages)}
        for i in range(0, len(old_nums) - 1, 2):
            old_key = int(old_nums[i])
            if old_key in pages:
                writer.pages[pages[old_key]][NameObject("/StructParents")] = NumberObject(key)
            elif old_key in annotations:
                annotations[old_key][NameObject("/StructParent")] = NumberObject(key)
            else:
                continue
            nums += [NumberObject(key), old_nums[i + 1].clone(writer)]
            key += 1
    root[NameObject("/ParentTree")] = writer._add_object(DictionaryObject({NameObject("/Nums"): nums}))
    root[NameObject("/ParentTreeNextKey")] = NumberObject(key)
    catalog = writer.root_object
    catalog[NameObject("/StructTreeRoot")] = root_ref
    first = readers[0].root_object
    for entry in ("/Lang", "/MarkInfo", "/ViewerPreferences", "/Metadata"):
        if entry in first:
            catalog[NameObject(entry)] = first.raw_get(entry).clone(writer)


_UNICODE_PAIRS = re.compile(rb"<([0-9a-fA-F]{1,4})>\s*<([0-9a-fA-F]{4})>")
_UNICODE_RANGES = re.compile(rb"<([0-9a-fA-F]{1,4})>\s*<([0-9a-fA-F]{1,4})>\s*<([0-9a-fA-F]{4})>")
_FIGURE_SPACE = "\u2007"  # what the slot is made of (templates/esrp/document.html)
_STYLED = ("bold", "italic", "oblique", "mono", "condensed")


def _page_font(page: Any, characters: str) -> _StampFont | None:
    """The page's own font for ``characters`` (the text of the table of contents, when WeasyPrint
    embedded it as Type0 with Identity-H glyph codes, as it does): among the page's fonts whose
    ToUnicode map holds every character, the one that also holds the slot's figure space, else a
    regular one; None when no font holds them."""
    resources = page.get("/Resources")
    fonts = resources.get_object().get("/Font") if resources is not None else None
    if fonts is None:
        return None
    best: tuple[tuple[bool, bool], _StampFont] | None = None
    for name, ref in fonts.get_object().items():
        font = ref.get_object()
        if (
            font.get("/Subtype") != "/Type0"
            or font.get("/Encoding") != "/Identity-H"
            or "/ToUnicode" not in font
        ):
            continue
        codes = _to_unicode(font["/ToUnicode"].get_object().get_data())
        if not all(c in codes for c in characters):
            continue
        widths = _cid_widths(font["/DescendantFonts"][0].get_object())
        default = float(font["/DescendantFonts"][0].get_object().get("/DW", 1000))
        wanted = {c: codes[c] for c in {*characters, *"0123456789."} if c in codes}
        rank = (_FIGURE_SPACE in codes, not any(s in str(font.get("/BaseFont", "")).lower() for s in _STYLED))
        candidate = _StampFont(
            str(name), {c: widths.get(code, default) for c, code in wanted.items()}, wanted
        )
        if best is None or rank > best[0]:
            best = (rank, candidate)
    return best[1] if best else None


def _to_unicode(cmap: bytes) -> dict[str, int]:
    """Character to glyph code from a ToUnicode CMap's one-character entries (bfchar pairs and
    bfrange runs; array ranges, ligatures and characters past the BMP are left out)."""
    codes: dict[str, int] = {}
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", cmap, re.S):
        for first, last, target in _UNICODE_RANGES.findall(block):
            start, end, char = int(first, 16), int(last, 16), int(target, 16)
            for offset in range(min(end - start, 0xFFFF) + 1):
                codes.setdefault(chr(char + offset), start + offset)
    for block in re.findall(rb"beginbfchar(.*?)endbfchar", cmap, re.S):
        for code, char in _UNICODE_PAIRS.findall(block):
            codes.setdefault(chr(int(char, 16)), int(code, 16))
    return codes


def _cid_widths(descendant: Any) -> dict[int, float]:
    """Glyph code to advance width (1/1000 em) from a CIDFont's /W array: ``c [w1 w2 ...]`` and
    ``first last w`` entries."""
    widths: dict[int, float] = {}
    items = [item.get_object() for item in descendant.get("/W", [])]
    i = 0
    while i + 1 < len(items):
        first, following = int(items[i]), items[i + 1]
        if isinstance(following, list):
            for offset, width in enumerate(following):
                widths[first + offset] = float(width)
            i += 2
        elif i + 2 < len(items):
            for code in range(first, int(following) + 1):
                widths[code] = float(items[i + 2])
            i += 3
        else:
            break
    return widths


def _overlay(writer: Any, page: Any, font: _StampFont, operators: str) -> None:
    """Draw ``operators`` on top of the page, in its default coordinates: the page's own content
    is wrapped in q ... Q so its transformations do not reach what is drawn."""
    from pypdf.generic import ArrayObject, DecodedStreamObject, DictionaryObject, NameObject  # noqa: PLC0415

    if font.font is not None:
        resources = page.get("/Resources")
        resources = resources.get_object() if resources is not None else DictionaryObject()
        fonts = resources.get("/Font")
        fonts = fonts.get_object() if fonts is not None else DictionaryObject()
        fonts[NameObject(font.name)] = font.font
        resources[NameObject("/Font")] = fonts
        page[NameObject("/Resources")] = resources
    before = DecodedStreamObject()
    before.set_data(b"q\n")
    after = DecodedStreamObject()
    after.set_data(f"Q\nq {operators} Q\n".encode("ascii"))
    contents = page.get("/Contents")
    existing = contents.get_object() if contents is not None else ArrayObject()
    streams = list(existing) if isinstance(existing, ArrayObject) else [contents]
    page[NameObject("/Contents")] = ArrayObject(
        [writer._add_object(before), *streams, writer._add_object(after)]
    )
