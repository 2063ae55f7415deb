"""The printed layout of every bundled sample, read back from the PDF's own text positions.

Each sample manifest (samples/*.toml) is built once to HTML and PDF. The PDF's characters, with
their boxes and fonts (pypdfium2), are checked against the page margins of the print style
sheet's ``@page`` rule, and the last lines of each page against the document's headings and
captions (taken from the HTML): a page never ends on a heading or a caption whose table or
figure is on the next page.
"""

from __future__ import annotations

import ctypes
import itertools
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import cssselect2
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
import tinycss2
import tinyhtml5
from pypdf import PdfReader
from weasyprint import HTML

from esrp_report.render import charts
from esrp_report.render.html import CHART_CAPTIONS, environment

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
class Graphic:
    """A drawn path or image of a page: its box in PDF points and its fill colour (RGB, None when
    not filled)."""

    left: float
    bottom: float
    right: float
    top: float
    fill: tuple[int, int, int] | None = None


@dataclass(frozen=True)
class Page:
    """One page: its number (1-based), size in points, characters and graphics."""

    number: int
    width: float
    height: float
    chars: list[Char]
    graphics: list[Graphic] = field(default_factory=list)


@dataclass(frozen=True)
class Margins:
    """The @page margins in points."""

    top: float
    right: float
    bottom: float
    left: float


@dataclass(frozen=True)
class Built:
    """A sample laid out: its pages, the texts of its headings and captions, and its HTML."""

    name: str
    pages: list[Page]
    headings: set[str]
    captions: set[str]
    html: str = ""
    pdf: Path | None = None


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
    """Every page's printed characters (spaces and control characters left out) and drawn paths
    and images."""
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
            pages.append(Page(index + 1, width, height, chars, graphics_of(page)))
    finally:
        document.close()
    return pages


def graphics_of(page: pdfium.PdfPage) -> list[Graphic]:
    """A page's paths and images (inside forms too), each with its fill colour when it is filled."""
    found = []
    red, green, blue, alpha = (ctypes.c_uint() for _ in range(4))
    mode, stroke = ctypes.c_int(), ctypes.c_int()
    for obj in page.get_objects(max_depth=8):
        if obj.type not in (pdfium_c.FPDF_PAGEOBJ_PATH, pdfium_c.FPDF_PAGEOBJ_IMAGE):
            continue
        fill = None
        if (
            obj.type == pdfium_c.FPDF_PAGEOBJ_PATH
            and pdfium_c.FPDFPath_GetDrawMode(obj.raw, ctypes.byref(mode), ctypes.byref(stroke))
            and mode.value
            and pdfium_c.FPDFPageObj_GetFillColor(
                obj.raw, ctypes.byref(red), ctypes.byref(green), ctypes.byref(blue), ctypes.byref(alpha)
            )
        ):
            fill = (red.value, green.value, blue.value)
        found.append(Graphic(*obj.get_bounds(), fill=fill))
    return found


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
        out, stem = request.getfixturevalue("vmax_all_build"), "vmax"
    else:
        manifest: Path = request.param
        out, stem = request.getfixturevalue("sample_build")(manifest.stem), manifest.stem  # shared builds
    html = (out / f"{stem}.html").read_text(encoding="utf-8")
    headings, captions = titles_of(html)
    name = EVERY_SERVER if request.param == EVERY_SERVER else stem
    return Built(name, read_pages(out / f"{stem}.pdf"), headings, captions, html, out / f"{stem}.pdf")


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


# Pages a typesetter would sign (issue 32, item 3), on every sample whatever template printed it:
# no page ends more than a quarter empty unless a page must start after it, the tables of one
# section share a width, a short column name is never wrapped, no heading is repeated as its
# caption nor a chart's title by its caption, and a quantity prints one way throughout.
EMPTY_FOOT = 0.25  # the most of a page's text block that may stay empty under its last line
SHORT_NAME = 12  # characters: a column name this short ("Server 10") is never wrapped
SAME_WIDTH = 1.0  # points: tables of one section as wide as each other within this


