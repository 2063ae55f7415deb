"""Command line: parse options, call the library, print. Nothing else lives here.

Start-up is kept short: `esrp-report --help` and `version` must answer at once, so this module
imports no data library (Polars, DuckDB, PyArrow, NumPy, WeasyPrint), not Rich, and none of the
library's own modules that do. Each command imports what it needs when it runs (Rich when it
prints a table); types used only in annotations are imported under TYPE_CHECKING and named in
quotes. tests/test_startup.py holds this.

No `from __future__ import annotations` here or in cli/catalog.py: Typer reads every command's
signature to build the help, and string annotations made it evaluate each `Annotated[...]` again,
about 35 ms of `--help` (docs/benchmarks.md, "Stop 40: check and start-up").
"""

import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer import _click as click  # the click Typer carries (its own copy)
from typer.core import TyperGroup

from esrp_report import __version__
from esrp_report.cli import options, output, verdicts
from esrp_report.cli.catalog import catalog_app
from esrp_report.cli.output import EXIT_FAIL, EXIT_PASS, EXIT_UNUSABLE
from esrp_report.model.errors import EsrpError

if TYPE_CHECKING:
    from esrp_report.app.views import AuditResult


class _Commands(TyperGroup):
    """The commands, with Typer's own check of a path argument (a file it cannot read) and a number
    option refused by cli/options.py said as every other user mistake is: one line naming the path
    or option, exit 2, not the usage text."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except typer.BadParameter as exc:
            hint = exc.param_hint or (exc.param.get_error_hint() if exc.param else "")
            if isinstance(exc, options.OptionNumberError):
                raise _error(f"{hint}: {exc.message}") from None
            if not _PATH_CHECK.match(exc.message):
                raise
            raise _error(f"{hint}: {exc.message.rstrip('.')}; give a path this user can read") from None
        except OSError as exc:
            raise _error(output.os_error_message(exc)) from None


# What click's Path check says of a path: "path '/x' is not readable." and the like.
_PATH_CHECK = re.compile(r"(?:path|file|directory) '.*' (?:is|does)")

app = typer.Typer(
    cls=_Commands,
    add_completion=False,
    # Plain help: the rich help renderer loads rich.markdown and markdown-it, ~80 ms of a 150 ms
    # start-up budget (docs/benchmarks.md); errors and tables still print through rich.
    rich_markup_mode=None,
    no_args_is_help=True,
    help="Turn Jetstress evidence into checkable ESRP-Storage results.",
)
app.add_typer(catalog_app, name="catalog")

# Shared options, defined once.
InputPaths = Annotated[
    list[Path],
    typer.Argument(help="Results folders or files (HTML reports, XML, test logs, perfmon CSV/TSV)."),
]
RulesOption = Annotated[
    Path | None,
    typer.Option(
        "--rules",
        help="TOML file overriding or adding rules (a stricter service level; one more lenient than "
        "Microsoft's thresholds needs --loosen).",
    ),
]
LoosenOption = Annotated[
    str | None,
    typer.Option("--loosen", help="Why the --rules file may be more lenient than Microsoft's thresholds."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (full precision) instead of tables.")]
EncodingOption = Annotated[
    str | None,
    typer.Option(
        "--encoding",
        help="The code page of perfmon CSV/TSV logs (e.g. cp1250, windows-1251, 932, utf-8) "
        "instead of the one found from their bytes.",
    ),
]
TargetOption = Annotated[
    float | None,
    options.number_option(
        "--target-iops",
        help="Target transactional IOPS per server, above 0 (overrides the report).",
        above_zero=True,
    ),
]

QuietOption = options.QuietOption


_console = output.console


def _error(message: str) -> typer.Exit:
    output.print_error(message)
    return typer.Exit(EXIT_UNUSABLE)


@contextmanager
def _working(quiet: bool, what: str) -> Iterator[Callable[[str], None]]:
    """A progress line on stderr while long work runs, updated with what it is doing; none with
    --quiet or when stderr is not a terminal (a pipe or a log file gets the results only)."""
    if quiet or not sys.stderr.isatty():
        yield lambda _message: None
        return
    from esrp_report.cli.console import PlainConsole  # noqa: PLC0415 - imported on use

    with PlainConsole(stderr=True).status(what, spinner="dots") as status:
        yield status.update


def _formats(option: str) -> tuple[str, ...]:
    """``--format html, pdf`` as ("html", "pdf"); the API says which names it takes."""
    return tuple(name.strip() for name in option.split(",") if name.strip())


def _print_version(wanted: bool) -> None:
    if wanted:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def _main(
    _version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """esrp-report: verdicts and documents from Jetstress results."""


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


@app.command()
def check(  # noqa: PLR0917 - Typer maps each parameter to an option
    paths: InputPaths,
    rules: RulesOption = None,
    target_iops: TargetOption = None,
    as_json: JsonOption = False,
    loosen: LoosenOption = None,
    encoding: EncodingOption = None,
) -> None:
    """Judge Jetstress results per instance, server and solution.

    Exit status: 0 pass, 1 any rule failed, 2 unusable input (or nothing could be evaluated),
    3 incomplete (nothing failed, but a rule was not evaluated or passed only on damaged data).
    """
    raise typer.Exit(
        verdicts.run_check(
            paths, rules=rules, target_iops=target_iops, loosen=loosen, encoding=encoding, as_json=as_json
        )
    )


@app.command()
def build(  # noqa: PLR0917 - Typer maps each parameter to an option
    manifest: Annotated[Path, typer.Argument(help="The solution manifest (TOML).")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Folder for the HTML and PDF.")] = Path("out"),
    formats: Annotated[str, typer.Option("--format", help="Comma-separated: html, pdf.")] = "html,pdf",
    allow_fail: Annotated[
        bool, typer.Option("--allow-fail", help="Exit 0 even when the design fails (to get a draft).")
    ] = False,
    jobs: Annotated[
        int | None,
        typer.Option(
            "-j",
            "--jobs",
            parser=options.jobs,
            metavar="COUNT",
            help="Processes for the PDF and charts (default: all cores).",
        ),
    ] = None,
    allow_linked_files: Annotated[
        bool,
        typer.Option(
            "--allow-linked-files",
            help="Read the manifest's files even when they are hard links or on another device "
            "(only for a manifest folder you trust).",
        ),
    ] = False,
    quiet: QuietOption = False,
    draft: Annotated[
        bool,
        typer.Option(
            "--draft",
            help="Build even though TODO(vendor) placeholders are left (each is warned of); "
            'every page is marked "DRAFT".',
        ),
    ] = False,
) -> None:
    """Build the ESRP solution document (HTML and PDF) from a manifest and its results folders,
    and beside it the reviewer's report (NAME-review.html and .pdf: verdicts, evidence notes,
    disagreements, what was not evaluated, the files read).

    Exit status: 0 pass, 1 the design fails, 3 incomplete (a rule not evaluated or evaluated on
    damaged data; each reason is printed), 2 unusable input, or a manifest that still holds
    TODO(vendor) placeholders (each is named; --draft builds it with a warning, every page marked
    DRAFT); --allow-fail gives 0 for a draft of a failing or incomplete one.
    """
    from esrp_report.app import api  # noqa: PLC0415 - imported on use: see the module docstring
    from esrp_report.app.views import Status  # noqa: PLC0415 - imported on use: see the module docstring
    from esrp_report.cli.console import styled  # noqa: PLC0415 - Rich on use: see the module docstring

    console = _console()
    try:
        with _working(quiet, "building") as status:
            result = api.build(
                manifest,
                out,
                formats=_formats(formats),
                progress=status,
                # The command's entry point has the __main__ guard workers need; a library
                # caller gets one process unless it asks (api.build's docstring).
                jobs=jobs if jobs is not None else api.usable_cores(),
                allow_linked_files=allow_linked_files,
                draft=draft,
            )
    except EsrpError as exc:
        raise _error(str(exc)) from None
    doc = result.document
    for line in result.loosened:
        console.print(styled(("rules file loosens Microsoft's threshold:", "yellow"), " ", line))
    for warning in result.warnings:
        console.print(styled(("PDF engine warning:", "yellow"), " ", warning))
    for url in result.refused:
        console.print(styled(("refused to fetch:", "yellow"), " ", url))
    for line in result.deprecated:
        console.print(styled(("manifest:", "yellow"), " ", line))
    for left in result.placeholders:  # only a --draft gets here with any
        console.print(styled(("draft: placeholder left:", "yellow"), " ", left.describe()))
    errors = [p for p in doc.problems if p.severity == "error"]
    if errors or doc.disagreements:
        console.print(
            f"{len(doc.problems)} evidence notes ({len(errors)} errors) and {len(doc.disagreements)} "
            "disagreements are listed in the reviewer's report's Evidence notes."
        )
    for failure in doc.failures:
        console.print(
            styled(
                ("FAIL", "bold red"),
                f" {failure.server} {failure.run_kind} {failure.instance or ''}: "
                f"{failure.rule} {failure.value} (limit {failure.limit})",
            )
        )
    style = verdicts.STATUS_STYLE[doc.verdict]
    pages = f", {result.pages} PDF pages" if result.pages is not None else ""
    console.print(
        styled(
            "Solution ",
            (doc.manifest.document.title, "bold"),
            ": ",
            (doc.verdict.value.upper(), style),
            pages,
        )
    )
    for reason in result.blocking:
        console.print(styled(("  why:", style), " ", reason))
    for file in result.files:
        console.print(f"  wrote {file}")
    if doc.verdict is not Status.PASS and not allow_fail:
        raise typer.Exit(verdicts.VERDICT_EXIT[doc.verdict])


@app.command()
def init(
    results: Annotated[list[Path], typer.Argument(help="Results folders, one per server.")],
    out: Annotated[Path, typer.Option("-o", "--out", help="The manifest file to write.")] = Path(
        "manifest.toml"
    ),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing manifest.")] = False,
) -> None:
    """Write a starting manifest from results folders, with marked places for the vendor's text."""
    from esrp_report.app import api  # noqa: PLC0415 - imported on use: see the module docstring
    from esrp_report.model import PLACEHOLDER  # noqa: PLC0415 - imported on use: see the module docstring

    if out.is_dir():
        raise _error(f"{out}: is a folder, not a file: name the manifest file to write with -o")
    if not out.parent.is_dir():
        raise _error(
            f"{out}: the folder {out.parent} is not there: name the manifest file with -o in a folder"
        )
    if out.exists() and not force:
        raise _error(f"{out} exists; use --force to overwrite it")
    try:
        text = api.init_manifest(results, out)
    except EsrpError as exc:
        raise _error(str(exc)) from None
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _error(f"{out}: cannot write it: {exc.strerror or exc}; name another file with -o") from None
    _console().print(f"wrote {out} ({len(results)} results folders); fill in the {PLACEHOLDER} markers")


