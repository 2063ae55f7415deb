"""Captions, lists of tables and figures, and the table of contents' page numbers (issue 22, item 2).

The numbers are checked against the built VMAX document: the same "Table N" / "Figure N" in the
screen HTML and the PDF, and every entry of the PDF's contents and lists names a page on which its
heading or caption is printed, the servers' appendices (laid out as separate pieces) included.
"""

from __future__ import annotations

import functools
import itertools
import re
from pathlib import Path

import pypdfium2 as pdfium

from esrp_report.render.html import CAPTION_LISTS_MARKER, number_captions
from esrp_report.render.pdf import _leader_dots

ENTRY = re.compile(r"^(?P<title>.*?)\s*(?:\.\s*){3,}(?P<page>\d+)$")
CAPTION_LINE = re.compile(r"^(?:Table|Figure) \d+ ")


def _page_lines(page: pdfium.PdfPage) -> list[str]:
    """The page's lines as a reader sees them: its characters grouped by line (their loose boxes,
    the font's full height, share a middle on a line), left to right. The page numbers written in
    after the pieces are joined come last in the page's content, so the text in content order
    would not put them beside their entries."""
    textpage = page.get_textpage()
    chars = []
    for i in range(textpage.count_chars()):
        char = textpage.get_text_range(i, 1)
        if char not in "\r\n":
            left, bottom, _right, top = textpage.get_charbox(i, loose=True)
            chars.append(((bottom + top) / 2, left, char))
    lines: list[tuple[float, list[tuple[float, str]]]] = []
    for middle, left, char in sorted(chars, key=lambda c: (-round(c[0]), c[1])):
        if lines and abs(lines[-1][0] - middle) < 2:
            lines[-1][1].append((left, char))
        else:
            lines.append((middle, [(left, char)]))
    return [" ".join("".join(c for _, c in sorted(parts)).split()) for _, parts in lines]


@functools.cache
def _pdf_pages(path: Path) -> list[list[str]]:
    """Every page's lines (read once: the tests share the session's build)."""
    document = pdfium.PdfDocument(path)
    try:
        return [_page_lines(document[i]) for i in range(len(document))]
    finally:
        document.close()


def _contents(pages: list[list[str]]) -> list[tuple[str, int]]:
    """Every entry with leader dots on the contents page(s): (title, page number)."""
    first = next(i for i, lines in enumerate(pages) if "Table of contents" in lines)
    entries = []
    for lines in pages[first : first + 2]:
        entries += [(m["title"], int(m["page"])) for line in lines if (m := ENTRY.match(line))]
    return entries


def test_captions_are_numbered_in_order_and_listed() -> None:
    html = (
        f"<nav>{CAPTION_LISTS_MARKER}</nav>"
        "<table><caption>Simulated <b>Exchange</b> configuration</caption></table>"
        '<figure id="f"><svg></svg><figcaption id="mine">Achieved &amp; target</figcaption></figure>'
        '<table>\n<caption data-id="x">Storage\n hardware</caption></table>'
        '<h1 id="appendix">Appendix</h1><table><caption>Not numbered</caption></table>'
    )
    numbered, captions = number_captions(html)
    assert [c.label for c in captions] == [
        "Table 1 Simulated Exchange configuration",
        "Figure 1 Achieved &amp; target",
        "Table 2 Storage hardware",
    ]
    assert [c.anchor for c in captions] == ["tbl-1", "mine", "tbl-2"]
    assert '<caption id="tbl-1"><span class="caption-number">Table 1</span> Simulated <b>' in numbered
    assert '<figcaption id="mine"><span class="caption-number">Figure 1</span> Achieved' in numbered
    assert "<caption>Not numbered</caption>" in numbered  # the appendix keeps its own
    assert '<li><a href="#tbl-2">Table 2 Storage hardware</a></li>' in numbered
    assert numbered.index("List of tables") < numbered.index("List of figures") < numbered.index("</nav>")
    assert CAPTION_LISTS_MARKER not in numbered


def test_a_document_without_figures_has_no_list_of_figures() -> None:
    numbered, captions = number_captions(f"{CAPTION_LISTS_MARKER}<table><caption>Only</caption></table>")
    assert [c.label for c in captions] == ["Table 1 Only"]
    assert "List of tables" in numbered
    assert "List of figures" not in numbered