def foot_empty(page: Page, margins: Margins) -> float:
    """How much of the text block's height is empty under the page's last text or graphic."""
    ceiling, floor = page.height - margins.top, margins.bottom
    bottoms = [c.bottom for c in page.chars if c.bottom >= floor - SLACK and c.top <= ceiling + SLACK]
    # A graphic reaching into the text block (a table's rule, a chart) counts where it ends; one
    # covering the whole block is a page's background, not content.
    bottoms += [
        max(g.bottom, floor)
        for g in page.graphics
        if g.bottom < ceiling - SLACK and g.top > floor + SLACK and g.top - g.bottom < ceiling - floor
    ]
    return (min(bottoms, default=ceiling) - floor) / (ceiling - floor)


def _element_texts(root: Any) -> tuple[str, dict[int, tuple[int, int]]]:
    """The squeezed text of the body in document order, and each element's span of it (by id())."""
    text: list[str] = []
    spans: dict[int, tuple[int, int]] = {}
    length = 0

    def walk(element: Any) -> None:
        nonlocal length
        start = length
        if element.tag in ("style", "script", "title", "head") or not isinstance(element.tag, str):
            # Not printed (a comment's text is no text either): no text, and neither has its inside.
            for inner in element.iter():
                spans[id(inner)] = (start, start)
        else:
            own = squeeze(element.text or "")
            text.append(own)
            length += len(own)
            for child in element:
                walk(child)
        spans[id(element)] = (start, length)
        tail = squeeze(element.tail or "")
        text.append(tail)
        length += len(tail)

    walk(root)
    return "".join(text), spans


def page_starts(html: str, style: str) -> list[str]:
    """The squeezed text a page begins with wherever the print style sheet starts a page: at each
    element whose winning ``break-before`` (``page-break-before``) asks for a page, and after each
    whose ``break-after`` does. The cascade is the style sheet's own: a later or more specific rule
    that says ``auto`` wins."""
    matcher = cssselect2.Matcher()
    for rule in tinycss2.parse_stylesheet(style, skip_whitespace=True, skip_comments=True):
        if rule.type != "qualified-rule":
            continue
        wanted = []
        for declaration in tinycss2.parse_declaration_list(
            rule.content, skip_whitespace=True, skip_comments=True
        ):
            if declaration.type != "declaration":
                continue
            side = declaration.lower_name.removeprefix("page-break-").removeprefix("break-")
            if side in ("before", "after") and declaration.lower_name.endswith(side):
                value = tinycss2.serialize(declaration.value).strip().lower()
                wanted.append((side, value in ("page", "always", "left", "right")))
        if not wanted:
            continue
        try:
            selectors = cssselect2.compile_selector_list(rule.prelude)
        except cssselect2.SelectorError:
            continue
        for selector in selectors:
            if selector.pseudo_element is None:
                for side, breaks in wanted:
                    matcher.add_selector(selector, (side, breaks))
    root = tinyhtml5.parse(html, namespace_html_elements=False)
    text, spans = _element_texts(root)
    starts = []
    for element in cssselect2.ElementWrapper.from_html_root(root).iter_subtree():
        winning: dict[str, bool] = {}
        for _specificity, _order, _pseudo, (side, breaks) in sorted(matcher.match(element) or []):
            winning[side] = breaks
        start, end = spans[id(element.etree_element)]
        if winning.get("before"):
            starts.append(text[start : start + 40])
        if winning.get("after"):
            starts.append(text[end : end + 40])
    return [s for s in starts if s]


def body_text(page: Page, margins: Margins) -> str:
    return "".join(c.text for line in body_lines(page, margins) for c in line)


def empty_feet(pages: list[Page], starts: list[str], margins: Margins) -> dict[int, str]:
    """The pages ending more than ``EMPTY_FOOT`` empty that need not: neither the last page, nor
    one before a page that must start (a page start of ``starts``, or a page turned the other
    way)."""
    found = {}
    for page, following in itertools.pairwise(pages):
        empty = foot_empty(page, margins)
        if empty <= EMPTY_FOOT:
            continue
        if (page.width > page.height) != (following.width > following.height):
            continue
        # The first characters decide, the contents' leaders and page numbers left out: the HTML
        # has neither ("Overview.....3Disclaimer").
        begins = re.sub(r"\.{2,}\d*", "", squeeze(body_text(following, margins)))
        if any(begins[:n] == s[:n] for s in starts if (n := min(len(s), len(begins), 24))):
            continue
        found[page.number] = f"{empty:.0%} empty, next page starts {begins[:40]!r}"
    return found


