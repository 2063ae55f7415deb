"""Per-server summary tables read by their content, whatever their layout (issue 30, item 1): the
seeds' summary tables as other vendors print them (``esrp_synth/summary_layouts.py``: caption
removed or reworded, the server named in a heading, the header row, the first cell or the sentence
before, machine names for "Server N", pipes or runs of spaces, other label spellings) must give the
same reading as the seed: as many per-server tables, their columns the same servers where a server
is named, the same errors and the same status. A table naming no server is the one server's in a
single-server document, and an unnamed server's (never a guessed one's) in a document of several.
``python tests/test_audit_summary_layouts.py`` prints the figures of docs/audit.md, "Summary-table
layouts"."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from benchmarks.audit_planted import Document, plants, run_plant
from esrp_report.analysis.rules import load_rules
from esrp_report.audit import audit
from esrp_report.ingest.documents.published import parse_document
from esrp_report.model import PublishedDocument
from esrp_synth.summary_layouts import machine_names, single_server, variants

DATA = Path(__file__).resolve().parent / "data" / "published"
RULES = load_rules(None)
SEEDS = ("vmax-000", "netapp-001", "dellemc-002")
# The variants whose tables name no server in a document of several: read as unnamed servers'.
UNNAMED = {("dellemc-002", "caption-removed"), ("dellemc-002", "caption-unnamed")}
# The variants whose table names no server in a document of one: the server's, with a note.
SINGLE = {("netapp-001", "caption-removed")}
# How far a variant's count of relations checked may stray from the seed's: an unnamed server's
# table is matched to no appendix report, so the relations against its report are not evaluated.
MARGIN = 0.15


@dataclass(frozen=True)
class Reading:
    tables: list[list[str]]  # each per-server table's columns, as the seed's servers (see resolved)
    errors: Counter[str]
    status: str
    relations: int
    notes: list[str]


@cache
def seed_text(seed: str) -> str:
    return (DATA / f"{seed}.txt").read_text(encoding="utf-8")


@cache
def machines(seed: str) -> dict[str, str]:
    return machine_names(seed_text(seed), f"{seed}.txt")


def resolved(seed: str, column: str) -> str:
    """A column as the server it is: the machine name of the seed's "Server N" or "Host X"."""
    if column.startswith("unnamed server"):
        return "unnamed"
    return machines(seed).get(column, column).removeprefix("Host ")


def parsed(text: str, name: str) -> PublishedDocument:
    return parse_document(text.encode("utf-8"), name)


def reading(seed: str, text: str) -> Reading:
    doc = parsed(text, f"{seed}.txt")
    result = audit(doc, RULES)
    return Reading(
        tables=[[resolved(seed, c) for c in t.columns] for t in doc.summary_tables if t.kind == "server"],
        errors=Counter(f.check for f in result.findings if f.severity == "error"),
        status=result.status,
        relations=result.checked,
        notes=[p.message for p in doc.problems if "names no server" in p.message],
    )


@cache
def seed_reading(seed: str) -> Reading:
    return reading(seed, seed_text(seed))


@cache
def layouts(seed: str) -> dict[str, str]:
    return variants(seed, seed_text(seed))


# Variants read wrongly today, and why (each must fail, or the entry goes).
XFAIL: dict[tuple[str, str], str] = {}
CASES = [
    pytest.param(
        seed, name, id=f"{seed}:{name}", marks=[pytest.mark.xfail(strict=True, reason=XFAIL[seed, name])]
    )
    if (seed, name) in XFAIL
    else pytest.param(seed, name, id=f"{seed}:{name}")
    for seed in SEEDS
    for name in variants(seed, seed_text(seed))
]


@pytest.mark.parametrize(("seed", "name"), CASES)
def test_a_layout_variant_reads_as_the_seed(seed: str, name: str) -> None:
    before, after = seed_reading(seed), reading(seed, layouts(seed)[name])
    assert len(after.tables) == len(before.tables)
    if (seed, name) in UNNAMED:
        assert all(t == ["unnamed"] for t in after.tables)
        assert len(after.notes) == len(after.tables)
    else:
        assert after.tables == before.tables
        assert len(after.notes) == ((seed, name) in SINGLE)
    assert after.errors == before.errors
    assert after.status == before.status
    assert abs(after.relations - before.relations) <= MARGIN * before.relations


