"""A document's structure rebuilt from its lines: one pass per kind of structure, in this order.

First, tables flattened onto one line are cut into their rows (``flattened.py``) and figures cut
at a row's end are joined to their rest or marked unread (``cut.py``). Last, the lines whose
figures none of them took are told by their form (``layout.py``).
Where each lives: the appendix's test reports (``appendix.py``: cut first, so that the passes
over the summary, facts and formulas leave their lines alone), summary tables (``tables.py``),
label/value facts and the stated ESRP version (``facts.py``), trend tables and test series
(``trends.py``), worked formulas (``formulas.py``), figures stated together in a sentence
(``prose.py``).
"""

from __future__ import annotations

from esrp_report.ingest.documents.appendix import name_machines, read_report, report_segments
from esrp_report.ingest.documents.cut import mend_cut_figures
from esrp_report.ingest.documents.facts import facts, stated_convention
from esrp_report.ingest.documents.flattened import unflatten
from esrp_report.ingest.documents.formulas import formulas
from esrp_report.ingest.documents.layout import classify
from esrp_report.ingest.documents.problems import problem
from esrp_report.ingest.documents.products import products
from esrp_report.ingest.documents.prose import prose_facts, prose_users
from esrp_report.ingest.documents.tables import summary_tables
from esrp_report.ingest.documents.trends import series, trend_tables
from esrp_report.ingest.documents.wrapped import join_wrapped
from esrp_report.model import PublishedDocument


def build(doc: PublishedDocument) -> None:
    """Fill ``doc`` from ``doc.lines``."""
    join_wrapped(doc)
    doc.lines = unflatten(doc.lines)
    mend_cut_figures(doc)
    segments = report_segments(doc.lines)
    in_report = {i for start, end, _title in segments for i in range(start, end)}
    doc.convention = stated_convention(doc.lines)
    summary_tables(doc, in_report)
    facts(doc, in_report)
    trend_tables(doc)
    formulas(doc, in_report)
    prose_users(doc, in_report)
    prose_facts(doc, in_report)
    series(doc)
    products(doc)
    for start, end, title in segments:
        read_report(doc, start, end, title)
    name_machines(doc)
    classify(doc, lines_read(doc))
    if not doc.summary_tables and not doc.trend_tables and not doc.formulas:
        problem(
            doc,
            "no per-server or aggregate summary table was found",
            "Test results summary",
            severity="note",
        )


def lines_read(doc: PublishedDocument) -> set[int]:
    """The numbers of the lines some reader took figures from (the audit's coverage counts the
    figures of the others as not read): a summary row, a figure an appendix report kept, a trend
    row, a fact, a formula, a series, a sentence read."""
    read = {row.line for table in doc.summary_tables for row in table.rows}
    read.update(n.line for r in doc.reports for n in r.cells.values())
    read.update(line for _label, line, _cells in (row for t in doc.trend_tables for row in t.rows))
    read.update(line for _key, _text, line in doc.all_facts)
    read.update(f.line for f in doc.formulas)
    read.update(s.line for s in doc.series)
    read.update(p.line for p in doc.prose_users)
    read.update(p.result.line for p in doc.products)
    read.update(p.line for p in doc.prose_facts)
    return read
