"""PDF output through WeasyPrint, with a URL fetcher that reads nothing outside allowed folders.

The HTML is self-contained, so a normal build fetches only ``data:`` URLs. Anything else a
template or a manifest might name (``file:///etc/passwd``, ``http://...``) is refused and
recorded, never read. A ``file:`` URL is read by the fetcher itself, not by urllib: the path is
resolved and must be a regular file inside an allowed folder (a link out, a folder, a FIFO that
would block the layout forever, a device: refused unopened).
"""

from __future__ import annotations

import io
import mimetypes
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from esrp_report.ingest.safe_files import read_regular_file
from esrp_report.model.errors import InputError


@dataclass
class PdfResult:
    """A laid-out PDF: its bytes and page count, the URLs the fetcher refused, and WeasyPrint's warnings."""

    pdf: bytes
    pages: int
    refused: list[str] = field(default_factory=list)  # URLs the fetcher would not read
    warnings: list[str] = field(default_factory=list)  # WeasyPrint warnings, shown to the user


def render_pdf(html: str, *, allowed_roots: list[Path], base_url: Path | None = None) -> PdfResult:
    """Lay out HTML as a PDF with WeasyPrint. Only data: URLs and regular files inside ``allowed_roots`` are
    fetched; every other URL is refused and listed, not read."""
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
                    data = read_regular_file(path, within=allowed_roots)
                except InputError:
                    pass  # outside the allowed folders, missing, or not a regular file
                else:
                    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
                    return URLFetcherResponse(url, data, {"Content-Type": kind})
            refused.append(url)
            raise ValueError(f"esrp-report refuses to fetch {url}")

    with warnings.catch_warnings(record=True) as rendering:
        warnings.simplefilter("always")
        document = HTML(
            string=html,
            base_url=str(base_url) + "/" if base_url else None,
            url_fetcher=RestrictedFetcher(allowed_protocols=("data", "file")),
        ).render()
        pdf = document.write_pdf()
    notes = sorted({str(w.message) for w in [*caught, *rendering]})
    return PdfResult(pdf=pdf, pages=len(document.pages), refused=refused, warnings=notes)


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


@dataclass
class PartResult:
    """One laid-out piece of a document: its PDF bytes and page count, the charts drawn (key to SVG), refused
    URLs and warnings."""

    pdf: bytes
    pages: int
    drawn: dict[str, str]  # chart key -> SVG, reused by the screen HTML
    refused: list[str]
    warnings: list[str]


def render_part(job: PartJob) -> PartResult:
    """Draw a piece's charts, put them in place and lay the piece out (runs in a worker)."""
    from esrp_report.render.charts import draw  # noqa: PLC0415 - matplotlib loads in the worker
    from esrp_report.render.html import fill_charts  # noqa: PLC0415

    drawn = {spec.key: draw(spec) for spec in job.charts}
    result = render_pdf(
        fill_charts(job.html, drawn, for_pdf=True), allowed_roots=job.allowed_roots, base_url=job.base_url
    )
    return PartResult(result.pdf, result.pages, drawn, result.refused, result.warnings)


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
# Helvetica advance widths (1/1000 em) of the characters a page number uses (Adobe's AFM).
_HELVETICA = {
    **dict.fromkeys("0123456789", 556),
    " ": 278,
    "P": 667,
    "a": 556,
    "g": 556,
    "e": 556,
    "o": 556,
    "f": 278,
}


