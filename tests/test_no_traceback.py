"""No traceback, no hang, for any input (issue 19, part 4).

Each test is a reproduction that failed before its defence existed: a flipped byte in a .blg
name table, a control character in a counter path written to Parquet, and FIFOs and devices
given where an evidence file is expected. The CLI cases run as subprocesses with a timeout, so
that a regression (an open that blocks on a FIFO) fails the test instead of hanging the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from benchmarks import fuzz
from esrp_report.analysis import metrics
from esrp_report.app import api
from esrp_report.cli.main import app
from esrp_report.ingest.guards import ascii_int, printable, require_regular_file
from esrp_report.ingest.perfmon import blg
from esrp_report.model.errors import EsrpError, InputError

runner = CliRunner()
CLI_TIMEOUT = 60  # seconds: far more than a refusal takes; a hang fails instead of blocking

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")


# --- numbers: ASCII digits only -------------------------------------------------------------------


def _blg_with_superscript_two(tmp_path: Path) -> Path:
    """A small .blg whose name table gives 'Available MBytes' the number '1²' instead of '12'.

    In UTF-16-LE '2' is 32 00 and '²' (U+00B2) is B2 00: one flipped bit. str.isdigit() accepts
    '²' and int() refuses it."""
    data = bytearray(fuzz._blg_seeds()[0])
    name = "Available MBytes".encode("utf-16-le")
    at = data.find(name)
    number = "12\x00".encode("utf-16-le")
    assert at > 0 and data[at - len(number) : at] == number
    data[at - 4] ^= 0x80  # '2' -> '²'
    assert data[at - 4 : at - 2] == "²".encode("utf-16-le")
    path = tmp_path / "Performance_2011_3_11_13_27_46.blg"
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("engine", ["auto", "numpy"])
def test_blg_name_table_with_a_superscript_digit_is_no_traceback(
    tmp_path: Path, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _blg_with_superscript_two(tmp_path)
    monkeypatch.setattr(blg.decoding, "ENGINE", engine)
    try:
        log = blg.read_blg(path)
    except InputError:
        return  # a clear error is allowed; a ValueError traceback is not
    # The damaged entry is skipped: no counter is named by it, the other counters are read.
    assert not any("Available MBytes" in p for p in log.counters.get_column("path").to_list())
    assert any("Database Reads/sec" in p for p in log.counters.get_column("path").to_list())


def test_ascii_int_takes_ascii_digits_only() -> None:
    assert ascii_int("0") == 0
    assert ascii_int("12") == 12
    for text in ("²", "1²", "٣", "１", "", " 1", "+1", "-1", "1.0", "9" * 5000):
        assert ascii_int(text) is None, text


def test_instance_names_with_superscript_digits_sort_without_a_traceback() -> None:
    names = ["Instance ²", "Instance 10", "Instance 2", "Instance ٣"]
    assert sorted(names, key=metrics._natural_key)[:2] == ["Instance 2", "Instance 10"]


def test_baseline_superscript_digit_is_an_error_not_a_traceback() -> None:
    with pytest.raises(EsrpError, match="--baseline"):
        api._baseline_index("²", ["a", "b"], lambda _i, _name: False, "by name")


# --- counter paths with control characters --------------------------------------------------------

_NUL_CSV = (
    '"(PDH-CSV 4.0) (Eastern Standard Time)(300)","\\\\EMAIL5\\Memory\\Avail\x00able MBytes",'
    '"\\\\EMAIL5\\Memory\\Pages\t/sec","\\\\EMAIL5\\Memory\\Cache Bytes"\r\n'
    '"03/11/2011 13:27:46.123","100","2","7"\r\n'
    '"03/11/2011 13:28:01.123","101","3","8"\r\n'
)


def _nul_csv(tmp_path: Path) -> Path:
    path = tmp_path / "Performance_2011_3_11_13_27_46.csv"
    path.write_bytes(_NUL_CSV.encode("utf-8"))
    return path


def test_convert_counter_path_with_a_nul_to_parquet_is_sanitised_with_a_warning(tmp_path: Path) -> None:
    out = tmp_path / "x.parquet"
    result = runner.invoke(app, ["convert", str(_nul_csv(tmp_path)), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "column 2" in result.output and "control characters" in result.output
    table = pq.read_table(out)
    names = table.schema.names
    assert names[1] == "\\\\EMAIL5\\Memory\\Avail\ufffdable MBytes"
    assert not any(printable(n) != n for n in names)
    assert table.column(3).to_pylist() == [7.0, 8.0]  # the clean column is untouched
    # The paths as read are kept, JSON-escaped, in the metadata.
    assert b"Avail\\u0000able" in table.schema.metadata[b"esrp_report.counter_paths"]


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_convert_counter_path_with_control_characters_to_text_is_sanitised(
    tmp_path: Path, suffix: str
) -> None:
    out = tmp_path / f"x{suffix}"
    written = api.convert_counter_log(_nul_csv(tmp_path), out)
    warned = [p for p in written.problems if "control characters" in p.message]
    assert [p.location for p in warned] == ["column 2 (counter 1)", "column 3 (counter 2)"]
    lines = out.read_bytes().split(b"\r\n")
    # A header and two rows: no line break, no NUL, no tab (in a TSV) inside the header.
    assert len(lines) == 4 and lines[-1] == b""
    assert b"\x00" not in lines[0] and "Pages\ufffd/sec".encode() in lines[0]
    assert lines[0].count(b"\t" if suffix == ".tsv" else b'","') == 3  # four header cells


# --- FIFOs, devices and folders where a file is expected ------------------------------------------


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", "from esrp_report.cli.main import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "400"},
    )
    assert time.monotonic() - started < CLI_TIMEOUT
    return done


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "Performance_2011_3_11_13_27_46.csv"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["inspect", "{}"],
        ["inspect", "{}", "--averages"],
        ["convert", "{}", "-o", "x.csv"],
        ["audit", "{}"],
        ["check", "{}"],
        ["check", "{samples}/3650-4", "--rules", "{}"],
        ["size", "{}"],
        ["build", "{}"],
        ["init", "{}", "-o", "m.toml"],
        ["compare", "{}", "{}"],
    ],
    ids=[
        "inspect",
        "inspect-averages",
        "convert",
        "audit",
        "check",
        "check-rules",
        "size-spec",
        "build",
        "init",
        "compare",
    ],
)
def test_fifo_is_refused_at_once_by_name(tmp_path: Path, fifo: Path, command: list[str]) -> None:
    samples = Path(__file__).resolve().parent.parent / "samples"
    done = _cli(
        *(str(fifo) if part == "{}" else part.replace("{samples}", str(samples)) for part in command),
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    message = " ".join(done.stderr.split())
    assert str(fifo) in message and "FIFO" in message
    assert "not a file" in message or "not a regular file" in message


@pytest.mark.parametrize(
    "command",
    [["check", "/dev/zero"], ["check", "/dev/urandom"], ["inspect", "/dev/zero"], ["audit", "/dev/zero"]],
    ids=["check-zero", "check-urandom", "inspect-zero", "audit-zero"],
)
def test_devices_are_refused_at_once_by_name(tmp_path: Path, command: list[str]) -> None:
    if not Path(command[1]).exists():
        pytest.skip(f"no {command[1]}")
    done = _cli(*command, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    message = " ".join(done.stderr.split())
    assert command[1] in message and "character device" in message


def test_folder_where_a_file_is_expected_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "Performance_2011_3_11_13_27_46.csv"
    folder.mkdir()
    for args in (["convert", str(folder), "-o", "x.csv"], ["audit", str(folder)], ["inspect", str(folder)]):
        done = _cli(*args, cwd=tmp_path)
        assert done.returncode == 2, done.stdout + done.stderr
        message = " ".join(done.stderr.split())
        assert str(folder) in message and "a folder" in message, args


def test_require_regular_file_names_what_it_found(tmp_path: Path, fifo: Path) -> None:
    assert require_regular_file(Path(__file__)).st_size > 0
    with pytest.raises(InputError, match="named pipe"):
        require_regular_file(fifo)
    with pytest.raises(InputError, match="no such file"):
        require_regular_file(tmp_path / "missing")
    with pytest.raises(InputError, match="a folder"):
        require_regular_file(tmp_path)


# --- override templates: jinja2 errors reach the user as one line -----------------------------


def test_override_template_errors_are_template_errors(tmp_path: Path) -> None:
    """A hostile or broken override partial (found by the templates fuzz harness): each jinja2
    error surfaces as render's TemplateError naming the template, not a jinja2 traceback."""
    from esrp_report.render.html import TemplateError

    fuzz.prepare("templates", tmp_path)
    render = fuzz._templates_reader()
    keys = b'[template]\nname = "esrp"\noverride = "override"\n'
    bundle = tmp_path / "bundle.txt"
    for index, (body, expected) in enumerate(
        [
            (b"{{ nosuchname }}", "'nosuchname' is undefined"),
            (b"{% include 'partials/missing.html' %}", "no such template"),
            (b"{% for %}", "kv_table.html: line 1:"),
        ]
    ):
        bundle.write_bytes(fuzz._bundle([("manifest", keys), ("partials/kv_table.html", body)]))
        with pytest.raises(TemplateError, match=expected):
            render(bundle, index)
    bundle.write_bytes(fuzz._bundle([("manifest", keys)]))
    assert "<html" in str(render(bundle, 9))  # no override partial: the sample renders


