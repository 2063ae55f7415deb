"""`esrp-report build` end to end: the VMAX and Dell EMC samples to HTML and PDF, a failing variant,
security."""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pypdf import PdfReader
from typer.testing import CliRunner

from esrp_report.app.api import build
from esrp_report.cli.main import app
from esrp_report.ingest.config.manifest import ManifestError, read_manifest

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
runner = CliRunner()
FIXED_CLOCK = datetime(2026, 1, 1, tzinfo=UTC)


def _pdf_text(path: Path) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(path).pages)


def test_vmax_pdf_has_pages_toc_bookmarks_and_the_aggregate(vmax_all_build: Path) -> None:
    reader = PdfReader(vmax_all_build / "vmax.pdf")
    assert len(reader.pages) >= 30
    titles = [item.title for item in reader.outline if not isinstance(item, list)]
    assert titles[:3] == ["Overview", "Disclaimer", "Features"]
    assert "Appendix A: Test reports" in titles
    nested = [item for item in reader.outline if isinstance(item, list)]
    assert nested, "h2 sections become nested bookmarks"
    text = _pdf_text(vmax_all_build / "vmax.pdf")
    toc = text[text.index("Table of contents") : text.index("Table of contents") + 1500]
    assert re.search(r"Test results summary\s*\.*\s*\d+", toc), toc
    aggregate = text[text.index("Values across all servers") :][:800]
    for figure in ("14,422.400", "14,000", "8,877.636", "5,544.760", "18.391", "3.425", "4,978.223", "0.891"):
        assert figure in aggregate, figure
    # The published slips are not reproduced.
    for slip in ("899.57", "9890.577", "9,890.577", "4,975.233", "498.536"):
        assert slip not in text, slip
    assert re.search(r"Page \d+ of \d+", text)


