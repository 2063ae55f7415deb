"""What the audit's verdict rests on: for every table read, how many of its printed numbers some
evaluated relation uses and how many it vouches for down to their last digit; and every block of
figures that no reader took, with its lines.

A number's **guard** is the least change sure to break a relation that holds and uses it
(``Evaluated.slack`` divided by its coefficient there). It is **vouched for** to its last digit
when the guard is smaller than one unit of that digit: then any change of any of its digits is
an error somewhere. A number whose relations all fail already, or that only bounds a relation
on one side, takes part but is vouched for by none (guard infinite).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from functools import cache

from esrp_report.audit.context import Evaluated
from esrp_report.audit.result import (
    CellKey,
    Coverage,
    TableCoverage,
    UnreadBlock,
    cell_key,
    coverage_settings,
)
from esrp_report.ingest.documents.layout import figures
from esrp_report.ingest.documents.structure import lines_read
from esrp_report.model import DocNumber, PublishedDocument

_LINE = re.compile(r"\bline (\d+)")
MAX_UNREAD_BLOCKS = 1000  # listed one by one; any more are counted
# A relation's slack is a sum of half units: one unit of the last digit equals it exactly when
# nothing else widens it, and such a change need not break it.
_MARGIN = 1e-6


def guards(evaluated: Iterable[Evaluated]) -> dict[CellKey, float]:
    """Every printed number an evaluated relation used, with its guard."""
    out: dict[CellKey, float] = {}
    for record in evaluated:
        holds = record.excess == 0.0 and not record.findings
        for number, coefficient in record.cells:
            guard = record.slack / abs(coefficient) if holds and coefficient else math.inf
            k = cell_key(number)
            out[k] = min(out.get(k, math.inf), guard)
    return out


def vouched(number: DocNumber, guard: float) -> bool:
    """Does any change of any of its printed digits break a relation that holds?"""
    return vouches(-number.decimals, guard)


def vouches(place: int, guard: float) -> bool:
    """Does any change of a digit in this place (10**place is its unit) break a relation that
    holds, the number's guard being ``guard``?"""
    return 10.0**place > guard * (1 + _MARGIN)


def _tables(doc: PublishedDocument) -> Iterator[tuple[str, int, int, list[DocNumber]]]:
    for table in doc.summary_tables:
        numbers = [n for row in table.rows for n in row.values if n is not None and n.placed]
        last = max((row.line for row in table.rows), default=table.first_line)
        title = f"{table.kind} table ({table.test.value}): {', '.join(table.columns)}"
        yield title, table.first_line, last, numbers
    for report in doc.reports:
        yield (
            f"appendix report '{report.title}'",
            report.first_line,
            report.last_line,
            list(report.cells.values()),
        )
    facts = [(n, line) for _key, text, line in doc.all_facts if (n := DocNumber.leading(text)) is not None]
    if facts:
        first, last = min(line for _n, line in facts), max(line for _n, line in facts)
        yield "configuration facts", first, last, [n.at(line, 1) for n, line in facts]
    for trend in doc.trend_tables:
        numbers = [n for _label, _line, cells in trend.rows for c in cells for n in (c.percent, c.absolute)]
        last = max((line for _label, line, _cells in trend.rows), default=trend.first_line)
        yield f"trend table '{trend.title}'", trend.first_line, last, numbers


def coverage(doc: PublishedDocument, guarded: dict[CellKey, float]) -> Coverage:
    """Each table read with its counts, and each block of figures not read."""
    result = Coverage()
    read = lines_read(doc)
    numbers_of_lines = [line.no for line in doc.lines]  # ascending: each table's lines found by bisection
    for title, first, last, numbers in _tables(doc):
        unique = {cell_key(n): n for n in numbers if n.placed}
        # Figures printed on the lines a table was read from, placed in no cell of it: a row
        # wrapped or split where its reader lost figures. They count as figures not read.
        span = doc.lines[bisect_left(numbers_of_lines, first) : bisect_right(numbers_of_lines, last)]
        printed = sum(figures(line) for line in span if line.no in read)
        result.lost_in_tables += max(0, printed - len(unique))
        result.tables.append(
            TableCoverage(
                title=title,
                first_line=first,
                last_line=last,
                numbers=len(unique),
                checked=sum(1 for k in unique if k in guarded),
                vouched=sum(1 for k, n in unique.items() if k in guarded and vouched(n, guarded[k])),
            )
        )
    for block in _unread_blocks(doc, read):
        if len(result.unread) < MAX_UNREAD_BLOCKS:
            result.unread.append(block)
        else:  # a junk file is all blocks: they are counted, not kept
            result.more_unread_blocks += 1
            result.more_unread_numbers += block.numbers
    return result


def _unread_blocks(doc: PublishedDocument, read: set[int]) -> Iterator[UnreadBlock]:
    """Runs of table rows with figures that no reader took (a line between them may be text)."""
    reasons: dict[int, str] = {}
    for problem in doc.problems:
        found = _LINE.search(problem.location or "")
        if found:
            reasons.setdefault(int(found.group(1)), problem.message)
    block: list[tuple[int, int, str]] = []  # (line, numbers, text)
    gap = 0
    for line in doc.lines:
        count = figures(line) if line.no not in read else 0
        if count:
            block.append((line.no, count, line.text))
            gap = 0
            continue
        gap += 1
        if block and (gap > 1 or line.no in read or line.heading):
            yield _block(block, reasons)
            block = []
    if block:
        yield _block(block, reasons)


_NOT_READ = "no reader took these figures: their labels are in no vocabulary of results tables"


@cache
def _result_words() -> tuple[re.Pattern[str], float]:
    settings = coverage_settings()["results"]
    words = "|".join(re.escape(w) for w in settings["words"])
    return re.compile(rf"(?<![\w/])(?:{words})(?![\w/])", re.IGNORECASE), float(settings["figures_per_line"])


def _looks_like_results(block: list[tuple[int, int, str]]) -> bool:
    """Does a block no reader took hold results, by its words or by how dense in figures it is?"""
    words, dense = _result_words()
    if any(words.search(text) for _l, _n, text in block):
        return True
    return sum(n for _l, n, _t in block) / len(block) >= dense


def _block(block: list[tuple[int, int, str]], reasons: dict[int, str]) -> UnreadBlock:
    first, last = block[0][0], block[-1][0]
    known = next((reasons[n] for n in range(first, last + 1) if n in reasons), None)
    reason = known or _NOT_READ
    text = block[0][2]
    return UnreadBlock(
        first_line=first,
        last_line=last,
        numbers=sum(n for _l, n, _t in block),
        what=text if len(text) <= 70 else text[:67] + "...",
        reason=reason,
        results=known is None and _looks_like_results(block),
    )
