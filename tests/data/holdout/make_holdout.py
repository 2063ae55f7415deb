"""Write the held-out ESRP documents, clean and with planted errors, and their key (KEY.toml).

Test data, not product: three fictional vendors' ESRP-Storage solution documents in layouts the
project's readers were not written against, as a PDF-to-text tool would give them. Every figure
is derived the way Jetstress and the vendors derive it (facts sheet section 9, checked against the
seeds' own reports): a report's Total I/O table = its Transactional table plus maintenance reads
(byte sizes weighted by rate) plus log replication reads; Achieved Transactional I/O = the summed
instance reads + writes; a server's figures are the instances' rates summed and latencies
averaged; the aggregate sums servers' rates and averages their latencies; backup MB/s per
database is the mean of the instances' MBytes Transferred/sec and per server their sum; replay
time per log is the mean of each instance's elapsed seconds / logs replayed.

Every summary is computed from the figures as printed (rounded), so the clean documents hold no
contradiction, and the planted ones hold exactly the contradictions the key lists.

Run from the repository: ``python tests/data/holdout/make_holdout.py``. Deterministic (seeded).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

TRANS_HEADER = [
    "MSExchange Database ==> Instances",
    "I/O Database Reads Average Latency (msec)",
    "I/O Database Writes Average Latency (msec)",
    "I/O Database Reads/sec",
    "I/O Database Writes/sec",
    "I/O Database Reads Average Bytes",
    "I/O Database Writes Average Bytes",
    "I/O Log Reads Average Latency (msec)",
    "I/O Log Writes Average Latency (msec)",
    "I/O Log Reads/sec",
    "I/O Log Writes/sec",
    "I/O Log Reads Average Bytes",
    "I/O Log Writes Average Bytes",
]
BDM_HEADER = [
    "MSExchange Database ==> Instances",
    "Database Maintenance IO Reads/sec",
    "Database Maintenance IO Reads Average Bytes",
]
REPL_HEADER = ["MSExchange Database ==> Instances", "I/O Log Reads/sec", "I/O Log Reads Average Bytes"]
HOST_HEADER = ["Counter", "Average", "Minimum", "Maximum"]
# Column positions in a 12-figure instance row.
RL, WL, READS, WRITES, RBYTES, WBYTES, LRL, LWL, LREADS, LWRITES, LRBYTES, LWBYTES = range(12)
TIME = re.compile(r"\d{1,2}:\d{2}:\d{2}")
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def r3(x: float) -> float:
    return round(x + 0.0, 3)


@dataclass
class Layout:
    """How one vendor's PDF came out as text."""

    cells: str  # "tab", "pipe" or "space"
    comma: bool = False  # decimal comma
    wrap_instance_headers: bool = False
    date: str = "us"  # "us" (M/D/YYYY h:mm:ss AM) or "eu" (DD.MM.YYYY HH:MM:SS)


@dataclass
class Doc:
    layout: Layout
    lines: list[str] = field(default_factory=list)
    marks: dict[str, int] = field(default_factory=dict)
    figures: int = 0  # result figures printed in results tables and appendix reports
    reports: list[str] = field(default_factory=list)

    def num(self, x: float, places: int = 3) -> str:
        text = f"{x:.{places}f}"
        return text.replace(".", ",") if self.layout.comma else text

    def add(self, *texts: str) -> None:
        for text in texts:
            self.lines.extend(text.split("\n"))

    def para(self, text: str) -> None:
        self.add(text, "")

    def mark(self, name: str) -> None:
        """Name the next line written (a line a plant or the key points at)."""
        self.marks[name] = len(self.lines)

    def table(
        self,
        header: Sequence[str] | None,
        rows: Sequence[Sequence[str]],
        *,
        figures: bool = False,
        instance: bool = False,
        marks: Sequence[str | None] = (),
    ) -> None:
        """One table as the layout prints it; ``figures``: its cells (bar the first column) count
        as result figures."""
        style = self.layout.cells
        widths = [0] * max(len(r) for r in [*(rows or []), *([header] if header else [])])
        if style == "space":
            for r in [*rows, *([header] if header and not instance else [])]:
                for i, cell in enumerate(r):
                    widths[i] = max(widths[i], len(cell))

        def render(r: Sequence[str]) -> str:
            if style == "tab":
                return "\t".join(r)
            if style == "pipe":
                return "| " + " | ".join(r) + " |"
            return "  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip()

        if header:
            if instance and self.layout.wrap_instance_headers:
                self.lines.extend(header)
            else:
                self.lines.append(render(header))
                if style == "pipe":
                    self.lines.append("|" + "|".join("---" for _ in header) + "|")
        for i, r in enumerate(rows):
            if style == "pipe" and not header and i == 1:
                # Markdown has no table without a heading row: the converter makes the first row one.
                self.lines.append("|" + "|".join("---" for _ in rows[0]) + "|")
            if i < len(marks) and marks[i]:
                self.mark(str(marks[i]))
            self.lines.append(render(r))
            if figures:
                for cell in r[1:]:
                    self.figures += 1 if TIME.fullmatch(cell) else len(NUMBER.findall(cell))
        self.lines.append("")


# ---- Jetstress figures -------------------------------------------------------------------------


@dataclass
class Profile:
    """What one Jetstress version and one array give per database."""

    reads: float
    write_ratio: float
    read_bytes: float
    log_ratio: float
    log_bytes: float
    bdm_reads: float
    read_latency: float
    log_read_latency: float  # of the replication reads in the Total I/O table


@dataclass
class Report:
    test: str  # Performance, Stress, DatabaseBackup, SoftRecovery, DBChecksum
    server: str
    pid: int
    trans: list[list[float]]
    bdm: list[tuple[float, float]] = field(default_factory=list)
    repl: list[tuple[float, float]] = field(default_factory=list)
    total: list[list[float]] = field(default_factory=list)
    host: list[tuple[str, float, float, float]] = field(default_factory=list)
    backup: list[tuple[float, float]] = field(default_factory=list)  # (size MB, MB/s)
    recovery: list[tuple[int, float]] = field(default_factory=list)  # (logs, seconds)

    @property
    def names(self) -> list[str]:
        return [f"Instance{self.pid}.{i + 1}" for i in range(len(self.trans))]

    @property
    def achieved(self) -> float:
        return r3(sum(t[READS] + t[WRITES] for t in self.trans))


def totals(
    trans: list[list[float]],
    bdm: list[tuple[float, float]],
    repl: list[tuple[float, float]],
    rnd: random.Random,
    log_read_latency: float = 0.0,
) -> list[list[float]]:
    """The Total I/O table: reads add the maintenance reads (bytes weighted by rate), log reads
    are the replication reads, with their own latency; the rest is the transactional row."""
    out = []
    for i, t in enumerate(trans):
        b_reads, b_bytes = bdm[i] if bdm else (0.0, 0.0)
        reads = r3(t[READS] + b_reads)
        rbytes = r3((t[READS] * t[RBYTES] + b_reads * b_bytes) / reads) if reads else 0.0
        row = list(t)
        row[READS], row[RBYTES] = reads, rbytes
        if repl:
            l_reads, l_bytes = repl[i]
            row[LREADS], row[LRBYTES] = l_reads, l_bytes
            row[LRL] = r3(rnd.uniform(0.85, 1.15) * log_read_latency)
        out.append(row)
    return out


def host_table(rnd: random.Random, ram_mb: int, cpu: float) -> list[tuple[str, float, float, float]]:
    def spread(avg: float, lo: float, hi: float) -> tuple[float, float, float]:
        return r3(avg), r3(avg * (1 - lo)), r3(avg * (1 + hi))

    def counts(avg: float, below: float, above: float) -> tuple[float, float, float]:
        # Counts are whole numbers at every sample; only their average has decimals.
        return (
            r3(avg),
            float(int(avg - avg * below * rnd.uniform(0.5, 1))),
            float(int(avg + avg * above * rnd.uniform(0.5, 1)) + 1),
        )

    return [
        ("% Processor Time", *spread(cpu * rnd.uniform(0.8, 1.2), 0.45, 1.6)),
        ("Available MBytes", *counts(ram_mb * rnd.uniform(0.55, 0.8), 0.001, 0.002)),
        ("Free System Page Table Entries", *counts(33559386.854 + rnd.uniform(-900, 900), 1.5e-5, 1e-5)),
        ("Transition Pages RePurposed/sec", 0.0, 0.0, 0.0),
        ("Pool Nonpaged Bytes", *counts(rnd.uniform(5.6e7, 1.2e8), 0.004, 0.003)),
        ("Pool Paged Bytes", *counts(rnd.uniform(1.45e8, 1.85e8), 0.006, 0.004)),
        ("Database Page Fault Stalls/sec", 0.0, 0.0, 0.0),
    ]


