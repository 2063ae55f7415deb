"""What an audit found: the result and its rows (the findings themselves are
``esrp_report.model.findings.Finding``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from esrp_report import model as m
from esrp_report.model.data import package_toml
from esrp_report.model.findings import ERROR, Finding

# A printed number's identity, for blame and coverage alike: its line, its cell, its text (a trend
# cell prints two numbers, "39% [360]", which are two numbers to both).
CellKey = tuple[int, int, str]


def cell_key(number: m.DocNumber) -> CellKey:
    """The identity of a printed number (``CellKey``)."""
    return (number.line, number.column, number.text)


@dataclass
class RecomputedRow:
    """A summary figure beside its value rebuilt from the appendix (the --recompute view)."""

    test: str
    column: str
    metric: str
    printed: str | None
    recomputed: float | None
    source: str


@dataclass
class TableCoverage:
    """One table read: how many printed numbers it has, how many some evaluated relation uses, and
    how many are vouched for down to their last printed digit (any change of it breaks a relation
    that holds)."""

    title: str
    first_line: int
    last_line: int
    numbers: int
    checked: int
    vouched: int


@dataclass
class UnreadBlock:
    """Lines holding figures that no reader took: a table or block not read."""

    first_line: int
    last_line: int
    numbers: int
    what: str  # the first line's text, shortened
    reason: str
    # Result figures in a layout no reader knows (audit/coverage.py): they count against the share
    # of the document read. A title page, a table of contents or a known table no relation reads
    # does not.
    results: bool = False


@dataclass
class Missing:
    """What the document promises and does not hold (audit/promises.py): the sections its
    contents list that never come, the tables it refers to that are never captioned; with the
    line that promised them and the result figures they are estimated to have held."""

    what: str
    line: int
    numbers: int


@dataclass
class Coverage:
    """What of the document the relations rest on: each table read, and each block not read."""

    tables: list[TableCoverage] = field(default_factory=list)
    unread: list[UnreadBlock] = field(default_factory=list)
    # Blocks past the first MAX_UNREAD_BLOCKS (audit/coverage.py): counted, not listed.
    more_unread_blocks: int = 0
    more_unread_numbers: int = 0
    # Figures on the lines of the tables read that no cell of them took (a wrapped row).
    lost_in_tables: int = 0
    # What the document promises and does not hold: a truncated text (audit/promises.py).
    missing: list[Missing] = field(default_factory=list)

    @property
    def numbers(self) -> int:
        return sum(t.numbers for t in self.tables)

    @property
    def unread_numbers(self) -> int:
        """Result figures in blocks of table rows that no reader took (audit/coverage.py)."""
        in_blocks = sum(b.numbers for b in self.unread if b.results) + self.more_unread_numbers
        return in_blocks + self.lost_in_tables + sum(m.numbers for m in self.missing)

    @property
    def read_share(self) -> float | None:
        """The share of the document's table figures that were read into a table the relations know
        (None when it has none at all)."""
        total = self.numbers + self.unread_numbers
        return self.numbers / total if total else None

    @property
    def checked(self) -> int:
        return sum(t.checked for t in self.tables)

    @property
    def vouched(self) -> int:
        return sum(t.vouched for t in self.tables)


@cache
def coverage_settings() -> dict[str, Any]:
    """``coverage.toml``: how much of a document a verdict needs, and what counts as a result figure."""
    return package_toml("esrp_report.audit", "coverage.toml")


def min_read_share() -> float:
    """The share of a document's table figures an audit must read to give a verdict."""
    return float(coverage_settings()["coverage"]["min_read_share"])