def test_convert_into_a_folder_that_does_not_exist_is_a_clear_error(tmp_path: Path) -> None:
    for suffix in (".csv", ".parquet"):
        out = tmp_path / "nowhere" / f"x{suffix}"
        result = runner.invoke(app, ["convert", str(_nul_csv(tmp_path)), "-o", str(out)])
        assert result.exit_code == 2 and "does not exist" in result.output, result.output


# --- user mistakes on the command line (issue 22, item 6) -----------------------------------------

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def test_an_output_named_by_a_file_or_under_one_is_a_one_line_error(tmp_path: Path) -> None:
    afile = tmp_path / "report.pdf"
    afile.write_text("not a folder", encoding="utf-8")
    published = Path(__file__).parent / "data" / "published" / "netapp-001.txt"
    for args, out in (
        (["build", str(SAMPLES / "netapp.toml"), "-o", str(afile)], afile),
        (["build", str(SAMPLES / "netapp.toml"), "-o", str(afile / "sub")], afile / "sub"),
        (["audit", str(published), "-o", str(afile)], afile),
    ):
        done = _cli(*args, cwd=tmp_path)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
        message = " ".join(done.stderr.split())
        assert str(out) in message and "-o" in message, args


def test_a_missing_logo_is_a_one_line_error(tmp_path: Path) -> None:
    manifest = tmp_path / "netapp.toml"
    text = (SAMPLES / "netapp.toml").read_text(encoding="utf-8")
    text += '\n[branding]\nlogo = "branding/missing.svg"\n' if "[branding]" not in text else ""
    text = text.replace('logo = "branding/esrp-report-logo.svg"', 'logo = "branding/missing.svg"')
    manifest.write_text(text, encoding="utf-8")
    for name in ("3650-4", "branding"):
        if (SAMPLES / name).exists():
            (tmp_path / name).symlink_to(SAMPLES / name)
    done = _cli("build", str(manifest), "-o", str(tmp_path / "out"), "--format", "html", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "missing.svg" in done.stderr and "logo" in done.stderr