def test_the_seeds_servers_are_named_by_their_machines() -> None:
    """The machine names the variants use are the appendix reports' ("Machine Name"), where the
    audit matches a report to the column; 000's other nine servers have no report."""
    assert machines("dellemc-002") == {
        "Server 1": "JS16",
        "Server 2": "JS17",
        "Server 3": "JS8",
        "Server 4": "JS9",
    }
    assert machines("netapp-001") == {"Host 3650-4": "3650-4"}
    assert machines("vmax-000")["Server 4"] == "EMAIL5"


def test_a_single_server_document_gives_its_unnamed_table_to_its_server() -> None:
    text = single_server(seed_text("dellemc-002"))
    assert "Server 1 test results" not in text and "JS17" not in text
    after = reading("dellemc-002", text)
    assert after.tables == [["JS16"]]
    assert len(after.notes) == 1 and "JS16" in after.notes[0] and "one" in after.notes[0]
    assert after.status == "checked"
    assert after.errors == seed_reading("dellemc-002").errors


def test_an_unnamed_table_is_matched_to_no_report() -> None:
    """002 with its captions removed: four tables and four servers, none named. Each is checked by
    the relations that need no server (transfers = reads + writes), none against a report."""
    doc = parsed(layouts("dellemc-002")["caption-removed"], "002.txt")
    result = audit(doc, RULES)
    unnamed = [c for t in doc.summary_tables if t.kind == "server" for c in t.columns]
    assert len(set(unnamed)) == 4
    assert not [f for f in result.findings if f.check.startswith("appendix.match")]
    assert not [f for f in result.findings if any(c in f.message for c in unnamed) and "report" in f.message]


def test_a_caption_naming_another_servers_machine_is_read_as_that_server() -> None:
    """A name is matched to the document's own servers: a machine name the appendix prints."""
    doc = parsed(layouts("dellemc-002")["caption-results-for"], "002.txt")
    assert [t.columns for t in doc.summary_tables if t.kind == "server"] == [
        ["JS16"],
        ["JS17"],
        ["JS8"],
        ["JS9"],
    ]


def test_a_product_name_is_not_a_server() -> None:
    """ "Windows Server 2016" before a table names no server: the table stays unnamed."""
    text = seed_text("dellemc-002").replace(
        "Table 5 Server 1 test results", "The servers run Microsoft Windows Server 2016."
    )
    doc = parsed(text, "002.txt")
    first = next(t.columns for t in doc.summary_tables if t.kind == "server")
    assert len(first) == 1 and first[0].startswith("unnamed server at line ")


# The variants a slip is planted in: one of each way a server is found (or not).
PLANTED = [
    ("dellemc-002", "caption-removed"),
    ("dellemc-002", "header-row"),
    ("dellemc-002", "prose-before"),
    ("dellemc-002", "single-server"),
    ("vmax-000", "machine-names"),
    ("netapp-001", "caption-removed"),
]
PLANTS = 6


@pytest.mark.parametrize(("seed", "name"), PLANTED, ids=[f"{s}:{n}" for s, n in PLANTED])
def test_a_slip_planted_in_a_per_server_cell_of_a_variant_is_caught(
    seed: str, name: str, tmp_path: Path
) -> None:
    text = single_server(seed_text(seed)) if name == "single-server" else layouts(seed)[name]
    path = tmp_path / f"{seed}-{name}.txt"
    path.write_text(text, encoding="utf-8")
    document = Document.load(path, RULES)
    rows = {row.line for t in parsed(text, path.name).summary_tables if t.kind == "server" for row in t.rows}
    chosen = [p for p in plants(document, None, seed=7) if p.line in rows][::7][:PLANTS]
    assert len(chosen) >= PLANTS // 2, "the per-server cells must be vouched for"
    outcomes = [run_plant(document, plant) for plant in chosen]
    placed = [o for o in outcomes if o.placed]
    assert len(placed) == len(chosen)
    assert not [(o.plant, o.new_errors) for o in placed if not o.caught]


def figures() -> str:
    """The figures of docs/audit.md's "Summary-table layouts" table, in Markdown."""
    rows = ["| Seed | Variant | Per-server tables | Columns as the seed's | Errors | Status | Relations |"]
    rows.append("|---|---|---|---|---|---|---|")
    for seed in SEEDS:
        base = seed_reading(seed)
        texts = {"(seed)": seed_text(seed), **layouts(seed)}
        if seed == "dellemc-002":
            texts["single-server"] = single_server(seed_text(seed))
        for name, text in texts.items():
            r = reading(seed, text)
            same = (
                "/".join(c for t in r.tables for c in t)
                if name == "single-server"
                else "unnamed"
                if all(t == ["unnamed"] for t in r.tables) and r.tables
                else "yes"
                if r.tables == base.tables
                else "no"
            )
            rows.append(
                f"| {seed} | {name} | {len(r.tables)} | {same} | {sum(r.errors.values())} | {r.status} | "
                f"{r.relations} |"
            )
    return "\n".join(rows)


