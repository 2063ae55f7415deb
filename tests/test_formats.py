"""One detector for every command: ingest/formats.py (issue "One evidence pipeline", item 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from esrp_report.cli.main import app
from esrp_report.ingest import formats

runner = CliRunner()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("EMAIL5/Performance_2011_3_11_13_27_46.html", formats.REPORT_HTML),
        ("EMAIL5/Performance_2011_3_11_13_27_46.xml", formats.RESULT_XML),
        ("EMAIL5/JetstressConfig.xml", formats.CONFIG_XML),
        ("EMAIL5/Performance_2011_3_11_13_27_46.csv", formats.COUNTER_CSV),
        ("vmax/EMAIL2/System_2011_3_15_14_28_41.evt", formats.EVENT_LOG),
    ],
)
def test_each_sample_is_recognised_by_its_content(
    samples: Path, tmp_path: Path, name: str, expected: object
) -> None:
    assert formats.detect(samples / name) is expected
    renamed = tmp_path / "evidence.dat"  # the name is no help, except where only it can tell (.evt)
    renamed.write_bytes((samples / name).read_bytes())
    if expected is not formats.EVENT_LOG:
        assert formats.detect(renamed) is expected


def test_inspect_and_convert_give_the_same_answer_for_a_file_that_is_no_counter_log(tmp_path: Path) -> None:
    report = tmp_path / "notes.csv"
    report.write_text("just,some,cells\r\n1,2,3\r\n", encoding="utf-8")
    inspected = runner.invoke(app, ["inspect", str(report)])
    converted = runner.invoke(app, ["convert", str(report), "-o", str(tmp_path / "x.csv")])
    assert inspected.exit_code == converted.exit_code == 2
    assert "not a supported file" in inspected.output and "not a supported file" in converted.output


def test_reading_a_folder_imports_no_reader_it_does_not_need(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "Performance_x.txt").write_text("3/11/2011 1:27:46 PM -- Jetstress testing begins ...\n")
    code = (
        "import sys; from pathlib import Path; from esrp_report.app.evidence import read; "
        f"read([Path({str(tmp_path)!r})]); "
        "print('esrp_report.ingest.perfmon.blg.stream' in sys.modules, 'esrp_report.ingest.jetstress.test_log' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]  # the test log's reader, and not the binary log's


def test_recognising_a_binary_log_imports_neither_its_decoder_nor_numpy() -> None:
    """The sniff lives beside the blg package (perfmon/blg_signature.py), not in it: a module of the
    package would import the package, and with it the decoder and NumPy."""
    import subprocess
    import sys

    log = Path(__file__).parent / "data" / "blg" / "SampleLog.blg"
    code = (
        "import sys; from pathlib import Path; from esrp_report.ingest import formats; "
        f"print(formats.detect_format(Path({str(log)!r})), sorted(m for m in sys.modules "
        "if m.split('.')[0] == 'numpy' or m.startswith('esrp_report.ingest.perfmon.blg.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["perfmon-blg", "[]"]
