"""The document reader's label vocabularies, read from the TOML files of
esrp_report/ingest/documents/vocabulary/: what they hold (the lists they replace, pinned by counts
and entries), that every spelling is matched to its own key, and that a broken file is refused
with an error naming the file and the key."""

from __future__ import annotations

import re
import shutil
import tomllib
from collections import Counter
from pathlib import Path

import pytest

from esrp_report.ingest.documents import vocabulary as V
from esrp_report.ingest.documents.matching import fuzzy_key, normalize

# The cutoff each table is matched with (tables.py uses fuzzy_key's default, facts.py 0.9).
CUTOFFS = {"metric": 0.86, "fact": 0.9}


def _printed(section: str) -> list[tuple[str, str]]:
    """(printed spelling, key) of every [section.KEY] table of the package's files."""
    name = {"metric": "summary.toml", "fact": "facts.toml"}[section]
    data = tomllib.loads((V.FOLDER / name).read_text(encoding="utf-8"))
    return [(label, key) for key, entry in data[section].items() for label in entry["labels"]]


def _table(section: str) -> dict[str, str]:
    return V.SUMMARY_METRICS if section == "metric" else V.FACTS


# --- what the files hold: the Python lists they replaced --------------------------------------


def test_the_counts_are_those_of_the_python_lists() -> None:
    assert len(V.SUMMARY_METRICS) == 28
    assert len(V.FACTS) == 67  # 29 of the Python lists, then the tested deployment's rows
    assert {"backup_per_database", "backup_per_server"} == V.BACKUP_METRICS
    assert {"value", "values", "detail"} == V.VALUE_HEADERS
    assert len(V.PAIR_LABELS) == 75 and len(V.PAIR_FIRST_WORDS) == 40
    assert len(V.KNOWN_HEADERS) == 36 and len(V.INSTANCE_SECTIONS) == 6
    assert {k: len(v) for k, v in V.STANDARD_COLUMNS.items()} == {
        "wide": 12,
        "background_maintenance": 2,
        "log_replication": 2,
        "backup": 3,
        "recovery": 2,
    }


def test_the_labels_per_key_are_those_of_the_python_lists() -> None:
    assert Counter(V.SUMMARY_METRICS.values()) == {
        "achieved": 2,
        "transfers": 2,
        "reads": 5,
        "writes": 5,
        "read_latency": 2,
        "write_latency": 2,
        "log_writes": 5,
        "log_latency": 2,
        "backup_per_database": 1,
        "backup_per_server": 1,
        "replay_seconds": 1,
    }
    assert Counter(V.FACTS.values()) == {
        "mailboxes": 2,
        "dags": 3,
        "servers_per_dag": 2,
        "mailboxes_per_server": 2,
        "databases_per_host": 2,
        "copies_per_database": 2,
        "mailboxes_per_database": 2,
        "iops_per_mailbox": 3,
        "host_server": 1,
        "disks": 1,
        "disks_tested": 1,
        "raw_capacity_per_disk": 2,
        "raw_capacity": 2,
        "databases": 1,
        "log_files_size": 1,
        "database_size": 1,
        "search_catalog": 1,
        # the tested deployment's other rows (ESRP's template and this tool's documents)
        "servers_tested": 1,
        "target_per_server": 1,
        "target_all_servers": 1,
        "mailbox_size": 1,
        "database_size_tested": 1,
        "formatted_capacity_used": 1,
        "capacity_used": 1,
        "storage_connectivity": 2,
        "storage_model": 2,
        "storage_cache": 1,
        "storage_controllers": 1,
        "storage_ports": 1,
        "host_bandwidth": 1,
        "switch": 2,
        "hba_model": 1,
        "hbas_per_host": 2,
        "max_spindles": 2,
        "hba_driver": 1,
        "hba_queue_target": 1,
        "hba_queue_depth": 2,
        "multipathing": 2,
        "host_os": 1,
        "ese_version": 1,
        "replication": 2,
        "disk_type": 2,
        "raid_level": 1,
        "formatted_capacity": 1,
        "formatted_capacity_databases": 1,
        "capacity_utilization": 1,
    }


