"""An output never overwrites an input (issue 37 item 6).

``esrp-report convert X.csv -o X.csv`` deleted X.csv (the writer truncated it before the reader
started) and exited 2: data lost to a typo. Every command that writes now compares its outputs with
its inputs, by resolved path and by device and inode (another spelling, a symbolic or a hard link),
and refuses before anything is written; the input is byte for byte unchanged.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from esrp_report.cli.main import app
from esrp_report.files.safe import refuse_overwriting
from esrp_report.model.errors import InputError

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
CSV = '"(PDH-CSV 4.0)","\\\\H\\X\\Y"\n"01/01/2020 00:00:00.000","1"\n"01/01/2020 00:00:15.000","2"\n'
runner = CliRunner()


def _assert_refused(result: Result, name: str) -> None:
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    one_line = " ".join(result.output.split())
    assert "Traceback" not in one_line and name in one_line and "is an input of this command" in one_line


@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "hardlink"])
def test_convert_onto_its_own_source_is_refused_and_the_source_kept(tmp_path: Path, spelling: str) -> None:
    source = tmp_path / "X.csv"
    source.write_text(CSV, encoding="utf-8")
    output = {
        "same": source,
        "dot": tmp_path / "." / "X.csv",
        "symlink": tmp_path / "link.csv",
        "hardlink": tmp_path / "other.csv",
    }[spelling]
    if spelling == "symlink":
        output.symlink_to(source)
    if spelling == "hardlink":
        os.link(source, output)
    result = runner.invoke(app, ["convert", str(source), "-o", str(output)])
    _assert_refused(result, output.name)
    assert source.read_text(encoding="utf-8") == CSV


def test_convert_to_another_file_still_works(tmp_path: Path) -> None:
    source = tmp_path / "X.csv"
    source.write_text(CSV, encoding="utf-8")
    (tmp_path / "Y.csv").write_text("old", encoding="utf-8")  # an output that exists, not an input
    result = runner.invoke(app, ["convert", str(source), "-o", str(tmp_path / "Y.csv")])
    assert result.exit_code == 0, result.output
    assert "X" in (tmp_path / "Y.csv").read_text(encoding="utf-8")


def test_build_refuses_an_output_that_is_a_file_the_manifest_names(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "3650-4", tmp_path / "3650-4")
    rules = tmp_path / "out" / "netapp-diagnostics.txt"  # the name of one of build's outputs
    rules.parent.mkdir()
    rules.write_text("# no changes to the thresholds\n", encoding="utf-8")
    manifest = tmp_path / "netapp.toml"
    text = (SAMPLES / "netapp.toml").read_text(encoding="utf-8")
    manifest.write_text(text + '\n[rules]\nfile = "out/netapp-diagnostics.txt"\n', encoding="utf-8")
    result = runner.invoke(app, ["build", str(manifest), "-o", str(tmp_path / "out"), "-j", "1"])
    _assert_refused(result, "netapp-diagnostics.txt")
    assert rules.read_text(encoding="utf-8") == "# no changes to the thresholds\n"
    assert sorted(p.name for p in rules.parent.iterdir()) == ["netapp-diagnostics.txt"]  # nothing written


def test_init_refuses_to_write_over_an_evidence_file_even_with_force(tmp_path: Path) -> None:
    results = tmp_path / "3650-4"
    shutil.copytree(SAMPLES / "3650-4", results)
    report = results / "Performance_2012_4_25_15_29_35.html"
    before = report.read_bytes()
    result = runner.invoke(app, ["init", str(results), "-o", str(report), "--force"])
    _assert_refused(result, report.name)
    assert report.read_bytes() == before


def test_report_writers_and_the_catalog_export_refuse_their_inputs(tmp_path: Path) -> None:
    """audit -o, compare -o and catalog export pass their outputs and inputs to this one check."""
    document = tmp_path / "doc.html"
    document.write_text("<p>published</p>", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "doc-audit.html").symlink_to(document)  # an audit report that is the document
    with pytest.raises(InputError, match="is an input of this command"):
        refuse_overwriting([out / "doc-audit.html", out / "doc-audit.pdf"], [document])
    catalog = tmp_path / "catalog"
    (catalog / "series").mkdir(parents=True)
    (catalog / "series" / "run1.parquet").write_bytes(b"PAR1")
    with pytest.raises(InputError, match=r"name another with --parquet"):
        refuse_overwriting([catalog / "series" / "run1.parquet"], [catalog], option="--parquet")
    refuse_overwriting([tmp_path / "new.html"], [catalog, document])  # nothing there: nothing to walk