@dataclass
class AuditResult:
    """What an audit of a published document found: findings, what could not be read, recomputed rows, and how
    many relations were checked over how many lines."""

    source: str
    format: str
    esrp_version: str | None
    summary_convention: str | None = None  # "transactional" or "total", when detectable
    findings: list[Finding] = field(default_factory=list)
    unread: list[m.Problem] = field(default_factory=list)
    recomputed: list[RecomputedRow] = field(default_factory=list)
    checked: int = 0  # relations evaluated
    lines_read: int = 0  # lines the document was reduced to
    recognised: list[str] = field(default_factory=list)  # what was found: "2 summary table(s)", ...
    # The ESRP results read: figures of servers in per-server tables, appendix reports with I/O
    # tables, trend tables. Without one, the document's results were not read, whatever else was.
    results_read: list[str] = field(default_factory=list)
    # Every printed number some evaluated relation was worked out from, (line, cell, text) -> its
    # guard: the least change sure to break one of those relations that holds (inf: it takes
    # part, but no change of it is sure to break one, or its relations fail already).
    guards: dict[CellKey, float] = field(default_factory=dict)
    coverage: Coverage | None = None

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == ERROR)

    @property
    def nothing_checked(self) -> bool:
        """No ESRP results table was read, or no relation between the document's figures was
        evaluated: "0 errors" would be a verdict given without reading the results (a junk file,
        a PDF of scans, front matter alone, a document whose result tables are in a layout not
        read), so there is none. Errors found elsewhere (a configuration fact) are still printed."""
        return self.checked == 0 or not self.results_read

    @property
    def partly_read(self) -> bool:
        """Results were read, but less of the document's table figures than a verdict needs
        (``coverage.toml``), or the document does not hold what it promises (a truncated text):
        what was found is printed, and the exit status says "partly read"."""
        share = self.coverage.read_share if self.coverage else None
        missing = bool(self.coverage and self.coverage.missing)
        return not self.nothing_checked and (missing or (share is not None and share < min_read_share()))

    @property
    def status(self) -> str:
        """``nothing_checked``, ``partly_read`` or ``checked``: only the last is a verdict."""
        if self.nothing_checked:
            return "nothing_checked"
        return "partly_read" if self.partly_read else "checked"

    def partly_read_message(self) -> str:
        """The exit-2 line of a document read in part: how much, and which figures were not read."""
        cover = self.coverage
        assert cover is not None
        total = cover.numbers + cover.unread_numbers
        share = f"{cover.read_share:.0%}" if cover.read_share is not None else "none"
        promised = "".join(f". Missing, though the document promises it: {m.what}" for m in cover.missing)
        return (
            f"partly read: {cover.numbers:,} of {total:,} result figures in {self.source} "
            f"({share}; a verdict needs {min_read_share():.0%}"
            f"{' and all the document promises' if cover.missing else ''})"
            f"{promised}{self._unread_summary()}"
        )

    def nothing_checked_message(self) -> str:
        """What was (not) found, for the exit-2 message of a document where nothing was checked,
        with the blocks of figures not read."""
        return self._nothing_checked_reason() + self._unread_summary()

    def _unread_summary(self) -> str:
        blocks = self.coverage.unread if self.coverage else []
        if not blocks:
            return ""
        total = len(blocks) + (self.coverage.more_unread_blocks if self.coverage else 0)
        shown = "; ".join(f"lines {b.first_line}-{b.last_line} ({b.what!r})" for b in blocks[:3])
        more = f" and {total - 3:,} more" if total > 3 else ""
        return f". Figures not read: {total:,} block(s): {shown}{more}"

    def _nothing_checked_reason(self) -> str:
        if self.checked and not self.results_read:
            return (
                f"no ESRP results table read in {self.source} (no per-server results, appendix I/O "
                f"table or trend table): {self.checked} relation(s) between other figures "
                f"({', '.join(self.recognised) or 'nothing else recognised'}) say nothing of the results"
            )
        if not self.recognised:
            return (
                f"no ESRP tables recognised in {self.source} ({self.lines_read:,} line(s) read as "
                f"{self.format}; no summary table, trend table, formula or appendix test report): "
                "nothing was checked"
            )
        return (
            f"{', '.join(self.recognised)} recognised in {self.source}, but no relation between "
            "their figures could be checked: nothing was checked"
        )