def test_no_page_ends_more_than_a_quarter_empty_unless_a_page_must_start_after_it(built: Built) -> None:
    starts = page_starts(built.html, print_style())
    assert len(starts) >= 3, "the print style sheet starts pages (contents, body, appendix)"
    found = empty_feet(built.pages, starts, MARGINS)
    assert not found, f"{built.name}: pages ending more than {EMPTY_FOOT:.0%} empty: {found}"


def test_the_empty_foot_check_sees_a_page_that_ends_early_and_lets_a_forced_break_be() -> None:
    margins = Margins(62.4, 45.4, 56.7, 45.4)
    text_block = A4[1] - margins.top - margins.bottom
    half = Page(1, *A4, _line("Storage performance results", 700.0) + _line("rows", 420.0))
    full = Page(2, *A4, _line("Aggregate performance", 700.0) + _line("last row", 60.0))
    appendix = Page(3, *A4, _line("Appendix A: Test reports", 700.0, bold=True))
    assert foot_empty(half, margins) == pytest.approx((420.0 - margins.bottom) / text_block)
    assert foot_empty(full, margins) < 0.01
    # A table's rule under the last text is content too.
    ruled = Page(1, *A4, half.chars, [Graphic(60.0, 80.0, 500.0, 81.0)])
    assert foot_empty(ruled, margins) < 0.05
    starts = ["AppendixA:Testreports"]
    assert list(empty_feet([half, full], starts, margins)) == [1]
    assert empty_feet([half, appendix], starts, margins) == {}
    assert empty_feet([full, half], starts, margins) == {}  # the last page may end anywhere


def test_page_starts_follow_the_cascade_of_the_print_style_sheet() -> None:
    style = (
        "h1#appendix, .server { break-before: page; } nav { break-after: page; }"
        " h1#appendix ~ .server { break-before: auto; }"
    )
    html = (
        "<body><nav>Contents</nav><h1>Overview</h1><p>Text.</p><h1 id='appendix'>Appendix A</h1>"
        "<section class='server'>Server 4</section><section class='server'>Server 5</section>"
        "<div><section class='server'>Server 6</section></div></body>"
    )
    assert [start[:8] for start in page_starts(html, style)] == ["Overview", "Appendix", "Server6"]


def header_rows(page: Page, colour: tuple[int, int, int]) -> list[tuple[float, float, float, float]]:
    """The header rows of the page's tables: bands of cells filled with ``colour`` holding text
    (a chart's bars of the same colour hold none), each as left, bottom, right, top."""
    cells = sorted((g for g in page.graphics if g.fill == colour), key=lambda g: -g.top)
    bands: list[list[float]] = []
    for g in cells:
        if bands and g.top > bands[-1][1] + SLACK and g.bottom < bands[-1][3] - SLACK:
            band = bands[-1]
            band[:] = [
                min(band[0], g.left),
                min(band[1], g.bottom),
                max(band[2], g.right),
                max(band[3], g.top),
            ]
        else:
            bands.append([g.left, g.bottom, g.right, g.top])
    return [
        (left, bottom, right, top)
        for left, bottom, right, top in bands
        if any(
            left <= c.left and c.right <= right and bottom <= c.bottom and c.top <= top for c in page.chars
        )
    ]


def primary_colour(html: str) -> tuple[int, int, int]:
    found = re.search(r"--primary:\s*#([0-9a-fA-F]{6})", html)
    assert found, "the document's style names its primary colour (its tables' header rows)"
    value = found.group(1)
    return (int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16))


def _caption_sections(html: str) -> dict[str, str]:
    """Each caption's squeezed text (its "Table N" label included) and the section it is in: the
    nearest h1 or h2 before it."""
    root = tinyhtml5.parse(html, namespace_html_elements=False)
    sections: dict[str, str] = {}
    section = ""
    for element in root.iter():
        if element.tag in ("h1", "h2"):
            section = squeeze("".join(element.itertext()))
        elif element.tag == "caption":
            sections[squeeze("".join(element.itertext()))] = section
    return sections