@app.command()
def audit(  # noqa: PLR0917 - Typer maps each parameter to an option
    document: Annotated[Path, typer.Argument(help="A published ESRP document: PDF, HTML, or text/Markdown.")],
    rules: RulesOption = None,
    as_json: JsonOption = False,
    recompute: Annotated[
        bool, typer.Option("--recompute", help="Show the summary figures rebuilt from the appendix.")
    ] = False,
    out: Annotated[
        Path | None, typer.Option("-o", "--output", help="Also write an HTML/PDF audit report here.")
    ] = None,
    formats: Annotated[str, typer.Option("--format", help="Report formats with -o: html, pdf.")] = "html,pdf",
    loosen: LoosenOption = None,
    quiet: QuietOption = False,
) -> None:
    """Check a published document against itself: sums, aggregates, appendix, thresholds.

    Exit status: 0 no error found, 1 at least one error, 2 unusable input, a document in which
    nothing could be checked, or one only partly read (its findings are printed all the same).
    """
    from esrp_report.app import api, views  # noqa: PLC0415 - imported on use: see the module docstring

    try:
        with _working(quiet, "auditing") as status:
            result = api.audit_document(document, rules_file=rules, loosen=loosen, progress=status)
        # No audit report for a document where nothing was checked: it would read as a clean bill.
        # One partly read gets its report, which says so at its head.
        wanted = out is not None and not result.nothing_checked
        written = api.write_audit_report(result, out, formats=_formats(formats)) if wanted and out else []
    except EsrpError as exc:
        raise _error(str(exc)) from None
    if as_json:
        data = views.audit_payload(result)
        # "0 errors" alone cannot tell a clean document from one where nothing was read.
        data["status"] = result.status
        data["message"] = _audit_message(result)
        typer.echo(json.dumps(data, indent=2))
        if result.status != "checked":
            raise typer.Exit(EXIT_UNUSABLE)
    else:
        _print_audit(result, recompute=recompute)
        for path in written:
            _console().print(f"wrote {path}")
        if result.status != "checked":
            raise _error(_audit_message(result) or result.status)
    raise typer.Exit(EXIT_FAIL if result.errors else EXIT_PASS)