def test_the_html_and_the_pdf_number_the_same_captions(vmax_build: Path) -> None:
    html = (vmax_build / "vmax.html").read_text(encoding="utf-8")
    body = html[: html.index('<h1 id="appendix"')]
    in_html = [
        " ".join(re.sub(r"<[^>]+>", "", m.group(1)).split())
        for m in re.finditer(r"<(?:caption|figcaption)\b[^>]*>(.*?)</(?:caption|figcaption)>", body, re.S)
    ]
    tables = [c for c in in_html if c.startswith("Table ")]
    figures = [c for c in in_html if c.startswith("Figure ")]
    assert [int(c.split()[1]) for c in tables] == list(range(1, len(tables) + 1))
    assert [int(c.split()[1]) for c in figures] == list(range(1, len(figures) + 1))
    assert tables[0] == "Table 1 Simulated Exchange configuration"
    assert len(tables) >= 10 and len(figures) == 2
    assert 'class="caption-number"' not in html[len(body) :]  # the appendix has no numbered captions

    pages = _pdf_pages(vmax_build / "vmax.pdf")
    contents_page = next(i for i, lines in enumerate(pages) if "Table of contents" in lines)
    in_pdf = [line for lines in pages[contents_page + 1 :] for line in lines if CAPTION_LINE.match(line)]
    assert in_pdf == in_html


def test_every_contents_entry_names_the_page_its_heading_is_on(vmax_all_build: Path) -> None:
    pages = _pdf_pages(vmax_all_build / "vmax.pdf")
    entries = _contents(pages)
    titles = [title for title, _ in entries]
    servers = [t for t in titles if re.fullmatch(r"Server \d+ \(EMAIL\d+\)", t)]
    assert len(servers) == 10  # every appendix server has its number
    assert "Appendix A: Test reports" in titles and "Overview" in titles
    assert sum(t.startswith("Table ") for t in titles) >= 10
    assert sum(t.startswith("Figure ") for t in titles) == 2
    for title, number in entries:
        # A server's heading reads "Server 1 (EMAIL2): Pass", and its test reports' headings start
        # the same: the entry must name the first page that has one.
        server = title in servers
        here = [
            line for line in pages[number - 1] if (line.startswith(f"{title}: ") if server else line == title)
        ]
        assert here, f"{title!r} is not printed on page {number}"
        if server:
            before = [
                line for lines in pages[: number - 1] for line in lines if line.startswith(f"{title}: ")
            ]
            assert not before, f"{title!r} is printed before page {number}"
    server_pages = [number for title, number in entries if title in servers]
    assert server_pages == sorted(server_pages) and server_pages[-1] < len(pages)


def test_a_server_entry_reads_like_the_others(vmax_all_build: Path) -> None:
    """Its number sits at the right margin with the others and its leader dots run evenly into
    it, as WeasyPrint's own do: no gap where the slot began."""
    document = pdfium.PdfDocument(vmax_all_build / "vmax.pdf")
    try:
        textpage = document[1].get_textpage()
        chars = [
            (textpage.get_text_range(i, 1), textpage.get_charbox(i, loose=True))
            for i in range(textpage.count_chars())
        ]
    finally:
        document.close()
    text = "".join(c for c, _ in chars)
    row = chars[text.index("Server 1 (EMAIL2)")][1]
    on_row = sorted((box[0], box[2], c) for c, box in chars if abs(box[1] - row[1]) < 1.5 and c.strip())
    dots = [left for left, _, c in on_row if c == "."]
    steps = [b - a for a, b in itertools.pairwise(dots)]
    assert len(dots) > 50 and max(steps) - min(steps) < 0.05
    overview = chars[text.index("Overview")][1]
    weasyprint_edge, written_edge = (
        max(box[2] for c, box in chars if abs(box[1] - y) < 1.5 and c.isdigit())
        for y in (overview[1], row[1])
    )
    # the same right edge as a number WeasyPrint wrote (to a hundredth of a point)
    assert abs(weasyprint_edge - written_edge) < 0.01, (weasyprint_edge, written_edge)


def test_leader_dots_continue_the_leader_and_stop_before_the_number() -> None:
    # A slot of 8 dots' width from 100 to 125.44, a 2-digit number 12.72 wide at its right end.
    count, first = _leader_dots(100.0, 125.44, 125.44 - 12.72, 3.18)
    assert abs(first - (125.44 - 3.18 * 9)) < 1e-6  # the cell ending at the slot's left edge
    # Cells 6 to 9 from the right: 1 to 4 lie under the number, 5 ends at it and is left out.
    assert count == 4
    assert _leader_dots(100.0, 112.72, 100.0, 3.18)[0] == 0
