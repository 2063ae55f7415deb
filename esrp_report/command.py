"""The `esrp-report` program's entry point, kept to nothing on purpose.

A build's PDF workers are forked from a forkserver, and Python's multiprocessing imports the
program's main script again in every worker it starts. The installed `esrp-report` script imports
this module, not the CLI: the CLI pulls in Typer and Rich, and its commands Polars, DuckDB and the
whole library (about 1.2 s of CPU per worker); Polars starts threads, which must not run in a
process the workers fork from.

`esrp-report version` and `esrp-report --version` are answered here, before Typer is imported:
Typer alone takes about 50 ms to import, and running any of its commands imports Pydantic
(another 60 ms) to convert option values. The CLI's `version` command and `--version` option
print the same line; tests/test_startup.py holds them to it."""

import sys

from esrp_report import __version__

VERSION_REQUESTS = (["version"], ["--version"])


def main() -> None:
    """Run the `esrp-report` command line; the CLI is imported only now (see the module docstring)."""
    if sys.argv[1:] in VERSION_REQUESTS:
        print(__version__)
        return
    from esrp_report.cli.main import main as run_cli  # noqa: PLC0415 - see the module docstring

    run_cli()