def _audit_message(result: "AuditResult") -> str | None:
    """Why an audit gives no verdict (None when it gives one)."""
    if result.nothing_checked:
        return result.nothing_checked_message()
    return result.partly_read_message() if result.partly_read else None


def _print_audit(result: "AuditResult", *, recompute: bool) -> None:
    from rich.table import Table  # noqa: PLC0415 - Rich on use: see the module docstring
    from rich.text import Text  # noqa: PLC0415 - Rich on use: see the module docstring

    from esrp_report.cli.console import styled  # noqa: PLC0415 - Rich on use: see the module docstring

    console = _console()
    table = Table(title=f"Audit of {result.source}", show_lines=False)
    for name in ("severity", "where", "finding", "printed", "expected"):
        table.add_column(name, overflow="fold")
    for f in result.findings:
        at = f"line {f.line}" if f.line else None
        if f.line and len(f.suspects) == 2:
            at = f"line {f.suspects[0]} or {f.suspects[1]}"
        where = ", ".join(str(x) for x in (at, f.table, f.column) if x)
        style = {"error": "bold red", "warning": "yellow"}.get(f.severity, "dim")
        table.add_row(Text(f.severity, style=style), where, f.message, f.printed or "", f.expected or "")
    if result.findings:
        console.print(table)
    if recompute and result.recomputed:
        view = Table(title="Summary figures rebuilt from the appendix")
        for name in ("test", "column", "figure", "printed", "from appendix", "report"):
            view.add_column(name)
        for row in result.recomputed:
            rebuilt = "" if row.recomputed is None else f"{row.recomputed:.3f}"
            view.add_row(row.test, row.column, row.metric, row.printed or "", rebuilt, row.source)
        console.print(view)
    elif recompute:
        console.print("No summary column could be matched to an appendix report.")
    for problem in result.unread:
        console.print(styled(("not read:", "yellow"), f" {problem.location or ''} {problem.message}"))
    counts = {s: sum(1 for f in result.findings if f.severity == s) for s in ("error", "warning", "note")}
    style = "bold red" if counts["error"] else "green"
    convention = (
        f"; per-server tables: {result.summary_convention} convention" if result.summary_convention else ""
    )
    _print_coverage(result)
    if result.nothing_checked:
        return  # no count line: "0 error(s)" would read as a verdict; the caller says why instead
    cover = result.coverage
    over = (
        f" over {cover.checked:,} of {cover.numbers:,} printed numbers read "
        f"({cover.vouched:,} vouched for to their last digit)"
        if cover
        else ""
    )
    console.print(
        styled(
            (f"{counts['error']} error(s)", style),
            f", {counts['warning']} warning(s), {counts['note']} note(s) "
            f"from {result.checked} relations checked{over} ({result.format}{convention}); results read: "
            + ("; ".join(result.results_read) or "none"),
        )
    )