def table_widths(pages: list[Page], html: str, margins: Margins) -> dict[str, dict[str, float]]:
    """Per section, each captioned table's width on the page: its header row's, under the caption."""
    sections = _caption_sections(html)
    colour = primary_colour(html)
    widths: dict[str, dict[str, float]] = {}
    for page in pages:
        lines = body_lines(page, margins)
        for left, _bottom, right, top in header_rows(page, colour):
            above = [line for line in lines if line[0].bottom > top - SLACK]
            for count in (1, 2):
                caption = squeeze("".join(c.text for line in above[-count:] for c in line))
                if caption in sections:
                    widths.setdefault(sections[caption], {})[caption] = right - left
                    break
    return widths


def unequal_widths(widths: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    return {
        section: tables
        for section, tables in widths.items()
        if max(tables.values()) - min(tables.values()) > SAME_WIDTH
    }


def test_the_tables_of_one_section_share_a_width(built: Built) -> None:
    widths = table_widths(built.pages, built.html, MARGINS)
    measured = sum(len(tables) for tables in widths.values())
    assert measured >= 5, f"{built.name}: the captioned tables are found on the pages ({widths})"
    assert not unequal_widths(widths), f"{built.name}: tables of one section at different widths"


def wrapped_names(page: Page, colour: tuple[int, int, int], names: set[str]) -> list[str]:
    """The short column names of ``names`` (squeezed) printed over two lines in a header row of
    the page: a piece of a cell on one line and the rest right under it, in the same column."""
    found = []
    for left, bottom, right, top in header_rows(page, colour):
        inside = [c for c in page.chars if left <= c.left and c.right <= right and bottom <= c.bottom <= top]
        pieces = [(line, _pieces(line)) for line in lines_of(inside)]
        for (_upper, above), (_lower, below) in itertools.pairwise(pieces):
            for a_text, a_left, a_right in above:
                for b_text, b_left, b_right in below:
                    if b_left < a_right and a_left < b_right and a_text + b_text in names:
                        found.append(a_text + b_text)
    return found


def _pieces(line: list[Char]) -> list[tuple[str, float, float]]:
    """A line of a header row cut into its cells' texts where the gap between characters is wider
    than a space: text, left and right."""
    pieces: list[list[Char]] = []
    for c in line:
        if pieces and c.left - pieces[-1][-1].right < 6.0:
            pieces[-1].append(c)
        else:
            pieces.append([c])
    return [("".join(c.text for c in p), p[0].left, p[-1].right) for p in pieces]


def short_column_names(html: str) -> set[str]:
    root = tinyhtml5.parse(html, namespace_html_elements=False)
    names = {" ".join("".join(th.itertext()).split()) for th in root.iter("th")}
    return {squeeze(n) for n in names if " " in n and len(n) <= SHORT_NAME}


def test_a_short_column_name_is_never_wrapped(built: Built) -> None:
    names = short_column_names(built.html)
    # NetApp tests one server; the ESRP 4.0 form (Dell EMC) prints one table per server, headed
    # by the figure's name and "Value": no table of theirs has a column per server.
    assert any(n.startswith("Server") for n in names) or built.name in {"netapp", "dellemc"}, names
    assert names, f"{built.name}: the short column names are found"
    colour = primary_colour(built.html)
    wrapped = {page.number: found for page in built.pages if (found := wrapped_names(page, colour, names))}
    assert not wrapped, f"{built.name}: short column names wrapped, by page: {wrapped}"


def _tables_page(style: str, tables: str) -> tuple[str, list[Page]]:
    """A made-up page of the document's print style: a section's heading and ``tables``."""
    html = f"<html><style>{style}</style><body><h2>Storage performance results</h2>{tables}</body></html>"
    return html, read_pages(HTML(string=html).write_pdf())


def _summary(caption: str, columns: int, cls: str = "summary") -> str:
    head = "".join(f"<th>Server {n}</th>" for n in range(1, columns + 1))
    row = "".join(f'<td class="num">{1_400 + n:,.3f}</td>' for n in range(columns))
    return (
        f'<table class="{cls}"><caption>{caption}</caption><thead><tr><th>Database I/O</th>'
        f"<th>Target values</th>{head}</tr></thead><tbody><tr><td>Achieved transactional I/O per sec</td>"
        f"<td>1,400</td>{row}</tr><tr><td>Log writes/sec</td><td>N/A</td>{row}</tr></tbody></table>"
    )


def test_the_width_check_sees_a_table_narrower_than_its_neighbour() -> None:
    style = print_style()
    html, pages = _tables_page(style, _summary("Five servers", 5) + _summary("Two servers", 2))
    widths = table_widths(pages, html, MARGINS)
    assert set(widths["Storageperformanceresults"]) == {"Fiveservers", "Twoservers"}
    assert not unequal_widths(widths)
    # The same two tables, the second one not of the document's own kinds: as wide as its columns.
    html, pages = _tables_page(style, _summary("Five servers", 5) + _summary("Two servers", 2, cls="plain"))
    assert unequal_widths(table_widths(pages, html, MARGINS))


def test_the_wrap_check_sees_server_10_over_two_lines() -> None:
    style = print_style()
    colour = primary_colour(style)
    # Ten servers' names where nothing keeps a short name whole: "Server" over "10".
    html, pages = _tables_page(style, _summary("Ten servers", 10, cls="plain"))
    names = short_column_names(html)
    assert {"Server1", "Server10"} <= names
    assert "Server10" in [name for page in pages for name in wrapped_names(page, colour, names)]
    html, pages = _tables_page(style, _summary("Five servers", 5))
    assert not any(wrapped_names(page, colour, names) for page in pages)


def _words(element: Any) -> str:
    return squeeze("".join(element.itertext()))


def repeated_titles(html: str) -> list[str]:
    """The headings said again by the caption of the table or figure right under them (the
    caption's "Table N" label aside)."""
    root = tinyhtml5.parse(html, namespace_html_elements=False)
    found = []
    for parent in root.iter():
        children = [c for c in parent if isinstance(c.tag, str)]
        for heading, after in itertools.pairwise(children):
            if heading.tag not in ("h1", "h2", "h3", "h4", "h5", "h6"):
                continue
            caption = after.find("caption") if after.tag == "table" else after.find("figcaption")
            if caption is None:
                continue
            label = caption.find("span")
            said = _words(caption).removeprefix(_words(label) if label is not None else "")
            if said == _words(heading):
                found.append(" ".join("".join(heading.itertext()).split()))
    return found


def test_no_heading_is_repeated_as_its_caption(built: Built) -> None:
    assert not repeated_titles(built.html), f"{built.name}: headings repeated as captions"
    # The captions that stand in for the headings are bookmarked as the headings were.
    assert built.pdf is not None
    outline = {" ".join(title.split()) for title in outline_titles(PdfReader(built.pdf).outline)}
    root = tinyhtml5.parse(built.html, namespace_html_elements=False)
    standing_in = [
        " ".join("".join(c.itertext()).split())
        for c in root.iter("caption")
        if (c.get("class") or "").startswith("heading-")
    ]
    # The 3.0 form's captions stand in for the headings they repeated; the ESRP 4.0 form (Dell EMC)
    # heads its tables by numbered sections and captions them "Table N ...", as seed 002 does.
    assert standing_in or built.name == "dellemc", f"{built.name}: captions stand in for headings"
    assert all(title in outline for title in standing_in), (
        f"{built.name}: captions missing from the bookmarks: {set(standing_in) - outline}"
    )


def outline_titles(items: list[Any]) -> list[str]:
    """Every bookmark's title, nested ones too."""
    return [t for item in items for t in (outline_titles(item) if isinstance(item, list) else [item.title])]


def test_the_repeat_check_sees_a_heading_said_again_by_its_caption() -> None:
    table = "<table><caption><span>Table 5</span> Individual server metrics</caption></table>"
    assert repeated_titles(f"<h3>Individual server metrics</h3>{table}") == ["Individual server metrics"]
    assert repeated_titles(f"<h2>Storage performance results</h2>{table}") == []
    figure = "<figure><img alt=''><figcaption>IOPS per server</figcaption></figure>"
    assert repeated_titles(f"<h3>IOPS per server</h3>{figure}") == ["IOPS per server"]


def chart_titles(figure: Any) -> list[str]:
    """The titles a matplotlib figure draws over its plots."""
    return [t for ax in figure.axes for loc in ("left", "center", "right") if (t := ax.get_title(loc=loc))]


def test_a_captioned_chart_draws_no_title_of_its_own() -> None:
    """A chart of the results summary is named by its figure's caption (``CHART_CAPTIONS``): a
    title drawn over the plot said it a second time ("Achieved vs target transactional IOPS" over
    "Figure 1 Achieved and target transactional IOPS per server")."""
    assert set(CHART_CAPTIONS) == {"achieved", "split"}, "a new captioned chart is checked here too"
    labels = ["Server 1", "Server 2"]
    drawn = {
        "achieved": charts.achieved_vs_target_figure(labels, [1424.4, 1448.5], [1400.0, 1400.0]),
        "split": charts.iops_split_figure(
            labels, {"transactional": [1424.4, 1448.5], "log writes": [487.7, 499.6]}
        ),
    }
    try:
        assert {kind: chart_titles(figure) for kind, figure in drawn.items()} == {"achieved": [], "split": []}
        drawn["achieved"].axes[0].set_title("Achieved vs target transactional IOPS", loc="left")
        assert chart_titles(drawn["achieved"]) == ["Achieved vs target transactional IOPS"]
    finally:
        for figure in drawn.values():
            figure.clear()


# A figure of the document's own tables: its text, grouped in thousands or not, and its decimals.
_FIGURE = re.compile(r"^-?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?:\s*(?:%|GB|TB|MB|ms|msec))?$")


def number_formats(html: str) -> dict[str, set[tuple[str, int]]]:
    """Per quantity, the ways the document's own tables print it: ("grouped" or "plain" for a
    figure of four digits or more before the point, else "short"; decimals). A quantity is a row's
    label in a table whose rows are quantities (its first cell; its target another), else the
    column's heading. Left out: a vendor's own table (``vendor-table``), the vendor's text as
    written ("HBA queue depth 2048" is a setting, not a figure of the evidence), and the appendix's
    tables, which reproduce Jetstress' reports as Jetstress prints them."""
    root = tinyhtml5.parse(html, namespace_html_elements=False)
    formats: dict[str, set[tuple[str, int]]] = {}
    for table in root.iter("table"):
        if {"appendix-table", "vendor-table"} & set((table.get("class") or "").split()):
            continue
        headings = [" ".join("".join(th.itertext()).split()) for th in table.iter("th")]
        by_rows = "summary" in (table.get("class") or "") or "kv" in (table.get("class") or "")
        for row in table.iter("tr"):
            cells = [" ".join("".join(td.itertext()).split()) for td in row.findall("td")]
            for index, text in enumerate(cells[1:] if by_rows else cells, start=1 if by_rows else 0):
                figure = _FIGURE.match(text.split(" (")[0])
                if figure is None:
                    continue
                whole, decimals = figure.group(1), figure.group(2) or ""
                digits = len(whole.replace(",", ""))
                grouping = "short" if digits < 4 else ("grouped" if "," in whole else "plain")
                heading = headings[index] if index < len(headings) else ""
                # A target is a quantity of its own: "1,400" beside the achieved "1,424.414".
                quantity = (
                    f"{cells[0]} ({heading})" if by_rows and "target" in heading.casefold() else cells[0]
                )
                quantity = quantity if by_rows else heading
                formats.setdefault(quantity, set()).add((grouping, len(decimals)))
    return formats


def mixed_formats(formats: dict[str, set[tuple[str, int]]]) -> dict[str, set[tuple[str, int]]]:
    """The quantities printed more than one way, and the document's long figures when some are
    grouped in thousands and some not."""
    mixed = {q: f for q, f in formats.items() if len({d for _, d in f}) > 1}
    groupings = {g for f in formats.values() for g, _ in f} - {"short"}
    if len(groupings) > 1:
        mixed["(thousands separators)"] = {(g, -1) for g in groupings}
    return mixed


def test_every_quantity_prints_one_way(built: Built) -> None:
    formats = number_formats(built.html)
    assert len(formats) >= 8, f"{built.name}: the tables' figures are found ({sorted(formats)})"
    assert not mixed_formats(formats), f"{built.name}: figures printed more than one way"


def test_the_number_check_sees_a_figure_without_its_thousands_separator() -> None:
    def table(*values: str) -> str:
        rows = "".join(f'<tr><td>Server {i}</td><td class="num">{v}</td></tr>' for i, v in enumerate(values))
        return f"<table><thead><tr><th>Server</th><th>Value</th></tr></thead><tbody>{rows}</tbody></table>"

    assert not mixed_formats(number_formats(table("1,424.414", "127,398.241 (report.html)", "18.547")))
    assert "(thousands separators)" in mixed_formats(number_formats(table("1,424.414", "127398.241")))
    assert "Value" in mixed_formats(number_formats(table("1,424.414", "18.55")))
