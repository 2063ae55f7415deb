"""The `esrp-report` program's entry point, kept to nothing on purpose.

A build's PDF workers are forked from a forkserver, and Python's multiprocessing imports the
program's main script again in every worker it starts. The installed `esrp-report` script imports
this module, not the CLI: the CLI pulls in Typer and Rich, and its commands Polars, DuckDB and the
whole library (about 1.2 s of CPU per worker); Polars starts threads, which must not run in a
process the workers fork from.

`esrp-report version` and `esrp-report --version` are answered here, before Typer is imported:
Typer alone takes about 50 ms to import, and running any of its commands imports Pydantic
(another 60 ms) to convert option values. The CLI's `version` command and `--version` option
print the same line; tests/test_startup.py holds them to it.

`esrp-report inspect FILE [--json]`, the command most often run on one file, calls the function
the CLI's `inspect` command calls (cli/output.py), without importing Typer; so does
`esrp-report check PATH... [--json]` (cli/verdicts.py): running a Typer command imports Pydantic
and builds a validator per option, about 90 ms, a third of a check of a 24-hour log. Anything
else, options included, goes through Typer. tests/test_startup.py checks both give the same
output."""

import sys
from pathlib import Path

from esrp_report import __version__

VERSION_REQUESTS = (["version"], ["--version"])


def main() -> None:
    """Run the `esrp-report` command line; the CLI is imported only now (see the module docstring)."""
    if sys.argv[1:] in VERSION_REQUESTS:
        print(__version__)
        return
    plain = _plain_inspect(sys.argv[1:])
    if plain is not None:
        _inspect(*plain)
        return
    paths = _plain_check(sys.argv[1:])
    if paths is not None:
        _check(*paths)
        return
    from esrp_report.cli.main import main as run_cli  # noqa: PLC0415 - see the module docstring

    run_cli()


def _plain_inspect(args: list[str]) -> tuple[Path, bool] | None:
    """(file, --json) for `inspect FILE` or `inspect FILE --json` (either order); else None."""
    if not args or args[0] != "inspect" or len(args) not in (2, 3):
        return None
    rest = args[1:]
    as_json = "--json" in rest
    names = [a for a in rest if a != "--json"]
    if len(names) != 1 or names[0].startswith("-") or len(rest) - len(names) != int(as_json):
        return None
    return Path(names[0]), as_json


def _plain_check(args: list[str]) -> tuple[list[Path], bool] | None:
    """(paths, --json) for `check PATH... [--json]` (--json anywhere, once at most); else None."""
    if len(args) < 2 or args[0] != "check":
        return None
    rest = args[1:]
    names = [a for a in rest if a != "--json"]
    if not names or len(rest) - len(names) > 1 or any(name.startswith("-") for name in names):
        return None
    return [Path(name) for name in names], len(names) < len(rest)


def _check(paths: list[Path], as_json: bool) -> None:
    from esrp_report.cli.output import run_guarded  # noqa: PLC0415 - see the module docstring
    from esrp_report.cli.verdicts import run_check  # noqa: PLC0415 - see the module docstring

    status = run_guarded(lambda: run_check(paths, as_json=as_json))
    if status:
        sys.exit(status)


def _inspect(file: Path, as_json: bool) -> None:
    from esrp_report.cli.output import inspect_file  # noqa: PLC0415 - see the module docstring

    status = inspect_file(file, as_json=as_json)
    if status:
        sys.exit(status)
