"""Lines whose figures no reader took, told by their form when they are no results table: a table
of contents (dot leaders, page numbers), a date or a version (a title page), a caption ("Table 5
24-hour stress metrics for Server 1 through Server 5", or a list of tables' entry), column headings
naming servers ("Server 1 Server 2"), a chart's text (an axis's evenly spaced ticks and the
legend above them), prose wrapped at a figure, a figure quoted with the file it was read from
(the evidence notes, on one line or with the file name wrapped onto the lines below). Each is
recorded as a note at its line, whose message the audit's coverage gives as the reason the block
was not read; never by a vendor's wording, only by the line's form.
"""

from __future__ import annotations

import re

from esrp_report.ingest.documents.cells import is_number, number
from esrp_report.ingest.documents.problems import problem
from esrp_report.ingest.documents.vocabulary import CAPTION
from esrp_report.model import DocLine, PublishedDocument

TABLE_OF_CONTENTS = "table of contents: a heading's page number"
DATE_OR_VERSION = "title page: a date or a version, not a result"
CAPTION_TEXT = "caption: a table's or figure's number and title"
SERVER_HEADINGS = "column headings: the figures are servers' numbers"
CHART_TEXT = "chart text: an axis's ticks and the chart's legend"
PROSE = "prose: a sentence wrapped at a figure"
QUOTED_SOURCE = "evidence notes: figures quoted with the file they were read from"
DISAGREEMENTS = "evidence notes: a figure as the report and as its counter log give it"
# The title esrp-report's appendix gives a report's disagreements with its counter log (rows of
# table, instance, figure, the report's value, the log's value): told by the title above them,
# since their form is a results row's.
_DISAGREEMENTS_TITLE = "where the report and its counter log disagree"
_DISAGREEMENT_ROWS = 2000

_DOT_LEADERS = re.compile(r"(?:\.\s?){4,}\s*\d+$")
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_DATE_OR_VERSION = re.compile(
    rf"(?:\b(?:{_MONTHS})\s+(?:19|20)\d\d|\bversion\s+\d+(?:\.\d+)*)$", re.IGNORECASE
)
_SERVER_NUMBER = re.compile(r"(?:server|host)\s*\d+", re.IGNORECASE)
_DIGITS = re.compile(r"\d")
_SOURCE_FILE = re.compile(r"\d\s*\([^()]*\.(?:html?|xml|csv|blg|txt|log)\)", re.IGNORECASE)
# The same when a narrow column wraps the file name apart from its figure: the name alone, over a
# few lines, in parentheses.
_WRAPPED_SOURCE = re.compile(r"^\([^()]*\.(?:html?|xml|csv|blg|txt|log)\)$", re.IGNORECASE)
_SOURCE_END = re.compile(r"\.(?:html?|xml|csv|blg|txt|log)\)$", re.IGNORECASE)
_WRAPPED_LINES = 4
# An axis has at least this many ticks; a legend is at most this many lines above them.
_TICKS, _LEGEND_LINES = 3, 2
_PROSE_WORDS = 10
_CAPTION_LENGTH = 160  # longer, it is a caption run into the text after it


def classify(doc: PublishedDocument, read: set[int]) -> None:
    """A note at each line of ``doc`` with figures in its cells that no reader took (its number not
    in ``read``) and whose form says what it is."""
    lines = doc.lines
    figured = [i for i, line in enumerate(lines) if line.no not in read and figures(line)]
    reasons: dict[int, str] = {}
    for start, end in _axes(lines):
        for i in range(max(start - _LEGEND_LINES, 0), end):
            if i >= start or _only_servers(lines[i].text):
                reasons[i] = CHART_TEXT
    for i, line in enumerate(lines):
        if line.text.strip().casefold() == _DISAGREEMENTS_TITLE:
            for j in range(i + 1, min(i + _DISAGREEMENT_ROWS, len(lines))):
                if lines[j].heading or (lines[j].cells and not figures(lines[j])):
                    break
                if figures(lines[j]):
                    reasons[j] = DISAGREEMENTS  # not an axis, whatever follows the table
    for i in figured:
        if i in reasons:
            continue
        reason = _form(lines, i)
        if reason:
            reasons[i] = reason
    for i in figured:
        if i in reasons:
            problem(doc, reasons[i], f"line {lines[i].no}", severity="note")


_FIGURE_START = frozenset("0123456789.-+")


def figures(line: DocLine) -> int:
    """How many of a row's cells after its label are printed numbers."""
    cells = line.cells
    if not cells:
        return 0
    return sum(1 for c in cells[1:] if c[:1] in _FIGURE_START and is_number(c))


def _form(lines: list[DocLine], i: int) -> str | None:
    line = lines[i]
    text = line.text
    if _DOT_LEADERS.search(text):
        return TABLE_OF_CONTENTS
    if _DATE_OR_VERSION.search(text):
        return DATE_OR_VERSION
    if len(text) <= _CAPTION_LENGTH and CAPTION.match(text):
        return CAPTION_TEXT
    if _only_servers(text):
        return SERVER_HEADINGS
    if _SOURCE_FILE.search(text) or _beside_wrapped_source(lines, i):
        return QUOTED_SOURCE
    cells = line.cells or []
    if len(cells) == 2 and len(cells[0].split()) >= _PROSE_WORDS and i + 1 < len(lines):
        after = lines[i + 1]
        # The sentence goes on: on the next line in lower case, or as the same source line.
        if after.no == line.no or (after.text[:1].islower() and not after.cells):
            return PROSE
    return None


def _beside_wrapped_source(lines: list[DocLine], i: int) -> bool:
    """Is line ``i`` a bare figure whose file name, in parentheses, is wrapped onto the lines after
    it, or the figure that follows such a name on its row (the difference beside the quoted pair)?"""
    cells = lines[i].cells or []
    if len(cells) != 2 or cells[0]:
        return False
    if i > 0 and not lines[i - 1].cells and _SOURCE_END.search(lines[i - 1].text):
        return True
    name = ""
    for line in lines[i + 1 : i + 1 + _WRAPPED_LINES]:
        if line.cells or not (name or line.text.startswith("(")):
            return False
        name += line.text.strip()  # wrapped inside the name: the pieces join without a space
        if ")" in line.text:
            return bool(_WRAPPED_SOURCE.match(name))
    return False


def _only_servers(text: str) -> bool:
    """Is every figure of the line the number of a server or host it names ("Server 1Server 2")?"""
    return bool(_SERVER_NUMBER.search(text)) and not _DIGITS.search(_SERVER_NUMBER.sub(" ", text))


def _axes(lines: list[DocLine]) -> list[tuple[int, int]]:
    """Runs [start, end) of at least ``_TICKS`` lines that are each one bare figure, evenly spaced
    and rising: an axis's tick labels."""
    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        first = _tick(lines[i])
        if first is None:
            i += 1
            continue
        values = [first]
        j = i + 1
        while j < len(lines) and (value := _tick(lines[j])) is not None:
            step = values[1] - values[0] if len(values) > 1 else value - values[0]
            if step <= 0 or abs(value - values[-1] - step) > 1e-9 * max(abs(value), 1.0):
                break
            values.append(value)
            j += 1
        if len(values) >= _TICKS:
            runs.append((i, j))
        i = max(j, i + 1)
    return runs


def _tick(line: DocLine) -> float | None:
    cells = line.cells
    if not cells or len(cells) != 2 or cells[0]:
        return None
    figure = number(cells[1])
    return None if figure is None or figure.percent else figure.value
