"""Perfmon CSV/TSV in every code page PDH writes: every counter name survives, the encoding is said,
an undecidable one is a named error, never a guess (issue 29, "every code page").

Real files: the Windows-1250 relog CSVs of ../shared/data/blg/win11 (read from there: no licence
to copy them), the Chinese-locale collector CSV and the PowerShell CSV/TSV of tests/data. Each is
also re-encoded in every code page that can hold its text, as CSV and as TSV.
"""

from __future__ import annotations

import csv
import io
import json
import os
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from esrp_report.cli.main import app
from esrp_report.ingest.perfmon import code_page
from esrp_report.ingest.perfmon.counter_csv import read_counter_csv
from esrp_report.model.errors import CounterLogError
from esrp_synth.perfmon_csv import CODE_PAGES, write_pdh_csv

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
SHARED = ROOT.parent / "shared" / "data"
runner = CliRunner()


def shared(relative: str) -> Path:
    """A file of ../shared/data: CI has it (a missing one fails there); elsewhere its absence skips."""
    path = SHARED / relative
    if not path.is_file():
        reason = f"{path} is not here (../shared/data is beside the repository on CI)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return path


# (file, the code page its bytes are in: the truth every reading is compared with)
REAL = [
    pytest.param(lambda: shared("blg/win11/babylon-og.csv"), "cp1250", id="win11-babylon-og"),
    pytest.param(lambda: shared("blg/win11/three-ssx2.csv"), "cp1250", id="win11-three-ssx2"),
    pytest.param(lambda: DATA / "csv" / "ysu_disk_zh-CN.csv", "ascii", id="ysu-zh-CN"),
    pytest.param(lambda: DATA / "blg" / "powershell" / "CounterSamples.csv", "ascii", id="powershell-csv"),
    pytest.param(lambda: DATA / "blg" / "powershell" / "CounterSamples.tsv", "ascii", id="powershell-tsv"),
]
UNICODE = ("utf-8", "utf-8-sig", "utf-16-le-bom")


def _cells(path: Path, truth: str) -> list[list[str]]:
    text = path.read_bytes().decode(truth)
    delimiter = "\t" if text.lstrip('"').startswith("(PDH-TSV") else ","
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))


def _write(path: Path, rows: list[list[str]], encoding: str, separator: str) -> None:
    rows = [list(r) for r in rows]
    kind = "TSV" if separator == "\t" else "CSV"
    rows[0][0] = rows[0][0].replace("(PDH-CSV", f"(PDH-{kind}").replace("(PDH-TSV", f"(PDH-{kind}")
    out = io.StringIO()
    csv.writer(out, delimiter=separator, quoting=csv.QUOTE_ALL, lineterminator="\r\n").writerows(rows)
    text = out.getvalue()
    if encoding == "utf-16-le-bom":  # what relog writes when asked for Unicode
        path.write_bytes(b"\xff\xfe" + text.encode("utf-16-le"))
    else:
        path.write_bytes(text.encode(encoding))


@pytest.mark.parametrize(("source", "truth"), REAL)
def test_real_files_keep_every_name(source: object, truth: str) -> None:
    path = source()  # type: ignore[operator]
    names = _cells(path, truth)[0][1:]
    log = read_counter_csv(path)
    assert log.counters["path"].to_list() == names
    assert not any("\ufffd" in n for n in log.counters["path"])
    assert log.encoding == ("windows-1250" if truth == "cp1250" else "ascii")
    assert log.encoding_basis


def test_the_polish_names_the_issue_counted() -> None:
    """The 13 names Windows-1250 writes outside ASCII, each as Windows spells it."""
    log = read_counter_csv(shared("blg/win11/three-ssx2.csv"))
    polish = [p for p in log.counters["path"] if not p.isascii()]
    assert len(polish) == 13
    assert "\\\\DESKTOP-JULIA\\Pamięć\\Dostępna pamięć (MB)" in polish
    assert "\\\\DESKTOP-JULIA\\Informacje o procesorze(_Total)\\Czas użytkownika (%)" in polish
    assert set(log.counters.filter(log.counters["path"].is_in(polish))["object"]) == {
        "Informacje o procesorze",
        "Pamięć",
        "Procesor",
    }