def io_report(test: str, server: str, dbs: int, p: Profile, rnd: random.Random, ram_mb: int) -> Report:
    trans, bdm, repl = [], [], []
    scale = 0.97 if test == "Stress" else 1.0
    for _ in range(dbs):
        reads = r3(p.reads * scale * rnd.uniform(0.97, 1.03))
        writes = r3(reads * p.write_ratio * rnd.uniform(0.97, 1.03))
        trans.append(
            [
                r3(p.read_latency * rnd.uniform(0.9, 1.1)),
                r3(rnd.uniform(0.8, 3.2)),
                reads,
                writes,
                r3(p.read_bytes * rnd.uniform(0.998, 1.002)),
                r3(36820 * rnd.uniform(0.998, 1.002)),
                0.0,
                r3(rnd.uniform(0.7, 1.1)),
                0.0,
                r3(writes * p.log_ratio * rnd.uniform(0.98, 1.02)),
                0.0,
                r3(p.log_bytes * rnd.uniform(0.99, 1.01)),
            ]
        )
        bdm.append((r3(p.bdm_reads * rnd.uniform(0.9, 1.02)), r3(261900 * rnd.uniform(0.9998, 1.0002))))
        repl.append((r3(rnd.uniform(0.455, 0.49)), r3(rnd.uniform(176000, 189000))))
    report = Report(test, server, rnd.randint(1100, 9900), trans, bdm, repl)
    report.total = totals(trans, bdm, repl, rnd, p.log_read_latency)
    report.host = host_table(rnd, ram_mb, 0.9)
    return report


def backup_report(server: str, dbs: int, db_mb: float, rnd: random.Random, ram_mb: int) -> Report:
    trans, backup = [], []
    for _ in range(dbs):
        mbs = round(rnd.uniform(31.0, 38.0), 2)
        # 256 KB reads: MB/s x 4 reads; Jetstress's own rounding leaves a few thousandths.
        reads = r3(mbs * 4 + rnd.uniform(-0.004, 0.004))
        trans.append([r3(rnd.uniform(9.5, 12.5)), 0.0, reads, 0.0, 262144.0, *([0.0] * 7)])
        backup.append((round(db_mb * rnd.uniform(0.9995, 1.0005), 2), mbs))
    report = Report("DatabaseBackup", server, rnd.randint(1100, 9900), trans, backup=backup)
    report.host = host_table(rnd, ram_mb, 12.0)
    return report


def recovery_report(server: str, dbs: int, rnd: random.Random, ram_mb: int) -> Report:
    trans, bdm, recovery = [], [], []
    for _ in range(dbs):
        logs = rnd.randint(500, 530)
        recovery.append((logs, r3(logs * rnd.uniform(2.3, 3.9))))
        trans.append(
            [
                r3(rnd.uniform(24, 30)),
                r3(rnd.uniform(0.45, 0.6)),
                r3(rnd.uniform(205, 230)),
                r3(rnd.uniform(1.5, 1.8)),
                r3(rnd.uniform(43000, 45000)),
                r3(rnd.uniform(18500, 19600)),
                r3(rnd.uniform(4.6, 5.2)),
                0.0,
                r3(rnd.uniform(2.4, 2.6)),
                0.0,
                r3(rnd.uniform(130000, 137000)),
                0.0,
            ]
        )
        bdm.append((r3(rnd.uniform(34, 41)), r3(261800 * rnd.uniform(0.9999, 1.0001))))
    report = Report("SoftRecovery", server, rnd.randint(1100, 9900), trans, bdm=bdm, recovery=recovery)
    report.total = totals(trans, bdm, [], rnd)
    report.host = host_table(rnd, ram_mb, 8.0)
    return report


@dataclass
class Server:
    name: str
    perf: Report
    stress: Report
    backup: Report
    recovery: Report


def server_figures(perf: Report, convention: str) -> dict[str, float]:
    """A server's summary from its 2-hour report, as the vendor computes it from the printed
    figures: ``transactional`` reads, or ``total`` reads (transactional + maintenance)."""
    rows = perf.total if convention == "total" else perf.trans
    n = len(perf.trans)
    reads = r3(sum(r[READS] for r in rows))
    writes = r3(sum(t[WRITES] for t in perf.trans))
    return {
        "achieved": perf.achieved,
        "transfers": r3(reads + writes),
        "reads": reads,
        "writes": writes,
        "rl": r3(sum(t[RL] for t in perf.trans) / n),
        "wl": r3(sum(t[WL] for t in perf.trans) / n),
        "log_writes": r3(sum(t[LWRITES] for t in perf.trans)),
        "lwl": r3(sum(t[LWL] for t in perf.trans) / n),
    }


def backup_figures(report: Report) -> tuple[float, float]:
    rates = [mbs for _size, mbs in report.backup]
    return r3(sum(rates) / len(rates)), r3(sum(rates))


def replay_time(report: Report) -> float:
    return r3(sum(sec / logs for logs, sec in report.recovery) / len(report.recovery))


# ---- the Jetstress report as printed -----------------------------------------------------------


@dataclass
class Env:
    jetstress: str
    ese: str
    os: str
    threads: str
    cache: tuple[str, str]
    start: tuple[int, int, int]  # year, month, day of the first test
    db_path: Callable[[int], tuple[str, str]]  # database number -> (log path, database file)
    db_bytes: int  # one database at the start of the 2-hour run
    mailboxes: int
    iops: float  # tested IOPS per mailbox
    description: str


def stamp(doc: Doc, day: int, seconds: int, env: Env) -> str:
    y, m, d = env.start
    d += day + seconds // 86400
    seconds %= 86400
    hh, mm, ss = seconds // 3600, seconds // 60 % 60, seconds % 60
    if doc.layout.date == "eu":
        return f"{d:02d}.{m:02d}.{y} {hh:02d}:{mm:02d}:{ss:02d}"
    ampm = "AM" if hh < 12 else "PM"
    return f"{m}/{d}/{y} {(hh - 1) % 12 + 1}:{mm:02d}:{ss:02d} {ampm}"


def performance_log(test: str, day: int, start: int, env: Env) -> str:
    y, m, d = env.start
    when = f"{y}_{m}_{d + day}_{start // 3600}_{start // 60 % 60}_{start % 60 + 5}"
    return rf"C:\Program Files\Exchange Jetstress\{test}_{when}.blg"


def instance_table(doc: Doc, title: str, names: list[str], rows: list[list[float]], mark: str) -> None:
    doc.para(title)
    out = []
    for name, r in zip(names, rows, strict=True):
        out.append([name] + [doc.num(v) for v in r])
    doc.table(
        TRANS_HEADER, out, figures=True, instance=True, marks=[f"{mark}.{i + 1}" for i in range(len(rows))]
    )


def pair_table(
    doc: Doc, title: str, header: list[str], names: list[str], rows: list[tuple[float, float]]
) -> None:
    doc.para(title)
    doc.table(
        header, [[n, doc.num(a), doc.num(b)] for n, (a, b) in zip(names, rows, strict=True)], figures=True
    )


