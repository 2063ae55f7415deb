"""Worked formulas, "Name = expression = ... = value unit", on a line of their own (LaTeX and
Markdown markup removed); their arithmetic is checked by ``analysis/formulas.py``."""

from __future__ import annotations

import re

from esrp_report.ingest.documents.cells import strip_markup
from esrp_report.ingest.documents.problems import problem
from esrp_report.model import Formula, PublishedDocument

# A formula line ends here when it was wrapped: its last part is an operator or an open bracket.
_CONTINUES = re.compile(r"(?:[*+\-/=(x]|\\\*)\s*$")
# ... or the line below goes on with an operator ("= 1972" over "\* (0.1 + 0.03) = 257 IOPS"); a
# "-" is left out, as it starts a list item as often.
_GOES_ON = re.compile(r"^(?:[*+/=×]|\\\*)")
# ... or the line below is the unit of the value the line ends with ("= 1380" over "IOPS").
_UNIT_ALONE = re.compile(r"^(?:IOPS|[KMGT]i?B|MB/s|ms|msec|%|users|logs|days)$", re.IGNORECASE)
_WRAPPED_LINES = 3  # a formula wrapped over more lines than this is not joined


def formulas(doc: PublishedDocument, in_report: set[int]) -> None:
    """Lines outside the appendix's reports that are not table rows: "Name = expression = ... =
    value unit". A formula a copy wrapped mid-expression (its line ends with an operator, or its
    brackets are open) is joined with the lines below it first, and a note says so."""
    lines = doc.lines
    taken: set[int] = set()
    for i, line in enumerate(lines):
        if i in taken or i in in_report or "=" not in line.text or len(line.text) > 400:
            continue
        if line.cells and not _value_cut_off(line.cells):
            continue
        if "://" in line.text:
            continue
        raw, last = line.raw, i
        while last - i < _WRAPPED_LINES:
            below = last + 1
            if below >= len(lines) or below in in_report or not lines[below].text or lines[below].heading:
                break
            if not _open(raw) and not _continued(raw, lines[below].raw.strip()):
                break
            raw, last = f"{raw.rstrip()} {lines[below].raw.strip()}", below
        text = _latex_to_text(raw)
        parts = [p.strip() for p in text.split("=")]
        if len(parts) < 2 or not parts[0] or not re.search(r"\d", parts[-1]):
            continue
        name = parts[0].strip(" *$")
        if len(name) > 80 or not re.search(r"[A-Za-z]", name):
            continue
        if last > i:
            taken.update(range(i + 1, last + 1))
            problem(
                doc,
                f"formula {name!r} read from lines {line.no}-{lines[last].no}: it was wrapped",
                f"line {line.no}",
                severity="note",
            )
        doc.formulas.append(Formula(name, parts[1:], line.no))


def _open(raw: str) -> bool:
    """Does a formula's text go on below: an operator or an open bracket at its end, or a LaTeX
    block ("$$ ... $$") not yet closed?"""
    if raw.count("$$") % 2 == 1:
        return True
    return bool(_CONTINUES.search(raw.rstrip("$ "))) or raw.count("(") > raw.count(")")


def _value_cut_off(cells: list[str]) -> bool:
    """A formula read as a label and a figure because its unit was wrapped off its end
    ("... = 6900 * 0.20 =" | "1380", the line below "IOPS")."""
    return len(cells) == 2 and cells[0].rstrip().endswith("=") and "=" not in cells[1]


def _continued(raw: str, below: str) -> bool:
    """Does the line below go on with a formula that reads as complete: it starts with an
    operator, it is the unit of the line's last figure, or the line has not reached a value yet
    (no figure after its last "=") and the line below goes on to one ("... Log Retention" over
    "time = 282900 \\* 3 = 849 GB")?"""
    if _GOES_ON.match(below) or _UNIT_ALONE.match(below.strip("$* ")):
        return True
    last = _latex_to_text(raw).rsplit("=", 1)[-1]
    return not re.search(r"\d", last) and "=" in below


def _latex_to_text(raw: str) -> str:
    text = raw.strip().strip("$").strip()
    text = re.sub(r"\\text\{([^}]*)\}", r"\1", text)
    text = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"(\1) / (\2)", text)
    text = text.replace("\\ ", " ").replace("\\&", "&").replace("\\*", "*").replace("\\", "")
    text = text.replace("*", " * ").replace("{", "").replace("}", "")
    return " ".join(strip_markup(text).split())
