"""Plain typed data describing Jetstress evidence. No I/O here.

Solution -> servers -> runs (one Jetstress test on one server) -> database instances with
their metric tables. Counter logs are Polars frames inside :class:`CounterLog`.

Values keep full precision; nothing in the model is rounded.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

import polars as pl

if TYPE_CHECKING:
    from esrp_report.model.sizing import SizingResult, SizingSpec


class TestKind(StrEnum):
    """The Jetstress test types (facts §1.6), plus the database checksum pass."""

    __test__ = False  # not a pytest test class, despite the name

    PERFORMANCE = "Performance"
    STRESS = "Stress"
    DATABASE_BACKUP = "DatabaseBackup"
    SOFT_RECOVERY = "SoftRecovery"
    DB_CHECKSUM = "DBChecksum"


class Generation(StrEnum):
    """Jetstress engine generation, from the version number (facts §9)."""

    JETSTRESS_2007 = "2007"  # 08.xx
    JETSTRESS_2010 = "2010"  # 14.xx
    JETSTRESS_2013 = "2013"  # 15.00.x and 15.01.x (2016 ships the 2013 engine)
    UNKNOWN = "unknown"


def generation_from_version(version: str | None) -> Generation:
    """The engine generation of a Jetstress version string ("14.01.0225.017" is 2010); UNKNOWN for None, empty
    or an unknown major version."""
    if not version:
        return Generation.UNKNOWN
    major = version.strip().split(".")[0].lstrip("0") or "0"
    return {
        "8": Generation.JETSTRESS_2007,
        "14": Generation.JETSTRESS_2010,
        "15": Generation.JETSTRESS_2013,
    }.get(major, Generation.UNKNOWN)


class TableKind(StrEnum):
    """The four per-instance tables of a Jetstress report."""

    TRANSACTIONAL = "transactional"
    BACKGROUND_MAINTENANCE = "background_maintenance"
    LOG_REPLICATION = "log_replication"
    TOTAL = "total"


# The titles Jetstress prints over its per-instance tables: one home for the reader that names a
# table by them, the appendix and the synthetic report writer that print them, the audit that cites them.
TABLE_TITLES: dict[TableKind, str] = {
    TableKind.TRANSACTIONAL: "Transactional I/O Performance",
    TableKind.BACKGROUND_MAINTENANCE: "Background Database Maintenance I/O Performance",
    TableKind.LOG_REPLICATION: "Log Replication I/O Performance",
    TableKind.TOTAL: "Total I/O Performance",
}
# The title of the host counters' table (no TableKind: its rows are counters, not instances).
HOST_TABLE_TITLE = "Host System Performance"


# Canonical per-instance metric keys. Latencies are milliseconds, sizes bytes, rates per second.
DB_READ_LATENCY = "db_reads_avg_latency_ms"
DB_WRITE_LATENCY = "db_writes_avg_latency_ms"
DB_READS = "db_reads_per_sec"
DB_WRITES = "db_writes_per_sec"
DB_READ_BYTES = "db_reads_avg_bytes"
DB_WRITE_BYTES = "db_writes_avg_bytes"
LOG_READ_LATENCY = "log_reads_avg_latency_ms"
LOG_WRITE_LATENCY = "log_writes_avg_latency_ms"
LOG_READS = "log_reads_per_sec"
LOG_WRITES = "log_writes_per_sec"
LOG_READ_BYTES = "log_reads_avg_bytes"
LOG_WRITE_BYTES = "log_writes_avg_bytes"
BDM_READS = "bdm_reads_per_sec"
BDM_READ_BYTES = "bdm_reads_avg_bytes"

INSTANCE_METRICS: tuple[str, ...] = (
    DB_READ_LATENCY,
    DB_WRITE_LATENCY,
    DB_READS,
    DB_WRITES,
    DB_READ_BYTES,
    DB_WRITE_BYTES,
    LOG_READ_LATENCY,
    LOG_WRITE_LATENCY,
    LOG_READS,
    LOG_WRITES,
    LOG_READ_BYTES,
    LOG_WRITE_BYTES,
    BDM_READS,
    BDM_READ_BYTES,
)

LATENCY_METRICS = frozenset({DB_READ_LATENCY, DB_WRITE_LATENCY, LOG_READ_LATENCY, LOG_WRITE_LATENCY})


@dataclass(frozen=True)
class Problem:
    """Something in the input that was damaged, skipped or inconsistent.

    Problems never stop reading; they are carried to the user with a count of what was lost.
    """

    source: str
    message: str
    location: str | None = None
    severity: str = "warning"  # "error" | "warning" | "note"
    lost: int = 0  # rows, samples, cells... skipped because of this problem
    # Part of the evidence could not be read (a required section missing, a file unreadable):
    # whatever was judged without it is INCOMPLETE, never PASS.
    unread: bool = False
    # The evidence contradicts itself, holds a figure that cannot exist, or cannot be of this test:
    # whatever was judged on it is INCOMPLETE at best, never PASS (analysis/vetting.py).
    doubt: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The problem as plain data (``--json``, ``inspect``, the catalog's reports): source,
        location, severity, message, how much was lost, and whether it keeps a verdict from PASS."""
        return {
            "source": self.source,
            "location": self.location,
            "severity": self.severity,
            "message": self.message,
            "lost": self.lost,
            "blocks_pass": self.blocks_pass,
        }

    @property
    def blocks_pass(self) -> bool:
        """Does this problem keep a verdict judged on its evidence from PASS?"""
        return self.unread or self.doubt

    def describe(self) -> str:
        """One line for the user: "source: location: message", with "(N skipped)" when something was lost."""
        where = f"{self.source}: {self.location}" if self.location else self.source
        lost = f" ({self.lost} skipped)" if self.lost else ""
        return f"{where}: {self.message}{lost}"