def write_report(
    doc: Doc, rep: Report, env: Env, day: int, key: str, *, titled: bool, summary_heading: bool
) -> None:
    """One Jetstress report the way the vendor pasted it into the appendix."""
    test_title = {
        "Performance": "Performance",
        "Stress": "Stress",
        "DatabaseBackup": "Database Backup",
        "SoftRecovery": "SoftRecovery",
    }[rep.test]
    doc.reports.append(f"{rep.server} {rep.test}")
    if titled:
        doc.para(f"Microsoft Exchange Server Jetstress 2010 – {test_title}")
        doc.para(f"{test_title} Test Result Report (from server {rep.server})")
    start = 8 * 3600 + 60 * (day * 7 % 50) + 13
    hours = {"Performance": 2, "Stress": 24, "DatabaseBackup": 8, "SoftRecovery": 1}[rep.test]
    end = start + hours * 3600 + 5 * 60 + 17
    if rep.test in ("Performance", "Stress"):
        if summary_heading:
            doc.para("Test Summary")
        doc.table(
            None,
            [
                ["Overall Test Result", "Pass"],
                ["Machine Name", rep.server],
                ["Test Description", env.description],
                ["Test Start Time", stamp(doc, day, start, env)],
                ["Test End Time", stamp(doc, day, end, env)],
                ["Collection Start Time", stamp(doc, day, start + 301, env)],
                ["Collection End Time", stamp(doc, day, end - 14, env)],
                ["Jetstress Version", env.jetstress],
                ["ESE Version", env.ese],
                ["Operating System", env.os],
                ["Performance Log", performance_log(rep.test, day, start, env)],
            ],
        )
        doc.para("Database Sizing and Throughput")
        dbs = len(rep.trans)
        growth = 187_000_000 * dbs if rep.test == "Performance" else 2_310_000_000 * dbs
        initial = env.db_bytes * dbs + (0 if rep.test == "Performance" else 187_000_000 * dbs)
        doc.mark(f"{key}.achieved")
        doc.table(
            None,
            [
                ["Achieved Transactional I/O per Second", doc.num(rep.achieved)],
                ["Target Transactional I/O per Second", f"{round(env.mailboxes * env.iops):d}"],
                ["Initial Database Size (bytes)", str(initial)],
                ["Final Database Size (bytes)", str(initial + growth)],
                ["Database Files (Count)", str(dbs)],
            ],
            figures=True,
        )
    else:
        doc.para(f"{'Database Backup' if rep.test == 'DatabaseBackup' else 'Soft-Recovery'} Statistics - All")
        if rep.test == "DatabaseBackup":
            rows = []
            for name, (size, mbs) in zip(rep.names, rep.backup, strict=True):
                secs = round(size / mbs)
                rows.append(
                    [
                        name,
                        doc.num(size, 2),
                        f"{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}",
                        doc.num(mbs, 2),
                    ]
                )
            doc.table(
                [
                    "Database Instance",
                    "Database Size (MBytes)",
                    "Elapsed Backup Time",
                    "MBytes Transferred/sec",
                ],
                rows,
                figures=True,
                marks=[f"{key}.backup.{i + 1}" for i in range(len(rows))],
            )
        else:
            rows = [
                [n, str(logs), doc.num(sec)] for n, (logs, sec) in zip(rep.names, rep.recovery, strict=True)
            ]
            doc.table(["Database Instance", "Log files replayed", "Elapsed seconds"], rows, figures=True)
    doc.para("Jetstress System Parameters")
    doc.table(
        None,
        [
            ["Thread Count", env.threads],
            ["Minimum Database Cache", env.cache[0]],
            ["Maximum Database Cache", env.cache[1]],
            ["Insert Operations", "40%"],
            ["Delete Operations", "20%"],
            ["Replace Operations", "5%"],
            ["Read Operations", "35%"],
            ["Lazy Commits", "70%"],
            ["Run Background Database Maintenance", "True"],
            ["Number of Copies per Database", "2"],
        ],
    )
    doc.para("Database Configuration")
    cfg = []
    for i, name in enumerate(rep.names):
        log, edb = env.db_path(i + 1)
        cfg.append([name, f"Log path: {log} Database: {edb}"])
    doc.table(None, cfg)
    instance_table(doc, "Transactional I/O Performance", rep.names, rep.trans, f"{key}.trans")
    if rep.bdm:
        pair_table(doc, "Background Database Maintenance I/O Performance", BDM_HEADER, rep.names, rep.bdm)
    if rep.repl:
        pair_table(doc, "Log Replication I/O Performance", REPL_HEADER, rep.names, rep.repl)
    if rep.total:
        instance_table(doc, "Total I/O Performance", rep.names, rep.total, f"{key}.total")
    doc.para("Host System Performance")
    doc.mark(f"{key}.host")
    doc.table(
        HOST_HEADER,
        [[c, doc.num(a), doc.num(b), doc.num(m)] for c, a, b, m in rep.host],
        figures=True,
        marks=[f"{key}.host.{c}" for c, *_ in rep.host],
    )
    write_log(doc, rep, env, day, start, end)


def write_log(doc: Doc, rep: Report, env: Env, day: int, start: int, end: int) -> None:
    doc.para("Test Log")

    def at(seconds: int) -> str:
        return stamp(doc, day, seconds, env)

    lines = [f"{at(start)} -- Jetstress testing begins ...", f"{at(start)} -- Preparing for testing ..."]
    lines.append(f"{at(start + 3)} -- Attaching databases ...")
    lines.append(f"{at(start + 3)} -- Preparations for testing are complete.")
    interval = {"Performance": 15000, "Stress": 15000, "DatabaseBackup": 30000, "SoftRecovery": 15000}[
        rep.test
    ]
    if rep.test == "DatabaseBackup":
        lines.append(f"{at(start + 6)} -- Performance logging started (interval: {interval} ms).")
        lines.append(f"{at(start + 6)} -- Backing up databases ...")
        lines.append(f"{at(end - 2)} -- Performance logging has ended.")
        done = ", ".join(f"{n} (100% processed)" for n in rep.names)
        lines.append(f"{at(end - 2)} -- {done}")
    else:
        maximum = 200 if rep.test == "Stress" else 100
        lines.append(f"{at(start + 3)} -- Starting transaction dispatch ..")
        lines.append(
            f"{at(start + 5)} -- Database read latency thresholds: (average: 20 msec/read, maximum: {maximum} msec/read)."
        )
        lines.append(
            f"{at(start + 5)} -- Log write latency thresholds: (average: 10 msec/write, maximum: {maximum} msec/write)."
        )
        lines.append(f"{at(start + 9)} -- Performance logging started (interval: {interval} ms).")
        lines.append(f"{at(end - 20)} -- Performance logging has ended.")
        lines.append(f"{at(end - 19)} -- Dispatching transactions ends.")
        lines.append(f"{at(end - 18)} -- Shutting down databases ...")
        lines.append(f"{at(end - 17)} -- " + ", ".join(f"{n} (complete)" for n in rep.names))
        lines.append(f"{at(end - 16)} -- Creating test report ...")
        for name, t in zip(rep.names, rep.trans, strict=True):
            lines.append(
                f"{at(end - 12)} -- {name} has {doc.num(t[RL], 1)} for I/O Database Reads Average Latency."
            )
            lines.append(
                f"{at(end - 12)} -- {name} has {doc.num(t[LWL], 1)} for I/O Log Writes Average Latency."
            )
        lines.append(f"{at(end - 12)} -- Test has 0 Maximum Database Page Fault Stalls/sec.")
        lines.append(
            f"{at(end - 12)} -- The test has 0 Database Page Fault Stalls/sec samples higher than 0."
        )
        if rep.test == "SoftRecovery":
            lines.append(f"{at(end - 10)} -- Recovering databases ...")
            replayed = ", ".join(
                f"{n} ({doc.num(sec)})" for n, (_l, sec) in zip(rep.names, rep.recovery, strict=True)
            )
            lines.append(f"{at(end - 2)} -- {replayed}")
    doc.add(*lines)
    doc.add("")


# ---- the documents -----------------------------------------------------------------------------


def build_servers(
    names: list[str], dbs: int, p: Profile, env: Env, rnd: random.Random, ram_mb: int
) -> list[Server]:
    db_mb = env.db_bytes / 2**20
    return [
        Server(
            name,
            io_report("Performance", name, dbs, p, rnd, ram_mb),
            io_report("Stress", name, dbs, p, rnd, ram_mb),
            backup_report(name, dbs, db_mb, rnd, ram_mb),
            recovery_report(name, dbs, rnd, ram_mb),
        )
        for name in names
    ]


