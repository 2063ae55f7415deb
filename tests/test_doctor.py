from __future__ import annotations

import json

from typer.testing import CliRunner

from esrp_report.app import doctor
from esrp_report.cli.main import app


def test_doctor_names_every_component_and_says_whether_pdf_works() -> None:
    result = CliRunner().invoke(app, ["doctor", "--json"])
    assert result.exit_code == 0
    payload = json.loads(result.output)
    names = [c["name"] for c in payload["components"]]
    assert names == [
        "Python",
        "esrp-report",
        "Polars",
        "PyArrow",
        "lxml",
        "native PDH-CSV parser",
        "WeasyPrint",
        "Pango",
    ]
    versions = {c["name"]: c["version"] for c in payload["components"]}
    assert versions["Polars"] and versions["PyArrow"]
    pango = next(c for c in payload["components"] if c["name"] == "Pango")
    # Where Pango is missing the note says how to install it, and PDF cannot work.
    if pango["version"] is None:
        assert "apt-get install" in pango["note"] and payload["pdf"]["works"] is False
    assert payload["pdf"]["detail"]


def test_pdf_check_agrees_with_whether_pango_is_there() -> None:
    works, detail = doctor.pdf_works()
    if doctor._pango_version() is not None:
        assert works, detail
        assert " bytes" in detail
    else:  # without Pango WeasyPrint cannot load, and the check must say so rather than pass
        assert not works and detail


def test_doctor_table_output() -> None:
    result = CliRunner().invoke(app, ["doctor"])
    assert result.exit_code == 0 and "PDF output" in result.output and "Polars" in result.output