def test_joined_pdf_numbers_every_page_and_points_at_each_server(vmax_all_build: Path) -> None:
    """The PDF is laid out in pieces (body + one per server) and joined: numbering, bookmarks and
    links must behave as if it had been laid out whole."""
    reader = PdfReader(vmax_all_build / "vmax.pdf")
    total = len(reader.pages)
    texts = [page.extract_text() for page in reader.pages]
    assert "Page 1 of" not in texts[0], "the title page has no number"
    for number in (2, total // 2, total):
        assert f"Page {number} of {total}" in texts[number - 1]
    assert sum(f"of {total}" in text for text in texts) == total - 1
    top = list(reader.outline)
    appendix = top.index(
        next(i for i in top if not isinstance(i, list) and i.title == "Appendix A: Test reports")
    )
    servers = [item for item in top[appendix + 1] if not isinstance(item, list)]
    assert [s.title.split(" (")[0] for s in servers] == [f"Server {n}" for n in range(1, 11)]
    for server in servers:
        page = reader.get_destination_page_number(server)
        assert server.title.split(":")[0] in texts[page], server.title
    # The table of contents links each server to its appendix, across the joined pieces.
    toc_page = next(i for i, text in enumerate(texts) if "Table of contents" in text)
    dests = reader.named_destinations
    targets = {}
    for annot in reader.pages[toc_page].get("/Annots", []):
        name = str(annot.get_object().get("/Dest", ""))
        if name.startswith("server-"):
            targets[name] = reader.get_destination_page_number(dests[name])
    assert len(targets) == 10
    # The server's appendix starts there (its verdict is the reviewer's report's, not the document's).
    assert "Server 3 (EMAIL4)\nServer 3 (EMAIL4): Performance" in texts[targets["server-3"]]


# The Dell EMC SCv3020 ESRP 4.0 document (seed 002): each appendix report's Overall Test Result, and
# its per-server results tables (Tables 5-8) as printed, in the order of the rendered rows.
DELLEMC_SERVERS = {"Server 1": "JS16", "Server 2": "JS17", "Server 3": "JS8", "Server 4": "JS9"}
DELLEMC_PUBLISHED_RESULT = {"JS16": "pass", "JS17": "pass", "JS8": "pass", "JS9": "pass"}
DELLEMC_PUBLISHED_ROWS = {
    "Database Disks Transfers/sec": ("433.496", "434.456", "426", "413.465"),
    "Database Disks Reads/sec": ("317.776", "318.363", "311.896", "303.21"),
    "Database Disks Writes/sec": ("115.72", "116.093", "114.104", "110.255"),
    "Average Database Disk Read Latency (ms)": ("16.576", "16.428", "17.504", "17.175"),
    "Average Database Disk Write Latency (ms)": ("1.277", "1.149", "1.360", "1.464"),
    "Log Disks Writes/sec": ("29.446", "29.479", "28.89", "28.016"),
    "Average Log Disk Write Latency (ms)": ("0.828", "0.795", "0.819", "0.999"),
}


@pytest.fixture(scope="module")
def dellemc_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dellemc")
    result = runner.invoke(app, ["build", str(SAMPLES / "dellemc.toml"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "PASS" in result.output
    return out


def test_dellemc_sample_checks_as_the_document_states() -> None:
    folders = [str(SAMPLES / "dellemc" / machine) for machine in DELLEMC_SERVERS.values()]
    result = runner.invoke(app, ["check", "--json", *folders])
    assert result.exit_code == 0, result.output
    verdicts = {s["name"]: s["status"] for s in json.loads(result.output)["servers"]}
    assert verdicts == DELLEMC_PUBLISHED_RESULT


def test_dellemc_document_prints_the_published_per_server_figures(dellemc_build: Path) -> None:
    """The ESRP 4.0 form prints one results table per server, "Table N Server k test results",
    with seed 002's figures in its "Value" column (tests/test_esrp_forms.py checks the form)."""
    html = (dellemc_build / "dellemc.html").read_text(encoding="utf-8")
    for i, label in enumerate(DELLEMC_SERVERS):
        table = html[html.index(f'id="performance-table-{i + 1}"') :]
        table = table[: table.index("</table>")]
        assert f"</span> {label} test results</caption>" in table, label
        for row_label, published in DELLEMC_PUBLISHED_ROWS.items():
            row = re.search(rf'<tr><td>{re.escape(row_label)}</td><td class="num">([^<]*)</td></tr>', table)
            assert row is not None, (label, row_label)
            assert float(row.group(1)) == float(published[i]), (label, row_label)
    pdf = " ".join(_pdf_text(dellemc_build / "dellemc.pdf").split())
    assert "Microsoft ESRP 4.0" in pdf
    # Every server's reports are in the appendix, as seed 002 prints them.
    for i, (server, machine) in enumerate(DELLEMC_SERVERS.items(), start=1):
        assert f"A.{i} {server} A.{i}.1 Test results" in pdf
        assert f"Machine Name {machine}" in pdf
    assert "Table 5 Server 1 test results Database I/O Value Database Disks Transfers/sec 433.496" in pdf
    # Each server's verdict is the reviewer's report's, not the document's.
    review = " ".join(_pdf_text(dellemc_build / "dellemc-review.pdf").split())
    for server, machine in DELLEMC_SERVERS.items():
        assert f"{server} {machine} Pass" in review


def test_parallel_and_single_process_builds_agree(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "3650-4", tmp_path / "3650-4")
    shutil.copy(SAMPLES / "netapp.toml", tmp_path / "netapp.toml")
    one = build(tmp_path / "netapp.toml", tmp_path / "one", generated=FIXED_CLOCK, jobs=1)
    two = build(tmp_path / "netapp.toml", tmp_path / "two", generated=FIXED_CLOCK, jobs=2)
    assert one.pages == two.pages
    assert _pdf_text(tmp_path / "one" / "netapp.pdf") == _pdf_text(tmp_path / "two" / "netapp.pdf")
    assert (tmp_path / "one" / "netapp.html").read_text() == (tmp_path / "two" / "netapp.html").read_text()


def test_vmax_html_is_self_contained(vmax_build: Path) -> None:
    html = (vmax_build / "vmax.html").read_text(encoding="utf-8")
    assert "<svg" in html and 'id="aggregate-table"' in html
    assert not re.search(r"<(link|script)\b", html)
    assert not re.search(r'\ssrc="(?!data:)', html), "every image is inline"


def _failing_copy(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLES / "3650-4", tmp_path / "3650-4")
    report = tmp_path / "3650-4" / "Performance_2012_4_25_15_29_35.html"
    html = report.read_text(encoding="utf-8")
    assert html.count("<td>15.079</td>") == 2  # transactional and total tables
    report.write_text(html.replace("<td>15.079</td>", "<td>23.079</td>"), encoding="utf-8")
    shutil.copy(SAMPLES / "netapp.toml", tmp_path / "netapp.toml")
    return tmp_path / "netapp.toml"


def test_failing_design_renders_fail_with_server_instance_and_rule(tmp_path: Path) -> None:
    manifest = _failing_copy(tmp_path)
    result = runner.invoke(app, ["build", str(manifest), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1, result.output
    assert "FAIL" in result.output and "Instance4760.1" in result.output
    allowed = runner.invoke(app, ["build", str(manifest), "-o", str(tmp_path / "out"), "--allow-fail"])
    assert allowed.exit_code == 0, allowed.output
    # The verdict, the failed rule and the failing instance are the reviewer's report's.
    text = _pdf_text(tmp_path / "out" / "netapp-review.pdf")
    summary = text[text.index("Fail: the design does not meet") :][:600]
    assert "3650-4" in summary and "Instance4760.1" in summary and "Database read average latency" in summary
    assert re.search(r"Instance4760\.1\s*23\.08 ms \(Fail\)", text), "the review marks the failing instance"
    html = (tmp_path / "out" / "netapp-review.html").read_text(encoding="utf-8")
    assert 'class="verdict fail"' in html and "Solution verdict: Fail" in html
    # The vendor's document prints the figure as Jetstress does, with no mark of the verdict.
    document = _pdf_text(tmp_path / "out" / "netapp.pdf")
    assert re.search(r"Instance4760\.1\s*23\.079", document) and "(Fail)" not in document
    assert "Solution verdict" not in (tmp_path / "out" / "netapp.html").read_text(encoding="utf-8")


HOSTILE = '<script>alert(1)</script><img src="file:///etc/passwd"> http://attacker.invalid/x.png'


def test_hostile_manifest_text_renders_escaped_and_inert(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "3650-4", tmp_path / "3650-4")
    text = (SAMPLES / "netapp.toml").read_text(encoding="utf-8")
    text = text.replace('label = "3650-4"', f"label = '{HOSTILE}'")
    text = text.replace('vendor = "NetApp"', f"vendor = '{HOSTILE}'")
    text = text.replace(
        "[sections]\n",
        f"[sections]\nfeatures = '''\n{HOSTILE}\n\n[x](javascript:alert(1)) ![i](http://attacker.invalid/i.png)\n'''\n",
    )
    (tmp_path / "m.toml").write_text(text, encoding="utf-8")
    result = build(tmp_path / "m.toml", tmp_path / "out", generated=FIXED_CLOCK)
    html = (tmp_path / "out" / "m.html").read_text(encoding="utf-8")
    assert "<script" not in html
    assert '<img src="file:' not in html and "javascript:" not in html.replace("[x](javascript:", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert not re.search(r'<img[^>]+src="http', html)
    assert result.refused == []  # nothing fetchable was left in the document
    pdf_text = _pdf_text(tmp_path / "out" / "m.pdf")
    assert "<script>alert(1)</script>" in pdf_text  # shown as text
    assert "root:x:0:0" not in pdf_text


def test_pdf_fetcher_refuses_files_outside_and_the_network(tmp_path: Path) -> None:
    from esrp_report.render.pdf import render_pdf

    inside = tmp_path / "ok.svg"
    inside.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>', encoding="utf-8")
    html = (
        '<p>x</p><img src="file:///etc/passwd"><img src="http://127.0.0.1:9/x.png">'
        '<link rel="stylesheet" href="https://example.invalid/s.css">'
        f'<img src="{inside.as_uri()}">'
    )
    result = render_pdf(html, allowed_roots=[tmp_path])
    assert "file:///etc/passwd" in result.refused
    assert "http://127.0.0.1:9/x.png" in result.refused
    assert "https://example.invalid/s.css" in result.refused
    assert inside.as_uri() not in result.refused
    assert result.pages == 1


def test_manifest_errors_name_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    base = (SAMPLES / "netapp.toml").read_text(encoding="utf-8")
    path.write_text(base.replace("[profile]\n", "[profile]\nmailbox = 3\n"), encoding="utf-8")
    with pytest.raises(ManifestError) as err:
        read_manifest(path)
    assert str(path) in str(err.value) and "mailbox" in str(err.value) and "mailboxes" in str(err.value)
    path.write_text(base.replace("mailboxes = 1000", 'mailboxes = "many"'), encoding="utf-8")
    with pytest.raises(ManifestError, match="wrong type"):
        read_manifest(path)
    path.write_text(base + '\n[branding]\nlogo = "../../etc/passwd"\n', encoding="utf-8")
    with pytest.raises(ManifestError, match="leaves the manifest's folder"):
        read_manifest(path)
    path.write_text(base + "\n[document\n", encoding="utf-8")
    with pytest.raises(ManifestError, match="not valid TOML"):
        read_manifest(path)


def test_init_writes_a_manifest_that_builds(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "EMAIL5", tmp_path / "EMAIL5")
    manifest = tmp_path / "docs" / "m.toml"
    manifest.parent.mkdir()
    result = runner.invoke(app, ["init", str(tmp_path / "EMAIL5"), "-o", str(manifest)])
    assert result.exit_code == 0, result.output
    loaded = read_manifest(manifest)
    assert loaded.servers[0].label == "EMAIL5" and loaded.servers[0].results == ["../EMAIL5"]
    assert loaded.profile.active_mailboxes_per_server == 10000 and loaded.profile.iops_per_mailbox == 0.14
    assert "TODO(vendor)" in loaded.document.vendor
    assert any(v == "14.01.0225.017" for _, v in loaded.tables[0].rows)
    again = runner.invoke(app, ["init", str(tmp_path / "EMAIL5"), "-o", str(manifest)])
    assert again.exit_code == 2
    # As written it still holds the vendor's placeholders: refused, each named, unless a draft.
    refused = runner.invoke(app, ["build", str(manifest), "-o", str(tmp_path / "out"), "--format", "html"])
    assert refused.exit_code == 2, refused.output
    assert "TODO(vendor) placeholder(s) left: line 5 [document] vendor" in refused.stderr
    built = runner.invoke(
        app, ["build", str(manifest), "-o", str(tmp_path / "out"), "--format", "html", "--draft"]
    )
    assert built.exit_code == 0, built.output
    assert f"draft: placeholder left: {manifest} line 5: [document] vendor" in built.output