_UNREAD_SHOWN = 12


def _print_coverage(result: "AuditResult") -> None:
    """Each table read, with how many of its numbers the relations use; each block not read."""
    from rich.table import Table  # noqa: PLC0415 - Rich on use: see the module docstring

    from esrp_report.cli.console import styled  # noqa: PLC0415 - Rich on use: see the module docstring

    cover = result.coverage
    if cover is None:
        return
    console = _console()
    view = Table(title="Tables read", show_lines=False)
    for name in ("lines", "table", "numbers", "checked", "vouched"):
        view.add_column(name, overflow="fold")
    for t in cover.tables:
        view.add_row(
            f"{t.first_line}-{t.last_line}", t.title, f"{t.numbers:,}", f"{t.checked:,}", f"{t.vouched:,}"
        )
    if cover.tables:
        console.print(view)
    if cover.unread:
        blocks = len(cover.unread) + cover.more_unread_blocks
        numbers = sum(b.numbers for b in cover.unread) + cover.more_unread_numbers
        console.print(styled((f"Not read: {blocks:,} block(s) of figures, {numbers:,} number(s)", "yellow")))
        for block in cover.unread[:_UNREAD_SHOWN]:
            console.print(
                f"  lines {block.first_line}-{block.last_line} ({block.numbers} number(s)) "
                f"{block.what!r}: {block.reason}"
            )
        if blocks > _UNREAD_SHOWN:
            listed = "the first 1,000" if cover.more_unread_blocks else "every one"
            console.print(f"  ... and {blocks - _UNREAD_SHOWN:,} more (--json lists {listed})")
    for missing in cover.missing:  # what the document promises and does not hold (truncated)
        console.print(styled((f"Missing, though promised at line {missing.line}: {missing.what}", "yellow")))


