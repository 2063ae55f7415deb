"""The labels and phrases a published document is read by: which row is which metric, which
label is which fact, which header names a server, which columns a per-instance table has.

The data is in the TOML files of ``vocabulary/`` beside this module (``summary.toml``,
``facts.toml``, ``tables.toml``, ``reports.toml``; each says what it holds and where a spelling
was seen), read once when this module is imported and checked as it is read (:func:`load`). The
names below are that data, as the passes use it: ``tables.py`` (summary rows, header lines),
``facts.py`` (label/value facts, the stated ESRP version), ``cells.py`` (labels whose separator
from their value was lost) and ``appendix.py`` (per-instance table headings). Matching a printed
label against a list (normalised, then by similarity) is ``matching.py``. The appendix reports'
own labels are the Jetstress report reader's (``ingest/jetstress/labels.py``).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

from esrp_report import model as m
from esrp_report.ingest.documents.matching import normalize
from esrp_report.ingest.jetstress import labels as L
from esrp_report.model.errors import EsrpError


class VocabularyError(EsrpError):
    """A vocabulary file of the package is missing, is not TOML, or holds a key of the wrong shape."""


# The sections of a report whose tables have a row per database instance.
INSTANCE_SECTIONS = frozenset(kind.value for kind in m.TableKind) | {"backup", "recovery"}
# STANDARD_COLUMNS's key for the two wide tables (transactional, total).
_WIDE = "wide"


class Vocabulary(TypedDict):
    """Every vocabulary of the document reader, as read from the files of one folder (a typed
    dict, not a dataclass: building a dataclass costs start-up time for nothing here)."""

    summary_metrics: dict[str, str]  # normalised label -> metric key
    backup_metrics: frozenset[str]
    facts: dict[str, str]  # normalised label -> fact key
    same_line_labels: frozenset[str]  # fact labels (``normalize_label``) a value may follow on one line
    server_token: re.Pattern[str]
    header_words: re.Pattern[str]
    value_headers: frozenset[str]  # casefolded
    caption: re.Pattern[str]
    convention: re.Pattern[str]
    appendix_start: re.Pattern[str]
    standard_columns: dict[str, list[str]]
    instance_table_order: dict[str, list[str]]  # report kind -> its instance tables, in print order


# The package's vocabulary files, beside this module (read by path: a regular package, never
# zipped; importlib.resources would cost half a millisecond more at every start).
FOLDER = Path(__file__).with_name("vocabulary")
FILES = ("summary.toml", "facts.toml", "tables.toml", "reports.toml")


def load(folder: Path = FOLDER) -> Vocabulary:
    """The vocabularies of ``folder`` (the package's by default), checked: a file that is missing
    or not TOML, or a key of the wrong shape, raises :class:`VocabularyError` naming the file and
    the key."""
    summary, facts, tables, reports = (_File.read(folder, name) for name in FILES)

    summary.no_other_keys(("metric", "header"))
    metrics, backup = _labelled(summary, "metric", flag="backup")
    header = summary.table("header", ("server_token", "header_words", "value_columns"))
    facts.no_other_keys(("fact",))
    fact_labels, same_line = _labelled(facts, "fact", flag="same_line")
    tables.no_other_keys(("caption", "version"))
    reports.no_other_keys(("appendix_start", "standard_columns", "instance_table_order"))
    return Vocabulary(
        summary_metrics=metrics,
        backup_metrics=frozenset(backup),
        facts=fact_labels,
        same_line_labels=frozenset(
            L.normalize_label(label) for labels in same_line.values() for label in labels
        ),
        server_token=summary.pattern(header, "header.server_token", groups=3),
        header_words=summary.pattern(header, "header.header_words"),
        value_headers=frozenset(v.casefold() for v in summary.strings(header, "header.value_columns")),
        caption=tables.pattern(tables.data, "caption"),
        convention=tables.pattern(tables.data, "version", groups=1),
        appendix_start=reports.pattern(reports.data, "appendix_start"),
        standard_columns=_standard_columns(reports),
        instance_table_order=_instance_table_order(reports),
    )


class _File:
    """One vocabulary file's data, and the checks of its keys (each error names file and key)."""

    def __init__(self, name: str, data: dict[str, object]) -> None:
        self.name = name
        self.data = data

    @classmethod
    def read(cls, folder: Path, name: str) -> _File:
        try:
            text = folder.joinpath(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise VocabularyError(f"vocabulary file {name}: cannot be read: {exc}") from exc
        try:
            return cls(name, tomllib.loads(text))
        except tomllib.TOMLDecodeError as exc:
            raise VocabularyError(f"vocabulary file {name}: not TOML: {exc}") from exc

    def error(self, key: str, problem: str) -> VocabularyError:
        return VocabularyError(f"vocabulary file {self.name}, key {key}: {problem}")

    def table(self, key: str, allowed: tuple[str, ...] | None = None) -> dict[str, object]:
        """The table at dotted ``key``, holding only the keys ``allowed`` (if given)."""
        value: object = self.data
        for part in key.split("."):
            if not isinstance(value, dict) or part not in value:
                raise self.error(key, "missing")
            value = value[part]
        if not isinstance(value, dict):
            raise self.error(key, f"must be a table, not {_kind(value)}")
        if allowed is not None and (unknown := sorted(set(value) - set(allowed))):
            raise self.error(key, f"unknown key(s) {', '.join(unknown)}; known: {', '.join(allowed)}")
        return value

    def no_other_keys(self, allowed: tuple[str, ...]) -> None:
        unknown = sorted(set(self.data) - set(allowed))
        if unknown:
            raise self.error(unknown[0], f"unknown key; known: {', '.join(allowed)}")

    def strings(self, table: dict[str, object], key: str) -> list[str]:
        """A non-empty list of non-empty strings."""
        value = table.get(key.rpartition(".")[2])
        if value is None:
            raise self.error(key, "missing")
        if not isinstance(value, list) or not value:
            raise self.error(key, f"must be a non-empty list of strings, not {_kind(value)}")
        for item in value:
            if not isinstance(item, str) or not item.strip():
                raise self.error(key, f"must hold non-empty strings only, not {item!r}")
        return [str(item) for item in value]

    def pattern(self, table: dict[str, object], key: str, groups: int | None = None) -> re.Pattern[str]:
        """A regular expression, compiled to match ignoring case, with ``groups`` groups if given."""
        value = table.get(key.rpartition(".")[2])
        if not isinstance(value, str) or not value:
            raise self.error(key, f"must be a regular expression (a string), not {_kind(value)}")
        try:
            compiled = re.compile(value, re.IGNORECASE)
        except re.error as exc:
            raise self.error(key, f"not a regular expression: {exc}") from exc
        if groups is not None and compiled.groups != groups:
            raise self.error(key, f"must have {groups} group(s), not {compiled.groups}")
        return compiled


def _labelled(
    file: _File, name: str, flag: str, normal: Callable[[str], str] = normalize
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """[name.KEY] tables of ``labels`` (printed spellings) and an optional true/false ``flag``:
    normalised label -> KEY, in file order, and the flagged keys' printed labels. A label that
    normalises like another (of any key) is an error: one of them would never be matched."""
    by_label: dict[str, str] = {}
    flagged: dict[str, list[str]] = {}
    keys = file.table(name)
    if not keys:
        raise file.error(name, "holds no entries")
    for key in keys:
        where = f"{name}.{key}"
        entry = file.table(where, ("labels", flag))
        labels = file.strings(entry, f"{where}.labels")
        for label in labels:
            text = normal(label)
            if text in by_label:
                raise file.error(
                    f"{where}.labels", f"{label!r} reads as {text!r}, already a label of {by_label[text]!r}"
                )
            by_label[text] = key
        marked = entry.get(flag, False)
        if not isinstance(marked, bool):
            raise file.error(f"{where}.{flag}", f"must be true or false, not {_kind(marked)}")
        if marked:
            flagged[key] = labels
    return by_label, flagged


def _standard_columns(reports: _File) -> dict[str, list[str]]:
    known = (_WIDE, *sorted(INSTANCE_SECTIONS))
    table = reports.table("standard_columns", known)
    if _WIDE not in table:
        raise reports.error(f"standard_columns.{_WIDE}", "missing")
    return {key: reports.strings(table, f"standard_columns.{key}") for key in table}


# The report kinds an instance-table order is given for; every kind needs one.
ORDERED_REPORTS = ("performance", "backup", "recovery")


def _instance_table_order(reports: _File) -> dict[str, list[str]]:
    table = reports.table("instance_table_order", ORDERED_REPORTS)
    tables = {kind.value for kind in m.TableKind}
    order: dict[str, list[str]] = {}
    for report in ORDERED_REPORTS:
        key = f"instance_table_order.{report}"
        names = reports.strings(table, key)
        if unknown := sorted(set(names) - tables):
            raise reports.error(
                key, f"unknown table(s) {', '.join(unknown)}; known: {', '.join(sorted(tables))}"
            )
        if len(set(names)) != len(names):
            raise reports.error(key, "names a table twice")
        order[report] = names
    return order


def _kind(value: object) -> str:
    return "nothing" if value is None else type(value).__name__


_VOCABULARY = load()

# --- summary tables -------------------------------------------------------------------------

# Summary rows, by metric: the labels seen in ESRP 3.0 and 4.0 documents (and in ours).
SUMMARY_METRICS: dict[str, str] = _VOCABULARY["summary_metrics"]
BACKUP_METRICS: frozenset[str] = _VOCABULARY["backup_metrics"]

# --- facts ------------------------------------------------------------------------------------

# Label/value facts of the simulated configuration and storage tables.
FACTS: dict[str, str] = _VOCABULARY["facts"]

# --- header lines, the stated version, the appendix's start ------------------------------------

# A column of a per-server table: "Server 4", "Host 3650-4".
SERVER_TOKEN: re.Pattern[str] = _VOCABULARY["server_token"]
# The other words a per-server header line may hold beside its servers.
HEADER_WORDS: re.Pattern[str] = _VOCABULARY["header_words"]
# A table's caption ("Table 5 Server 1 test results"): the number prefix, then what it holds.
CAPTION: re.Pattern[str] = _VOCABULARY["caption"]
# The second cell of a vertical label/value table's header ("Database I/O | Value").
VALUE_HEADERS: frozenset[str] = _VOCABULARY["value_headers"]
# The ESRP version a document states ("ESRP - Storage Version 3.0", "Microsoft ESRP 4.0").
CONVENTION: re.Pattern[str] = _VOCABULARY["convention"]
# The heading (or short line) that starts the appendix.
APPENDIX_START: re.Pattern[str] = _VOCABULARY["appendix_start"]

# --- labels whose value follows on the same line, the separator lost ("Machine Name EMAIL2") ----

PAIR_LABELS = frozenset(
    {*L.SUMMARY_LABELS, *L.SIZING_LABELS, *L.PARAMETER_LABELS, *_VOCABULARY["same_line_labels"]}
)
PAIR_FIRST_WORDS = frozenset(L.normalize_label(label).split(" ")[0] for label in PAIR_LABELS)
# Of them, the facts' labels: a line starting with one is split after it before its trailing
# figures are looked at ("Number of physical disks in test 28 (+2 hot spares)").
FACT_PAIR_LABELS: frozenset[str] = _VOCABULARY["same_line_labels"]
FACT_PAIR_FIRST_WORDS = frozenset(label.split(" ")[0] for label in FACT_PAIR_LABELS)
FACT_PAIR_WORDS = max((len(label.split(" ")) for label in FACT_PAIR_LABELS), default=1)

# --- appendix reports: per-instance tables ----------------------------------------------------

# The standard Jetstress column order of each per-instance table, used when a table's heading
# is missing or wrapped beyond repair and the row width matches.
STANDARD_COLUMNS: dict[str, list[str]] = _VOCABULARY["standard_columns"]
# The order Jetstress prints a report's per-instance tables in, by report kind ("performance"
# for Performance and Stress, "backup", "recovery"): places a table whose heading was lost.
INSTANCE_TABLE_ORDER: dict[str, list[str]] = _VOCABULARY["instance_table_order"]
# The column headings of the tables of a report: a row most of whose cells are these is a header.
KNOWN_HEADERS = frozenset(
    {*L.INSTANCE_COLUMNS, *L.BACKUP_COLUMNS, *L.RECOVERY_COLUMNS, *L.CHECKSUM_COLUMNS, *L.HOST_HEADER}
)
# What a single-spaced header row (a PDF's text) is cut by (``cells.header_row``): the first
# words of the tables' first columns, and the longest column name in words.
HEADER_FIRST_WORDS = frozenset({"counter", "database"})
HEADER_WORDS_MAX = max(len(h.split(" ")) for h in KNOWN_HEADERS)
