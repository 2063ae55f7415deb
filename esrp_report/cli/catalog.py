"""``esrp-report catalog ...``: archives of past runs. Thin: parse options, call the library, print.

The whole CLI imports this module to build its help, so DuckDB, Polars and the catalog are
imported inside the commands that use them, never here (see esrp_report/cli.py). Rich too, and
no `from __future__ import annotations` (cli/main.py says why).
"""

import json
import math
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from esrp_report.cli import options, output
from esrp_report.model.errors import EsrpError
from esrp_report.model.numbers import fmt_number

if TYPE_CHECKING:
    import polars as pl

catalog_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,  # plain help: the rich renderer costs ~80 ms of start-up (docs/benchmarks.md)
    help="Archives of past runs: ingest, list, query, export.",
)

CatalogOption = Annotated[Path, typer.Option("--catalog", help="The catalog folder (created by ingest).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


_console = output.console


def _fail(message: str, code: int = 2) -> typer.Exit:
    output.print_error(message)
    return typer.Exit(code)


def _cell(value: Any) -> str:
    if isinstance(value, float) or value is None:
        return fmt_number(value, 3, thousands=True)  # the documents' rounding, half up
    return str(value)


def _print_frame(frame: "pl.DataFrame", title: str | None = None) -> None:
    from rich.table import Table  # noqa: PLC0415 - Rich on use: see the module docstring

    table = Table(title=title)
    for column in frame.columns:
        table.add_column(column, overflow="fold")
    for row in frame.iter_rows():
        table.add_row(*(_cell(v) for v in row))
    _console().print(table)


def _echo_json(value: Any) -> None:
    typer.echo(json.dumps(_strict_json(value), indent=2, default=str, allow_nan=False))


def _strict_json(value: Any) -> Any:
    """``value`` with each float that is not finite as its name ("inf", "-inf", "nan"): JSON has
    no such numbers, and json.dumps would write ``Infinity``, which JSON readers refuse."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {key: _strict_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_strict_json(item) for item in value]
    return value


@catalog_app.command("ingest")
def ingest_command(  # noqa: PLR0917 - Typer maps each parameter to an option
    archives: Annotated[list[Path], typer.Argument(help="Results folders, files or .zip archives.")],
    catalog: CatalogOption,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            parser=options.jobs,
            metavar="COUNT",
            help="Local parsing processes (default: cores).",
        ),
    ] = None,
    dask: Annotated[
        str | None, typer.Option("--dask", help="Parse on this Dask scheduler (tcp://host:port) instead.")
    ] = None,
    as_json: JsonOption = False,
    quiet: options.QuietOption = False,
) -> None:
    """Bring Jetstress results into the catalog; unchanged files are skipped by their hash.

    Exit 0 when everything found was ingested, 1 when something was refused or could not be
    read (listed), 2 when the inputs or the catalog cannot be used at all, or hold no Jetstress
    run."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: PLC0415 - Rich on use: see the module docstring

    from esrp_report.app import catalog as library  # noqa: PLC0415 - imported on use: see the module docstring
    from esrp_report.cli.console import PlainConsole, styled  # noqa: PLC0415 - Rich on use: see the module docstring

    columns = (
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    show = sys.stderr.isatty() and not as_json and not quiet
    with Progress(*columns, console=PlainConsole(stderr=True), disable=not show, transient=True) as bar:
        task = bar.add_task("parsing results folders", total=None)

        def progress(_what: str, done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        try:
            report = library.ingest(archives, catalog, jobs=jobs, dask_address=dask, progress=progress)
        except EsrpError as exc:
            raise _fail(str(exc)) from None
    if as_json:
        _echo_json(report.as_dict())
    else:
        console = _console()
        console.print(
            f"{report.files:,} files ({report.bytes_hashed / 1e6:,.1f} MB hashed)"
            f" in {report.folders:,} folders"
            f" and {report.archives:,} archives; {report.folders_unchanged:,} folders and"
            f" {report.archives_unchanged:,} archives unchanged"
        )
        console.print(
            styled(
                "runs: ",
                (f"{report.runs_added:,} added", "bold"),
                f", {report.runs_replaced:,} replaced,"
                f" {report.runs_unchanged:,} unchanged; {report.file_errors:,} unreadable files",
            )
        )
        for refusal in report.refusals:
            console.print(styled(("refused", "bold red"), f" {refusal.source}: {refusal.reason}"))
        for failure in report.failures:
            console.print(styled(("failed", "bold red"), f" {failure}"))
        if report.file_errors:
            console.print(f'see: esrp-report catalog sql --catalog {catalog} "SELECT * FROM problems"')
    if report.refusals or report.failures or report.file_errors:
        raise typer.Exit(1)
    found = report.runs_added + report.runs_replaced + report.runs_unchanged
    if not found and not report.folders_unchanged and not report.archives_unchanged:
        # Zero runs in, nothing refused: a wrong folder named looked like a clean ingest (issue 32).
        where = ", ".join(str(path) for path in archives)
        raise _fail(f"no Jetstress results found in {where} (no run was read from them)")


def _since(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise _fail(f"--since {value!r}: expected a date such as 2011-03-01") from None


@catalog_app.command("list")
def list_command(  # noqa: PLR0917 - Typer maps each parameter to an option
    catalog: CatalogOption,
    failed: Annotated[bool, typer.Option("--failed", help="Only runs this tool judges failed.")] = False,
    server: Annotated[str | None, typer.Option("--server", help="Only this machine.")] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Only runs started on or after this date.")
    ] = None,
    kind: Annotated[
        str | None, typer.Option("--kind", help="Only this test (Performance, Stress, ...).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """One entry per run (one Jetstress test on one server)."""
    from esrp_report.app import catalog as library  # noqa: PLC0415 - imported on use: see the module docstring

    try:
        frame = library.list_runs(catalog, failed=failed, server=server, since=_since(since), kind=kind)
    except EsrpError as exc:
        raise _fail(str(exc)) from None
    if as_json:
        _echo_json(frame.to_dicts())
        return
    _print_frame(frame.drop("location"), title=f"{frame.height:,} runs")


@catalog_app.command("sql")
def sql_command(
    statement: Annotated[
        str, typer.Argument(help="A SELECT over runs, verdicts, instance_values, series ...")
    ],
    catalog: CatalogOption,
    as_json: JsonOption = False,
) -> None:
    """Run read-only SQL against the catalog (DuckDB dialect)."""
    from esrp_report.app import catalog as library  # noqa: PLC0415 - imported on use: see the module docstring

    try:
        frame = library.run_sql(catalog, statement)
    except EsrpError as exc:
        raise _fail(str(exc)) from None
    if as_json:
        _echo_json(frame.to_dicts())
    else:
        _print_frame(frame)


@catalog_app.command("export")
def export_command(
    catalog: CatalogOption,
    parquet: Annotated[Path, typer.Option("--parquet", help="Folder to write one Parquet file per table.")],
) -> None:
    """Export every table as Parquet, with the counter series."""
    from esrp_report.app import catalog as library  # noqa: PLC0415 - imported on use: see the module docstring

    try:
        written = library.export(catalog, parquet)
    except EsrpError as exc:
        raise _fail(str(exc)) from None
    for path in written:
        typer.echo(f"wrote {path}")


@catalog_app.command("show")
def show_command(
    run: Annotated[str, typer.Argument(help="A run id (or a unique prefix) from 'catalog list'.")],
    catalog: CatalogOption,
    as_json: JsonOption = False,
) -> None:
    """One run: its figures, verdicts, per-instance tables, sources and problems."""
    from rich.table import Table  # noqa: PLC0415 - Rich on use: see the module docstring

    from esrp_report.app import catalog as library  # noqa: PLC0415 - imported on use: see the module docstring

    try:
        detail = library.show_run(catalog, run)
    except EsrpError as exc:
        raise _fail(str(exc)) from None
    if as_json:
        _echo_json(
            {
                "run": detail.run,
                "verdicts": detail.verdicts.to_dicts(),
                "instances": detail.instances.to_dicts(),
                "sources": detail.sources.to_dicts(),
                "problems": detail.problems.to_dicts(),
            }
        )
        return
    facts = Table(title=f"run {detail.run['run_id']}", show_header=False)
    facts.add_column("field", style="bold")
    facts.add_column("value")
    for key, value in detail.run.items():
        facts.add_row(key, _cell(value))
    _console().print(facts)
    _print_frame(detail.verdicts, title="verdicts")
    if detail.instances.height:
        _print_frame(detail.instances, title="per-instance figures")
    _print_frame(detail.sources.drop("sha256"), title="sources")
    if detail.problems.height:
        _print_frame(detail.problems, title="problems")
