"""No traceback, for any input, by construction (issue 37, item 2).

Text from evidence, a manifest or a query reaches the console only through PlainConsole, which
never reads markup; numbers typed as options are parsed finite where they enter; `catalog sql`
prints every DuckDB type. The property tests feed each command generated hostile strings and
numbers and require a result or a one-line error, never a traceback. Hypothesis runs
derandomized with few examples: every run of the suite tries the same inputs, in a few seconds.
"""

from __future__ import annotations

import io
import json
import math
import re
import shutil
import typing
from pathlib import Path

import click
import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.table import Table
from typer.testing import CliRunner, Result

from esrp_report.cli import options
from esrp_report.cli.console import PlainConsole, styled
from esrp_report.cli.main import app
from esrp_report.ingest.jetstress.test_log import parse_test_log
from esrp_report.model.numbers import fmt_number

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
PERFORMANCE_CSV = SAMPLES / "EMAIL5" / "Performance_2011_3_11_13_27_46.csv"
runner = CliRunner()

PROPERTY = settings(
    max_examples=12,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Rich markup, emoji codes, control characters, quotes, separators and long runs: what broke or
# could break a printer, a CSV cell or a SQL literal.
HOSTILE_PIECES = [
    "[/]",
    "[bold",
    "[link=file:///etc/passwd]x[/link]",
    "[red]",
    "\\[",
    ":smile:",
    "%s%n",
    "{0}",
    '"',
    "'",
    ",",
    "\t",
    "\x00",
    "\x1b[31m",
    "\u202e",
    "é",
    "\\\\",
    "${HOME}",
]
hostile_text = st.lists(
    st.one_of(st.sampled_from(HOSTILE_PIECES), st.text(min_size=1, max_size=8)), min_size=1, max_size=4
).map("".join)
# A machine name keeps to one CSV cell and one counter path: no quote, backslash or line end (a
# name that breaks the header is another test's, the damaged logs of test_counter_csv).
machine_name = hostile_text.map(lambda s: re.sub(r'["\\\r\n\x00,]', "", s)).filter(bool)
hostile_number = st.one_of(
    st.sampled_from(["inf", "-inf", "nan", "1e999", "-1e999", "1e308", "9" * 400, "0", "-0", "1_0", "0x10"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    hostile_text,
)


def _assert_result_or_one_line_error(result: Result, args: list[str]) -> None:
    """A command's own result (any exit status it documents), or exit 2 with one error line."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{args!r}: {result.exception!r}") from result.exception
    assert "Traceback" not in result.output, (args, result.output)
    assert result.exit_code in (0, 1, 2, 3), (args, result.exit_code, result.output)
    if result.exit_code == 2:
        errors = [line for line in result.stderr.splitlines() if line.strip()]
        # click's own usage error (an option that is not one) is three lines with one "Error:".
        said = [line for line in errors if line.startswith(("error:", "Error:"))]
        assert len(said) == 1, (args, result.output)
        if errors[0].startswith("error:"):
            assert len(errors) == 1, (args, result.output)


# --- the console: no string is read as markup ------------------------------------------------------


def _printed(*renderables: object) -> str:
    stream = io.StringIO()
    console = PlainConsole(file=stream)
    for renderable in renderables:
        console.print(renderable)
    return stream.getvalue()


def test_the_plain_console_prints_markup_and_emoji_codes_as_written() -> None:
    for text in ("[/]", "[bold", "[link=https://example.invalid]x[/link]", "a :smile: b", "[red]x[/red]"):
        assert _printed(text).strip() == text
    # Even when asked for markup: no caller can turn it back on by mistake.
    stream = io.StringIO()
    PlainConsole(file=stream).print("[/] [bold]x", markup=True, emoji=True)
    assert stream.getvalue().strip() == "[/] [bold]x"


def test_table_cells_titles_and_the_status_line_are_plain_text() -> None:
    table = Table(title="[/] title")
    table.add_column("[bold")
    table.add_row("[/]x")
    shown = _printed(table)
    for text in ("[/] title", "[bold", "[/]x"):
        assert text in shown
    console = PlainConsole(file=io.StringIO())
    with console.status("[/]") as status:
        status.update("[bold")  # Rich's spinner parses a string itself: MarkupError before
    assert styled("[/]", ("[bold", "red")).plain == "[/][bold"


def test_no_module_printing_through_rich_can_parse_markup() -> None:
    """The choke point holds only if nothing walks around it: outside cli/console.py no module
    that uses Rich makes its own Console, asks for markup, parses it, or escapes it (escape()'s
    backslashes would now be printed)."""
    using_rich = [
        path
        for path in sorted((ROOT / "esrp_report").rglob("*.py"))
        if "rich" in path.read_text(encoding="utf-8") and path.name != "console.py"
    ]
    assert len(using_rich) >= 4  # cli/main.py, cli/catalog.py, render/sizing_view.py, trends_report.py
    for path in using_rich:
        text = path.read_text(encoding="utf-8")
        for needle in ("markup=True", "from_markup", "rich.markup", "rich.console import Console"):
            assert needle not in text, (path, needle)
        assert not re.search(r"\bConsole\(", text), path


# --- numbers where they enter ------------------------------------------------------------------------


def _commands() -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}

    def walk(command: click.Command, path: list[str]) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])
        else:
            found[" ".join(path)] = command

    walk(typer.main.get_command(app), [])
    return found


def test_every_number_option_is_parsed_by_the_finite_parsers() -> None:
    numeric = 0
    for name, command in _commands().items():
        assert command.callback is not None
        hints = typing.get_type_hints(command.callback)
        for param in command.params:
            hint = str(hints.get(param.name or "", ""))
            if ("float" in hint or "int" in hint) and "bool" not in hint:
                numeric += 1
                info = getattr(getattr(param, "type_descriptor", None), "parameter_info", None)
                func = getattr(info, "parser", None)
                assert func in (options.finite, options.positive, options.jobs, options.whole), (
                    name,
                    param.name,
                )
    assert numeric >= 12  # --target-iops, the size figures, the two --jobs


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e999", "-1e999", "abc", ""])
def test_check_target_iops_that_is_not_finite_is_one_line(value: str) -> None:
    args = ["check", str(SAMPLES / "3650-4"), "--target-iops", value]
    result = runner.invoke(app, args)
    _assert_result_or_one_line_error(result, args)
    assert result.exit_code == 2
    assert "--target-iops" in result.stderr and "finite number" in result.stderr


def test_size_refuses_a_user_count_past_exact_floats_and_figures_that_overflow() -> None:
    for args in (
        ["size", "--users", "9" * 400],
        ["size", "--users", str(2**53 + 1)],
        ["size", "--users", "9007199254740992", "--quota-gb", "1e300"],
        ["size", "--messages-per-day", "1e308", "--users", "9007199254740992"],
    ):
        result = runner.invoke(app, args)
        _assert_result_or_one_line_error(result, args)
        assert result.exit_code == 2, (args, result.output)


def test_the_printer_rounds_any_float() -> None:
    assert fmt_number(math.inf, 3) == "Infinity"
    assert fmt_number(-math.inf, 3, thousands=True) == "-Infinity"
    assert fmt_number(math.nan, 2) == "NaN"
    assert (
        fmt_number(1e30, 2) == "1" + "0" * 30 + ".00"
    )  # the decimal text of the float; InvalidOperation before
    assert fmt_number(1.7e308, 3, thousands=True).endswith(".000")
    assert fmt_number(0.0005, 3) == "0.001"


def test_a_test_log_figure_past_the_float_range_is_a_problem() -> None:
    log = parse_test_log(
        "3/10/2011 8:38:41 PM -- Database read latency thresholds: (average: 1e999999999 seconds/read, "
        "maximum: 100 msec/read).\n"
        "3/10/2011 8:38:42 PM -- Instance2756.1 has 1e999 for I/O Log Writes Average Latency.\n",
        "Performance.txt",
    )
    assert log.thresholds.db_read_avg_ms is None  # decimal.Overflow before
    assert not log.instance_latencies
    assert [p.location for p in log.problems] == ["line 1", "line 2"]


@PROPERTY
@given(number=hostile_number)
def test_hostile_numbers_as_options_are_a_result_or_one_line(number: str) -> None:
    for args in (
        ["check", str(SAMPLES / "3650-4"), "--target-iops", number],
        ["size", "--users", number],
        ["size", "--quota-gb", number],
        ["size", "--iops-per-mailbox", number, "--json"],
        ["catalog", "ingest", "--catalog", "/nonexistent/x", "-j", number, str(SAMPLES / "3650-4")],
    ):
        _assert_result_or_one_line_error(runner.invoke(app, args), args)


# --- names from evidence -----------------------------------------------------------------------------


def _log_naming(folder: Path, machine: str, instance: str, counter: str) -> Path:
    """The EMAIL5 Performance log cut to 40 rows, with its machine, first instance and first
    counter renamed."""
    lines = PERFORMANCE_CSV.read_text(encoding="utf-8").splitlines()[:40]
    header = (
        lines[0].replace("\\\\EMAIL5\\", f"\\\\{machine}\\").replace("Instance2756.1)", f"{instance})", 1)
    )
    header = header.replace("I/O Database Reads Average Latency", counter, 1)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / PERFORMANCE_CSV.name
    target.write_text("\n".join([header, *lines[1:]]) + "\n", encoding="utf-8")
    return target


@PROPERTY
@given(machine=machine_name, instance=machine_name, counter=machine_name)
def test_hostile_names_in_a_counter_log_are_printed_never_parsed(
    tmp_path: Path, machine: str, instance: str, counter: str
) -> None:
    folder = tmp_path / "run"
    shutil.rmtree(folder, ignore_errors=True)
    log = _log_naming(folder, machine, instance, counter)
    for args in (
        ["check", str(folder)],
        ["inspect", str(log)],
        ["convert", str(log), "-o", str(tmp_path / "out.csv")],
    ):
        result = runner.invoke(app, args)
        _assert_result_or_one_line_error(result, args)
    shown = runner.invoke(app, ["check", str(folder)])
    if shown.exit_code != 2 and machine.strip() and machine.isprintable():
        assert machine.strip() in shown.output  # printed as written, not read as markup


def test_the_issue_s_machine_names_are_printed_as_written(tmp_path: Path) -> None:
    for machine in ("EM[/]AIL5", "[link]EMAIL5", "[bold EMAIL5"):
        folder = tmp_path / machine.replace("/", "_")
        _log_naming(folder, machine, "Instance2756.1", "I/O Database Reads Average Latency")
        result = runner.invoke(app, ["check", str(folder)])
        _assert_result_or_one_line_error(result, ["check", machine])
        assert f"{machine}: no Stress" in result.output  # MarkupError before


# --- catalog sql: every DuckDB type, and hostile literals -------------------------------------------


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("catalog") / "catalog"
    done = runner.invoke(
        app, ["catalog", "ingest", str(SAMPLES / "3650-4"), "--catalog", str(target), "-j", "1"]
    )
    assert done.exit_code == 0, done.output
    return target


EVERY_TYPE = {
    "INTERVAL": ("INTERVAL 3 DAY", "3 days"),
    "TIMESTAMP infinity": ("'infinity'::TIMESTAMP", "infinity"),
    "DATE -infinity": ("DATE '-infinity'", "-infinity"),
    "TIMESTAMP past 9999": ("'294247-01-10'::TIMESTAMP", "294247-01-10"),
    "TIMESTAMPTZ infinity": ("'infinity'::TIMESTAMPTZ", "infinity"),
    "TIMESTAMP_MS infinity": ("'infinity'::TIMESTAMP_MS", "infinity"),
    "DOUBLE inf": ("'inf'::DOUBLE", "inf"),
    "DOUBLE nan": ("'nan'::DOUBLE", "nan"),
    "UNION": ("union_value(k := 1)", "1"),
    "HUGEINT": (
        "170141183460469231731687303715884105727::HUGEINT",
        "170141183460469231731687303715884105727",
    ),
    "UHUGEINT": (
        "340282366920938463463374607431768211455::UHUGEINT",
        "340282366920938463463374607431768211455",
    ),
    "UUID": ("'00000000-0000-0000-0000-00000000002a'::UUID", "00000000-0000-0000-0000-00000000002a"),
    "BLOB": ("'\\xAA\\x00'::BLOB", "\\xAA\\x00"),
    "LIST": ("[1, 2, NULL]", "1"),
    "ARRAY of DATE": ("['infinity'::DATE]::DATE[1]", "infinity"),
    "STRUCT": ("{'a': 1, 'b': '[/]'}", "[/]"),
    "MAP": ("MAP {'k': 1}", "k"),
    "ENUM": ("'a'::ENUM('a', 'b')", "a"),
    "BIT": ("'0101'::BIT", "0101"),
    "TIMETZ": ("'12:00:00+05'::TIMETZ", "12:00:00+05"),
    "DECIMAL(38)": (
        "12345678901234567890123456789012345678::DECIMAL(38,0)",
        "12345678901234567890123456789012345678",
    ),
    "BIGNUM": ("1::VARINT", "1"),
    "markup": ("repeat('[/]', 3)", "[/][/][/]"),
}
NULLS = [
    "INTERVAL",
    "TIMESTAMP",
    "DATE",
    "UNION(a INTEGER)",
    "UUID",
    "BLOB",
    "BIT",
    "TIMETZ",
    "MAP(VARCHAR, INTEGER)",
]


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("kind", list(EVERY_TYPE))
def test_catalog_sql_prints_every_duckdb_type(catalog: Path, kind: str, as_json: bool) -> None:
    literal, shown = EVERY_TYPE[kind]
    args = [
        "catalog",
        "sql",
        "--catalog",
        str(catalog),
        f"SELECT {literal} AS v",
        *(["--json"] if as_json else []),
    ]
    result = runner.invoke(app, args)
    _assert_result_or_one_line_error(result, args)
    assert result.exit_code == 0, result.output
    # The JSON is strict (no Infinity or NaN tokens) and holds the text DuckDB prints.
    printed = json.dumps(json.loads(result.stdout), ensure_ascii=False) if as_json else result.stdout
    if as_json:
        printed = printed.replace("\\\\", "\\")  # a backslash, as JSON escapes it
    assert shown.casefold() in printed.casefold() or (shown == "inf" and "Infinity" in printed), printed


def test_catalog_sql_prints_a_null_of_each_type(catalog: Path) -> None:
    columns = ", ".join(f"NULL::{kind} AS c{i}" for i, kind in enumerate(NULLS))
    for extra in ([], ["--json"]):
        args = ["catalog", "sql", "--catalog", str(catalog), f"SELECT {columns}", *extra]
        result = runner.invoke(app, args)
        _assert_result_or_one_line_error(result, args)
        assert result.exit_code == 0, result.output


@PROPERTY
@given(text=hostile_text)
def test_hostile_sql_literals_print_as_written(catalog: Path, text: str) -> None:
    literal = "'" + text.replace("\x00", "").replace("'", "''") + "'"
    for statement in (
        f"SELECT {literal} AS v",
        f'SELECT 1 AS "{text.replace(chr(0), "").replace(chr(34), "")}"',
        text,
    ):
        args = ["catalog", "sql", "--catalog", str(catalog), statement]
        _assert_result_or_one_line_error(runner.invoke(app, args), args)
        _assert_result_or_one_line_error(runner.invoke(app, [*args, "--json"]), args)


# --- strings from a manifest -------------------------------------------------------------------------


@settings(PROPERTY, max_examples=4)
@given(title=hostile_text)
def test_hostile_manifest_strings_are_a_result_or_one_line(tmp_path: Path, title: str) -> None:
    folder = tmp_path / "m"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    shutil.copytree(SAMPLES / "3650-4", folder / "3650-4")
    manifest = (SAMPLES / "netapp.toml").read_text(encoding="utf-8")
    quoted = (
        '"' + "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}" for c in title) + '"'
    )
    manifest = re.sub(r'(?m)^title = ".*"$', lambda _m: f"title = {quoted}", manifest, count=1)
    (folder / "netapp.toml").write_text(manifest, encoding="utf-8")
    args = ["build", str(folder / "netapp.toml"), "-o", str(folder / "out"), "--format", "html", "-j", "1"]
    result = runner.invoke(app, args)
    _assert_result_or_one_line_error(result, args)
