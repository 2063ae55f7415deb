"""A PDF's lines as the audit reads them (``ingest/documents/pdf.py``): a table split over pages
prints its header row again over its rows on the next page; the repeat is dropped, so the rows
after it stay the table's. Laid out by WeasyPrint with a repeated ``thead``, as our documents are."""

from __future__ import annotations

from weasyprint import HTML

from esrp_report.ingest.documents.pdf import pdf_lines

HEADER = ("MSExchange Database ==> Instances", "I/O Log Reads/sec", "I/O Log Reads Average Bytes")


def _split_table(rows: int, *, header_words_a_line: bool = False) -> bytes:
    width = "4em" if header_words_a_line else "auto"  # narrow columns wrap the header a word a line
    head = "".join(f'<th style="width: {width}">{h}</th>' for h in HEADER)
    body = "".join(
        f"<tr><td>Instance2756.{n}</td><td>0.{460 + n}</td><td>{175_000 + n * 1.5:.3f}</td></tr>"
        for n in range(1, rows + 1)
    )
    html = (
        "<style>@page { size: A6; margin: 10mm } thead { display: table-header-group } "
        "tr { break-inside: avoid }</style><h4>Log Replication I/O Performance</h4>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table><p>After the table.</p>"
    )
    return HTML(string=html).write_pdf()


def test_a_header_row_repeated_on_the_next_page_is_read_once() -> None:
    pdf = _split_table(40)
    lines = [line.raw.strip() for line in pdf_lines(pdf, "split.pdf")]
    pages = {line.page for line in pdf_lines(pdf, "split.pdf")}
    assert len(pages) > 1, "the table is split over pages"
    assert sum(1 for line in lines if line.startswith("MSExchange")) == 1, lines
    rows = [line for line in lines if line.startswith("Instance2756.")]
    assert len(rows) == 40
    assert lines.index(rows[0]) < lines.index(rows[-1])


def test_a_header_wrapped_a_word_a_line_repeated_is_read_once() -> None:
    pdf = _split_table(40, header_words_a_line=True)
    lines = [line.raw.strip() for line in pdf_lines(pdf, "split.pdf")]
    assert sum(1 for line in lines if line.startswith("MSExchange")) == 1, lines
    assert len([line for line in lines if line.startswith("Instance2756.")]) == 40


def test_the_next_table_at_the_top_of_a_page_is_kept() -> None:
    """A table that ends on the page before, and the next one starting a page with its heading and
    its own header: nothing is dropped."""
    rows = "".join(f"<tr><td>Instance{n}</td><td>{n}.5</td></tr>" for n in range(1, 30))

    def table(heading: str, column: str, style: str = "") -> str:
        return (
            f"<h4 style='{style}'>{heading}</h4><table><thead><tr><th>Instances</th><th>{column}</th></tr>"
            f"</thead><tbody>{rows}</tbody></table>"
        )

    html = (
        "<style>@page { size: A6; margin: 10mm } thead { display: table-header-group }</style>"
        + table("Transactional I/O Performance", "Reads/sec")
        + table("Total I/O Performance", "Writes/sec", "break-before: page")
    )
    lines = [line.raw.strip() for line in pdf_lines(HTML(string=html).write_pdf(), "two.pdf")]
    assert "Total I/O Performance" in lines
    assert lines.count("Instances Writes/sec") == 1
    assert lines.count("Instances Reads/sec") == 1
    assert len([line for line in lines if line.startswith("Instance") and line[8:9].isdigit()]) == 58


TITLE = "Contoso Example 14,000 Mailbox Exchange 2016 Resiliency Storage Solution"