def test_pinned_entries_are_stored_normalised() -> None:
    """Spellings are stored as printed; the tables hold them normalised, as the old lists did."""
    assert V.SUMMARY_METRICS["achieved transactional i/o per sec"] == "achieved"
    assert V.SUMMARY_METRICS["i/o database reads average latency"] == "read_latency"  # "(msec)" gone
    assert V.SUMMARY_METRICS["average database disk write latency"] == "write_latency"  # "(ms)" gone
    assert V.SUMMARY_METRICS["average time to play one log file"] == "replay_seconds"  # "(sec)" gone
    assert V.SUMMARY_METRICS["database disks transfers/sec"] == "transfers"
    # ":" goes, the other punctuation stays
    key = "simulated profile i/os per second per mailbox (iops, includes 20% headroom)"
    assert V.FACTS[key] == "iops_per_mailbox"
    assert V.FACTS["number of database availability groups (dags)"] == "dags"
    assert V.FACTS["raw capacity per disk (gb)"] == "raw_capacity_per_disk"
    assert V.FACTS["search catalog"] == "search_catalog"
    assert "host server type" in V.PAIR_LABELS and "host" in V.PAIR_FIRST_WORDS
    assert V.STANDARD_COLUMNS["recovery"] == ["Log files replayed", "Elapsed seconds"]
    assert V.STANDARD_COLUMNS["wide"][0] == "I/O Database Reads Average Latency (msec)"


def test_the_order_within_a_key_is_the_files() -> None:
    """The order of a key's spellings is kept (the similarity match's rival rule sees them in
    that order); the summary metrics keep the old list's order as a whole."""
    assert list(V.SUMMARY_METRICS)[:4] == [
        "achieved transactional i/o per sec",
        "achieved transactional i/o per second",
        "database disks transfers/sec",
        "database disk transfers/sec",
    ]
    assert [label for label, key in V.FACTS.items() if key == "dags"] == [
        "number of database availability groups (dags)",
        "number of dags",
        "database availability groups (dags)",
    ]


def test_the_patterns_are_the_old_ones() -> None:
    assert V.CAPTION.pattern == r"^(?:table|figure)\s+\d+[.:]?\s+"
    assert V.SERVER_TOKEN.pattern == r"\b(Server)\s+(\d+)\b|\bHost\s+(\S+)"
    assert V.HEADER_WORDS.pattern == r"database i/o|target values?|values|for \w+ servers|\*"
    assert V.APPENDIX_START.pattern == r"^appendix\b"
    assert V.CONVENTION.pattern == r"ESRP\s*[-–]?\s*(?:Storage\s+(?:Version\s+|v)?|v\s*)?(\d\.\d)\b(?!\.)"
    for pattern in (V.CAPTION, V.SERVER_TOKEN, V.HEADER_WORDS, V.APPENDIX_START, V.CONVENTION):
        assert pattern.flags & re.IGNORECASE
    found = V.CONVENTION.search("ESRP - Storage Version 3.0")
    assert found is not None and found.group(1) == "3.0"
    token = V.SERVER_TOKEN.search("Host 3650-4")
    assert token is not None and token.group(3) == "3650-4"


def test_loading_again_gives_the_same_data() -> None:
    loaded = V.load()
    assert loaded["summary_metrics"] == V.SUMMARY_METRICS and loaded["facts"] == V.FACTS
    assert loaded["standard_columns"] == V.STANDARD_COLUMNS
    assert loaded["instance_table_order"] == V.INSTANCE_TABLE_ORDER


# --- every spelling is matched to its own key -------------------------------------------------


@pytest.mark.parametrize("section", ["metric", "fact"])
def test_every_printed_spelling_matches_its_own_key(section: str) -> None:
    table, cutoff = _table(section), CUTOFFS[section]
    wrong = [
        (label, key, found)
        for label, key in _printed(section)
        if (found := fuzzy_key(label, table, cutoff)) != key
    ]
    assert wrong == []