@app.command()
def inspect(  # noqa: PLR0917 - Typer maps each parameter to an option
    file: Annotated[
        Path, typer.Argument(help="Any supported file, Jetstress or not (e.g. any perfmon CSV).")
    ],
    as_json: JsonOption = False,
    averages: Annotated[
        bool,
        typer.Option(
            "--averages",
            help="A .blg: per counter, the exact window average from raw first/last values "
            "beside the mean of the cooked samples.",
        ),
    ] = False,
    counters: Annotated[
        list[str] | None,
        typer.Option("--counters", help=r"With --averages: counter path patterns (e.g. '\Processor(*)\*')."),
    ] = None,
    begin: Annotated[
        datetime | None, typer.Option("--begin", help="With --averages: window start (the log's local time).")
    ] = None,
    end: Annotated[datetime | None, typer.Option("--end", help="With --averages: window end.")] = None,
    encoding: EncodingOption = None,
) -> None:
    """Describe a file: its format and what it holds (a perfmon CSV/TSV: the encoding read)."""
    if averages:
        _print_averages(file, counters=counters, bounds=(begin, end), as_json=as_json)
        return
    status = output.inspect_file(file, as_json=as_json, encoding=encoding)
    if status:
        raise typer.Exit(status)


def _print_averages(
    file: Path, *, counters: list[str] | None, bounds: tuple[datetime | None, datetime | None], as_json: bool
) -> None:
    from rich.table import Table  # noqa: PLC0415 - Rich on use: see the module docstring

    from esrp_report.app import api  # noqa: PLC0415 - imported on use: see the module docstring
    from esrp_report.cli.console import styled  # noqa: PLC0415 - Rich on use: see the module docstring

    try:
        report = api.blg_averages(file, counters=counters, begin=bounds[0], end=bounds[1])
    except OSError as exc:
        raise _error(f"{file}: cannot read: {exc.strerror or exc}") from None
    except EsrpError as exc:
        raise _error(str(exc)) from None
    window = (
        f"{report.samples} sample(s) from {report.first} to {report.last}"
        f" ({report.samples_read} read, {report.samples_lost} lost)"
    )
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "file": str(file),
                    "window": {"samples": report.samples, "first": report.first, "last": report.last},
                    "samples_read": report.samples_read,
                    "samples_lost": report.samples_lost,
                    "problems": [p.describe() for p in report.problems],
                    "counters": report.frame.to_dicts(),
                },
                indent=2,
                default=str,
            )
        )
        return
    console = _console()
    for problem in report.problems:
        console.print(styled((f"{problem.severity}:", "yellow"), " ", problem.describe()))
    table = Table(title=f"{file}: {window}")
    for name in (
        "counter",
        "type",
        "samples",
        "mean of samples",
        "exact average",
        "relative difference",
        "why",
    ):
        table.add_column(
            name, justify="right" if name in {"samples", "mean of samples", "exact average"} else "left"
        )
    for row in report.frame.iter_rows(named=True):
        relative = row["relative_difference"]
        table.add_row(
            row["path"],
            row["type"],
            str(row["samples"]),
            "—" if row["mean_of_samples"] is None else f"{row['mean_of_samples']:.7g}",
            "—" if row["exact_average"] is None else f"{row['exact_average']:.7g}",
            "" if relative is None else f"{relative * 100:+.3g} %",
            row["why"] or "",
        )
    console.print(table)


