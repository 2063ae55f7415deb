"""The figures a trend table compares, and a trend table as a study prints it.

Plain data shared by the reader of trend specs (:mod:`esrp_report.ingest.config.trend_spec`) and the
trend checks (:mod:`esrp_report.analysis.trends`).
"""

from __future__ import annotations

from dataclasses import dataclass

from esrp_report.model import DocNumber


@dataclass(frozen=True)
class Figure:
    """One figure of a trend table: its key, the row label 004 prints, its unit, and the decimals of its
    absolute value."""

    key: str
    label: str  # as 004 labels its rows, where it has the row
    unit: str
    decimals: int  # as 004 prints the absolute value


FIGURES: tuple[Figure, ...] = (
    Figure("planned", "IOPS planned", "IOPS", 0),
    Figure("total", "Total IOPS performed", "IOPS", 0),
    Figure("transactional", "Transactional IOPS achieved", "IOPS", 0),
    Figure("log", "Log IOPS (log writes)", "IOPS", 0),
    Figure("differential", "Differential IOPS", "IOPS", 0),
    Figure("read_latency", "Read Latency DBs", "msec", 1),
    Figure("write_latency", "Write Latency DBs", "msec", 1),
    Figure("log_write_latency", "Write latency LOGs", "msec", 1),
)
FIGURE = {f.key: f for f in FIGURES}
LATENCIES = ("read_latency", "write_latency", "log_write_latency")


@dataclass(frozen=True)
class PublishedCell:
    """``223% [5.2 msec]`` as printed, or Table 3's ``1018 IOPS [113%]`` (then ``percent`` is
    of planned IOPS), or a plain ``6.8 msec`` (no percent); ``unchanged`` for Table 3's word."""

    text: str
    absolute: DocNumber | None
    percent: DocNumber | None
    unchanged: bool = False


@dataclass(frozen=True)
class PublishedTable:
    """A trend table as a study prints it: rows of cells, one per compared run.

    ``rows`` holds "percentage [absolute]" rows keyed by figure; ``equated`` holds 004 Table 3's
    layout: ``achieved`` and ``planned`` ("1018 IOPS [113%]"), the measured latencies and the
    ``<latency>_equated`` rows ("6.8 msec" or "unchanged")."""

    key: str
    title: str
    columns: tuple[str, ...]
    rows: dict[str, tuple[PublishedCell, ...]]
    equated: dict[str, tuple[PublishedCell, ...]]
    source: str

    @property
    def width(self) -> int:
        widths = {len(cells) for cells in (*self.rows.values(), *self.equated.values())}
        if not widths:
            return 0
        return widths.pop() if len(widths) == 1 else -1

    def baseline(self) -> int | None:
        """The column at 100 % in every percentage row (the audit's rule), if any."""
        if not self.rows:
            return None
        for index in range(self.width):
            percents = [cells[index].percent for cells in self.rows.values()]
            if all(p is not None and p.value == 100 for p in percents):
                return index
        return None