@pytest.mark.parametrize("separator", [",", "\t"], ids=["csv", "tsv"])
@pytest.mark.parametrize(("source", "truth"), REAL)
def test_real_text_in_every_code_page_that_holds_it(
    tmp_path: Path, source: object, truth: str, separator: str
) -> None:
    rows = _cells(source(), truth)  # type: ignore[operator]
    first = [None if c.strip() == "" else float(c) for c in rows[1][1:]]
    tried, lost = [], []
    for encoding in (*CODE_PAGES, *UNICODE):
        try:
            "\n".join(rows[0]).encode("utf-8" if encoding in UNICODE else encoding)
        except UnicodeEncodeError:
            continue  # this code page cannot hold the file's names: no machine wrote it so
        tried.append(encoding)
        path = tmp_path / f"log-{encoding}.csv"
        _write(path, rows, encoding, separator)
        log = read_counter_csv(path)
        if log.counters["path"].to_list() != rows[0][1:] or list(log.samples.row(0)[1:]) != first:
            lost.append(encoding)
        assert log.samples.height == len(rows) - 1
    assert lost == []
    # Polish fits Central European and Baltic; an ASCII file fits every code page.
    assert tried == (["cp1250", "cp1257", *UNICODE] if truth == "cp1250" else [*CODE_PAGES, *UNICODE])


# Counter names as localised Windows writes them (written here for these tests), one set per
# language, with the code page a machine of that language writes.
LOCALISED = {
    "russian": ("cp1251", ["Процессор(_Total)\\% загруженности процессора", "Память\\Доступно МБ",
                           "Физический диск(0 C:)\\Среднее время чтения с диска (с)"]),
    "greek": ("cp1253", ["Επεξεργαστής(_Total)\\% χρόνου επεξεργαστή", "Μνήμη\\Διαθέσιμα MB",
                         "Φυσικός δίσκος(_Total)\\Μέσος χρόνος ανάγνωσης δίσκου"]),
    "polish": ("cp1250", ["Procesor(_Total)\\Czas użytkownika (%)", "Pamięć\\Dostępna pamięć (MB)",
                          "Dysk fizyczny(_Total)\\Średni czas odczytu z dysku (s)"]),
    "czech": ("cp1250", ["Procesor(_Total)\\% času procesoru", "Paměť\\Dostupné MB",
                         "Fyzický disk(_Total)\\Průměrná doba čtení z disku"]),
    "german": ("cp1252", ["Prozessor(_Total)\\Prozessorzeit (%)", "Arbeitsspeicher\\Verfügbare MB",
                          "Physikalischer Datenträger(_Total)\\Mittlere Sek./Lesevorgänge"]),
    "french": ("cp1252", ["Processeur(_Total)\\% temps processeur", "Mémoire\\Mégaoctets disponibles"]),
    "japanese": ("cp932", ["プロセッサ(_Total)\\% プロセッサ時間", "メモリ\\利用可能 MB",
                           "物理ディスク(_Total)\\平均ディスク秒/読み取り"]),
    "chinese": ("cp936", ["处理器(_Total)\\% 处理器时间", "内存\\可用 MB", "物理磁盘(_Total)\\平均磁盘读取时间"]),
    "chinese-traditional": ("cp950", ["處理器(_Total)\\% 處理器時間", "記憶體\\可用 MB",
                                      "實體磁碟(_Total)\\平均磁碟秒/讀取"]),
    "korean": ("cp949", ["프로세서(_Total)\\% 프로세서 시간", "메모리\\사용 가능한 MB",
                         "실제 디스크(_Total)\\평균 디스크 읽기 시간"]),
}  # fmt: skip


@pytest.mark.parametrize("separator", [",", "\t"], ids=["csv", "tsv"])
@pytest.mark.parametrize("unicode", [False, True], ids=["code-page", "utf-16"])
@pytest.mark.parametrize("language", sorted(LOCALISED))
def test_localised_names_survive(tmp_path: Path, language: str, unicode: bool, separator: str) -> None:
    cp, names = LOCALISED[language]
    paths = [f"\\\\SRV-01\\{n}" for n in names]
    path = tmp_path / "log.csv"
    values = np.arange(2 * len(paths), dtype=float).reshape(2, len(paths)) + 0.5
    stamps = [datetime(2024, 7, 1, 12, 0, 0), datetime(2024, 7, 1, 12, 0, 15)]
    write_pdh_csv(
        path, paths, stamps, values, separator=separator, encoding="utf-16" if unicode else cp,
        time_zone_name="", bias_minutes=None,
    )  # fmt: skip
    log = read_counter_csv(path)
    assert log.counters["path"].to_list() == paths
    assert log.samples.drop("timestamp").to_numpy().tolist() == values.tolist()
    if not unicode:
        assert code_page.given(cp).name == log.encoding
        assert log.encoding_basis is not None and log.encoding_basis.startswith("detected")


def test_russian_is_no_longer_latin_1(tmp_path: Path) -> None:
    """The issue's second case: a Windows-1251 CSV read as mojibake in every name, with no warning."""
    paths = [f"\\\\SRV\\Процессор({i})\\% загруженности процессора" for i in range(200)]
    path = tmp_path / "ru.csv"
    write_pdh_csv(path, paths, [datetime(2024, 1, 1)], np.ones((1, 200)), encoding="cp1251")
    log = read_counter_csv(path)
    assert log.encoding == "windows-1251"
    assert log.counters["object"].unique().to_list() == ["Процессор"]


