"""A finding of the audit: what disagrees, where, printed against expected, and how."""

from __future__ import annotations

from dataclasses import dataclass

ERROR, WARNING, NOTE = "error", "warning", "note"


@dataclass
class Finding:
    """One finding of the audit: its severity, a stable check id, the message, where it is (section, table,
    row, column, line), the printed against the expected value, how that was derived, and the relative
    difference."""

    severity: str
    check: str  # a stable id, e.g. "server.achieved_sum"
    message: str
    section: str | None = None
    table: str | None = None
    row: str | None = None
    column: str | None = None
    line: int | None = None
    printed: str | None = None
    expected: str | None = None
    derivation: str | None = None
    relative_difference: float | None = None
    # Every line of a printed cell the finding is about, when it is about several (a column of a
    # table wrong in several rows); ``line`` is the first of them.
    lines: tuple[int, ...] = ()
    # The lines of the cells that could be the slip, when the audit cannot tell which one is.
    suspects: tuple[int, ...] = ()
