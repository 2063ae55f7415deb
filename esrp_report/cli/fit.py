"""Tables that fit the terminal without cutting a figure.

Rich shrinks a table wider than the terminal by cutting its cells with an ellipsis: on an
80-column terminal `check` printed "1445.3…" for an achieved 1,445.341 IOPS (issue 32), a figure
the reader cannot use and cannot tell is cut. Here each column is given a fixed width no smaller
than its longest word (a figure, a threshold's number, a unit), so a figure is never cut; text
wraps at spaces, and only a word longer than its column's share of the terminal (a long instance
or file name) is folded onto the next line, never hidden. A table whose figure columns cannot
all fit side by side is printed as several, each repeating the first (key) column.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.table import Table
from rich.text import Text

from esrp_report.cli.console import PlainConsole

# Borders and padding: "│ " before each cell and " " after it, and the last "│".
_CELL_EXTRA = 3
# A text column's words longer than this fold instead of widening it past the figures' room.
_TEXT_WORD = 14

Cell = str | Text


@dataclass(frozen=True)
class Column:
    """A column's heading, and whether it holds figures (right-aligned, never folded)."""

    name: str
    figures: bool = False


def print_fitted(
    console: PlainConsole,
    title: str,
    columns: Sequence[Column],
    rows: Sequence[tuple[Sequence[Cell], str | None]],
) -> None:
    """Print ``rows`` (cells, row style) under ``columns`` in as few tables as fit the console's
    width, the first column repeated in each."""
    width = console.width
    needs = [_need(column, [cells[i] for cells, _ in rows]) for i, column in enumerate(columns)]
    for part, group in enumerate(_groups(needs, width)):
        shown = [0, *group] if group[0] != 0 else group
        natural = [_natural(columns[i], [cells[i] for cells, _ in rows]) for i in shown]
        widths = _widths([needs[i] for i in shown], natural, [columns[i].figures for i in shown], width)
        heading = title if part == 0 else f"{title} (continued)"
        table = Table(title=heading, title_justify="left")
        for i, size in zip(shown, widths, strict=True):
            column = columns[i]
            table.add_column(
                column.name,
                justify="right" if column.figures else "left",
                width=size,
                overflow="fold",
            )
        for cells, style in rows:
            table.add_row(*(cells[i] for i in shown), style=style)
        console.print(table)


def _plain(cell: Cell) -> str:
    return cell.plain if isinstance(cell, Text) else cell


def _words(text: str) -> list[str]:
    return text.split() or [""]


def _need(column: Column, cells: list[Cell]) -> int:
    """The narrowest the column may be: its longest figure or word (a text column's capped)."""
    longest = max(len(word) for text in [column.name, *map(_plain, cells)] for word in _words(text))
    return longest if column.figures else min(longest, _TEXT_WORD)


def _natural(column: Column, cells: list[Cell]) -> int:
    """The width at which no line of the column wraps; for a figure column, only its figures'
    lines count (a word such as "Jetstress reported Pass" may wrap there)."""
    texts = [_plain(cell) for cell in cells]
    if column.figures:
        texts = [text for text in texts if any(ch.isdigit() for ch in text)]
    return max((len(line) for text in texts for line in text.splitlines()), default=0)


def _groups(needs: list[int], width: int) -> list[list[int]]:
    """Column indexes in runs that fit ``width`` each beside the first (key) column."""
    key = needs[0] + _CELL_EXTRA
    groups: list[list[int]] = [[0]]
    used = 1 + key
    for i in range(1, len(needs)):
        size = needs[i] + _CELL_EXTRA
        if used + size > width and len(groups[-1]) > 1:
            groups.append([])
            used = 1 + key
        groups[-1].append(i)
        used += size
    return groups


def _widths(needs: list[int], natural: list[int], figures: list[bool], width: int) -> list[int]:
    """Each column at its need, the room left handed out to the columns whose text is wider
    than that, a column at a time up to its natural width: figures first, so that a threshold
    ("< 20.000 ms") stays on one line before a long verdict reason is given room."""
    widths = [max(need, 1) for need in needs]
    room = width - 1 - sum(w + _CELL_EXTRA for w in widths)
    for pass_figures in (True, False):
        for i, (want, is_figures) in enumerate(zip(natural, figures, strict=True)):
            if is_figures is not pass_figures or room <= 0:
                continue
            extra = min(room, max(want - widths[i], 0))
            widths[i] += extra
            room -= extra
    return widths