HEBREW = ["\\\\SRV\\מעבד(_Total)\\% זמן מעבד", "\\\\SRV\\זיכרון\\MB זמינים"]


def test_an_undecidable_code_page_is_a_named_error(tmp_path: Path) -> None:
    """Windows-1255 Hebrew bytes read as plausible Cyrillic words in Windows-1251 too: the reader
    names both readings and asks for --encoding instead of choosing one."""
    path = tmp_path / "he.csv"
    write_pdh_csv(path, HEBREW, [datetime(2024, 1, 1)], np.ones((1, 2)), encoding="cp1255")
    with pytest.raises(CounterLogError) as caught:
        read_counter_csv(path)
    message = str(caught.value)
    assert str(path) in message and "line 1" in message
    assert "cp1251" in message and "cp1255" in message and "--encoding" in message
    log = read_counter_csv(path, encoding="windows-1255")
    assert log.counters["path"].to_list() == HEBREW
    assert (log.encoding, log.encoding_basis) == ("windows-1255", "given with --encoding")


def test_a_given_code_page_that_cannot_hold_the_header_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "pl.csv"
    write_pdh_csv(path, ["\\\\S\\Procesor\\% wydajności"], [datetime(2024, 1, 1)], np.ones((1, 1)),
                  encoding="cp1250")  # fmt: skip
    offset = path.read_bytes().index(b"\x9c")  # "ś" in Windows-1250; no character in Windows-1253
    with pytest.raises(CounterLogError) as caught:
        read_counter_csv(path, encoding="cp1253")
    assert f"line 1, byte offset {offset}" in str(caught.value) and "0x9C" in str(caught.value)


def test_an_unknown_encoding_name_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    write_pdh_csv(path, ["\\\\S\\Memory\\Available MBytes"], [datetime(2024, 1, 1)], np.ones((1, 1)))
    with pytest.raises(CounterLogError, match="unknown encoding 'klingon'"):
        read_counter_csv(path, encoding="klingon")


def test_inspect_says_which_encoding_and_encoding_overrides(tmp_path: Path) -> None:
    path = tmp_path / "el.csv"
    cp, names = LOCALISED["greek"]
    write_pdh_csv(path, [f"\\\\S\\{n}" for n in names], [datetime(2024, 1, 1)], np.ones((1, 3)), encoding=cp)
    result = runner.invoke(app, ["inspect", str(path), "--json"])
    assert result.exit_code == 0, result.output
    described = json.loads(result.output)
    assert described["encoding"] == "windows-1253"
    assert "Μνήμη" in described["objects"]
    text = runner.invoke(app, ["inspect", str(path)])
    assert "windows-1253" in text.output and "Μνήμη" in text.output
    forced = json.loads(runner.invoke(app, ["inspect", str(path), "--json", "--encoding", "cp1251"]).output)
    assert (forced["encoding"], forced["encoding_basis"]) == ("windows-1251", "given with --encoding")
    assert "Μνήμη" not in forced["objects"]


def test_convert_writes_utf8_names(tmp_path: Path) -> None:
    source = tmp_path / "ja.csv"
    cp, names = LOCALISED["japanese"]
    paths = [f"\\\\S\\{n}" for n in names]
    write_pdh_csv(source, paths, [datetime(2024, 1, 1)], np.ones((1, 3)), encoding=cp)
    out = tmp_path / "out.csv"
    result = runner.invoke(app, ["convert", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    header = next(csv.reader(io.StringIO(out.read_bytes().decode("utf-8"))))
    assert header[1:] == paths


def test_convert_and_check_take_encoding(tmp_path: Path) -> None:
    source = tmp_path / "he.csv"
    write_pdh_csv(source, HEBREW, [datetime(2024, 1, 1)], np.ones((1, 2)), encoding="cp1255")
    out = tmp_path / "out.tsv"
    refused = runner.invoke(app, ["convert", str(source), "-o", str(out)])
    assert refused.exit_code == 2 and "cannot tell the text encoding" in refused.output
    done = runner.invoke(app, ["convert", str(source), "-o", str(out), "--encoding", "1255"])
    assert done.exit_code == 0, done.output
    assert next(csv.reader(io.StringIO(out.read_text("utf-8")), delimiter="\t"))[1:] == HEBREW
    judged = runner.invoke(app, ["check", str(tmp_path), "--json", "--encoding", "nonsense"])
    assert "unknown encoding 'nonsense'" in judged.output