@dataclass
class InstanceRow:
    """One database instance's row of one per-instance table; missing cells are absent keys."""

    instance: str
    values: dict[str, float] = field(default_factory=dict)


@dataclass
class InstanceTable:
    """One per-instance table of a report (transactional, maintenance, replication or total), a row per
    database instance."""

    kind: TableKind
    rows: list[InstanceRow] = field(default_factory=list)
    source: str = ""

    def instances(self) -> list[str]:
        """The instance names, in the table's order."""
        return [row.instance for row in self.rows]

    def row(self, instance: str) -> InstanceRow | None:
        """The row of the instance with exactly this name, or None when the table has none."""
        for candidate in self.rows:
            if candidate.instance == instance:
                return candidate
        return None


@dataclass
class HostCounter:
    """One row of the 'Host System Performance' table."""

    name: str
    average: float | None
    minimum: float | None
    maximum: float | None


@dataclass
class DatabaseConfig:
    """Where one database instance keeps its log and database files, as the evidence states them."""

    instance: str
    log_path: str | None
    database_paths: list[str] = field(default_factory=list)


@dataclass
class BackupRow:
    """One instance's row of a database backup test: size in MB, elapsed seconds and MB/s, None when not
    stated."""

    instance: str
    database_size_mb: float | None
    elapsed_seconds: float | None
    mb_per_sec: float | None


@dataclass
class SoftRecoveryRow:
    """One instance's row of a soft recovery test: logs replayed and the seconds it took, None when not
    stated."""

    instance: str
    logs_replayed: float | None
    elapsed_seconds: float | None

    @property
    def seconds_per_log(self) -> float | None:
        if self.logs_replayed and self.elapsed_seconds is not None:
            return self.elapsed_seconds / self.logs_replayed
        return None


@dataclass
class ChecksumRow:
    """One database's row of the checksum pass (page counts, file length in MB, seconds); ``is_sum`` marks the
    total row."""

    database: str
    seen_pages: float | None
    bad_pages: float | None
    correctable_pages: float | None
    wrong_page_number_pages: float | None
    file_length_mb: float | None = None
    seconds_taken: float | None = None
    is_sum: bool = False


@dataclass
class Sizing:
    """'Database Sizing and Throughput'."""

    achieved_iops: float | None = None
    target_iops: float | None = None
    initial_database_bytes: float | None = None
    final_database_bytes: float | None = None
    database_files: int | None = None


