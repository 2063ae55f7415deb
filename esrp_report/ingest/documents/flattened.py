"""Tables flattened onto one line: a PDF's or a paste's rows run together ("Database reads/sec N/A
877.436 891.734 Database writes/sec N/A 546.977 556.801 ..."). Such a line is cut back into its
rows where two or more labels of the summary vocabulary each head a run of figures; the rows keep
the line's number. A line where fewer labels are known is left as it is (and, holding figures no
reader took, is listed as not read)."""

from __future__ import annotations

import re

from esrp_report.ingest.documents.cells import clean_line
from esrp_report.ingest.documents.matching import fuzzy_key
from esrp_report.ingest.documents.vocabulary import SUMMARY_METRICS
from esrp_report.model import DocLine

# A label (no figure inside it, a unit in parentheses allowed) then its values: figures, "N/A",
# targets such as "< 20 msec" or "<10 msec**".
_VALUE = r"(?:N/A|[<>]=?\s*\d+(?:\.\d+)?\s*(?:msec|ms)?\**|[-+]?(?:\d{1,3}(?:,\d{3})+|\d*)\.?\d+%?)"
_SEGMENT = re.compile(
    r"(?P<label>[A-Za-z][^\d<>|\t]*?)\s+(?P<values>"
    + _VALUE
    + r"(?:\s+"
    + _VALUE
    + r")*)(?=\s+[A-Za-z]|\s*$)"
)
_FIGURE = re.compile(r"\d")
_MIN_FIGURES = 4  # two rows of at least two figures
_MIN_ROWS = 2
# The last word of every summary label ("reads/sec", "latency", "transfers/sec"): a flattened
# table line holds two of them, and a line that does not is passed over before any regex runs.
_ANCHORS = frozenset(label.rsplit(" ", 1)[-1] for label in SUMMARY_METRICS)
_MAX_CHARS = 4000


def unflatten(lines: list[DocLine]) -> list[DocLine]:
    """The lines, with each flattened table line cut into its rows."""
    out: list[DocLine] = []
    for line in lines:
        rows = _rows(line)
        if rows is None:
            out.append(line)
        else:
            out.extend(rows)
    return out


def _rows(line: DocLine) -> list[DocLine] | None:
    text = line.text
    if len(text) > _MAX_CHARS or "\t" in line.raw or "|" in line.raw:
        return None
    if sum(1 for word in text.casefold().split() if word in _ANCHORS) < _MIN_ROWS:
        return None
    if len(_FIGURE.findall(text)) < _MIN_FIGURES:
        return None
    segments = list(_SEGMENT.finditer(text))
    if len(segments) < _MIN_ROWS or segments[0].start() > 0:
        return None
    rows = [_known_row(s.group("label")) for s in segments]
    if sum(1 for _label, known in rows if known) < _MIN_ROWS:
        return None
    return [
        clean_line(DocLine(line.no, f"{label} {s.group('values')}", page=line.page))
        for (label, _k), s in zip(rows, segments, strict=True)
    ]


def _known_row(label: str) -> tuple[str, bool]:
    """The row's label, without words of a section title run into it ("Transaction log I/O Log
    writes/sec" -> "Log writes/sec"), and whether the vocabulary knows it."""
    words = label.split()
    for start in range(len(words) - 1):
        candidate = " ".join(words[start:])
        if fuzzy_key(candidate, SUMMARY_METRICS) is not None:
            return candidate, True
    return label, False