@pytest.mark.parametrize("section", ["metric", "fact"])
def test_no_spelling_is_shadowed_by_another_key(section: str) -> None:
    """The table holds every spelling of the file, each to its own key: none was dropped or taken
    over by another key's spelling that reads the same once normalised."""
    printed = _printed(section)
    assert {normalize(label): key for label, key in printed} == _table(section)
    assert len(printed) == len(_table(section))


# --- a broken file is refused, naming the file and the key ------------------------------------


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    folder = tmp_path / "vocabulary"
    shutil.copytree(V.FOLDER, folder)
    return folder


def _edit(folder: Path, name: str, old: str, new: str) -> None:
    path = folder / name
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_copy_of_the_files_loads(copy: Path) -> None:
    assert V.load(copy)["facts"] == V.FACTS


@pytest.mark.parametrize(
    ("name", "old", "new", "message"),
    [
        ("facts.toml", "[fact.disks]", "[fact.disks", r"facts\.toml: not TOML"),
        (
            "summary.toml",
            'labels = ["MB read/sec per database"]',
            'labels = "MB read/sec per database"',
            r"summary\.toml, key metric\.backup_per_database\.labels: must be a non-empty list",
        ),
        (
            "summary.toml",
            'labels = ["MB read/sec per database"]',
            "labels = []",
            r"summary\.toml, key metric\.backup_per_database\.labels: must be a non-empty list",
        ),
        (
            "facts.toml",
            'labels = ["Search Catalog"]',
            'labels = ["Search Catalog", 3]',
            r"facts\.toml, key fact\.search_catalog\.labels: must hold non-empty strings only, not 3",
        ),
        (
            "facts.toml",
            'labels = ["Search Catalog"]',
            'labels = ["Search Catalog"]\nlables = ["x"]',
            r"facts\.toml, key fact\.search_catalog: unknown key\(s\) lables",
        ),
        (
            "facts.toml",
            'labels = ["Log files size"]',
            'labels = ["Log files size", "SEARCH catalog"]',
            r"facts\.toml, key fact\.search_catalog\.labels: 'Search Catalog' reads as 'search catalog', "
            r"already a label of 'log_files_size'",
        ),
        (
            "summary.toml",
            'backup = true\nlabels = ["MB read/sec per database"]',
            'backup = "yes"\nlabels = ["MB read/sec per database"]',
            r"summary\.toml, key metric\.backup_per_database\.backup: must be true or false",
        ),
        (
            "summary.toml",
            "header_words = 'database i/o",
            "header_words = '(database i/o",
            r"summary\.toml, key header\.header_words: not a regular expression",
        ),
        (
            "summary.toml",
            r"server_token = '\b(Server)\s+(\d+)\b|\bHost\s+(\S+)'",
            r"server_token = '\bServer\s+(\d+)\b|\bHost\s+(\S+)'",
            r"summary\.toml, key header\.server_token: must have 3 group\(s\), not 2",
        ),
        ("tables.toml", "version = ", "versions = ", r"tables\.toml, key versions: unknown key"),
        (
            "reports.toml",
            "recovery = [",
            "soft_recovery = [",
            r"reports\.toml, key standard_columns: unknown key\(s\) soft_recovery",
        ),
        (
            "reports.toml",
            'backup = ["total"]',
            'backup = ["totals"]',
            r"reports\.toml, key instance_table_order\.backup: unknown table\(s\) totals",
        ),
        (
            "reports.toml",
            'recovery = ["transactional", "background_maintenance", "total"]',
            'recovery = ["transactional", "total", "total"]',
            r"reports\.toml, key instance_table_order\.recovery: names a table twice",
        ),
    ],
)
def test_a_broken_file_names_the_file_and_the_key(
    copy: Path, name: str, old: str, new: str, message: str
) -> None:
    _edit(copy, name, old, new)
    with pytest.raises(V.VocabularyError, match=message):
        V.load(copy)


def test_a_missing_file_is_named(copy: Path) -> None:
    (copy / "tables.toml").unlink()
    with pytest.raises(V.VocabularyError, match=r"tables\.toml: cannot be read"):
        V.load(copy)
