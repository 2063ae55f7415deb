"""Comparisons across runs (esrp-report compare): the trend tables of the EqualLogic study (004 §5)
reproduced from the sample runs under samples/trends/, Table 3's equated latencies, the published
table check (interval rule), errors, the CLI, and the HTML/PDF report."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from esrp_report import model as m
from esrp_report.analysis import trends
from esrp_report.analysis.trends import FLAG, OK, Comparison, TrendError
from esrp_report.app import api
from esrp_report.cli.main import app
from esrp_report.ingest.config.trend_spec import TrendSpecError, load_trend_table, parse_cell
from esrp_report.model import ConfigProfile, InstanceRow, InstanceTable, Run, Sizing, TableKind, TestKind
from esrp_report.model.errors import EsrpError, InputError
from esrp_report.model.trends import FIGURES, LATENCIES

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
DATA = SAMPLES / "data" / "trends-004.toml"
TRENDS = SAMPLES / "trends"
SPEC = tomllib.loads(DATA.read_text(encoding="utf-8"))
TABLES = [key for key, table in SPEC["tables"].items() if "rows" in table]
# The printed figures that cannot follow from their own bracketed values (docs/compare.md).
FLAGGED = {
    ("table-23", "planned", 0): ("39% [360 IOps]", "40%"),
    ("table-23", "planned", 1): ("39% [360 IOps]", "40%"),
}
runner = CliRunner()


def _folders(key: str) -> list[Path]:
    owner = key if "folders" in SPEC["tables"][key] else "table-04"  # Table 3 prints Table 4's runs
    return [TRENDS / owner / name for name in SPEC["tables"][owner]["folders"]]


@pytest.fixture(scope="module")
def compared() -> dict[str, Comparison]:
    """Every table of the study compared once from the sample folders, with its printed cells."""
    return {key: api.compare_paths(_folders(key), published=DATA, table=key) for key in [*TABLES, "table-03"]}


def test_every_table_of_the_study_has_sample_runs() -> None:
    numbers = sorted({int(re.match(r"table-(\d+)", key)[1]) for key in TABLES})  # type: ignore[index]
    assert numbers == [4, 6, 8, 10, 12, 15, 16, 20, 22, 23]
    assert "table-03" in SPEC["tables"]
    for key in TABLES:
        for folder in _folders(key):
            assert any(folder.rglob("Performance_*.html")) and any(folder.rglob("JetstressConfig.xml")), (
                folder
            )


@pytest.mark.parametrize("key", TABLES)
def test_the_runs_reproduce_the_printed_table(compared: dict[str, Comparison], key: str) -> None:
    comparison = compared[key]
    assert comparison.check is not None
    rows = SPEC["tables"][key]["rows"]
    for figure, cells in rows.items():
        for index, printed in enumerate(cells):
            cell = comparison.rows[figure][index]
            pct, absolute = re.match(r"^(\d+%) \[([\d.]+) ", printed).groups()  # type: ignore[union-attr]
            assert trends.absolute_text(cell.value, figure).split()[0] == absolute, (figure, index)
            flagged = FLAGGED.get((key, figure, index))
            computed = trends.percent_text(cell.percent)
            if flagged is None:
                assert computed == pct, (figure, index, printed)
            else:
                assert (printed, computed) == flagged
    statuses = {(c.figure, c.column): c.status for c in comparison.check.cells}
    assert len(statuses) == sum(len(cells) for cells in rows.values())
    expected = {(f, i): FLAG for (k, f, i) in FLAGGED if k == key}
    assert {cell: status for cell, status in statuses.items() if status != OK} == expected


def test_table_23_flags_show_the_computed_percentage(compared: dict[str, Comparison]) -> None:
    check = compared["table-23"].check
    assert check is not None
    flags = [(c.printed, c.shown, c.column) for c in check.flags]
    assert flags == [("39% [360 IOps]", "40%", 0), ("39% [360 IOps]", "40%", 1)]
    assert check.flags[0].allowed == pytest.approx((359.5 / 900.5 * 100, 360.5 / 899.5 * 100))
    assert not check.differences
    assert compared["table-23"].baseline == 3  # the 5,000-user column is the one at 100 %


def test_table_3_equated_latencies_reproduce(compared: dict[str, Comparison]) -> None:
    printed = SPEC["tables"]["table-03"]["equated"]
    comparison = compared["table-03"]
    for key in LATENCIES:
        assert [e.text(key) for e in comparison.equated] == printed[f"{key}_equated"]
    achieved = [f"{e.achieved:.0f} IOPS [{trends.percent_text(e.ratio * 100)}]" for e in comparison.equated]
    assert achieved == printed["achieved"]
    assert [e.unchanged for e in comparison.equated] == [True, False, False]
    assert comparison.check is not None and all(c.status == OK for c in comparison.check.cells)


def test_the_split_adds_up(compared: dict[str, Comparison]) -> None:
    for comparison in compared.values():
        for run in comparison.runs:
            parts = run["transactional"] + run["log"] + run["differential"]
            assert parts == pytest.approx(run["total"], abs=1e-9)
            assert run["differential"] > 0 and run["log"] > 0
    reference = compared["table-04"].runs[1]
    assert 1017.5 <= reference["transactional"] < 1018.5  # Table 3 prints 1018
    assert reference["differential"] / reference["total"] == pytest.approx(0.11, abs=0.001)  # §5.1


def test_scale_out_columns_sum_servers_and_average_latencies(compared: dict[str, Comparison]) -> None:
    three = compared["table-20-series-2"].runs[2]
    assert three.servers == ("MBX1", "MBX2", "MBX3")
    singles = [
        trends.run_figures(
            f"MBX{i}", api.load_compared_run(TRENDS / "table-20-series-2" / "3-27000-users" / f"MBX{i}")
        )
        for i in (1, 2, 3)
    ]
    assert three["total"] == pytest.approx(sum(s["total"] for s in singles))
    assert three["planned"] == 4860.0
    assert three["read_latency"] == pytest.approx(sum(s["read_latency"] for s in singles) / 3)


# --- the pure module on hand-made runs -------------------------------------------------------------


def _run(
    machine: str = "MBX1",
    *,
    reads: float = 500.0,
    writes: float = 500.0,
    log_writes: float = 300.0,
    bdm: float = 100.0,
    replication: float = 0.0,
    latency: tuple[float, float, float] = (8.0, 5.0, 1.0),
    mailboxes: int | None = 5000,
    target: float | None = None,
    achieved: float | None = None,
    total_table: bool = True,
) -> Run:
    """A Performance run with two instances carrying the given server figures."""

    def half(value: float) -> float:
        return value / 2

    read_lat, write_lat, log_lat = latency
    trans_rows = [
        InstanceRow(
            f"Instance1.{i}",
            {
                m.DB_READS: half(reads),
                m.DB_WRITES: half(writes),
                m.LOG_WRITES: half(log_writes),
                m.LOG_READS: 0.0,
                m.DB_READ_LATENCY: read_lat + d,
                m.DB_WRITE_LATENCY: write_lat - d,
                m.LOG_WRITE_LATENCY: log_lat,
            },
        )
        for i, d in ((1, 0.5), (2, -0.5))
    ]
    total_rows = [
        InstanceRow(
            row.instance,
            row.values | {m.DB_READS: half(reads) + half(bdm), m.LOG_READS: half(replication)},
        )
        for row in trans_rows
    ]
    run = Run(TestKind.PERFORMANCE, machine, sources=[f"{machine}/Performance_1.html"])
    run.tables[TableKind.TRANSACTIONAL] = InstanceTable(TableKind.TRANSACTIONAL, trans_rows)
    run.tables[TableKind.BACKGROUND_MAINTENANCE] = InstanceTable(
        TableKind.BACKGROUND_MAINTENANCE,
        [InstanceRow(r.instance, {m.BDM_READS: half(bdm)}) for r in trans_rows],
    )
    run.tables[TableKind.LOG_REPLICATION] = InstanceTable(
        TableKind.LOG_REPLICATION,
        [InstanceRow(r.instance, {m.LOG_READS: half(replication)}) for r in trans_rows],
    )
    if total_table:
        run.tables[TableKind.TOTAL] = InstanceTable(TableKind.TOTAL, total_rows)
    run.sizing = Sizing(achieved_iops=achieved, target_iops=target)
    if mailboxes is not None:
        run.config = ConfigProfile("JetstressConfig.xml", mailbox_count=mailboxes, mailbox_iops=0.18)
    return run


def test_figures_are_defined_from_the_report_tables() -> None:
    figures = trends.run_figures("a", _run(replication=20.0))
    assert figures.values == {
        "planned": 900.0,  # 5,000 mailboxes x 0.18 from the configuration
        "transactional": 1000.0,  # no achieved figure in the report: reads + writes
        "total": 1420.0,  # Total I/O table: reads (incl. maintenance) + writes + log reads + writes
        "log": 300.0,
        "read_latency": 8.0,  # mean over instances
        "write_latency": 5.0,
        "log_write_latency": 1.0,
        "differential": 120.0,  # maintenance + replication reads
    }
    assert figures.planned_source == "configuration"
    assert any("summed from the Transactional" in note for note in figures.notes)
    # Jetstress's own achieved figure wins; the report's target serves without a configuration.
    other = trends.run_figures("b", _run(achieved=1000.004, mailboxes=None, target=1200.0))
    assert (other["transactional"], other["planned"], other.planned_source) == (
        1000.004,
        1200.0,
        "report target",
    )
    # Without a Total I/O table the total is rebuilt from the other tables.
    rebuilt = trends.run_figures("c", _run(replication=20.0, total_table=False))
    assert rebuilt["total"] == 1420.0 and any("no Total I/O table" in n for n in rebuilt.notes)


def test_several_servers_are_one_run_rates_summed_latencies_averaged() -> None:
    both = trends.run_figures("pair", [_run("MBX1", latency=(8, 5, 1)), _run("MBX2", latency=(10, 7, 2))])
    assert both.servers == ("MBX1", "MBX2")
    assert (both["planned"], both["total"], both["read_latency"], both["log_write_latency"]) == (
        1800,
        2800,
        9,
        1.5,
    )
    with pytest.raises(TrendError, match="several from MBX1"):
        trends.run_figures("twice", [_run("MBX1"), _run("MBX1")])


def test_percentages_and_cells_as_the_study_prints_them() -> None:
    runs = [
        trends.run_figures("base", _run(latency=(8, 2.4, 0.8))),
        trends.run_figures("next", _run(latency=(8, 5.2, 1))),
    ]
    comparison = trends.compare(runs)
    assert comparison.rows["write_latency"][1].percent == pytest.approx(5.2 / 2.4 * 100)
    assert comparison.rows["write_latency"][1].text("write_latency") == "217% [5.2 msec]"
    assert comparison.rows["planned"][0].text("planned") == "100% [900 IOPS]"
    assert trends.compare(runs, baseline=1).rows["write_latency"][0].text("write_latency") == "46% [2.4 msec]"


@pytest.mark.parametrize(
    ("achieved", "unchanged"),
    [(299.0, True), (300.0, True), (301.4, True), (301.6, False), (298.4, False), (1018.0, False)],
)
def test_latencies_are_unchanged_when_achieved_is_within_half_a_percent(
    achieved: float, unchanged: bool
) -> None:
    run = trends.run_figures("r", _run(mailboxes=None, target=300.0, achieved=achieved))
    equated = trends.equate(run)
    assert equated.unchanged is unchanged
    assert equated.equated["read_latency"] == pytest.approx(8.0 * 300.0 / achieved)
    assert equated.text("read_latency") == ("unchanged" if unchanged else f"{8.0 * 300 / achieved:.1f} msec")


def test_clear_errors_name_the_run() -> None:
    with pytest.raises(TrendError, match=r"run 'x', server MBX1: no planned IOPS"):
        trends.run_figures("x", _run(mailboxes=None))
    stress = _run()
    stress.kind = TestKind.STRESS
    with pytest.raises(TrendError, match=r"run 'y': no Performance test report \(found Stress\)"):
        trends.run_figures("y", stress)
    idle = trends.run_figures("idle", _run(reads=0, writes=0, log_writes=0, bdm=0))
    busy = trends.run_figures("busy", _run())
    with pytest.raises(TrendError, match=r"baseline run 'idle': total iops performed is 0"):
        trends.compare([idle, busy])
    with pytest.raises(TrendError, match=r"run 'idle': total iops performed is 0"):
        trends.compare([busy, idle])


# --- published tables ------------------------------------------------------------------------------


def _published(tmp_path: Path, rows: dict[str, list[str]], columns: list[str] | None = None) -> Path:
    lines = [f"columns = {json.dumps(columns)}"] if columns else []
    lines.append("[rows]")
    lines += [f"{key} = {json.dumps(cells)}" for key, cells in rows.items()]
    path = tmp_path / "table.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_printed_percentage_is_flagged_only_outside_its_rounding_interval(tmp_path: Path) -> None:
    runs = [("base", _run(latency=(8, 2.4, 0.8))), ("next", _run(latency=(8, 5.2, 1)))]
    # 223 % for 5.2 / 2.4 = 216.7 %: inside what the rounded brackets allow (210-223.4 %), not flagged;
    # the runs' own 217 % differs from the printed figure.
    table = load_trend_table(_published(tmp_path, {"write_latency": ["100% [2.4 msec]", "223% [5.2 msec]"]}))
    check = api.compare_runs(runs, published=table).check
    assert check is not None
    cell = check.cells[1]
    assert (cell.follows, cell.shown, cell.status) == (True, "217%", "differs")
    # 39 % for 360 / 900: no rounding of the brackets gives it.
    table = load_trend_table(_published(tmp_path, {"planned": ["100% [900 IOPS]", "39% [360 IOPS]"]}))
    small = [("base", _run()), ("small", _run(mailboxes=2000))]
    check = api.compare_runs(small, published=table).check
    assert check is not None
    assert [(c.status, c.shown) for c in check.cells] == [(OK, "100%"), (FLAG, "40%")]


def test_published_table_must_fit_the_runs(tmp_path: Path) -> None:
    table = load_trend_table(_published(tmp_path, {"planned": ["100% [900 IOPS]", "40% [360 IOPS]"]}))
    with pytest.raises(TrendError, match="2 columns but 3 runs"):
        api.compare_runs([("a", _run()), ("b", _run()), ("c", _run())], published=table)
    flipped = load_trend_table(_published(tmp_path, {"planned": ["250% [900 IOPS]", "100% [360 IOPS]"]}))
    with pytest.raises(TrendError, match="baseline \\(100 %\\) in column 2"):
        api.compare_runs([("a", _run()), ("b", _run(mailboxes=2000))], baseline=0, published=flipped)
    # Without --baseline the table's 100 % column is the baseline.
    comparison = api.compare_runs([("a", _run()), ("b", _run(mailboxes=2000))], published=flipped)
    assert comparison.baseline == 1 and comparison.check is not None and not comparison.check.flags


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("223% [5.2 msec]", (5.2, 223.0, False)),
        ("100%<br>[900 IOPS]", (900.0, 100.0, False)),
        ("1018 IOPS [113%]", (1018.0, 113.0, False)),
        ("6.8 msec", (6.8, None, False)),
        ("unchanged", (None, None, True)),
        ("n/a", None),
    ],
)
def test_printed_cells(text: str, shape: tuple[float | None, float | None, bool] | None) -> None:
    cell = parse_cell(text)
    if shape is None:
        assert cell is None
        return
    assert cell is not None
    absolute = cell.absolute.value if cell.absolute else None
    percent = cell.percent.value if cell.percent else None
    assert (absolute, percent, cell.unchanged) == shape


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ('[rows]\ntotal = ["100% [575 IOPS]", "about 266%"]\n', None, "cell 2 is not a printed trend cell"),
        ('[rows]\nlatency = ["100% [1 msec]"]\n', None, "unknown row 'latency'"),
        ('title = "x"\n', None, "no table"),
        ("[rows\n", None, "not valid TOML"),
        (
            '[tables.a.rows]\nplanned = ["100% [1 IOPS]"]\n[tables.b.rows]\nplanned = ["100% [1 IOPS]"]\n',
            None,
            "choose one with --table",
        ),
        ('[tables.a.rows]\nplanned = ["100% [1 IOPS]"]\n', "b", "no table 'b'"),
        (
            '[rows]\nplanned = ["100% [1 IOPS]"]\ntotal = ["100% [1 IOPS]", "100% [1 IOPS]"]\n',
            None,
            "rows of different lengths",
        ),
    ],
)
def test_published_file_errors_name_the_file_and_place(
    tmp_path: Path, text: str, key: str | None, words: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TrendSpecError, match=re.escape(words)) as caught:
        load_trend_table(path, key)
    assert str(path) in str(caught.value)


# --- the command line ------------------------------------------------------------------------------


def test_cli_table_and_exit_status() -> None:
    result = runner.invoke(app, ["compare", *map(str, _folders("table-04"))])
    assert result.exit_code == 0, result.output
    assert "223% [5.2 msec]" in result.output and "480% [2762 IOPS]" in result.output
    assert "unchanged" in result.output and "10.6 msec" in result.output
    flagged = runner.invoke(
        app, ["compare", *map(str, _folders("table-23")), "--published", str(DATA), "--table", "table-23"]
    )
    assert flagged.exit_code == 1
    assert "FLAG" in flagged.output and "39% [360 IOps]" in flagged.output and "2 flagged" in flagged.output


def test_cli_json_and_baseline() -> None:
    folders = [str(p) for p in _folders("table-04")]
    result = runner.invoke(app, ["compare", *folders, "--json", "--baseline", "2-150-msg"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert set(payload) == {"baseline", "runs", "rows", "equated", "notes", "published"}
    assert payload["baseline"] == {"index": 1, "label": "2-150-msg"}
    total = next(row for row in payload["rows"] if row["figure"] == "total")
    assert [c["text"] for c in total["cells"]] == ["38% [575 IOPS]", "100% [1530 IOPS]", "181% [2762 IOPS]"]
    assert payload["runs"][0]["figures"]["transactional"] == pytest.approx(299.009)
    by_position = json.loads(runner.invoke(app, ["compare", *folders, "--json", "--baseline", "2"]).output)
    assert by_position["baseline"]["index"] == 1
    checked = json.loads(
        runner.invoke(
            app, ["compare", *folders, "--json", "--published", str(DATA), "--table", "table-04"]
        ).output
    )
    assert checked["published"]["flags"] == 0 and len(checked["published"]["cells"]) == 15


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["samples/trends/nope"], "no such file or folder"),
        (["samples/EMAIL5/Stress_2011_3_14_9_2_3.html"], "no Performance test report"),
        (["samples/trends/table-04/1-50-msg", "--baseline", "9-x"], "--baseline '9-x' is none of the runs"),
        (
            ["samples/trends/table-23/1-2000-users-ps4100e", "--published", str(DATA), "--table", "table-23"],
            "has 4 columns but 1 runs",
        ),
    ],
)
def test_cli_errors_exit_2_with_one_line(args: list[str], words: str) -> None:
    result = runner.invoke(
        app, ["compare", *[str(ROOT / a) if a.startswith("samples/") else a for a in args]]
    )
    assert result.exit_code == 2
    assert words in " ".join(result.output.split())


def test_a_report_file_is_a_run_with_its_folders_configuration() -> None:
    report = next((TRENDS / "table-04" / "2-150-msg").glob("Performance_*.html"))
    runs = api.load_compared_run(report)
    assert len(runs) == 1 and runs[0].config is not None and runs[0].config.target_iops == 900.0
    with pytest.raises(InputError):
        api.load_compared_run(TRENDS / "missing")


def test_help_readme_and_docs_name_the_command_and_its_figures() -> None:
    result = runner.invoke(app, ["compare", "--help"])
    assert result.exit_code == 0 and "--published" in result.output
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "esrp-report compare" in readme
    docs = (ROOT / "docs" / "compare.md").read_text(encoding="utf-8")
    for figure in FIGURES:
        assert f"`{figure.key}`" in docs, figure.key
    for key in ("baseline", "runs", "rows", "equated", "notes", "published"):
        assert f'"{key}"' in docs, key


# --- the report ------------------------------------------------------------------------------------


def test_html_report_is_self_contained_with_the_chart(
    compared: dict[str, Comparison], tmp_path: Path
) -> None:
    written = api.write_compare_report(compared["table-23"], tmp_path, formats=("html",))
    html = written[0].read_text(encoding="utf-8")
    assert html.count("<svg") == 1 and "transactional" in html and "Read Latency DBs" in html
    assert "39% [360 IOps]" in html and ">FLAG<" in html and "40%" in html
    assert not re.search(r"""(src|href)=["']?(https?:|//|file:)""", html)
    assert "<link" not in html and "<script" not in html


def test_html_report_escapes_labels(tmp_path: Path) -> None:
    comparison = api.compare_runs([("<script>alert(1)</script>", _run()), ("b", _run())])
    html = api.write_compare_report(comparison, tmp_path, formats=("html",))[0].read_text(encoding="utf-8")
    assert "<script>alert" not in html and "&lt;script&gt;" in html


def test_pdf_report(compared: dict[str, Comparison], tmp_path: Path) -> None:
    import pypdfium2

    written = api.write_compare_report(compared["table-04"], tmp_path, formats=("pdf",))
    pdf = pypdfium2.PdfDocument(written[0])
    assert len(pdf) >= 1
    text = " ".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    assert "223% [5.2 msec]" in text
    with pytest.raises(EsrpError, match="unknown output format"):
        api.write_compare_report(compared["table-04"], tmp_path, formats=("docx",))
