"""Label/value facts of the simulated configuration and storage tables (mailboxes, databases per
host, IOPS per mailbox, the host server, disks, capacities), and the ESRP version the document
states."""

from __future__ import annotations

from esrp_report.ingest.documents.cells import fact_label_and_value
from esrp_report.ingest.documents.matching import fuzzy_key, normalize
from esrp_report.ingest.documents.problems import problem
from esrp_report.ingest.documents.vocabulary import CONVENTION, FACT_PAIR_FIRST_WORDS, FACTS
from esrp_report.model import DocLine, DocNumber, PublishedDocument


def facts(doc: PublishedDocument, in_report: set[int]) -> None:
    """Label/value rows outside the appendix's reports whose label is a known fact: every one in
    ``doc.all_facts``, the first of each in ``doc.facts``."""
    lines = doc.lines
    for i, line in enumerate(lines):
        if i in in_report:
            continue
        key = None
        if line.cells and len(line.cells) >= 2:
            key = fuzzy_key(line.cells[0], FACTS, cutoff=0.9)
        if key is not None and line.cells:
            value, at = line.cells[1], line.no
            if DocNumber.leading(value) is None:
                # A label wrapped mid-way ("... (IOPS, include 20%" / "headroom)   .084"): the
                # line's split is in the label, and the value is on a line below.
                joined = _joined(doc, lines, i, in_report)
                if joined is not None:
                    key, value, at = joined
            if at == line.no and len(line.cells) == 2:
                value = _value_wrapped(doc, lines, i, in_report) or value
        else:
            wrapped = _wrapped(lines, i, in_report)
            if wrapped is None:
                continue
            key, value, at = wrapped
        doc.all_facts.append((key, value, at))
        doc.facts.setdefault(key, (value, at))


# A label wrapped in a narrow column (a PDF's table cell) spans at most this many lines.
_WRAPPED_LINES = 3


def _joined(
    doc: PublishedDocument, lines: list[DocLine], i: int, in_report: set[int]
) -> tuple[str, str, int] | None:
    """A fact whose label was split on line ``i`` and goes on below it, its value on a later line:
    taken only when the joined label is a known fact and its value starts with a figure; a note
    says the lines were joined."""
    text = lines[i].text
    for j in range(i + 1, min(i + _WRAPPED_LINES, len(lines))):
        line = lines[j]
        if j in in_report or line.heading or not line.text:
            return None
        text = f"{text} {line.text}"
        # The value starts at a figure; the label may hold figures too ("include 20% headroom"),
        # so each figure from the right is tried as the value's start until the label is known.
        words = text.split(" ")
        for cut in range(len(words) - 1, 0, -1):
            value = " ".join(words[cut:])
            if DocNumber.leading(value) is None:
                continue
            label = " ".join(words[:cut])
            key = fuzzy_key(label, FACTS, cutoff=0.9)
            if key is None:
                continue
            problem(
                doc,
                f"fact {label!r} read from lines {lines[i].no}-{line.no}: its label was wrapped",
                f"line {lines[i].no}",
                severity="note",
            )
            return key, value, line.no
    return None


# The rest of a value wrapped off its row is short: a copy wraps at 72 columns or more.
_REST_CHARS = 100


def _value_wrapped(doc: PublishedDocument, lines: list[DocLine], i: int, in_report: set[int]) -> str | None:
    """A fact's value wrapped onto the line below its row ("Host server type   Dell PowerEdge R900
    ... @" over "2.93 GHz, 2.92 GHz, 4 core, 128 MB RAM"): the line below is no row, and the line
    after it is a row of the same table again (two cells, a label and a value), so it can only be
    the rest of this row's last cell. The value with its rest; None when there is none."""
    below, after, cells = i + 1, i + 2, lines[i].cells
    if after >= len(lines) or below in in_report or after in in_report or not cells or len(cells) != 2:
        return None
    rest, next_row = lines[below], lines[after]
    if rest.cells is not None or rest.heading or not rest.text or len(rest.text) > _REST_CHARS:
        return None
    if not next_row.cells or len(next_row.cells) != 2 or next_row.heading:
        return None
    problem(
        doc,
        f"the value of {cells[0]!r} read from lines {lines[i].no}-{rest.no}: it was wrapped",
        f"line {lines[i].no}",
        severity="note",
    )
    return f"{cells[1]} {rest.text}"


def _wrapped(lines: list[DocLine], i: int, in_report: set[int]) -> tuple[str, str, int] | None:
    """A fact whose label starts at line ``i`` and is wrapped over the lines below it, its value
    after the label's end ("% formatted storage capacity used by Exchange" / "databases" /
    "88.57%"): (key, value, line of the value). Only short, plain lines are joined, and only when
    the label the join starts with is longer than line ``i``."""
    first = lines[i]
    if first.heading or not first.text or len(first.text) > 80 or (first.cells and len(first.cells) > 2):
        return None
    text = first.text
    if text.split(" ", 1)[0].strip(" :").casefold() not in FACT_PAIR_FIRST_WORDS:
        return None  # the joined label starts with this line's first word: no known label does
    for j in range(i + 1, min(i + _WRAPPED_LINES, len(lines))):
        line = lines[j]
        if j in in_report or line.heading or not line.text or len(line.text) > 80:
            return None
        text = f"{text} {line.text}"
        split = fact_label_and_value(text)
        if split is None:
            continue
        label, value = split
        if len(label) <= len(first.text):
            return None  # the label ends on line i: not wrapped
        key = FACTS.get(normalize(label))
        return (key, value, line.no) if key else None
    return None


def stated_convention(lines: list[DocLine]) -> str | None:
    """The ESRP version the document states in its first 400 lines ("3.0", "4.0")."""
    for line in lines[:400]:
        match = CONVENTION.search(line.text)
        if match:
            return match.group(1)
    return None
