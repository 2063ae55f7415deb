"""Publication hygiene (issue 22, item 4): the PDF's metadata comes from the manifest, the tool's
stamp is the reviewer's report's (issue 32), and the document prints no internal names."""

from __future__ import annotations

import dataclasses
import re
import shutil
from html import unescape
from pathlib import Path

import pytest
from pypdf import PdfReader
from typer.testing import CliRunner

from esrp_report.cli.main import app
from esrp_report.model import DocumentInfo
from esrp_report.model import core as model
from esrp_report.render.document import fmt_target, load_convention
from esrp_report.render.html import document_metadata, w3c_date
from esrp_report.render.jetstress_text import figure_name, table_name
from esrp_synth.sample_variants import vmax_with_a_disagreement

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
runner = CliRunner()


def _netapp_copy(tmp_path: Path, extra: str) -> Path:
    """samples/netapp.toml beside a copy of its evidence, with ``extra`` keys added to [document]."""
    shutil.copytree(SAMPLES / "3650-4", tmp_path / "3650-4")
    text = (SAMPLES / "netapp.toml").read_text(encoding="utf-8")
    manifest = tmp_path / "netapp.toml"
    manifest.write_text(text.replace("[document]\n", f"[document]\n{extra}\n", 1), encoding="utf-8")
    return manifest


def _build(manifest: Path, out: Path) -> None:
    result = runner.invoke(app, ["build", str(manifest), "-o", str(out), "--allow-fail"])
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def netapp_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("netapp")
    _build(SAMPLES / "netapp.toml", out)
    return out


def test_pdf_metadata_comes_from_the_manifest(netapp_build: Path) -> None:
    meta = PdfReader(netapp_build / "netapp.pdf").metadata
    assert meta is not None
    assert meta.title == "NetApp FAS2220 1,000-Mailbox Exchange 2010 Mailbox Resiliency Storage Solution"
    assert meta.author == "NetApp"
    assert meta.subject == "ESRP-Storage 3.0 solution for Microsoft Exchange 2010: NetApp FAS2220"
    assert meta["/Keywords"] == "ESRP-Storage 3.0, Microsoft Exchange 2010, Jetstress, NetApp, FAS2220"
    # The dates are the manifest's (tested "May 22, 2012"), not the build's.
    assert meta["/CreationDate"] == "D:20120522"
    assert meta["/ModDate"] == "D:20120522"


def test_stated_author_subject_and_keywords_win(tmp_path: Path) -> None:
    manifest = _netapp_copy(
        tmp_path,
        'author = "A. Writer"\nsubject = "Sizing evidence"\nkeywords = "ESRP, FAS2220"\n'
        'published_date = "2012-06-01"\nstamp = false',
    )
    _build(manifest, tmp_path / "out")
    meta = PdfReader(tmp_path / "out" / "netapp.pdf").metadata
    assert meta is not None
    assert (meta.author, meta.subject, meta["/Keywords"]) == ("A. Writer", "Sizing evidence", "ESRP, FAS2220")
    assert meta["/CreationDate"] == "D:20120601"  # published wins over tested
    assert "/Creator" not in meta  # the vendor's document names no generator


def test_the_stamp_is_the_reviewer_s_never_the_document_s(tmp_path: Path, netapp_build: Path) -> None:
    """The tool's "Built by" line and generator name are the reviewer's report's: the vendor's
    document carries neither, and a manifest's ``stamp`` (which once left them out) is warned of
    as deprecated, with no effect."""
    html = (netapp_build / "netapp.html").read_text(encoding="utf-8")
    assert "Built by" not in html and 'name="generator"' not in html
    review = (netapp_build / "netapp-review.html").read_text(encoding="utf-8")
    assert "Built by esrp-report" in review and 'name="generator"' in review
    review_pdf = "\n".join(
        page.extract_text() for page in PdfReader(netapp_build / "netapp-review.pdf").pages
    )
    assert "Built by esrp-report" in review_pdf
    manifest = _netapp_copy(tmp_path, "stamp = true")
    result = runner.invoke(app, ["build", str(manifest), "-o", str(tmp_path / "out"), "--allow-fail"])
    assert result.exit_code == 0, result.output
    assert "[document] stamp is deprecated and has no effect" in " ".join(result.output.split())
    text = "\n".join(page.extract_text() for page in PdfReader(tmp_path / "out" / "netapp.pdf").pages)
    assert "Built by" not in text


def test_stamp_must_be_true_or_false(tmp_path: Path) -> None:
    manifest = _netapp_copy(tmp_path, 'stamp = "no"')
    result = runner.invoke(app, ["build", str(manifest), "-o", str(tmp_path / "out")])
    assert result.exit_code != 0
    assert "stamp" in result.output


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("May 22, 2012", "2012-05-22"),
        ("22 May 2012", "2012-05-22"),
        ("2012-05-22", "2012-05-22"),
        ("March 2011", "2011-03"),
        ("Sept. 2011", None),
        ("", None),
        ("soon", None),
    ],
)
def test_manifest_dates_in_w3c_form(text: str, expected: str | None) -> None:
    assert w3c_date(text) == expected


