"""One line of a document: markup away, cells split, figures read.

Each line becomes a :class:`~esrp_report.model.DocLine`: prose, or a table row whose cells are
split on Markdown pipes, tabs, runs of spaces, or — for a PDF's single-spaced rows — a label
followed by figures, or a label the report reader knows followed by its value. HTML remnants
(``<b>``, ``<br>``), Markdown links and emphasis go first.
"""

from __future__ import annotations

import re

from esrp_report.ingest.documents import limits
from esrp_report.ingest.documents.vocabulary import (
    FACT_PAIR_FIRST_WORDS,
    FACT_PAIR_LABELS,
    FACT_PAIR_WORDS,
    HEADER_FIRST_WORDS,
    HEADER_WORDS_MAX,
    KNOWN_HEADERS,
    PAIR_FIRST_WORDS,
    PAIR_LABELS,
)
from esrp_report.ingest.jetstress import labels as L
from esrp_report.ingest.jetstress.times import LOG_LINE_START
from esrp_report.model import DocLine, DocNumber
from esrp_report.model.errors import InputError

_TAG = re.compile(r"</?(?:b|i|u|em|strong|span|font|sup|sub|a|p|div|ul|li|ol|code)\b[^>]*>", re.IGNORECASE)
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_CLOCK = re.compile(r"\d+:\d{2}:\d{2}")
# A line of a test log ("3/14/2012 9:10:39 AM -- ...", "14.03.2012 09:10:39 -- ..."): never
# split into cells.
TIMESTAMP_LINE = LOG_LINE_START
# Compiled once: every line of a document goes through these (re's own cache costs a lookup each).
_HEADING = re.compile(r"^(#{1,6})\s+")
_RULE_ROW = re.compile(r"\|?[\s:|-]+\|?")
_SPACES = re.compile(r"\s{2,}")
_WHITESPACE = re.compile(r"\s+")
_INSTANCE_LABEL = re.compile(r"instance\d*\.\d+", re.IGNORECASE)


def strip_markup(text: str) -> str:
    """The text without HTML tags, ``<br>``, Markdown links, escapes and ``**`` emphasis."""
    if "<" in text:  # tags and <br> (most lines have neither: no regex run for them)
        text = _BR.sub(" ", text)
        text = _TAG.sub("", text)
    if "[" in text:
        text = _MD_LINK.sub(r"\1", text)
    return text.replace("\\*", "*").replace("\\_", "_").replace("**", "").replace("\u00a0", " ")


def clean_line(line: DocLine) -> DocLine:
    """The line with its markup away, its Markdown heading level, and its cells (None for prose)."""
    raw = line.raw
    if len(raw) > limits.MAX_ROW_CHARS:
        return _prose(line)
    text = raw.rstrip()
    heading = 0
    # The first character rules out most lines before a regex is run (once per line of 50 MB).
    match = _HEADING.match(text) if text[:1] == "#" else None
    if match:
        heading = len(match.group(1))
        text = text[match.end() :]
    cells: list[str] | None = None
    stripped = text.strip()
    if stripped.startswith("|") and stripped.count("|") >= 2:
        if _RULE_ROW.fullmatch(stripped):
            return DocLine(line.no, raw, page=line.page, text="", cells=None, heading=0)
        cells = [strip_markup(c).strip() for c in stripped.strip("|").split("|")]
    elif "\t" in text:
        cells = [strip_markup(c).strip() for c in text.split("\t")]
    text = (
        " ".join(strip_markup(text).replace("|", " ").split())
        if cells is None
        else " ".join(c for c in cells if c)
    )
    # isdigit() is true of every character \d matches (and of a few more): only a prefilter.
    stamped = text[:1].isdigit() and TIMESTAMP_LINE.match(text) is not None
    if cells is None and not heading and not stamped:
        spaced = [c.strip() for c in _SPACES.split(strip_markup(raw).strip()) if c.strip()]
        # A known fact's label, single-spaced from its value ("Number of physical disks in test 28
        # (+2 hot spares)"): split after the label, whatever the value ends with.
        cells = fact_label_and_value(text) if len(spaced) < 2 else None
        if cells is None:
            figures = _label_and_figures(text)
            # A listing's columns may touch ("41617.708 32145.823"): figures split on any space.
            cells = (
                figures if figures and len(figures) > len(spaced) else spaced if len(spaced) >= 2 else figures
            )
    if cells is None and not heading and not stamped:
        cells = header_row(text) or _known_label_and_value(text)
    if cells is not None:
        cells = [" ".join(c.split()) for c in cells]
        while cells and not cells[-1]:
            cells.pop()
        if len(cells) < 2 and not (cells and any(c for c in cells)):
            cells = None
        elif _split_first_letter(cells):
            cells = [cells[0] + cells[1], *cells[2:]]
            text = " ".join(c for c in cells if c)
    if text == raw:
        text = raw  # one string for both, not two: most lines of a text need no cleaning
    return DocLine(line.no, raw, page=line.page, text=text, cells=cells, heading=heading)