class PdfJoiner:
    """Joins the pieces in document order, one at a time: a piece can be appended as soon as it is
    laid out, while the workers are still laying out the later ones."""

    def __init__(self) -> None:
        from pypdf import PdfWriter  # noqa: PLC0415

        self.writer = PdfWriter()
        self.readers: list[Any] = []
        self.starts: list[int] = []

    def add(self, result: PartResult) -> None:
        """Append the next piece's pages, in document order."""
        from pypdf import PdfReader  # noqa: PLC0415

        reader = PdfReader(io.BytesIO(result.pdf))
        self.starts.append(len(self.writer.pages))
        self.writer.append(reader, import_outline=False)
        self.readers.append(reader)

    def finish(
        self,
        *,
        appendix_title: str,
        anchors: list[str | None],
        number_from: int = 1,
        margin_mm: tuple[float, float] = (16.0, 20.0),
    ) -> Joined:
        """Outline (each server's bookmarks under ``appendix_title``), links to each server's
        anchor pointed at its first page, and "Page n of N" on every page from ``number_from``
        (0-based; the title page has none)."""
        from pypdf.generic import ArrayObject, FloatObject, NameObject, NullObject, TextStringObject  # noqa: PLC0415

        writer, readers, starts = self.writer, self.readers, self.starts
        appendix_item = _copy_outline(
            writer, readers[0], readers[0].outline, offset=0, parent=None, find=appendix_title
        )
        for reader, start in zip(readers[1:], starts[1:], strict=True):
            _copy_outline(writer, reader, reader.outline, offset=start, parent=appendix_item, find=None)

        names = writer.get_named_dest_root()
        for anchor, start in zip(anchors, starts, strict=True):
            if anchor is None:
                continue
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
        _stamp_page_numbers(writer, number_from, margin_mm)
        if readers[0].metadata:  # the body's title, author, subject, keywords and dates
            writer.add_metadata(dict(readers[0].metadata))
        out = io.BytesIO()
        writer.write(out)
        return Joined(out.getvalue(), len(writer.pages))


def join_parts(
    results: list[PartResult],
    *,
    appendix_title: str,
    anchors: list[str | None],
    number_from: int = 1,
    margin_mm: tuple[float, float] = (16.0, 20.0),
) -> Joined:
    """Join the pieces in order (see ``PdfJoiner``)."""
    joiner = PdfJoiner()
    for result in results:
        joiner.add(result)
    return joiner.finish(
        appendix_title=appendix_title, anchors=anchors, number_from=number_from, margin_mm=margin_mm
    )


def _copy_outline(
    writer: Any, reader: Any, items: list[Any], *, offset: int, parent: Any, find: str | None
) -> Any:
    """Copy a piece's outline into the joined document, pages shifted by ``offset``; returns the
    copied item titled ``find`` (the appendix heading) when there is one."""
    found = None
    last = parent
    for item in items:
        if isinstance(item, list):
            inner = _copy_outline(writer, reader, item, offset=offset, parent=last, find=find)
            found = found or inner
            continue
        page = reader.get_destination_page_number(item)
        last = writer.add_outline_item(title=item.title, page_number=page + offset, parent=parent)
        if find is not None and item.title == find:
            found = last
    return found


def _stamp_page_numbers(writer: Any, number_from: int, margin_mm: tuple[float, float]) -> None:
    """Write "Page n of N" at the bottom right of each page, in Helvetica (a standard PDF font,
    nothing embedded), grey, 7.5 pt like the rest of the footer."""
    from pypdf.generic import ArrayObject, DecodedStreamObject, DictionaryObject, NameObject  # noqa: PLC0415

    font = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
                NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
            }
        )
    )
    total = len(writer.pages)
    size = 7.5
    right_mm, bottom_mm = margin_mm
    for number, page in enumerate(writer.pages, start=1):
        if number - 1 < number_from:
            continue
        text = f"Page {number} of {total}"
        width = sum(_HELVETICA[c] for c in text) * size / 1000
        box = page.mediabox
        x = float(box.right) - right_mm * 72 / 25.4 - width
        y = float(box.bottom) + bottom_mm * 72 / 25.4 / 2 - size / 3
        resources = page.get("/Resources")
        resources = resources.get_object() if resources is not None else DictionaryObject()
        fonts = resources.get("/Font")
        fonts = fonts.get_object() if fonts is not None else DictionaryObject()
        fonts[NameObject(PAGE_NUMBER_FONT)] = font
        resources[NameObject("/Font")] = fonts
        page[NameObject("/Resources")] = resources
        before = DecodedStreamObject()
        before.set_data(b"q\n")
        after = DecodedStreamObject()
        after.set_data(
            f"Q\nq BT {PAGE_NUMBER_FONT} {size} Tf 0.4 g {x:.2f} {y:.2f} Td ({text}) Tj ET Q\n".encode(
                "ascii"
            )
        )
        contents = page.get("/Contents")
        existing = contents.get_object() if contents is not None else ArrayObject()
        streams = list(existing) if isinstance(existing, ArrayObject) else [contents]
        page[NameObject("/Contents")] = ArrayObject(
            [writer._add_object(before), *streams, writer._add_object(after)]
        )
