"""The document's number conventions — its decimal mark and its thousands mark — found from its own
figures, and its figures rewritten into the one form the readers parse ("1,234.5").

A European vendor prints "0,873" for a latency and "1.446,975" or "1 446,975" (a thin space) for a
rate. Read as this tool's readers read a number, "0,873" is 873 and every relation over it fails:
false errors. So the marks are decided first, from the figures in the table cells (a label's
"4.3" or "Instance2756.1" is not a figure of a cell and says nothing), each cell a vote only when
its form allows one reading:

- a decimal comma: "0,873", "12,5", "1234,5678", "1.446,975", "1 446,975", "1.234.567";
- a decimal point: "0.873", "12.5", "1234.5678", "1,446.975", "1,234,567".

"1,234" or "1.234" alone could be either (a thousands group, or three decimals) and votes for
nothing. A document whose cells vote one way only is read that way: a decimal-comma document's
figures are rewritten, line by line, before its cells are split (a note says so). A document with
votes both ways beyond a stray one is *mixed*; one with ambiguous figures and no vote is
*undecidable*: each is a named problem, and its ambiguous figures are marked not read (the cut
mark, so that every reader leaves the cell out) rather than read one way and found false.
A figure whose own form is unambiguous is always read by that form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from esrp_report.model import DocLine

# Thin and narrow no-break spaces: the thousands "space" of ISO and French typography.
_THIN = "\u2009\u202f"
_CUT_MARK = "\u2026"

_CELL_PREFIX = re.compile(r"^[<>~≈]?\s*")
_CELL_SUFFIX = re.compile(r"\s*(%|ms|msec|s|sec|mb|gb|tb|kb|mb/s)?$", re.IGNORECASE)
_COMMA_VOTES = (
    re.compile(r"0,\d+"),
    re.compile(r"\d+,\d{1,2}"),
    re.compile(r"\d+,\d{4,}"),
    re.compile(r"\d{1,3}(?:\.\d{3})+,\d+"),
    re.compile(rf"\d{{1,3}}(?:[{_THIN}]\d{{3}})+(?:,\d+)?"),
    re.compile(r"\d{1,3}(?:\.\d{3}){2,}"),
)
_POINT_VOTES = (
    re.compile(r"0\.\d+"),
    re.compile(r"\d+\.\d{1,2}"),
    re.compile(r"\d+\.\d{4,}"),
    re.compile(r"\d{1,3}(?:,\d{3})+\.\d+"),
    re.compile(r"\d{1,3}(?:,\d{3}){2,}"),
)
_AMBIGUOUS = re.compile(r"[1-9]\d{0,2}[.,]\d{3}")
_DOT_THOUSANDS = (re.compile(r"\d{1,3}(?:\.\d{3})+,\d+"), re.compile(r"\d{1,3}(?:\.\d{3}){2,}"))
_THIN_THOUSANDS = re.compile(rf"\d{{1,3}}(?:[{_THIN}]\d{{3}})+(?:,\d+)?")

# A figure in running text or a cell: not part of a word, a path, a version or a date.
_FIGURE = re.compile(rf"(?<![\w.,:/\\{_THIN}])\d[\d.,{_THIN}]*\d(?![\w]|[.,{_THIN}]\d)")

_GROUPED = re.compile(r"\d{1,3}(?:\.\d{3})+(?:,\d+)?")

# An ordinary space as the thousands mark ("8 000", "1 446,975"), as Polish, French or Russian
# typography prints it when the thin space is lost. Only a whole cell (between tabs, pipes or runs
# of two spaces) votes for it: in a collapsed extraction "480 501,846" is two figures, and nothing
# tells them from one, so a document without such cells never joins figures.
_SPACE_GROUPED = re.compile(r"\d{1,3}(?: \d{3})+(?:[.,]\d+)?")
# Once the cells have shown the mark, a whole number in running text or a label ("5 000 concurrent
# users") is grouped the same way; a figure with decimals there is not ("480 501,846" of a
# flattened row is two figures, and nothing tells).
_SPACE_RUN = re.compile(r"(?<![\d.,])\d{1,3}(?: \d{3})+(?![\d]|[.,]\d)")
_SPACE_CELL = re.compile(r"(^|\t|  |\|)(\s*)(\d{1,3}(?: \d{3})+(?:[.,]\d+)?)(?=\s*(?:$|\t|  |\|))")

# Votes the other way up to this share of the votes are strays (a version number in a table's
# cell, a copied figure): the document is still read by the majority, and they are named.
_STRAY_SHARE = 0.02


@dataclass(frozen=True)
class Marks:
    """What a document's figures say of its marks."""

    decimal: str | None  # "." or ","; None when mixed or undecidable
    thousands: str  # ",", ".", "thin" or "" (none seen)
    comma_votes: int
    point_votes: int
    ambiguous: int
    space_groups: int = 0  # whole cells grouped by an ordinary space ("8 000")

    @property
    def problem(self) -> str | None:
        """The named problem, when the marks cannot be decided."""
        if self.decimal is not None:
            return None
        if self.comma_votes and self.point_votes:
            return (
                f"number convention mixed: {self.comma_votes} figure(s) print a decimal comma, "
                f'{self.point_votes} a decimal point; {self.ambiguous} figure(s) such as "1,234" could '
                "be read either way and are not read"
            )
        return (
            f'number convention undecidable: {self.ambiguous} figure(s) such as "1,234" could be a '
            "thousands group or three decimals, and no figure of the document tells; they are not read"
        )