@app.command()
def convert(  # noqa: PLR0917 - Typer maps each parameter to an option
    source: Annotated[Path, typer.Argument(help="A binary perfmon log (.blg), or a perfmon CSV/TSV.")],
    output: Annotated[
        Path, typer.Option("-o", "--output", help="OUT.csv, OUT.tsv or OUT.parquet (format from the name).")
    ],
    counters: Annotated[
        list[str] | None,
        typer.Option(
            "--counters",
            help=r"Keep counters whose path matches (wildcards * and ?, "
            r"e.g. '\LogicalDisk(*)\Avg. Disk sec/*'); repeatable.",
        ),
    ] = None,
    begin: Annotated[
        datetime | None,
        typer.Option(
            "--begin", help="First sample to keep (the log's local time unless an offset is given)."
        ),
    ] = None,
    end: Annotated[datetime | None, typer.Option("--end", help="Last sample to keep.")] = None,
    encoding: EncodingOption = None,
    quiet: QuietOption = False,
) -> None:
    """Convert a counter log to relog-style CSV/TSV or to Parquet, streaming (output in UTF-8).

    Exit status: 0, or 2 for unusable input, including a --begin/--end window that keeps no
    sample (the log's span is named; nothing is written)."""
    from esrp_report.app import api  # noqa: PLC0415 - imported on use: see the module docstring
    from esrp_report.cli.console import styled  # noqa: PLC0415 - Rich on use: see the module docstring

    console = _console()
    try:
        with _working(quiet, "converting") as status:
            result = api.convert_counter_log(
                source,
                output,
                counters=counters,
                begin=begin,
                end=end,
                encoding=encoding,
                progress=lambda written: status(f"converting: {written:,} samples written"),
            )
    except EsrpError as exc:
        raise _error(str(exc)) from None
    for problem in result.problems:
        console.print(styled((f"{problem.severity}:", "yellow"), " ", problem.describe()))
    counted = f"{result.samples} sample(s) x {result.columns} counter(s)"
    if not result.parts:
        console.print(f"wrote {result.output} ({result.format}): {counted}")
        return
    from esrp_report.app.convert import PARQUET_CHUNK_BUDGET  # noqa: PLC0415 - api has imported it

    folder = f"{result.output}{os.sep}"
    for line in (
        f"wrote a Parquet dataset (a directory, not one file): {folder}",
        f"  {len(result.parts)} part files, {result.parts[0].name} to {result.parts[-1].name}, in time order "
        f"with one schema: {counted}",
        f"  why: one file would hold {result.column_chunks:,} column chunks (row groups x columns), "
        f"more than the budget of {PARQUET_CHUNK_BUDGET:,};",
        "  the Parquet writer needs about 2 kB of memory per column chunk by the time it closes a file",
        f"  read it as one table: polars.scan_parquet('{folder}*.parquet'),",
        f"  pyarrow.dataset.dataset('{result.output}') or DuckDB read_parquet('{folder}*.parquet')",
    ):
        console.print(line)