def front_matter(doc: Doc, title: list[str], version: str, date: str, contents: list[str]) -> None:
    doc.add("", *title, "")
    doc.para(f"Tested with: ESRP – Storage Version {version}")
    doc.para(f"Tested Date: {date}")
    doc.para("Contents")
    doc.table(None, [[c, str(3 + i // 3)] for i, c in enumerate(contents)])


DISCLAIMER = (
    "This document was written by the storage vendor and not by Microsoft Corporation. Microsoft "
    "gives no warranty, express or implied, about what it contains. The figures describe one tested "
    "configuration on the dates given; they are not a sizing promise for any other configuration, "
    "and the vendor may revise them without notice."
)

FRAMEWORK = (
    "The ESRP – Storage program gives storage vendors one common way to test and describe storage "
    "for Microsoft Exchange Server. It is not a benchmark: the tests do not look for the highest "
    "throughput an array can reach, and results of different submissions should not be set against "
    "each other. Customers should still validate their own design with Jetstress before deployment."
)


def doc_a() -> tuple[Doc, dict[str, object]]:
    """1 server, ESRP 4.0, Exchange 2016, tabs; reports without title or "Test Summary"; an
    uncaptioned "Database I/O / Value" results table."""
    rnd = random.Random(4001)
    doc = Doc(Layout("tab"))
    env = Env(
        jetstress="15.01.1038.000",
        ese="15.01.1531.003",
        os="Windows Server 2016 Datacenter (10.0.14393.0)",
        threads="10",
        cache=("192.0 MB", "1536.0 MB"),
        start=(2019, 3, 4),
        db_path=lambda i: (rf"D:\MDB{i:02d}\Logs", rf"D:\MDB{i:02d}\DB\Jetstress{i:03d}001.edb"),
        db_bytes=1_620_114_227_200,
        mailboxes=3000,
        iops=0.12,
        description="3,000 mailboxes, 0.12 IOPS per mailbox, 3 GB quota, 6 databases",
    )
    p = Profile(45.0, 0.42, 32950, 0.255, 19200, 9.0, 14.5, 15.0)
    ram_mb = 98304
    (srv,) = build_servers(["ALT-EX16-01"], 6, p, env, rnd, ram_mb)
    fig = server_figures(srv.perf, "transactional")
    per_db, per_server = backup_figures(srv.backup)
    replay = replay_time(srv.recovery)
    db_tb = 6 * env.db_bytes / 2**40
    formatted_tb = 16.5

    front_matter(
        doc,
        [
            "Altamira AX-2400 Hybrid Array",
            "3,000 Mailbox Exchange Server 2016 Mailbox Resiliency Storage Solution",
        ],
        "4.0",
        "March 4, 2019",
        [
            "Overview",
            "Disclaimer",
            "Features",
            "Solution Description",
            "Targeted Customer Profile",
            "Tested Deployment",
            "Best Practices",
            "Test Result Summary",
            "Conclusion",
            "Appendix A – Performance test",
            "Appendix B – Stress test",
            "Appendix C – Database backup test",
            "Appendix D – Soft recovery test",
        ],
    )
    doc.para("Overview")
    doc.para(
        "This paper reports how an Altamira AX-2400 hybrid array carried the storage load of 3,000 "
        "Exchange Server 2016 mailboxes in a two-copy database availability group, tested under the "
        "Microsoft Exchange Solution Reviewed Program (ESRP) – Storage, version 4.0."
    )
    doc.para("Disclaimer")
    doc.para(DISCLAIMER)
    doc.para("Features")
    doc.add(
        "- Two active controllers with mirrored write cache and non-disruptive firmware upgrades",
        "- A flash tier of read cache in front of 10K SAS capacity drives",
        "- Thin volumes that grow online as databases grow",
        "- Snapshots consistent with the Volume Shadow Copy Service for Exchange backups",
        "",
    )
    doc.para("Solution Description")
    doc.mark("prose.capacity")
    doc.para(
        "One mailbox server hosts six active databases, each with its own volume for database and "
        "log files. The volumes sit in one RAID 6 pool of 24 drives, which gives "
        f"{formatted_tb:.1f} TB of formatted capacity; the second database copies live on an "
        "identical array that was not under test."
    )
    doc.para("Targeted Customer Profile")
    doc.add(
        "- 3,000 mailboxes",
        "- 2 mailbox servers in one DAG (1 tested)",
        "- 0.10 IOPS per mailbox (0.12 tested, with 20% headroom)",
        "- 3 GB mailbox quota",
        "- 2 database copies",
        "- 24 x 7 background database maintenance",
        "",
    )
    doc.para("Tested Deployment")
    doc.para("Simulated Exchange Configuration")
    doc.table(
        None,
        [
            ["Number of Exchange mailboxes simulated", "3,000"],
            ["Number of Database Availability Groups (DAGs)", "1"],
            ["Number of servers/DAG", "2"],
            ["Number of active mailboxes/server", "3,000"],
            ["Number of databases/host", "6"],
            ["Number of copies/database", "2"],
            ["Number of mailboxes/database", "500"],
            ["Simulated profile: I/Os per second per mailbox (IOPS, include 20% headroom)", "0.12"],
            ["Database/Log LUN size", "2 TB"],
            ["Total database size for performance testing", f"{db_tb:.2f} TB"],
            ["% storage capacity used by Exchange database", f"{100 * db_tb / formatted_tb:.0f}%"],
        ],
    )
    doc.para("Storage Hardware")
    doc.table(
        None,
        [
            ["Storage connectivity (Fibre Channel, SAS, SATA, iSCSI)", "Fibre Channel 16 Gb"],
            ["Storage model and OS/firmware revision", "Altamira AX-2400, AXOS 6.2.1"],
            ["Storage cache", "128 GB"],
            ["Number of storage controllers", "2"],
            ["Number of storage ports", "4 per controller"],
            ["Maximum bandwidth of storage connectivity to host", "32 Gb/s (2 x 16 Gb/s)"],
            ["Switch type/model/firmware revision", "Brocade G620, FOS 8.2.1a"],
            ["HBA model and firmware", "Emulex LPe31002, 12.0.193.13"],
            ["Number of HBAs/host", "1 (2 ports)"],
            ["Host server type", "2 x Intel Xeon Silver 4114 @ 2.20 GHz, 96 GB RAM"],
            ["Total number of disks tested in solution", "24"],
            ["Maximum number of spindles can be hosted in the storage", "264"],
        ],
    )
    doc.para("Storage Software")
    doc.table(
        None,
        [
            ["HBA driver", "12.0.193.13"],
            ["HBA QueueTarget Setting", "N/A"],
            ["HBA QueueDepth Setting", "64"],
            ["Multi-Pathing", "Windows MPIO, round robin"],
            ["Host OS", "Windows Server 2016 Datacenter"],
            ["ESE.dll file version", env.ese],
            ["Replication solution name/version", "Exchange Server 2016 DAG replication"],
        ],
    )
    doc.para("Storage Disk Configuration (Mailbox Store and Log Disks)")
    doc.mark("config.formatted")
    doc.table(
        None,
        [
            ["Disk type, speed and firmware revision", "SAS 1.2 TB 10K RPM, FW A3C0"],
            ["Raw capacity per disk (GB)", "1,200 GB"],
            ["Number of physical disks in test", "24"],
            ["Total raw storage capacity (GB)", "28,800 GB"],
            ["RAID level", "RAID 6 (10+2)"],
            ["Total formatted capacity", f"{formatted_tb:.2f} TB"],
        ],
    )
    doc.para("Best Practices")
    doc.add(
        "- Format database and log volumes with NTFS or ReFS and a 64 KB allocation unit.",
        "- Keep each database and its logs on one volume when two or more DAG copies exist.",
        "- Leave the HBA queue depth at 64 unless the array team advises otherwise.",
        "",
    )
    doc.para("Test Result Summary")
    doc.para("Reliability")
    doc.add(
        "- The 24-hour stress test logged no errors in the application or system event logs.",
        "- The checksum of the databases and logs after the stress test found no errors.",
        "",
    )
    doc.para("Storage Performance Results")
    doc.para(
        "The two-hour performance test drives the largest sustainable Exchange-like load. The values "
        "below are the sums of the database instances' I/O rates and the averages of their latencies."
    )
    doc.table(
        ["Database I/O", "Value"],
        [
            ["Database Disks Transfers/sec", doc.num(fig["transfers"])],
            ["Database Disks Reads/sec", doc.num(fig["reads"])],
            ["Database Disks Writes/sec", doc.num(fig["writes"])],
            ["Average Database Disk Read Latency (ms)", doc.num(fig["rl"])],
            ["Average Database Disk Write Latency (ms)", doc.num(fig["wl"])],
            # One table in the PDF: the log rows sit under a second heading row.
            ["Transaction Log I/O", "Value"],
            ["Log Disks Writes/sec", doc.num(fig["log_writes"])],
            ["Average Log Disk Write Latency (ms)", doc.num(fig["lwl"])],
        ],
        figures=True,
        marks=["results.transfers", "results.reads", "results.writes"],
    )
    doc.para("Database Backup and Recovery Performance")
    doc.para("Database Read-only Performance")
    doc.para("The backup test reads every database file end to end, as a VSS backup would.")
    doc.table(
        None,
        [
            ["MB read/sec per database", doc.num(per_db)],
            ["MB read/sec total per server", doc.num(per_server)],
        ],
        figures=True,
        marks=["backup.per_db", "backup.per_server"],
    )
    doc.para("Transaction Log Recovery/Replay Performance")
    doc.para("The soft recovery test replays about 500 log files of 1 MB into each database.")
    doc.table(
        None, [["Average time to play one Log file (sec)", doc.num(replay)]], figures=True, marks=["replay"]
    )
    doc.para("Conclusion")
    doc.para(
        "One AX-2400 array met the tested load of 360 transactional IOPS for 3,000 mailboxes with "
        "database read latencies well under 20 ms. " + FRAMEWORK
    )
    for letter, rep, day, what in [
        ("A", srv.perf, 0, "Performance test"),
        ("B", srv.stress, 1, "Stress test"),
        ("C", srv.backup, 3, "Database backup test"),
        ("D", srv.recovery, 4, "Soft recovery test"),
    ]:
        doc.para(f"Appendix {letter} – {what}")
        write_report(doc, rep, env, day, f"{rep.test}", titled=False, summary_heading=False)
    return doc, {"servers": [srv.name], "formatted_tb": formatted_tb, "server": srv, "fig": fig}


def doc_b() -> tuple[Doc, dict[str, object]]:
    """3 servers by machine name, ESRP 4.0, Exchange 2016, Markdown pipes; appendix reports
    introduced only by "Appendix B – EXMBX02 stress test"; the per-server table follows the
    total convention (database reads include maintenance reads)."""
    rnd = random.Random(4003)
    doc = Doc(Layout("pipe"))
    env = Env(
        jetstress="15.01.0466.031",
        ese="15.01.1415.002",
        os="Windows Server 2016 Standard (10.0.14393.0)",
        threads="12",
        cache=("160.0 MB", "1280.0 MB"),
        start=(2018, 6, 11),
        db_path=lambda i: (rf"C:\ExVol\DB{i:02d}\Log", rf"C:\ExVol\DB{i:02d}\Jetstress{i:03d}001.edb"),
        db_bytes=1_080_863_910_912,
        mailboxes=2500,
        iops=0.12,
        description="2500 mailboxes 0.12 IOPS 2 GB",
    )
    p = Profile(45.5, 0.43, 32940, 0.25, 19150, 8.9, 17.0, 15.2)
    names = ["EXMBX01", "EXMBX02", "EXMBX03"]
    servers = build_servers(names, 5, p, env, rnd, 131072)
    figs = [server_figures(s.perf, "total") for s in servers]
    db_tb = 15 * env.db_bytes / 2**40
    formatted_tb = 24.0

    front_matter(
        doc,
        ["Kestrel Data KD-7000", "7,500 Mailbox Exchange Server 2016 Resiliency Storage Solution"],
        "4.0",
        "June 11, 2018",
        [
            "Overview",
            "Disclaimer",
            "Features",
            "Solution Description",
            "Targeted Customer Profile",
            "Tested Deployment",
            "Best Practices",
            "Test Results",
            "Conclusion",
            "Appendix A – Performance tests",
            "Appendix B – Stress tests",
            "Appendix C – Database backup tests",
            "Appendix D – Soft recovery tests",
        ],
    )
    doc.para("## Overview")
    doc.para(
        "Kestrel Data tested a KD-7000 all-flash array as the storage for 7,500 Exchange Server 2016 "
        "mailboxes on three mailbox servers, EXMBX01, EXMBX02 and EXMBX03, following the ESRP – "
        "Storage 4.0 framework."
    )
    doc.para("## Disclaimer")
    doc.para(DISCLAIMER)
    doc.para("## Features")
    doc.add(
        "- Inline compression and deduplication that never slow the write path",
        "- NVMe flash modules behind two active-active controllers",
        "- Replication between arrays, synchronous or asynchronous",
        "",
    )
    doc.para("## Solution Description")
    doc.para(
        "Each of the three servers owns five databases of 500 mailboxes. Database and log files of a "
        f"database share one thin volume. The array has {formatted_tb:.0f} TB of usable capacity after "
        "RAID and spares; the passive copies are on a second KD-7000 outside the test."
    )
    doc.para("## Targeted Customer Profile")
    doc.add(
        "- 7,500 mailboxes",
        "- 6 mailbox servers in one DAG (3 tested, carrying the active copies)",
        "- 0.10 IOPS per mailbox, tested at 0.12 for 20% headroom",
        "- 2 GB mailbox quota",
        "- 2 database copies",
        "",
    )
    doc.para("## Tested Deployment")
    doc.para("### Simulated Exchange Configuration")
    doc.table(
        ["Item", "Value"],
        [
            ["Number of Exchange mailboxes simulated", "7,500"],
            ["Number of Database Availability Groups (DAGs)", "1"],
            ["Number of servers/DAG", "6"],
            ["Number of active mailboxes/server", "2,500"],
            ["Number of databases/host", "5"],
            ["Number of copies/database", "2"],
            ["Number of mailboxes/database", "500"],
            ["Simulated profile: I/Os per second per mailbox (IOPS, include 20% headroom)", "0.12"],
            ["Database/Log LUN size", "1.5 TB"],
            ["Total database size for performance testing", f"{db_tb:.2f} TB"],
            ["% storage capacity used by Exchange database", f"{100 * db_tb / formatted_tb:.0f}%"],
        ],
    )
    doc.para("### Storage Hardware")
    doc.table(
        ["Item", "Value"],
        [
            ["Storage connectivity (Fibre Channel, SAS, SATA, iSCSI)", "iSCSI 25 GbE"],
            ["Storage model and OS/firmware revision", "Kestrel KD-7000, KestrelOS 4.1"],
            ["Storage cache", "256 GB"],
            ["Number of storage controllers", "2"],
            ["Number of storage ports", "4 per controller"],
            ["Maximum bandwidth of storage connectivity to host", "50 Gb/s per host"],
            ["Switch type/model/firmware revision", "Mellanox SN2010, Onyx 3.6.8"],
            ["HBA model and firmware", "Mellanox ConnectX-4 Lx, 14.23.1020"],
            ["Number of HBAs/host", "1 (2 ports)"],
            ["Host server type", "2 x Intel Xeon Gold 6130 @ 2.10 GHz, 128 GB RAM"],
            ["Total number of disks tested in solution", "22 NVMe modules"],
            ["Maximum number of spindles can be hosted in the storage", "44"],
        ],
    )
    doc.para("### Storage Software")
    doc.table(
        ["Item", "Value"],
        [
            ["HBA driver", "WinOF-2 1.90"],
            ["Multi-Pathing", "Windows MPIO, least queue depth"],
            ["Host OS", "Windows Server 2016 Standard"],
            ["ESE.dll file version", env.ese],
            ["Replication solution name/version", "Exchange Server 2016 DAG replication"],
        ],
    )
    doc.para("### Storage Disk Configuration (Mailbox Store and Log Disks)")
    doc.table(
        ["Item", "Value"],
        [
            ["Disk type, speed and firmware revision", "NVMe flash module 1.92 TB, FW 2.4"],
            ["Raw capacity per disk (GB)", "1,920 GB"],
            ["Number of physical disks in test", "22"],
            ["Total raw storage capacity (GB)", "42,240 GB"],
            ["RAID level", "Dual parity"],
            ["Total formatted capacity", f"{formatted_tb:.1f} TB"],
        ],
    )
    doc.para("## Best Practices")
    doc.add(
        "- Use one volume per database for databases and logs together when two copies exist.",
        "- Keep compression on: Exchange databases compress well and latency does not change.",
        "",
    )
    doc.para("## Test Results")
    doc.para("### Reliability")
    doc.add(
        "- No errors in the event logs of the 24-hour stress tests.",
        "- No checksum errors in databases or logs.",
        "",
    )
    doc.para("### Storage Performance Results")
    doc.para(
        "Per server: the database reads are those of the Total I/O table (transactional plus "
        "background maintenance reads), summed over the databases; latencies are averaged."
    )
    rows = [
        ("Database Disks Transfers/sec", "transfers"),
        ("Database Disks Reads/sec", "reads"),
        ("Database Disks Writes/sec", "writes"),
        ("Average Database Disk Read Latency (ms)", "rl"),
        ("Average Database Disk Write Latency (ms)", "wl"),
        ("Log Disks Writes/sec", "log_writes"),
        ("Average Log Disk Write Latency (ms)", "lwl"),
    ]
    doc.table(
        ["Database I/O", *names],
        [[label, *(doc.num(f[k]) for f in figs)] for label, k in rows],
        figures=True,
        marks=[f"servers.{k}" for _l, k in rows],
    )
    doc.para("### Aggregate Performance Across All Servers")
    agg = {
        k: (
            r3(sum(f[k] for f in figs))
            if k in ("transfers", "reads", "writes", "log_writes")
            else r3(sum(f[k] for f in figs) / 3)
        )
        for _l, k in rows
    }
    doc.table(
        ["Database I/O", "All servers"],
        [[label, doc.num(agg[k])] for label, k in rows],
        figures=True,
        marks=[f"aggregate.{k}" for _l, k in rows],
    )
    doc.para("### Database Backup and Recovery Performance")
    doc.para("Read rate of the VSS-style backup test, per database and per server:")
    backups = [backup_figures(s.backup) for s in servers]
    doc.table(
        ["Backup", *names],
        [
            ["MB read/sec per database", *(doc.num(b[0]) for b in backups)],
            ["MB read/sec total per server", *(doc.num(b[1]) for b in backups)],
        ],
        figures=True,
    )
    doc.para("Replay of about 500 logs of 1 MB per database:")
    doc.table(
        ["Soft recovery", *names],
        [["Average time to play one Log file (sec)", *(doc.num(replay_time(s.recovery)) for s in servers)]],
        figures=True,
        marks=["replay"],
    )
    doc.para("## Conclusion")
    doc.para(
        "Each server reached more than its 300 targeted transactional IOPS with low latency, and the "
        "array stayed within Jetstress's thresholds for 24 hours. " + FRAMEWORK
    )
    for letter, test, day, what in [
        ("A", "perf", 0, "performance test"),
        ("B", "stress", 1, "stress test"),
        ("C", "backup", 3, "database backup test"),
        ("D", "recovery", 4, "soft recovery test"),
    ]:
        for s in servers:
            rep: Report = getattr(s, test)
            doc.para(f"## Appendix {letter} – {s.name} {what}")
            write_report(doc, rep, env, day, f"{s.name}.{rep.test}", titled=False, summary_heading=True)
    return doc, {"servers": names, "figs": figs, "agg": agg, "srv": servers}


def doc_c() -> tuple[Doc, dict[str, object]]:
    """2 servers, ESRP 3.0, Exchange 2010, Jetstress 14.01; columns set by 2+ spaces with decimal
    commas and European dates; titled reports whose instance tables' headers wrap one cell per
    line; a DB checksum report before each stress report."""
    rnd = random.Random(3002)
    doc = Doc(Layout("space", comma=True, wrap_instance_headers=True, date="eu"))
    env = Env(
        jetstress="14.01.0225.017",
        ese="14.01.0218.012",
        os="Windows Server 2008 R2 Enterprise (6.1.7601.65536)",
        threads="4 (per database)",
        cache=("128,0 MB", "1024,0 MB"),
        start=(2012, 9, 3),
        db_path=lambda i: (rf"L:\LOG{i}", rf"E:\DB{i}\Jetstress{i:03d}001.edb"),
        db_bytes=1_149_239_296_000,
        mailboxes=4000,
        iops=0.12,
        description="4000 Mailboxen, 0,12 IOPS",
    )
    p = Profile(78.0, 0.62, 35800, 0.9, 4610, 30.8, 15.3, 2.1)
    names = ["MBXVD01", "MBXVD02"]
    servers = build_servers(names, 4, p, env, rnd, 65536)
    figs = [server_figures(s.perf, "transactional") for s in servers]
    db_tb = 8 * env.db_bytes / 2**40
    formatted_tb = 12.8

    front_matter(
        doc,
        [
            "ESRP Storage Program",
            "Vindeby Data VD-560",
            "8 000 Mailbox Exchange 2010 Mailbox Resiliency Storage Solution",
        ],
        "3.0",
        "September 2012",
        [
            "Overview",
            "Disclaimer",
            "Features",
            "Solution description",
            "Targeted customer profile",
            "Tested deployment",
            "Best practices",
            "Test results summary",
            "Conclusion",
            "Appendix A: Test reports",
        ],
    )
    doc.para("Overview")
    doc.para(
        "This document describes the Vindeby Data VD-560 storage system for 8 000 Exchange Server "
        "2010 mailboxes in a Mailbox Resiliency design, tested with the ESRP – Storage 3.0 framework. "
        "Server 1 is MBXVD01 and Server 2 is MBXVD02."
    )
    doc.para("Disclaimer")
    doc.para(DISCLAIMER)
    doc.para("Features")
    doc.add("- Two controllers with battery-backed cache", "- SAS 2 back end, 15K and 10K drives", "")
    doc.para("Solution description")
    doc.para(
        "Each of two mailbox servers holds four active databases of 1 000 mailboxes on RAID 10 groups; "
        f"together the groups give {doc.num(formatted_tb, 1)} TB formatted. Passive copies are on a "
        "second VD-560."
    )
    doc.para("Targeted customer profile")
    doc.add(
        "- 8 000 mailboxes",
        "- 4 mailbox servers (2 tested)",
        "- 0,10 IOPS per mailbox (0,12 tested, 20% headroom)",
        "- 1 GB mailboxes",
        "- 2 database copies",
        "",
    )
    doc.para("Tested deployment")
    doc.para("Simulated Exchange configuration")
    doc.table(
        None,
        [
            ["Number of Exchange mailboxes simulated", "8 000"],
            ["Number of Database Availability Groups (DAGs)", "1"],
            ["Number of servers/DAG", "4"],
            ["Number of active mailboxes/server", "4 000"],
            ["Number of databases/host", "4"],
            ["Number of copies/database", "2"],
            ["Number of mailboxes/database", "1 000"],
            ["Simulated profile: I/Os per second per mailbox (IOPS, include 20% headroom)", "0,12"],
            ["Database LUN size", "1,5 TB"],
            ["Log LUN size", "50 GB"],
            ["Total database size for performance testing", f"{doc.num(db_tb, 2)} TB"],
            ["% storage capacity used by Exchange database", f"{100 * db_tb / formatted_tb:.0f}%"],
        ],
    )
    doc.para("Storage hardware")
    doc.table(
        None,
        [
            ["Storage connectivity (Fibre Channel, SAS, SATA, iSCSI)", "Fibre Channel 8 Gb"],
            ["Storage model and OS/firmware revision", "Vindeby VD-560, firmware 3.4.2"],
            ["Storage cache", "16 GB"],
            ["Number of storage controllers", "2"],
            ["Number of storage ports", "4 per controller"],
            ["Maximum bandwidth of storage connectivity to host", "16 Gb/s (2 x 8 Gb/s)"],
            ["Switch type/model/firmware revision", "Cisco MDS 9148, NX-OS 5.0(4d)"],
            ["HBA model and firmware", "QLogic QLE2562, 5.06.05"],
            ["Number of HBAs/host", "2"],
            ["Host server type", "2 x Intel Xeon X5670 @ 2,93 GHz, 64 GB RAM"],
            ["Total number of disks tested in solution", "48"],
            ["Maximum number of spindles can be hosted in the storage", "192"],
        ],
    )
    doc.para("Storage software")
    doc.table(
        None,
        [
            ["HBA driver", "STORPort 9.1.9.25"],
            ["HBA QueueTarget Setting", "N/A"],
            ["HBA QueueDepth Setting", "64"],
            ["Multi-Pathing", "Windows MPIO"],
            ["Host OS", "Windows Server 2008 R2 Enterprise SP1"],
            ["ESE.dll file version", env.ese],
            ["Replication solution name/version", "Exchange 2010 DAG replication"],
        ],
    )
    doc.para("Storage disk configuration (mailbox store and log disks)")
    doc.table(
        None,
        [
            ["Disk type, speed and firmware revision", "SAS 600 GB 15K RPM, FW 0B25"],
            ["Raw capacity per disk (GB)", "600 GB"],
            ["Number of physical disks in test", "48"],
            ["Total raw storage capacity (GB)", "28 800 GB"],
            ["RAID level", "RAID 10"],
            ["Total formatted capacity", f"{doc.num(formatted_tb, 1)} TB"],
        ],
    )
    doc.para("Best practices")
    doc.add(
        "- 64 KB allocation unit for database and log volumes.", "- Separate LUNs for databases and logs.", ""
    )
    doc.para("Test results summary")
    doc.para("Reliability")
    doc.add(
        "- No errors in the event logs of the 24-hour stress test.",
        "- No errors in the database and log checksum.",
        "",
    )
    doc.para("Storage performance results")
    doc.para("Individual server metrics")
    target = round(env.mailboxes * env.iops)
    srows = [
        ("Achieved transactional I/O per sec", str(target), "achieved"),
        ("Database reads/sec", "N/A", "reads"),
        ("Database writes/sec", "N/A", "writes"),
        ("I/O database reads average latency (msec)", "< 20 msec", "rl"),
        ("I/O database writes average latency (msec)", "< 20 msec", "wl"),
        ("Log writes/sec", "N/A", "log_writes"),
        ("I/O log writes average latency (msec)", "< 10 msec", "lwl"),
    ]
    body = [[label, t, *(doc.num(f[k]) for f in figs)] for label, t, k in srows]
    body.insert(5, ["Transaction log I/O", "", "", ""])
    doc.table(
        ["Database I/O", "Target values", "Server 1", "Server 2"],
        body,
        figures=True,
        marks=[f"servers.{k}" for _l, _t, k in srows[:5]]
        + [None]
        + [f"servers.{k}" for _l, _t, k in srows[5:]],
    )
    doc.para("Aggregate performance across all servers metrics")
    agg = {
        k: (
            r3(sum(f[k] for f in figs))
            if k in ("achieved", "reads", "writes", "log_writes")
            else r3(sum(f[k] for f in figs) / 2)
        )
        for _l, _t, k in srows
    }
    abody = [[label, str(2 * target) if k == "achieved" else t, doc.num(agg[k])] for label, t, k in srows]
    abody.insert(5, ["Transaction log I/O", "", ""])
    doc.table(
        ["Database I/O", "Target values for two servers", "Values across all servers"],
        abody,
        figures=True,
        marks=[f"aggregate.{k}" for _l, _t, k in srows[:5]]
        + [None]
        + [f"aggregate.{k}" for _l, _t, k in srows[5:]],
    )
    doc.para("Database backup/recovery performance")
    doc.para("Database read-only performance")
    backups = [backup_figures(s.backup) for s in servers]
    doc.table(
        ["", "Server 1", "Server 2"],
        [
            ["MB read/sec per database", *(doc.num(b[0]) for b in backups)],
            ["MB read/sec total per server", *(doc.num(b[1]) for b in backups)],
        ],
        figures=True,
    )
    doc.para("Transaction log recovery/replay performance")
    doc.table(
        ["", "Server 1", "Server 2"],
        [["Average time to play one log file (sec)", *(doc.num(replay_time(s.recovery)) for s in servers)]],
        figures=True,
    )
    doc.para("Conclusion")
    doc.para("Both servers passed every test with headroom over the target IOPS. " + FRAMEWORK)
    doc.para("Appendix A: Test reports")
    for s in servers:
        checksum_report(doc, s, env, rnd)
        for rep, day in [(s.stress, 1), (s.perf, 0), (s.backup, 3), (s.recovery, 4)]:
            write_report(doc, rep, env, day, f"{s.name}.{rep.test}", titled=True, summary_heading=True)
    return doc, {"servers": names, "figs": figs, "agg": agg, "srv": servers}


def checksum_report(doc: Doc, s: Server, env: Env, rnd: random.Random) -> None:
    doc.reports.append(f"{s.name} DBChecksum")
    doc.para("Microsoft Exchange Server Jetstress 2010 – DBChecksum")
    doc.para(f"Test Result Report (from server {s.name})")
    doc.para("Checksum Statistics - All")
    rows, pages, mbs, secs = [], 0, 0, []
    for i in range(len(s.perf.trans)):
        mb = round(env.db_bytes / 2**20) + 2310 + rnd.randint(0, 40)
        sec = rnd.randint(19000, 25500)
        rows.append([env.db_path(i + 1)[1], str(mb * 32), "0", "0", "0", f"{mb} MB/{sec} sec"])
        pages, mbs = pages + mb * 32, mbs + mb
        secs.append(sec)
    # The databases are read in parallel: the whole run lasts as long as the slowest one.
    rows.append(["(Sum)", str(pages), "0", "0", "0", f"{mbs} MB/{max(secs) + 2} sec"])
    doc.table(
        [
            "Database",
            "Seen pages",
            "Bad pages",
            "Correctable pages",
            "Wrong page-number pages",
            "File length / seconds taken",
        ],
        rows,
        figures=True,
        marks=[None] * (len(rows) - 1) + [f"{s.name}.checksum.sum"],
    )
    doc.para("Memory System Performance (of checksum)")
    doc.table(
        HOST_HEADER,
        [[c, doc.num(a), doc.num(b), doc.num(m)] for c, a, b, m in host_table(rnd, 65536, 14.0)],
        figures=True,
    )


# ---- planted errors and the key ----------------------------------------------------------------


@dataclass
class Plant:
    line: int  # index into doc.lines
    old: str
    new: str
    what: str
    also: list[int]  # indexes of lines where the same slip may fairly be reported


def transpose(text: str, pos: int) -> str:
    """Swap the digits at ``pos`` and ``pos + 1``: the commonest typing slip."""
    a, b = text[pos], text[pos + 1]
    assert a.isdigit() and b.isdigit() and a != b, (text, pos)
    return text[:pos] + b + a + text[pos + 2 :]


def swap_units(text: str) -> str:
    """Tens and units swapped (or the first differing pair before them)."""
    point = next((i for i, c in enumerate(text) if c in ".,"), len(text))
    for pos in range(point - 2, -1, -1):
        if text[pos] != text[pos + 1]:
            return transpose(text, pos)
    raise AssertionError(text)


def swap_decimals(text: str) -> str:
    """First two decimals swapped (or the next differing pair)."""
    point = next(i for i, c in enumerate(text) if c in ".,")
    for pos in range(point + 1, len(text) - 1):
        if text[pos] != text[pos + 1]:
            return transpose(text, pos)
    raise AssertionError(text)


def find(doc: Doc, text: str) -> int:
    (index,) = [i for i, line in enumerate(doc.lines) if text in line]
    return index


def apply(doc: Doc, plant: Plant) -> list[str]:
    lines = list(doc.lines)
    pattern = re.compile(rf"(?<![\d.,]){re.escape(plant.old)}(?![\d.,])")
    found = pattern.findall(lines[plant.line])
    assert len(found) == 1, (plant, lines[plant.line])
    lines[plant.line] = pattern.sub(plant.new, lines[plant.line])
    return lines


def plants_a(doc: Doc, info: dict[str, object]) -> list[Plant]:
    m, srv, fig = doc.marks, info["server"], info["fig"]
    assert isinstance(srv, Server) and isinstance(fig, dict)
    per_db, per_server = backup_figures(srv.backup)
    out = []
    old = doc.num(fig["transfers"])
    out.append(
        Plant(
            m["results.transfers"],
            old,
            swap_units(old),
            "Database Disks Transfers/sec is not reads + writes (digits transposed)",
            [m["Performance.achieved"]],
        )
    )
    old = doc.num(srv.perf.trans[2][READS])
    out.append(
        Plant(
            m["Performance.trans.3"],
            old,
            swap_decimals(old),
            "instance 3's I/O Database Reads/sec in the 2-hour Transactional table, digits transposed",
            [m["Performance.total.3"], m["results.reads"], m["results.transfers"], m["Performance.achieved"]],
        )
    )
    fmt = f"{info['formatted_tb']:.1f} TB"
    out.append(
        Plant(
            m["prose.capacity"],
            fmt,
            "15.6 TB",
            "the solution description's formatted capacity contradicts the disk configuration table",
            [find(doc, "Total formatted capacity")],
        )
    )
    out.append(
        Plant(
            m["backup.per_server"],
            doc.num(per_server),
            doc.num(per_db * 5),
            "MB read/sec total per server is the per-database rate times 5, not 6 databases",
            [m["backup.per_db"]],
        )
    )
    out.append(
        Plant(
            m["Stress.achieved"],
            doc.num(srv.stress.achieved),
            doc.num(srv.perf.achieved),
            "the stress report's Achieved Transactional I/O per Second is the 2-hour report's, copied",
            [m["Performance.achieved"]],
        )
    )
    old = doc.num(replay_time(srv.recovery))
    out.append(
        Plant(
            m["replay"], old, swap_decimals(old), "average time to play one log file, digits transposed", []
        )
    )
    return out


def plants_b(doc: Doc, info: dict[str, object]) -> list[Plant]:
    m, agg, servers = doc.marks, info["agg"], info["srv"]
    assert isinstance(agg, dict) and isinstance(servers, list)
    out = []
    old = doc.num(agg["writes"])
    out.append(
        Plant(
            m["aggregate.writes"],
            old,
            swap_units(old),
            "aggregate Database Disks Writes/sec is not the sum of the servers'",
            [m["aggregate.transfers"]],
        )
    )
    old = doc.num(servers[2].perf.total[1][WRITES])
    out.append(
        Plant(
            m["EXMBX03.Performance.total.2"],
            old,
            swap_decimals(old),
            "EXMBX03 2-hour Total I/O table: instance 2's writes/sec disagrees with the Transactional table",
            # The per-server table may take EXMBX03's writes from either table.
            [m["EXMBX03.Performance.trans.2"], m["servers.writes"], m["servers.transfers"]],
        )
    )
    old = doc.num(servers[1].perf.achieved)
    # In the decimals: a slip in the hundreds could drop it under the target and change the verdict.
    out.append(
        Plant(
            m["EXMBX02.Performance.achieved"],
            old,
            swap_decimals(old),
            "EXMBX02 Achieved Transactional I/O per Second is not the instances' reads + writes",
            [],
        )
    )
    old = doc.num(replay_time(servers[0].recovery))
    out.append(
        Plant(
            m["replay"],
            old,
            swap_decimals(old),
            "EXMBX01 average time to play one log file, digits transposed",
            [],
        )
    )
    return out


def plants_c(doc: Doc, info: dict[str, object]) -> list[Plant]:
    m, agg, figs, servers = doc.marks, info["agg"], info["figs"], info["srv"]
    assert isinstance(agg, dict) and isinstance(figs, list) and isinstance(servers, list)
    out = [
        Plant(
            m["aggregate.lwl"],
            "10",
            "20",
            "aggregate target for log write latency printed as < 20 msec (Jetstress: 10)",
            [],
        )
    ]
    old = doc.num(figs[1]["reads"])
    out.append(
        Plant(
            m["servers.reads"],
            old,
            swap_units(old),
            "Server 2 database reads/sec: achieved is not reads + writes (digits transposed)",
            [m["servers.achieved"], m["aggregate.reads"]],
        )
    )
    old = doc.num(servers[0].stress.trans[1][LWRITES])
    out.append(
        Plant(
            m["MBXVD01.Stress.trans.2"],
            old,
            swap_decimals(old),
            "MBXVD01 stress Transactional table: instance 2's log writes/sec disagrees with the Total I/O table",
            [m["MBXVD01.Stress.total.2"]],
        )
    )
    old = doc.num(agg["rl"])
    out.append(
        Plant(
            m["aggregate.rl"],
            old,
            swap_decimals(old),
            "aggregate read latency is not the mean of the servers'",
            [],
        )
    )
    line = m["MBXVD02.checksum.sum"]
    old = doc.lines[line].split()[1]
    out.append(
        Plant(
            line,
            old,
            transpose(old, 3) if old[3] != old[4] else transpose(old, 4),
            "MBXVD02 checksum (Sum) seen pages is not the sum of the databases'",
            [],
        )
    )
    return out


DOCUMENTS: list[
    tuple[
        str,
        str,
        Callable[[], tuple[Doc, dict[str, object]]],
        Callable[[Doc, dict[str, object]], list[Plant]],
        str,
    ]
] = [
    (
        "altamira-1server-esrp40",
        "4.0",
        doc_a,
        plants_a,
        "1 server, Exchange 2016 / Jetstress 15.01, tab-separated cells; appendix reports with no title and no "
        "Test Summary heading; uncaptioned 'Database I/O | Value' results table; transactional convention",
    ),
    (
        "kestrel-3servers-esrp40",
        "4.0",
        doc_b,
        plants_b,
        "3 servers named EXMBX01-03, Exchange 2016 / Jetstress 15.01, Markdown pipe tables; reports introduced "
        "only by 'Appendix B – EXMBX02 stress test'; per-server table in columns by machine name, total convention",
    ),
    (
        "vindeby-2servers-esrp30",
        "3.0",
        doc_c,
        plants_c,
        "2 servers, Exchange 2010 / Jetstress 14.01, cells set by 2+ spaces, decimal commas and DD.MM.YYYY "
        "dates; titled reports whose instance-table headers wrap one cell per line; DB checksum reports",
    ),
]


def toml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main(out: Path = HERE) -> None:
    key = [
        "# Held-out ESRP documents: what each contains and the errors planted in it.",
        "# Written by make_holdout.py; lines are 1-based; also_lines: where the same slip may fairly",
        "# be reported (the other side of the relation it breaks). result_figures: numbers printed in",
        "# the results tables and the appendix reports' tables (not test logs, dates or parameters).",
        "",
    ]
    for name, version, build, plant, layout in DOCUMENTS:
        doc, info = build()
        planted = plant(doc, info)
        text = list(doc.lines)
        for p in planted:
            text = apply(Doc(doc.layout, text), p)
        (out / f"{name}.clean.txt").write_text("\n".join(doc.lines) + "\n", encoding="utf-8")
        (out / f"{name}.txt").write_text("\n".join(text) + "\n", encoding="utf-8")
        servers = info["servers"]
        assert isinstance(servers, list)
        key += [
            "[[document]]",
            f"file = {toml_str(name + '.txt')}",
            f"clean = {toml_str(name + '.clean.txt')}",
            f"esrp_version = {toml_str(version)}",
            f"layout = {toml_str(layout)}",
            f"servers = [{', '.join(toml_str(s) for s in servers)}]",
            f"reports = [{', '.join(toml_str(r) for r in doc.reports)}]",
            f"result_figures = {doc.figures}",
            "",
        ]
        for p in sorted(planted, key=lambda p: p.line):
            key += [
                "[[document.error]]",
                f"line = {p.line + 1}",
                f"figure = {toml_str(p.new)}",
                f"correct = {toml_str(p.old)}",
                f"what = {toml_str(p.what)}",
                f"also_lines = [{', '.join(str(a + 1) for a in p.also)}]",
                "",
            ]
    (out / "KEY.toml").write_text("\n".join(key), encoding="utf-8")


if __name__ == "__main__":
    main()