def _split_first_letter(cells: list[str]) -> bool:
    """A label's first letter extracted into a cell of its own ("D | atabase Disks Reads/sec |
    317.776", a PDF's drop cap or an OCR column guess): a lone capital followed by a cell that
    goes on in lower case (or "/O" of "I/O")."""
    if len(cells) < 3:  # the letter, the rest of the label, a figure
        return False
    first, second = cells[0], cells[1]
    if len(first) != 1 or not first.isupper():
        return False
    return (second[:1].isalpha() and second[:1].islower()) or (first == "I" and second.startswith("/O"))


def _prose(line: DocLine) -> DocLine:
    """A line too long to be a table row or a label: prose, never split into cells, and only its
    first MAX_ROW_CHARS characters looked at. Every later pass works on ``text``, some of them with
    a split or a copy per line: bounded here, their cost stays linear in the document whatever
    its line lengths (a 50 MB file with no newline is one line)."""
    head = line.raw[: 8 * limits.MAX_ROW_CHARS]  # enough for MAX_ROW_CHARS once markup and spaces go
    text = _WHITESPACE.sub(" ", strip_markup(head).replace("|", " ")).strip()[: limits.MAX_ROW_CHARS]
    return DocLine(line.no, line.raw, page=line.page, text=text, cells=None, heading=0)


def _known_label_and_value(text: str) -> list[str] | None:
    """'Machine Name EMAIL2' -> ['Machine Name', 'EMAIL2']: pairs whose separator was lost (a
    PDF's text, a paste), split after a label the report reader knows."""
    words = text.split(" ")
    if len(words) < 2:
        return None
    if _INSTANCE_LABEL.fullmatch(words[0]) and ":" in text:
        return [words[0], " ".join(words[1:])]  # database configuration
    if words[0].strip(" :").casefold() not in PAIR_FIRST_WORDS:
        return None  # no known label starts so: the eight joins and normalisations below are spared
    for count in range(min(len(words) - 1, 8), 0, -1):
        if L.normalize_label(" ".join(words[:count])) in PAIR_LABELS:
            return [" ".join(words[:count]), " ".join(words[count:])]
    return None


def fact_label_and_value(text: str) -> list[str] | None:
    """'Raw capacity per disk 1.64 TB' -> ['Raw capacity per disk', '1.64 TB']: a line starting
    with the label of a known fact printed on one line with its value (``same_line`` in
    facts.toml), its separator lost (a PDF's single-spaced row)."""
    words = text.split(" ")
    if len(words) < 2 or words[0].strip(" :").casefold() not in FACT_PAIR_FIRST_WORDS:
        return None
    # The text is a cleaned line (one space between words): a prefix's normal form is its words
    # in lower case, without the colon that may end it.
    low = [w.casefold() for w in words[: FACT_PAIR_WORDS + 1]]
    for count in range(min(len(words) - 1, FACT_PAIR_WORDS), 0, -1):
        if " ".join(low[:count]).strip(" :") in FACT_PAIR_LABELS:
            return [" ".join(words[:count]), " ".join(words[count:])]
    return None


def header_row(text: str) -> list[str] | None:
    """'Counter Average Minimum Maximum' -> its four cells: a single-spaced header row (a PDF's
    text) every word of which belongs to a known column name (``vocabulary.KNOWN_HEADERS``), cut
    into the fewest such names, longest first; None unless the whole line is so cut into at
    least three cells."""
    words = text.split(" ")
    # A header's first word is one of a few plain words: compared as it is before it is normalised.
    if len(words) < 3 or words[0].casefold() not in HEADER_FIRST_WORDS:
        return None
    cells: list[str] = []
    at = 0
    while at < len(words):
        for count in range(min(len(words) - at, HEADER_WORDS_MAX), 0, -1):
            if L.normalize_header(" ".join(words[at : at + count])) in KNOWN_HEADERS:
                cells.append(" ".join(words[at : at + count]))
                at += count
                break
        else:
            return None
    return cells if len(cells) >= 3 else None


def _label_and_figures(text: str) -> list[str] | None:
    """ "Database reads/sec N/A 877.436 891.734" -> label, then each figure: a PDF's row."""
    tokens = text.split(" ")
    values: list[str] = []  # from the end: reversed below (inserting at the front is quadratic)
    while tokens and (
        is_number(tokens[-1])
        or _CLOCK.fullmatch(tokens[-1])
        or tokens[-1].casefold() in ("n/a", "pass", "fail")
    ):
        values.append(tokens.pop())
    values.reverse()
    if not values:
        return None
    label = " ".join(tokens).rstrip(" -–:")
    return [label, *values]


def is_number(text: str) -> bool:
    """Is the text a printed number ("14,422.400", "39%")?"""
    return DocNumber.parse(text.strip()) is not None


def number(text: str) -> DocNumber | None:
    """A printed number with its precision (decimals), or None."""
    return DocNumber.parse(text)


def whole(text: str, source: str, line: int) -> int:
    """A printed count ("12,500"); past Python's 4,300-digit limit, an InputError, not ValueError."""
    digits = text.replace(",", "").strip()
    if len(digits) > 4000:
        raise InputError(source, f"a count of {len(digits):,} digits", location=f"line {line}")
    return int(digits)
