"""The `esrp-report` program's entry point, kept to nothing on purpose.

A build's PDF workers are forked from a forkserver, and Python's multiprocessing imports the
program's main script again in every worker it starts. The installed `esrp-report` script imports
this module, not the CLI: the CLI pulls in Polars, DuckDB and the whole library (about 1.2 s of
CPU per worker), and Polars starts threads, which must not run in a process the workers fork
from."""


def main() -> None:
    from esrp_report.cli.main import main as run_cli  # noqa: PLC0415 - see the module docstring

    run_cli()