def test_metadata_without_dates_leaves_them_out() -> None:
    meta = document_metadata(DocumentInfo(vendor="V", product="P", title="T"))
    assert meta["author"] == "V"
    assert "dcterms.created" not in meta


def _reader_text(html: str) -> str:
    """What a reader sees of an HTML document: no style, script, chart markup or tags."""
    html = re.sub(r"<(style|script|svg)\b.*?</\1>", " ", html, flags=re.S | re.I)
    return unescape(re.sub(r"<[^>]+>", " ", html))


def _model_keys() -> set[str]:
    """The model's snake_case names: its canonical figure keys and its dataclasses' fields."""
    keys = {
        v for v in vars(model).values() if isinstance(v, str) and re.fullmatch(r"[a-z]+(?:_[a-z0-9]+)+", v)
    }
    for v in vars(model).values():
        if dataclasses.is_dataclass(v):
            keys |= {f.name for f in dataclasses.fields(v) if "_" in f.name}
    return keys


def test_no_internal_names_in_the_document(vmax_build: Path, netapp_build: Path, tmp_path: Path) -> None:
    assert "db_reads_avg_bytes" in _model_keys()
    # The sample's evidence agrees with itself; a copy whose counter log disagrees shows how the
    # largest figure that two sources give differently is named: as the report names it, in the
    # reviewer's report (the vendor's document names no disagreement).
    disagreeing = tmp_path / "disagreeing"
    _build(vmax_with_a_disagreement(SAMPLES, tmp_path / "vmax"), disagreeing)
    for html in (
        vmax_build / "vmax.html",
        netapp_build / "netapp.html",
        vmax_build / "vmax-review.html",
        netapp_build / "netapp-review.html",
        disagreeing / "vmax.html",
        disagreeing / "vmax-review.html",
    ):
        text = _reader_text(html.read_text(encoding="utf-8"))
        words = set(re.findall(r"\b[a-z]+(?:_[a-z0-9]+)+\b", text))
        assert not words, (html.name, sorted(words))
        assert not _model_keys() & set(re.findall(r"\b\w+\b", text)), html.name
    text = _reader_text((disagreeing / "vmax-review.html").read_text(encoding="utf-8"))
    # The planted Total read size moves the transactional one (worked out from it) the most.
    assert "Transactional I/O Performance, Instance3100.3, I/O Database Reads Average Bytes" in text


def test_figure_and_table_names_in_readers_words() -> None:
    assert figure_name("db_reads_avg_latency_ms") == "I/O Database Reads Average Latency (msec)"
    assert figure_name("log_writes_per_sec") == "I/O Log Writes/sec"
    assert figure_name("average") == "Average"
    assert table_name("background_maintenance") == "Background Database Maintenance I/O Performance"
    assert table_name("host") == "Host System Performance"


def test_targets_print_one_way(vmax_build: Path, netapp_build: Path) -> None:
    """A target is "1,400" in the profile table and in the summary tables, not "1,400.000" in one."""
    vmax = " ".join(_reader_text((vmax_build / "vmax.html").read_text(encoding="utf-8")).split())
    assert "Target transactional IOPS per server 1,400 " in vmax
    assert "Target transactional IOPS, all tested servers 14,000 " in vmax
    assert "Achieved transactional I/O per sec 1,400 " in vmax
    assert "1,400.0" not in vmax and "14,000.0" not in vmax
    netapp = " ".join(_reader_text((netapp_build / "netapp.html").read_text(encoding="utf-8")).split())
    assert "Target transactional IOPS per server 120 " in netapp
    assert "120.00" not in netapp


def test_a_fractional_target_keeps_its_decimals() -> None:
    conv = load_convention("esrp-3.0", {})
    assert fmt_target(1400.0000000001, conv) == "1,400"
    assert fmt_target(39.96, conv) == "39.960"


def test_reading_notes_go_to_the_diagnostics_file(tmp_path: Path) -> None:
    """A parser note ("1 cell(s) beyond the header not used") is in the diagnostics file beside
    the document, and the reviewer's report says so in readers' words (the vendor's document
    not at all)."""
    manifest = _netapp_copy(tmp_path, "")
    report = tmp_path / "3650-4" / "Performance_2012_4_25_15_29_35.html"
    html = report.read_text(encoding="utf-8")
    table = html.index("MSEXchange Database ==&gt; Instances")
    row_end = html.index("</tr>", html.index("Instance4760.1", table))
    report.write_text(html[:row_end] + "<td>1</td>" + html[row_end:], encoding="utf-8")
    _build(manifest, tmp_path / "out")
    diagnostics = (tmp_path / "out" / "netapp-diagnostics.txt").read_text(encoding="utf-8")
    assert "1 cell(s) beyond the header not used" in diagnostics
    text = " ".join(
        _reader_text((tmp_path / "out" / "netapp-review.html").read_text(encoding="utf-8")).split()
    )
    assert "beyond the header" not in text and "cell(s)" not in text
    assert "the build's diagnostics file lists it" in text
    document = _reader_text((tmp_path / "out" / "netapp.html").read_text(encoding="utf-8"))
    assert "diagnostics" not in document


def test_no_diagnostics_file_without_diagnostics(netapp_build: Path) -> None:
    assert not (netapp_build / "netapp-diagnostics.txt").exists()