if __name__ == "__main__":
    print(figures())


@pytest.mark.parametrize(
    ("heading", "header"),
    [("Aggregate performance across all servers", "Database I/O\tValue"), ("", "Database I/O\tTotal")],
)
def test_an_aggregate_table_is_found_by_its_words(heading: str, header: str) -> None:
    """An aggregate table under a heading saying so, or with a "Total" column, is all servers'
    (never a server called "Total", nor an unnamed server)."""
    log = header.replace("Database I/O", "Transaction Log I/O")
    rows = f"{header}\nDatabase Disks Transfers/sec\t1707.417\n{log}\nLog Disks Writes/sec\t115.831\n"
    table = f"{heading}\n\n{rows}\n"
    section = "\n4.3 Database backup and recovery performance\n\n"  # the section, not its contents line
    text = seed_text("dellemc-002").replace(section, "\n" + table + section[1:], 1)
    doc = parsed(text, "002.txt")
    kinds = [
        (t.kind, t.columns, len(t.rows)) for t in doc.summary_tables if t.kind in ("server", "aggregate")
    ]
    assert kinds[-1] == ("aggregate", ["all servers"], 2)
    assert len(kinds) == 5


def test_collapsed_spacing_keeps_the_vertical_tables() -> None:
    """An extractor that collapses column spacing prints "Database I/O Value" (one cell): 002's four
    per-server tables are still read as the seed's (docs/audit.md, "Extractor independence")."""
    from esrp_synth.copies import collapsed

    after = reading("dellemc-002", collapsed(seed_text("dellemc-002")))
    assert after.tables == seed_reading("dellemc-002").tables
    assert after.errors == seed_reading("dellemc-002").errors


def test_one_machine_in_the_reports_of_a_document_of_ten_servers_is_not_its_one_server() -> None:
    """000's appendix holds the reports of one server (EMAIL5) of the ten its tables name: a
    vertical table naming no server there is an unnamed server's, not EMAIL5's."""
    table = "Database I/O\tValue\nDatabase Disks Transfers/sec\t1424.414\nLog Disks Writes/sec\t487.754\n\n"
    text = seed_text("vmax-000").replace(
        "## Database backup/recovery performance", table + "## Database backup/recovery performance", 1
    )
    doc = parsed(text, "000.txt")
    last = [t for t in doc.summary_tables if t.kind == "server"][-1]
    assert last.columns[0].startswith("unnamed server at line ")


def test_a_host_line_just_before_a_value_table_names_it() -> None:
    """001's per-server table with a "Value" column under its "Host 3650-4" line is that host's."""
    text = seed_text("netapp-001").replace("Database I/O\t\n", "Database I/O\tValue\n", 1)
    assert text != seed_text("netapp-001")
    doc = parsed(text, "001.txt")
    assert [t.columns for t in doc.summary_tables if t.kind == "server"] == [["Host 3650-4"]]
    assert not [p for p in doc.problems if "names no server" in p.message]  # named, not inferred


def test_a_label_wrapped_over_three_and_four_lines_is_joined_by_its_content() -> None:
    """A narrow first column wraps a backup label over as many lines as it needs, laid out before
    the row's figures (as a PDF's text gives our own tables): each label is joined whole, however
    many lines it took, and its figures read. Joining at most two lines ("total per" + "server")
    lost both rows: neither half names a metric."""
    lines = [
        *["Front matter"] * 5,
        "## Database read-only performance",
        "",
        "Table 10 Database read-only performance",
        "\tServer 1\tServer 2",
        *["MB read/sec", "total per", "server", "\t443.60\t452.20"],
        *["MB", "read/sec", "per", "database", "\t22.18\t22.61"],
        "",
    ]
    doc = parse_document(("\n".join(lines) + "\n").encode(), "wrapped.txt")
    (table,) = [t for t in doc.summary_tables if t.kind == "backup"]
    assert table.columns == ["Server 1", "Server 2"]
    read = {row.label: [v.value if v else None for v in row.values] for row in table.rows}
    assert read == {
        "MB read/sec total per server": [443.6, 452.2],
        "MB read/sec per database": [22.18, 22.61],
    }
