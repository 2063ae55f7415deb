"""The printed layout of every bundled sample, read back from the PDF's own text positions.

Each sample manifest (samples/*.toml) is built once to HTML and PDF. The PDF's characters, with
their boxes and fonts (pypdfium2), are checked against the page margins of the print style
sheet's ``@page`` rule, and the last lines of each page against the document's headings and
captions (taken from the HTML): a page never ends on a heading or a caption whose table or
figure is on the next page.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from weasyprint import HTML

from esrp_report.render.html import environment

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "samples").glob("*.toml"))
STYLE = ROOT / "templates" / "esrp" / "style.css"
POINTS_PER_MM = 72 / 25.4
SLACK = 1.0  # points: a glyph's ink may reach a hair past its advance


@dataclass(frozen=True)
class Char:
    """One printed character: its text, box in PDF points (origin bottom left) and whether its font is bold."""

    text: str
    left: float
    bottom: float
    right: float
    top: float
    bold: bool


@dataclass(frozen=True)
class Page:
    """One page: its number (1-based), size in points and characters."""

    number: int
    width: float
    height: float
    chars: list[Char]


@dataclass(frozen=True)
class Margins:
    """The @page margins in points."""

    top: float
    right: float
    bottom: float
    left: float


@dataclass(frozen=True)
class Built:
    """A sample laid out: its pages and the texts of its headings and captions."""

    name: str
    pages: list[Page]
    headings: set[str]
    captions: set[str]


def page_margins(css: str) -> Margins:
    """The margins of the first ``@page`` rule of the print style sheet (``margin: T R B L`` in mm)."""
    rule = re.search(r"@page\s*\{.*?\bmargin:\s*([^;]+);", css, re.DOTALL)
    assert rule is not None, "the print style sheet has an @page rule with a margin"
    values = [float(v.removesuffix("mm")) * POINTS_PER_MM for v in rule.group(1).split()]
    # CSS shorthand: a missing right copies the top, a missing bottom the top, a missing left the right.
    top = values[0]
    right = values[1] if len(values) > 1 else top
    bottom = values[2] if len(values) > 2 else top
    left = values[3] if len(values) > 3 else right
    return Margins(top, right, bottom, left)


class _Titles(HTMLParser):
    """Collects the text of every h1-h4 (headings) and table caption (captions) of a page. A
    figure's caption (figcaption) is below its figure and ends it, so it may end a page."""

    HEADINGS: ClassVar = {"h1", "h2", "h3", "h4"}
    CAPTIONS: ClassVar = {"caption"}

    def __init__(self) -> None:
        super().__init__()
        self.headings: set[str] = set()
        self.captions: set[str] = set()
        self._open: list[tuple[str, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.HEADINGS | self.CAPTIONS:
            self._open.append((tag, []))

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1][0] == tag:
            _, parts = self._open.pop()
            text = squeeze("".join(parts))
            if text:
                (self.headings if tag in self.HEADINGS else self.captions).add(text)

    def handle_data(self, data: str) -> None:
        for _, parts in self._open:
            parts.append(data)


def squeeze(text: str) -> str:
    """Text without any whitespace: a PDF's word spacing and line breaks do not survive extraction alike."""
    return re.sub(r"\s+", "", text)


def read_pages(pdf: Path | bytes) -> list[Page]:
    """Every page's printed characters (spaces and control characters left out)."""
    pages = []
    name = ctypes.create_string_buffer(256)
    flags = ctypes.c_int()
    document = pdfium.PdfDocument(pdf)
    try:
        for index in range(len(document)):
            page = document[index]
            width, height = page.get_size()
            text_page = page.get_textpage()
            chars = []
            for i in range(text_page.count_chars()):
                text = text_page.get_text_range(i, 1)
                if not text.strip():
                    continue
                left, bottom, right, top = text_page.get_charbox(i)
                pdfium_c.FPDFText_GetFontInfo(text_page.raw, i, name, len(name), ctypes.byref(flags))
                chars.append(Char(text, left, bottom, right, top, b"Bold" in name.value))
            pages.append(Page(index + 1, width, height, chars))
    finally:
        document.close()
    return pages


def lines_of(chars: list[Char]) -> list[list[Char]]:
    """Characters grouped into printed lines, top of the page first: characters whose boxes share
    a vertical band are one line, whatever columns they sit in."""
    lines: list[list[Char]] = []
    band: tuple[float, float] | None = None
    for char in sorted(chars, key=lambda c: (-c.top, c.left)):
        middle = (char.top + char.bottom) / 2
        if band is not None and band[0] <= middle <= band[1]:
            lines[-1].append(char)
            continue
        lines.append([char])
        band = (char.bottom, char.top)
    return [sorted(line, key=lambda c: c.left) for line in lines]


def outside_text_block(page: Page, margins: Margins) -> list[str]:
    """The characters that cross a margin: past the left or right edge of the text block anywhere,
    or straddling its top or bottom edge. Characters wholly in the top or bottom margin are the
    running header and footer."""
    left, right = margins.left - SLACK, page.width - margins.right + SLACK
    ceiling, floor = page.height - margins.top, margins.bottom
    crossing = []
    for c in page.chars:
        if c.left < left or c.right > right:
            crossing.append(f"{c.text!r} at x {c.left:.1f}-{c.right:.1f} (text block {left:.1f}-{right:.1f})")
        elif any(c.bottom < edge - SLACK and c.top > edge + SLACK for edge in (ceiling, floor)):
            crossing.append(f"{c.text!r} at y {c.bottom:.1f}-{c.top:.1f} across the top or bottom margin")
    return crossing


def body_lines(page: Page, margins: Margins) -> list[list[Char]]:
    """The page's lines inside the text block (not the running header or footer)."""
    ceiling, floor = page.height - margins.top, margins.bottom
    return lines_of([c for c in page.chars if c.bottom >= floor - SLACK and c.top <= ceiling + SLACK])


def ends_on_a_title(lines: list[list[Char]], headings: set[str], captions: set[str]) -> str | None:
    """The heading or caption that ends the page, if one does: the page's last lines are a heading
    in bold or a caption (which may carry a "Table N" label before its text), followed by nothing
    or by bold lines only, the header of a table whose rows are all on the next page."""
    for end in range(len(lines), max(0, len(lines) - 8), -1):
        for count in (1, 2, 3):
            tail = lines[max(0, end - count) : end]
            text = squeeze("".join(c.text for line in tail for c in line))
            if text in headings and all(c.bold for line in tail for c in line):
                return text
            if any(text.endswith(caption) and len(text) - len(caption) <= 12 for caption in captions):
                return text
        if not all(c.bold for c in lines[end - 1]):
            return None  # a line of the table or text under the title: the title is not alone
    return None


def titles_of(html: str) -> tuple[set[str], set[str]]:
    """The squeezed texts of a page's headings and captions."""
    parser = _Titles()
    parser.feed(html)
    return parser.headings, parser.captions


# Each bundled sample, and the VMAX sample with every server's reports in its appendix (the
# sample itself prints Server 4's): ten servers' appendix tables laid out one after another.
EVERY_SERVER = "vmax-every-server"


@pytest.fixture(
    scope="module",
    params=[*SAMPLES, EVERY_SERVER],
    ids=lambda param: param if isinstance(param, str) else param.stem,
)
def built(request: pytest.FixtureRequest) -> Built:
    """A sample built once to HTML and PDF (the session's shared builds)."""
    if request.param == EVERY_SERVER:
        out = request.getfixturevalue("vmax_all_build")
        headings, captions = titles_of((out / "vmax.html").read_text(encoding="utf-8"))
        return Built(EVERY_SERVER, read_pages(out / "vmax.pdf"), headings, captions)
    manifest: Path = request.param
    out = request.getfixturevalue("sample_build")(manifest.stem)  # shared with other tests
    headings, captions = titles_of((out / f"{manifest.stem}.html").read_text(encoding="utf-8"))
    return Built(manifest.stem, read_pages(out / f"{manifest.stem}.pdf"), headings, captions)


MARGINS = page_margins(STYLE.read_text(encoding="utf-8"))


def test_every_bundled_sample_is_laid_out() -> None:
    assert {path.stem for path in SAMPLES} >= {"vmax", "netapp", "dellemc"}


def test_no_text_crosses_the_page_margins(built: Built) -> None:
    crossing = {
        page.number: found[:3] for page in built.pages if (found := outside_text_block(page, MARGINS))
    }
    assert not crossing, f"{built.name}: text outside the text block on pages {crossing}"


def test_no_page_ends_on_a_heading_or_a_caption(built: Built) -> None:
    stranded = {}
    for page in built.pages[:-1]:
        lines = body_lines(page, MARGINS)
        if lines and (title := ends_on_a_title(lines, built.headings, built.captions)):
            stranded[page.number] = title
    assert not stranded, f"{built.name}: pages ending on a heading or caption: {stranded}"


# The checks themselves, on hand-made pages: they must see what they are meant to see.
A4 = (595.0, 842.0)


def _line(text: str, y: float, x: float = 60.0, *, bold: bool = False, size: float = 10.0) -> list[Char]:
    return [Char(t, x + 6 * i, y, x + 6 * i + 5, y + size, bold) for i, t in enumerate(text)]


def test_the_margin_check_sees_a_cut_off_column_and_lets_the_footer_be() -> None:
    margins = Margins(62.4, 45.4, 56.7, 45.4)
    footer = _line("Page 3 of 9", 20.0, x=480.0, size=7.5)
    fits = Page(3, *A4, _line("Server 1 Performance 20", 700.0) + footer)
    assert outside_text_block(fits, margins) == []
    cut = Page(3, *A4, _line("127098.291 (Performance_2011_3_11_13_27_46.html)", 700.0, x=400.0))
    assert outside_text_block(cut, margins)
    straddles = Page(3, *A4, _line("a row under the footer line", 52.0))
    assert outside_text_block(straddles, margins)


def test_the_page_end_check_finds_a_stranded_heading_and_a_caption() -> None:
    margins = Margins(62.4, 45.4, 56.7, 45.4)
    headings, captions = {squeeze("Evidence notes")}, {squeeze("Individual server metrics")}
    text = _line("What the evidence says about itself.", 700.0)
    heading = _line("Evidence notes", 90.0, bold=True)
    page = Page(5, *A4, text + heading)
    assert ends_on_a_title(body_lines(page, margins), headings, captions) == "Evidencenotes"
    plain = Page(5, *A4, text + _line("Evidence notes", 90.0))  # the same words, not a heading
    assert ends_on_a_title(body_lines(plain, margins), headings, captions) is None
    caption = Page(6, *A4, text + _line("Table 4: Individual server metrics", 90.0))
    assert ends_on_a_title(body_lines(caption, margins), headings, captions)
    followed = Page(7, *A4, heading + _line("Server 1 Performance 20", 75.0))
    assert ends_on_a_title(body_lines(followed, margins), headings, captions) is None
    header_only = Page(8, *A4, text + heading + _line("Instances Reads/sec Writes/sec", 75.0, bold=True))
    assert ends_on_a_title(body_lines(header_only, margins), headings, captions) == "Evidencenotes"


# Table breaks, on a made-up page laid out with the document's own print style sheet: a short
# table is pushed down a few points at a time, so the page break falls before, inside and after
# it, after each of its rows in turn.
ROWS = 4


def print_style() -> str:
    """The document's style sheet as the PDF build renders it."""
    manifest = SimpleNamespace(
        branding=SimpleNamespace(primary_colour="#1f4e79", accent_colour="#c00000", page_size="A4"),
        document=SimpleNamespace(title="Layout"),
    )
    template = environment(None, "esrp").get_template("style.css")
    return template.render(m=manifest, for_pdf=True, part="body", footer_text="Vendor")


def table_pages(style: str, space: float) -> list[tuple[int, bool, str]]:
    """Lay out ``space`` points of nothing, a heading and a captioned table of ``ROWS`` rows; per
    page: the table's rows on it, whether its header row is on it, and the page's last line of
    text (spaces left out)."""
    rows = "".join(f"<tr><td>row{r:02d}</td><td>{r * 7.25}</td></tr>" for r in range(ROWS))
    html = (
        f"<html><style>{style}</style><body><div style='height: {space}pt'></div><h2>Stress</h2>"
        "<table><caption>Stress counters</caption>"
        f"<thead><tr><th>Counter</th><th>Value</th></tr></thead><tbody>{rows}</tbody></table>"
        "<p>After.</p></body></html>"
    )
    pages = []
    for page in read_pages(HTML(string=html).write_pdf()):
        lines = ["".join(c.text for c in line) for line in body_lines(page, MARGINS)]
        text = " ".join(lines)
        pages.append((len(re.findall(r"row\d\d", text)), "Counter" in text, lines[-1] if lines else ""))
    return pages


def test_a_table_never_leaves_one_row_alone_nor_its_heading_and_repeats_its_header() -> None:
    style = print_style()
    text_block = 297 * POINTS_PER_MM - MARGINS.top - MARGINS.bottom
    splits = 0
    for space in range(int(text_block) - 140, int(text_block), 4):
        pages = table_pages(style, space)
        counts = [rows for rows, _, _ in pages]
        assert sum(counts) == ROWS, counts
        assert 1 not in counts, f"{space} pt before the table: rows per page {counts}"
        for rows, header, last in pages:
            assert bool(rows) == header, (
                f"{space} pt before the table: a header row without rows, or rows without it"
            )
            assert last not in ("Stress", "Stresscounters"), (
                f"{space} pt before the table: {last} ends a page"
            )
        splits += sum(1 for rows in counts if rows) > 1
    assert splits, "the page break never fell inside the table"


def test_a_table_marked_landscape_gets_a_landscape_page_and_fits_it() -> None:
    style = print_style()
    columns = 9
    head = "".join(f"<th>Instance counter {c}</th>" for c in range(columns))
    row = (
        "<tr>"
        + "".join(f'<td class="num">{1_000_000 + c * 1.125:,.3f}</td>' for c in range(columns))
        + "</tr>"
    )

    def pages(marked: str) -> list[Page]:
        html = (
            f"<html><style>{style}</style><body><p>Before.</p><table{marked}><caption>All counters</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{row * 3}</tbody></table><p>After.</p></body></html>"
        )
        return read_pages(HTML(string=html).write_pdf())

    plain = pages("")
    assert any(outside_text_block(page, MARGINS) for page in plain), "the table is wider than a portrait page"
    before, wide, after = pages(' class="landscape"')
    assert before.width < before.height and after.width < after.height, "the pages around it stay portrait"
    assert wide.width > wide.height
    assert "1,000,009.000" in "".join(c.text for c in wide.chars)
    assert outside_text_block(wide, MARGINS) == []