def _titled_pages(break_row: int) -> bytes:
    """Four sections a page each, then a table split over two pages, under a running title that
    names the page's section as the ESRP 4.0 form's does ("<title> 4 Test results summary")."""
    sections = "".join(
        f"<h1 style='break-before: page; string-set: section content()'>{n} Section {n}</h1><p>Text {n}.</p>"
        for n in range(1, 5)
    )
    new_page = " style='break-before: page'"
    rows = "".join(
        f"<tr{new_page if n == break_row else ''}><td>Database Disks Reads/sec {n}</td><td>{300 + n}.125</td></tr>"
        for n in range(1, 9)
    )
    html = (
        "<style>@page { size: A4; margin: 20mm; @top-left { content: '"
        + TITLE
        + "'; font-size: 7pt } @top-right { content: string(section, start); font-size: 7pt } } thead { display: table-header-group }</style>"
        + sections
        + "<p>Table 7 Server 3 test results</p>"
        + f"<table><thead><tr><th>Database I/O</th><th>Value</th></tr></thead><tbody>{rows}</tbody></table>"
    )
    return HTML(string=html).write_pdf()


def test_a_running_title_that_names_the_section_is_left_out_and_a_split_table_stays_whole() -> None:
    lines = [line.raw.strip() for line in pdf_lines(_titled_pages(5), "titled.pdf")]
    assert not [line for line in lines if line.startswith(TITLE)], lines
    at = lines.index("Database I/O Value")
    rows = [line for line in lines if line.startswith("Database Disks Reads/sec")]
    assert len(rows) == 8
    # The rows follow the header without a break: nothing between them but the rows.
    assert lines[at + 1 : at + 9] == rows, lines[at:]
    assert lines.count("Database I/O Value") == 1


def test_a_line_at_the_page_edges_that_only_starts_alike_is_not_taken_for_a_title() -> None:
    """A row whose long label (past the 48 characters a title shares) repeats at the foot of
    every page, with a different figure each time, goes on with a figure, not a section's name:
    it is kept."""
    label = "Average Database Disk Read Latency (ms) across all instances"
    assert len(label) > 48
    html = "<style>@page { size: A4; margin: 10mm }</style>" + "".join(
        f"<p style='break-before: page'>Page text {n}.</p><p style='margin-top: 250mm'>{label} {17 + n}.504</p>"
        for n in range(1, 7)
    )
    lines = [line.raw.strip() for line in pdf_lines(HTML(string=html).write_pdf(), "rows.pdf")]
    assert len([line for line in lines if line.startswith(label)]) == 6, lines


def test_a_text_copied_out_of_a_pdf_is_read_by_its_pages() -> None:
    """A text a viewer or converter made of a PDF keeps each page's "Page n of N" line: its pages
    are found by them, and its running title, footer and a split table's repeated header are left
    out as the PDF reader leaves them out; the lines keep their numbers in the text."""
    from esrp_report.ingest.documents.lines import document_lines

    header = "MSExchange Database ==> Instances I/O Log Reads/sec"
    page = [f"{TITLE} Appendix A", "Contoso Page {n} of 4"]
    text_rows = [f"Instance2908.{k} 0.44{k}" for k in range(1, 9)]
    parts = ["Intro", *page[:1], page[1].format(n=1), "Text", *page[:1], page[1].format(n=2)]
    parts += ["Log Replication I/O Performance", header, *text_rows[:4], *page[:1], page[1].format(n=3)]
    parts += [header, *text_rows[4:], "After", *page[:1], page[1].format(n=4)]
    lines, kind = document_lines("\n".join(parts).encode(), "copied.txt")
    assert kind == "text"
    raws = [line.raw for line in lines]
    assert not [r for r in raws if r.startswith((TITLE, "Contoso Page"))], raws
    at = raws.index(header)
    assert raws[at + 1 : at + 9] == text_rows and raws.count(header) == 1
    # Line numbers are the text's own.
    assert [line.no for line in lines if line.raw == "After"] == [parts.index("After") + 1]
    # Without page-number lines nothing is dropped.
    plain, _ = document_lines("\n".join([header, *text_rows, header]).encode(), "plain.txt")
    assert len(plain) == 10
