"""The ``esrp-report`` command line (Typer), thin over :mod:`esrp_report.app.api`."""