def _cell_figure(cell: str) -> str:
    return _CELL_SUFFIX.sub("", _CELL_PREFIX.sub("", cell.strip()))


def _matches(patterns: tuple[re.Pattern[str], ...], figure: str) -> bool:
    return any(p.fullmatch(figure) for p in patterns)


def find_marks(lines: list[DocLine]) -> Marks:
    """The marks the figures of the document's table cells vote for (the first cell of a row is its
    label, and is not counted)."""
    comma = point = ambiguous = spaced = 0
    dot_thousands = thin_thousands = False
    for line in lines:
        for cell in (line.cells or [])[1:]:
            figure = _cell_figure(cell)
            if not figure[:1].isdigit():
                continue
            if _SPACE_GROUPED.fullmatch(figure):
                spaced += 1
                figure = figure.replace(" ", "")
            if _AMBIGUOUS.fullmatch(figure):
                ambiguous += 1
            elif _matches(_COMMA_VOTES, figure):
                comma += 1
                dot_thousands = dot_thousands or _matches(_DOT_THOUSANDS, figure)
                thin_thousands = thin_thousands or _THIN_THOUSANDS.fullmatch(figure) is not None
            elif _matches(_POINT_VOTES, figure):
                point += 1
    votes = comma + point
    decimal: str | None
    if votes == 0:
        decimal = None if ambiguous else "."
    elif comma <= _STRAY_SHARE * votes:
        decimal = "."
    elif point <= _STRAY_SHARE * votes:
        decimal = ","
    else:
        decimal = None
    thousands = (
        "space"
        if spaced and decimal != "."
        else ","
        if decimal == "."
        else "."
        if dot_thousands
        else "thin"
        if thin_thousands
        else ""
    )
    return Marks(decimal, thousands, comma, point, ambiguous, spaced)


def rewrite(raw: str, marks: Marks) -> str:
    """The line with its figures in the form the readers parse: a decimal-comma document's
    "1.446,975" becomes "1446.975"; an ambiguous figure of a mixed or undecidable document is marked
    not read ("1,234…")."""
    if marks.space_groups and any(ch.isdigit() for ch in raw):
        raw = _SPACE_CELL.sub(lambda m: m.group(1) + m.group(2) + m.group(3).replace(" ", ""), raw)
        raw = _SPACE_RUN.sub(lambda m: m.group(0).replace(" ", ""), raw)
    if marks.decimal is None:
        return _FIGURE.sub(_by_own_form, raw) if any(ch.isdigit() for ch in raw) else raw
    if marks.decimal == "." or not any(ch.isdigit() for ch in raw):
        return raw
    return _FIGURE.sub(lambda m: _from_comma(m.group(0), marks.thousands), raw)


def _by_own_form(match: re.Match[str]) -> str:
    """A figure of a document whose marks are not decided: read by its own form where that allows
    one reading ("0,873" as 0.873, "1,446.975" as printed), marked not read where it does not."""
    figure = match.group(0)
    if _AMBIGUOUS.fullmatch(figure):
        return figure + _CUT_MARK
    if _matches(_COMMA_VOTES, figure) and not _matches(_POINT_VOTES, figure):
        return _from_comma(figure, "")
    return figure


def _from_comma(figure: str, thousands: str) -> str:
    """One figure of a decimal-comma document in decimal-point form (no thousands mark)."""
    if "," in figure and "." in figure and figure.rfind(".") > figure.rfind(","):
        return figure  # "1,234.5": a point figure's own form, whatever the document prints
    body = figure
    for mark in _THIN:
        body = body.replace(mark, "")
    if "." in body:
        if not _GROUPED.fullmatch(body):
            return figure  # "0.30.441": no figure under either convention; left as printed, not read
        # The point is not this document's decimal mark, so a point between groups of three is
        # its thousands mark, whether or not another figure showed it.
        body = body.replace(".", "")
    if body.count(",") > 1:
        return figure  # "1,2,3": a list, not a figure
    return body.replace(",", ".")