@app.command()
def size(  # noqa: PLR0917 - Typer maps each parameter to an option
    spec: Annotated[
        Path | None,
        typer.Argument(help="Sizing spec (TOML, docs/sizing.md); without one, the 004 paper's §6.3 example."),
    ] = None,
    users: Annotated[
        int | None,
        typer.Option("--users", parser=options.whole, metavar="COUNT", help="Mailboxes (users) today."),
    ] = None,
    growth_percent: Annotated[
        float | None,
        options.number_option("--growth-percent", help="Expected growth of the users, %."),
    ] = None,
    messages_per_day: Annotated[
        float | None,
        options.number_option("--messages-per-day", help="Messages sent and received per mailbox per day."),
    ] = None,
    message_size_kb: Annotated[
        float | None,
        options.number_option("--message-size-kb", help="Average message size, KB: 75, 150 or 300."),
    ] = None,
    quota_mb: Annotated[
        float | None,
        options.number_option("--quota-mb", help="Mailbox quota, MB."),
    ] = None,
    quota_gb: Annotated[
        float | None,
        options.number_option("--quota-gb", help="Mailbox quota, GB (1 GB = 1,000 MB)."),
    ] = None,
    databases: Annotated[
        int | None,
        typer.Option("--databases", parser=options.whole, metavar="COUNT", help="Active mailbox databases."),
    ] = None,
    dag_copies: Annotated[
        int | None,
        typer.Option(
            "--dag-copies",
            parser=options.whole,
            metavar="COUNT",
            help="Copies of each database (1 = no DAG).",
        ),
    ] = None,
    iops_per_mailbox: Annotated[
        float | None,
        options.number_option("--iops-per-mailbox", help="Transactional IOPS per mailbox without a DAG."),
    ] = None,
    log_retention_days: Annotated[
        float | None,
        options.number_option("--log-retention-days", help="Days of logs each volume holds."),
    ] = None,
    exact: Annotated[
        bool, typer.Option("--exact", help="Exact arithmetic: no rounding up of the figures carried forward.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Size a mailbox design: capacity, IOPS and memory (the 004 paper's §6 model).

    Flags override the spec's values (or the paper's, without a spec). Exit status: 0, or 2 for
    unusable input.
    """
    from esrp_report.app import api, views  # noqa: PLC0415 - imported on use: see the module docstring

    given = {
        "users": users,
        "growth_percent": growth_percent,
        "messages_per_day": messages_per_day,
        "message_size_kb": message_size_kb,
        "mailbox_quota_mb": quota_mb,
        "mailbox_quota_gb": quota_gb,
        "databases": databases,
        "dag_copies": dag_copies,
        "iops_per_mailbox": iops_per_mailbox,
        "log_retention_days": log_retention_days,
        "round_up": False if exact else None,
    }
    try:
        result = api.size_design(spec, overrides={k: v for k, v in given.items() if v is not None})
    except EsrpError as exc:
        raise _error(str(exc)) from None
    if as_json:
        typer.echo(json.dumps(views.sizing_payload(result), indent=2))
        return
    console = _console()
    for table in views.sizing_tables(result):
        console.print(table)
    for note in result.notes:
        console.print(f"note: {note}")


@app.command()
def compare(  # noqa: PLR0917 - Typer maps each parameter to an option
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="Results folders (one Performance test, on one or more servers) or report files, "
            "one per column, in order."
        ),
    ],
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            help="The run the others are a percentage of: as given, its folder name or its position "
            "(default: the published table's 100 % column, else the first).",
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("-o", "--output", help="Also write an HTML/PDF report (compare.*) here.")
    ] = None,
    formats: Annotated[str, typer.Option("--format", help="Report formats with -o: html, pdf.")] = "html,pdf",
    as_json: JsonOption = False,
    published: Annotated[
        Path | None,
        typer.Option(
            "--published", help="A printed trend table (TOML, docs/compare.md) to check against the runs."
        ),
    ] = None,
    table: Annotated[
        str | None,
        typer.Option("--table", help="Which table of the --published file (when it holds several)."),
    ] = None,
    catalog: Annotated[
        Path | None,
        typer.Option(
            "--catalog", help="RUNs are run ids or designs of this catalog (esrp-report catalog list)."
        ),
    ] = None,
) -> None:
    """Compare runs as % of a baseline [absolute]: planned, total, transactional, log and
    differential IOPS, latencies, and latencies equated to the planned IOPS.

    Exit status: 0; 1 when a --published figure is flagged or differs from the runs; 2 unusable input.
    """
    from esrp_report.app import api, views  # noqa: PLC0415 - imported on use: see the module docstring
    from esrp_report.cli.console import styled  # noqa: PLC0415 - Rich on use: see the module docstring

    try:
        if catalog is not None:
            refs = [str(r) for r in runs]
            comparison = api.compare_catalog(
                refs, catalog, baseline=baseline, published=published, table=table
            )
        else:
            comparison = api.compare_paths(runs, baseline=baseline, published=published, table=table)
        written = (
            api.write_compare_report(
                comparison,
                out,
                formats=_formats(formats),
                comparison_inputs=[*runs, *(p for p in (published, catalog) if p is not None)],
            )
            if out is not None
            else []
        )
    except EsrpError as exc:
        raise _error(str(exc)) from None
    if as_json:
        typer.echo(json.dumps(views.compare_payload(comparison), indent=2))
    else:
        console = _console()
        view = views.compare_view(comparison)
        for rich_table in views.compare_tables(view):
            console.print(rich_table)
        for note in view.notes:
            console.print(f"note: {note}")
        if view.check:
            style = "bold red" if view.flags else "yellow" if view.differences else "green"
            console.print(
                styled(
                    (f"{view.flags} flagged, {view.differences} different from the runs", style),
                    f" of {len(view.check)} printed figures",
                )
            )
        for path in written:
            console.print(f"wrote {path}")
    check = comparison.check
    raise typer.Exit(EXIT_FAIL if check is not None and (check.flags or check.differences) else EXIT_PASS)


@app.command()
def doctor(as_json: JsonOption = False) -> None:
    """Print the versions of Python, Polars, PyArrow, WeasyPrint and Pango, and whether PDF works here."""
    from rich.table import Table  # noqa: PLC0415 - Rich on use: see the module docstring
    from rich.text import Text  # noqa: PLC0415 - Rich on use: see the module docstring

    from esrp_report.app import doctor as doctor_checks  # noqa: PLC0415 - imported on use: see the module docstring

    parts = doctor_checks.components()
    works, detail = doctor_checks.pdf_works()
    if as_json:
        payload = {"components": [vars(c) for c in parts], "pdf": {"works": works, "detail": detail}}
        typer.echo(json.dumps(payload, indent=2))
        return
    table = Table(title="esrp-report doctor", title_justify="left")
    for column in ("Component", "Version", "Note"):
        table.add_column(column)
    for part in parts:
        table.add_row(part.name, part.version or Text("missing", style="red"), part.note)
    table.add_row(
        "PDF output", Text("works", style="green") if works else Text("does not work", style="red"), detail
    )
    _console().print(table)


def main() -> None:
    """Run the command line."""
    app()


if __name__ == "__main__":
    main()