@dataclass
class Thresholds:
    """Latency thresholds in milliseconds, as a test log or config states them."""

    db_read_avg_ms: float | None = None
    db_read_max_ms: float | None = None
    log_write_avg_ms: float | None = None
    log_write_max_ms: float | None = None


@dataclass
class LogEntry:
    """One entry of a Jetstress test log: its printed time stamp, message and line in the file."""

    timestamp: datetime  # local wall-clock time as printed (naive)
    message: str
    line: int  # 1-based line of the first physical line of this entry in its source


@dataclass
class TestLog:
    """A Jetstress test log: entries plus what was derived from them."""

    __test__ = False  # not a pytest test class, despite the name

    source: str
    entries: list[LogEntry] = field(default_factory=list)
    thresholds: Thresholds = field(default_factory=Thresholds)
    logging_intervals_ms: list[int] = field(default_factory=list)
    operation_mix: dict[str, float] = field(default_factory=dict)  # sessions, inserts %, ...
    sample_counts: list[tuple[str, int]] = field(default_factory=list)  # (log file, samples)
    samples_queried: list[tuple[str, int]] = field(default_factory=list)
    prerequisites_attained_at: datetime | None = None
    instance_latencies: dict[str, dict[str, float]] = field(default_factory=dict)
    errors: list[LogEntry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


@dataclass
class ConfigProfile:
    """What a Jetstress configuration XML says about the intended test (facts §1.3, §4)."""

    source: str
    test_type: str | None = None
    duration: str | None = None
    mailbox_count: int | None = None
    mailbox_iops: float | None = None
    mailbox_quota_mb: float | None = None
    thread_count: int | None = None
    database_copy_count: int | None = None
    log_interval_ms: int | None = None
    threshold_sets: dict[str, tuple[Thresholds, list[str]]] = field(default_factory=dict)
    instances: list[DatabaseConfig] = field(default_factory=list)
    jetstress_version: str | None = None

    @property
    def target_iops(self) -> float | None:
        if self.mailbox_count is None or self.mailbox_iops is None:
            return None
        return self.mailbox_count * self.mailbox_iops


# The columns of ``CounterLog.counters``; readers may add their own after these (BLG: ``type``).
COUNTERS_SCHEMA: dict[str, pl.DataType] = {
    "column": pl.String(),
    "path": pl.String(),
    "machine": pl.String(),
    "object": pl.String(),
    "instance": pl.String(),
    "counter": pl.String(),
    "duplicate": pl.Boolean(),
}


@dataclass
class LogDamage:
    """What a reader could not keep of a counter log, for the verdicts to take into account.

    ``cells`` counts, per sample column, cells that held something other than a number (the
    cell is null in ``samples``, the rest of its row kept). ``rows_lost`` counts samples lost
    whole (a row or record that could not be placed in time). ``lost_maxima`` holds, per
    column, the largest number read from such lost rows: a value that may hide a failure.
    """

    cells: dict[str, int] = field(default_factory=dict)
    rows_lost: int = 0
    lost_maxima: dict[str, float] = field(default_factory=dict)


@dataclass
class CounterLog:
    """A perfmon counter log, whatever file it came from (CSV, TSV, BLG).

    ``counters`` has one row per sample column: ``column`` (the column name in ``samples``),
    ``path`` (as written), ``machine``, ``object``, ``instance`` (null when none), ``counter``,
    and ``duplicate`` (true for second and later occurrences of the same path).
    ``samples`` has ``timestamp`` (Datetime, UTC) and one Float64 column per counter; a
    missing sample is null, never zero.
    """

    source: str
    format: str  # "pdh-csv" | "pdh-tsv" | "blg"
    counters: pl.DataFrame
    samples: pl.DataFrame
    utc_offset_minutes: int | None = None  # local = UTC + offset
    time_zone_name: str | None = None
    problems: list[Problem] = field(default_factory=list)
    damage: LogDamage = field(default_factory=LogDamage)
    # CSV/TSV: the encoding the text was decoded from ("windows-1250", "utf-8", ...) and why.
    encoding: str | None = None
    encoding_basis: str | None = None
    # Raw values (timestamp + one Int64 column per counter column) of counters whose type the
    # reader does not cook; their ``samples`` column stays empty. BLG only.
    raw: pl.DataFrame | None = None
    # Chart series already worked out from the samples (metrics.instance_series), by metric,
    # points and window; what is left of a log once its samples are released.
    chart_series: dict[tuple[Any, ...], pl.DataFrame] = field(default_factory=dict, repr=False, compare=False)
    released: bool = field(default=False, repr=False, compare=False)

    @property
    def sample_count(self) -> int:
        return self.samples.height

    def release_samples(self) -> None:
        """Keep the time stamps and the chart series, let the counter values go: a build holds
        one server's samples at a time instead of the whole solution's. Asking a released log
        for anything else is an error (metrics.instance_series says so), never a null."""
        self.samples = self.samples.select("timestamp")
        self.raw = None
        self.released = True

    @property
    def streamed(self) -> bool:
        """Are the samples read from the file on demand, batch by batch (a large log)?"""
        return False

    def sample_batches(self) -> Iterator[pl.DataFrame]:
        """The samples in order, a batch of rows at a time (here: the whole frame, once)."""
        yield self.samples


class SampleSource(Protocol):
    """Where a streamed log's samples come from: every call reads the file again."""

    def batches(self) -> Iterator[pl.DataFrame]:
        """The log's samples in order, one bounded batch of rows at a time, read from the file again."""


class StreamedCounterLog(CounterLog):
    """A counter log too large to hold: its samples are read from the file again whenever they
    are needed, one bounded batch of rows at a time (``sample_batches``). ``samples`` still
    works, but it reads and holds every sample: code that handles large logs uses the batches.
    """

    def __init__(
        self,
        *,
        source: str,
        format: str,
        counters: pl.DataFrame,
        reader: SampleSource,
        sample_count: int,
        utc_offset_minutes: int | None = None,
        time_zone_name: str | None = None,
        problems: list[Problem] | None = None,
        damage: LogDamage | None = None,
        encoding: str | None = None,
        encoding_basis: str | None = None,
    ) -> None:
        self._reader = reader
        self._count = sample_count
        super().__init__(
            source=source,
            format=format,
            counters=counters,
            samples=pl.DataFrame(),
            utc_offset_minutes=utc_offset_minutes,
            time_zone_name=time_zone_name,
            problems=problems or [],
            damage=damage or LogDamage(),
            encoding=encoding,
            encoding_basis=encoding_basis,
        )

    def __repr__(self) -> str:
        return f"StreamedCounterLog({self.source!r}, {self.format!r}, {self._count} samples)"

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = None  # type: ignore[assignment]

    @property
    def samples(self) -> pl.DataFrame:
        return pl.concat(list(self._reader.batches()), how="vertical")

    @samples.setter
    def samples(self, _value: pl.DataFrame) -> None:
        pass  # the file holds them

    @property
    def sample_count(self) -> int:
        return self._count

    @property
    def streamed(self) -> bool:
        return True

    def sample_batches(self) -> Iterator[pl.DataFrame]:
        """The samples in order, read from the file again one bounded batch of rows at a time."""
        yield from self._reader.batches()


@dataclass
class Run:
    """One Jetstress test on one server, from any mix of evidence files."""

    kind: TestKind
    machine: str
    sources: list[str] = field(default_factory=list)
    overall_result: str | None = None  # as printed: "Pass" / "Fail"
    # Jetstress's verdict as each other source states it (the result XML's), by source: judged too.
    reported_results: dict[str, str] = field(default_factory=dict)
    test_description: str | None = None
    jetstress_version: str | None = None
    ese_version: str | None = None
    operating_system: str | None = None
    performance_log: str | None = None  # the counter log the report names
    test_start: datetime | None = None
    test_end: datetime | None = None
    collection_start: datetime | None = None
    collection_end: datetime | None = None
    summary: dict[str, str] = field(default_factory=dict)  # every Test Summary row, raw
    issues: list[str] = field(default_factory=list)  # result XML test-issues
    sizing: Sizing = field(default_factory=Sizing)
    parameters: dict[str, str] = field(default_factory=dict)  # system parameters, raw
    databases: list[DatabaseConfig] = field(default_factory=list)
    tables: dict[TableKind, InstanceTable] = field(default_factory=dict)
    host: list[HostCounter] = field(default_factory=list)
    backup: list[BackupRow] = field(default_factory=list)
    soft_recovery: list[SoftRecoveryRow] = field(default_factory=list)
    checksum: list[ChecksumRow] = field(default_factory=list)
    test_log: TestLog | None = None
    counter_log: CounterLog | None = None
    config: ConfigProfile | None = None
    event_log_errors: int | None = None  # error events in the test window, when event logs exist
    problems: list[Problem] = field(default_factory=list)
    # Its figures were checked against what they can be and against each other (analysis/vetting.py):
    # once, wherever the run came from, so that judging it twice names each problem once.
    vetted: bool = field(default=False, repr=False, compare=False)

    @property
    def generation(self) -> Generation:
        return generation_from_version(self.jetstress_version)

    def instance_names(self) -> list[str]:
        """The database instances of the run: from the transactional or total table, else the backup or soft
        recovery rows, else the configured databases."""
        for kind in (TableKind.TRANSACTIONAL, TableKind.TOTAL):
            table = self.tables.get(kind)
            if table is not None and table.rows:
                return table.instances()
        names = [row.instance for row in self.backup] or [row.instance for row in self.soft_recovery]
        return names or [db.instance for db in self.databases]

    def host_counter(self, name: str) -> HostCounter | None:
        """The Host System Performance row of this counter name (case-insensitive), or None."""
        wanted = name.casefold()
        for counter in self.host:
            if counter.name.casefold() == wanted:
                return counter
        return None


@dataclass
class Server:
    """One tested server and its runs."""

    name: str
    runs: list[Run] = field(default_factory=list)


@dataclass
class Solution:
    """The evidence of a whole tested solution: its servers and the problems met reading it."""

    name: str
    servers: list[Server] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def server(self, name: str) -> Server:
        """The server of this name (case-insensitive); one is added when there is none yet."""
        for server in self.servers:
            if server.name.casefold() == name.casefold():
                return server
        created = Server(name)
        self.servers.append(created)
        return created


# --- The solution manifest: what the vendor states about a tested design (issue "Documents") ---

PLACEHOLDER = "TODO(vendor)"  # marks text `esrp-report init` leaves for the vendor to write


@dataclass
class DocumentInfo:
    """What the manifest says about the document to publish: vendor, product, title, dates and versions."""

    vendor: str
    product: str
    title: str
    part_number: str = ""
    tested_date: str = ""
    published_date: str = ""
    exchange_version: str = "2010"
    esrp_version: str = "3.0"
    # The PDF's metadata: author (default the vendor), subject and keywords (default worked out
    # from the product and versions; keywords comma-separated).
    author: str = ""
    subject: str = ""
    keywords: str = ""
    # Deprecated: the vendor's document never carries the tool's "Built by esrp-report" line and
    # the reviewer's report always does; a stated value is only warned of (None: not stated).
    stamp: bool | None = None


@dataclass
class UserProfile:
    """The simulated user profile of the design, as the manifest states it; IOPS are per mailbox."""

    mailboxes: int  # total simulated mailboxes of the whole design
    iops_per_mailbox: float  # the user profile before headroom
    headroom_percent: float = 0.0
    tested_iops_per_mailbox: float | None = None  # as tested; default profile x (1 + headroom)
    mailbox_size_gb: float | None = None
    dags: int = 1
    servers_per_dag: int = 1
    copies_per_database: int = 1
    active_mailboxes_per_server: int | None = None  # default mailboxes / tested servers

    @property
    def tested_iops(self) -> float:
        if self.tested_iops_per_mailbox is not None:
            return self.tested_iops_per_mailbox
        return self.iops_per_mailbox * (1 + self.headroom_percent / 100)


@dataclass
class ManifestServer:
    """One server of the manifest: its label and the evidence folders or files it names."""

    label: str
    results: list[str]  # folders or files, as written in the manifest (relative to it)
    # What the vendor states about this server, keyed as in model/server_facts.toml (OS, versions,
    # databases...): `build` checks each against the server's evidence.
    facts: dict[str, str | int | float] = field(default_factory=dict)
    differs: dict[str, str] = field(default_factory=dict)  # fact key -> why it differs from the evidence


@dataclass
class KeyValueTable:
    """A two-column table of the document (hardware, software, disks or the vendor's own): key, title,
    rows."""

    key: str  # "hardware", "software", "disks", or the vendor's own
    title: str
    rows: list[tuple[str, str]]
    differs: dict[str, str] = field(default_factory=dict)  # row item -> why it differs from the evidence


@dataclass
class Branding:
    """How the document looks: logo file, colours and page size ("A4" or "Letter")."""

    logo: str | None = None  # a file in the manifest's folder
    primary_colour: str = "#1f4e79"
    accent_colour: str = "#c00000"
    page_size: str = "A4"  # "A4" | "Letter"


@dataclass(frozen=True)
class VendorFigure:
    """An image the vendor puts in the document (an architecture diagram, a photo), read and
    checked when the manifest is read: PNG, JPEG or SVG, within the size limits, an SVG with no
    script and no external reference. ``data`` is embedded as is, as a ``data:`` URL."""

    file: str  # as the manifest names it, relative to the manifest's folder
    caption: str
    section: str  # the section it is placed in: a [sections] key, "tested_deployment", "results" or an id
    media_type: str  # "image/png" | "image/jpeg" | "image/svg+xml"
    data: bytes = field(repr=False)
    anchor: str = ""  # the figure's id in the document
    width_px: int | None = None  # a raster image's pixel size, from its header
    height_px: int | None = None


@dataclass(frozen=True)
class VendorSection:
    """A section of the vendor's own, in the order and place the manifest gives: its id (the
    anchor), title, Markdown body, and the slot or vendor section it follows."""

    key: str
    title: str
    body: str  # Markdown
    after: str  # one of SECTION_SLOTS or another vendor section's key


@dataclass
class Manifest:
    """A solution manifest: what the vendor states about a tested design, and the problems found in it."""

    path: str  # the manifest file
    document: DocumentInfo
    profile: UserProfile
    servers: list[ManifestServer]
    tables: list[KeyValueTable] = field(default_factory=list)
    sections: dict[str, str] = field(default_factory=dict)  # Markdown, keys from SECTION_KEYS
    convention: str = "esrp-3.0"
    convention_overrides: dict[str, Any] = field(default_factory=dict)
    branding: Branding = field(default_factory=Branding)
    template: str = "esrp"
    template_override: str | None = None  # a folder searched before templates/
    database_capacity_gb: float | None = None  # formatted capacity for databases (GiB)
    rules_file: str | None = None
    rules_loosen: str | None = None  # why the rules file may be more lenient than Microsoft's thresholds
    # The design's [sizing] as stated, and the [profile] keys the sizing gives as stated (if at all).
    # Reading stops there; analysis.sizing.sized_manifest works the sizing out: it sets ``sizing``
    # and takes those profile keys from it (a manifest with a spec and no result is not sized yet).
    sizing_spec: SizingSpec | None = None
    stated_profile: dict[str, float] = field(default_factory=dict)
    sizing: SizingResult | None = None  # the design's [sizing] worked out: the profile's targets follow it
    problems: list[Problem] = field(default_factory=list)  # e.g. a stated profile the sizing contradicts
    # Why a stated fact differs from the evidence, by table ("document", "profile") and key: `build`
    # refuses a difference without a reason and prints the reason in the document's notes.
    differs: dict[str, dict[str, str]] = field(default_factory=dict)
    vendor_sections: list[VendorSection] = field(default_factory=list)  # [[section]], in manifest order
    figures: list[VendorFigure] = field(default_factory=list)  # [[figure]] and each [[section]]'s figures
    # [appendix] servers: the labels of the servers whose test reports the appendix shows; None
    # for every server (the default).
    appendix_servers: list[str] | None = None
    # ``build --allow-linked-files``: the manifest's files may be hard links or on another device
    # (files/safe.py). Never read from the manifest itself: its author is the one judged.
    linked_files_allowed: bool = False


# --- Published documents (the audit's input) ---------------------------------------------------

# A printed number: optional sign, thousands separators, decimals.
_PRINTED_NUMBER = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$|^[-+]?\.\d+$")


# DocNumber is frozen, so one parse serves every cell printing the same text: a document repeats
# its figures (a 50 MB audit parses hundreds of thousands of cells); bounded, so junk cannot grow it.
@functools.lru_cache(maxsize=65536)
def _parse_printed(text: str) -> DocNumber | None:
    return DocNumber._parse(text)


@dataclass(slots=True)  # a 50 MB document is a million of these
class DocLine:
    """One line of a published document, with the cells it splits into when it is a table row."""

    no: int  # 1-based line of the source text (of the extracted text, for a PDF)
    raw: str
    page: int | None = None
    text: str = ""  # markup removed, whitespace collapsed
    cells: list[str] | None = None
    heading: int = 0  # Markdown heading level, 0 when not a heading


@dataclass(frozen=True, slots=True)
class DocNumber:
    """A number as printed: its value, how many decimals it was printed with, and the text."""

    value: float
    decimals: int
    text: str
    percent: bool = False
    # Where it is printed: the document line and the cell of that line's row (0 = the label cell).
    # Not part of equality: the same figure printed twice is the same number. 0 / -1 when the
    # figure was not read from a cell (a value worked out, a fact's leading figure).
    line: int = field(default=0, compare=False)
    column: int = field(default=-1, compare=False)

    @staticmethod
    def parse(text: str) -> DocNumber | None:
        """A printed number ("14,422.400", "39%", "< 20"-free) with its decimals, or None."""
        return _parse_printed(text)

    @staticmethod
    def _parse(text: str) -> DocNumber | None:
        cleaned = text.strip().rstrip("*").strip()
        percent = cleaned.endswith("%")
        cleaned = cleaned.rstrip("%").strip()
        if not _PRINTED_NUMBER.match(cleaned):
            return None
        decimals = len(cleaned.split(".", 1)[1]) if "." in cleaned else 0
        return DocNumber(float(cleaned.replace(",", "")), decimals, text.strip(), percent=percent)

    @staticmethod
    def leading(text: str) -> DocNumber | None:
        """The number a cell starts with: "10,000" of "10,000 users", "0.120" of "0.120 IOPs"."""
        match = re.match(r"^\s*([\d,]*\.?\d+)", text)
        if match is None or text[match.end() : match.end() + 1] == "\u2026":
            return None  # "1,000…": a figure marked not read (cut, or its marks undecided) is no number
        return DocNumber.parse(match.group(1))

    @property
    def half_unit(self) -> float:
        """Half of the last printed digit: the most that rounding can have moved the value."""
        return 0.5 * 10.0**-self.decimals

    def at(self, line: int, column: int) -> DocNumber:
        """The same number, placed at a cell of a line."""
        return DocNumber(self.value, self.decimals, self.text, self.percent, line, column)

    @property
    def placed(self) -> bool:
        """Was it read from a cell of the document (so that a relation over it covers a cell)?"""
        return self.line > 0 and self.column >= 0


@dataclass
class SummaryRow:
    """One metric row of a published summary table: a value per column (None where unreadable) and its
    target."""

    key: str  # "achieved", "reads", "read_latency", ... (ingest/documents/vocabulary.py)
    label: str  # as printed
    line: int
    values: list[DocNumber | None]  # one per column of the table
    target: DocNumber | None = None


# The column of a per-server table that names no server in a document of several: read, checked by
# the relations that need no server, and matched to no appendix report. Its column is this and the
# table's first line ("unnamed server at line 262"), so two such tables stay two servers.
UNNAMED_SERVER = "unnamed server"


def is_unnamed_server(column: str) -> bool:
    """Is this per-server column one whose server the document does not name?"""
    return column.startswith(UNNAMED_SERVER)


@dataclass
class SummaryTable:
    """A published summary table (server, aggregate, backup or replay) of one test type, with its rows."""

    kind: str  # "server", "aggregate", "backup" or "replay"
    test: TestKind
    columns: list[str]  # "Server 4", "Host 3650-4", "JS16", "all servers", "unnamed server at line N"
    first_line: int
    has_target: bool = False
    rows: list[SummaryRow] = field(default_factory=list)


@dataclass(frozen=True)
class TrendCell:
    """One cell of a published trend table: the change as a percent and as an absolute number, with the
    unit."""

    percent: DocNumber
    absolute: DocNumber
    unit: str


@dataclass
class TrendTable:
    """A published trend table: title, columns and a row of cells per label, with source lines."""

    title: str
    columns: list[str]
    first_line: int
    rows: list[tuple[str, int, list[TrendCell]]] = field(default_factory=list)  # label, line, cells


@dataclass
class Formula:
    """A worked formula as printed: ``name = side = side ...``, each side text."""

    name: str
    sides: list[str]
    line: int


@dataclass(frozen=True)
class ProseUsers:
    """A sentence stating the users, the servers they are spread across and the users per server
    ("14,000 across four servers, with 3,750 users per server")."""

    total: DocNumber
    servers: int
    servers_text: str  # as printed: "four", "20"
    per_server: DocNumber
    line: int
    sentence: str


@dataclass(frozen=True)
class ProseFact:
    """A sentence's figure that restates a fact of the tables (``fact``: its key), e.g. "100,000
    users" of "supporting 100,000 users"; ``unit`` as printed ("GB"), empty for a count."""

    fact: str
    figure: DocNumber
    unit: str
    line: int
    sentence: str


@dataclass(frozen=True)
class StatedProduct:
    """A figure a sizing table states as a product of others printed beside it (``kind``): IOPS
    planned = users x IOPS per user, a cache = users x cache per user, raw capacity = drives x
    drive size, a RAID capacity = data drives x drive size.

    ``counts``: the exact factors (users, drives: counts; a drive's size: a nominal size, not a
    rounded measure). ``rate``: the factor the results of one ``group`` share, printed once and
    rounded (0.18 IOPS per mailbox), or None when it is not printed (a RAID set's data drives:
    ``whole``, a whole number). ``scale`` converts the factors' units to the result's (6 MB x
    5,000 users is 30 GB: 0.001)."""

    kind: str  # "iops_per_user", "cache_per_user", "raw_capacity", "raid_capacity"
    what: str  # as a finding names it
    table: str
    result: DocNumber
    counts: tuple[DocNumber, ...]
    rate: DocNumber | None = None
    scale: float = 1.0
    group: str = ""
    whole: bool = False


@dataclass(frozen=True)
class SeriesUsers:
    """The user counts a table gives one test series ("#1: 5,000 / 7,500 / 10,000 users")."""

    section: str  # the numbered section the table sits in; series labels are local to it
    label: str  # "#1"
    users: tuple[int, ...]
    table: str
    line: int


@dataclass
class PublishedReport:
    """One test report of the appendix, read into a Run when it could be."""

    title: str
    first_line: int
    last_line: int
    run: Run | None = None
    problem: str | None = None
    # The report's figures as printed, each at its line and cell, by what they are (the report
    # reader's keys: ("instance", table kind, instance, field), ("sizing", field), ...).
    cells: dict[tuple[str, ...], DocNumber] = field(default_factory=dict)


@dataclass
class PublishedDocument:
    """A published ESRP document read for the audit: its lines, summary and trend tables, facts, formulas,
    appendix reports and problems."""

    source: str
    format: str  # "pdf", "html", "markdown", "text"
    lines: list[DocLine] = field(default_factory=list)
    convention: str | None = None  # "3.0", "4.0" as the document states
    summary_tables: list[SummaryTable] = field(default_factory=list)
    facts: dict[str, tuple[str, int]] = field(default_factory=dict)  # key -> (text, line), first seen
    all_facts: list[tuple[str, str, int]] = field(default_factory=list)  # (key, text, line), every one
    trend_tables: list[TrendTable] = field(default_factory=list)
    formulas: list[Formula] = field(default_factory=list)
    series: list[SeriesUsers] = field(default_factory=list)
    prose_users: list[ProseUsers] = field(default_factory=list)
    products: list[StatedProduct] = field(default_factory=list)
    prose_facts: list[ProseFact] = field(default_factory=list)
    unread_summary_rows: int = 0  # summary rows whose columns could not be told apart
    reports: list[PublishedReport] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
