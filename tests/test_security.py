"""Defences against hostile inputs that no other test file proves (see docs/security.md).

Every input here is small and real: files written to a temporary folder, read by the real
readers. Nothing is mocked and nothing touches the network.
"""

from __future__ import annotations

import os
import random
import shutil
import stat
import time
import warnings
import zipfile
from pathlib import Path

import jinja2
import pytest
from typer.testing import CliRunner

from esrp_report.app.catalog import ingest
from esrp_report.catalog import query
from esrp_report.catalog.store import CatalogError
from esrp_report.cli.main import app
from esrp_report.ingest.config.manifest import ManifestError, read_manifest
from esrp_report.ingest.documents.published import MAX_DOCUMENT_BYTES, parse_document, read_document
from esrp_report.ingest.event_log import read_event_log
from esrp_report.ingest.jetstress.report_html import read_report
from esrp_report.ingest.perfmon import counter_csv
from esrp_report.ingest.perfmon.counter_csv import read_counter_csv
from esrp_report.ingest.safe_xml import parse_xml
from esrp_report.model import Problem
from esrp_report.model.errors import EsrpError, InputError, UnsupportedFormatError, XmlInputError
from esrp_report.render.html import environment, markdown
from esrp_report.render.pdf import render_pdf

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
NETAPP_PERF = SAMPLES / "3650-4" / "Performance_2012_4_25_15_29_35.html"
ENGINES = ["pyarrow", "native"] if counter_csv._pdhcsv is not None else ["pyarrow"]
PDH_HEADER = '"(PDH-CSV 4.0) (Coordinated Universal Time)(0)","\\\\M\\Processor(_Total)\\% Processor Time"\n'
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'


# --- manifests: every file a document embeds stays in the manifest's folder ----------------------


def _manifest(folder: Path, extra: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "m.toml"
    path.write_text((SAMPLES / "netapp.toml").read_text(encoding="utf-8") + extra, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "logo",
    [
        "/etc/passwd",
        "C:\\\\secret\\\\logo.png",
        "\\\\\\\\server\\\\share\\\\logo.png",
        "../logo.png",
        "a/../../x.png",
    ],
    ids=["posix-absolute", "drive-letter", "unc", "parent", "parent-inside"],
)
def test_manifest_paths_that_leave_the_folder_are_refused(tmp_path: Path, logo: str) -> None:
    path = _manifest(tmp_path / "design", f'\n[branding]\nlogo = "{logo}"\n')
    with pytest.raises(ManifestError, match="leaves the manifest's folder") as info:
        read_manifest(path)
    assert info.value.location == "[branding] logo"


def test_a_symbolic_link_out_of_the_manifest_folder_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "secret.svg"
    secret.parent.mkdir()
    secret.write_text(SVG.replace("/>", "><!--TOP-SECRET--></svg>"), encoding="utf-8")
    design = tmp_path / "design"
    design.mkdir()
    (design / "logo.svg").symlink_to(secret)
    (design / "templates").symlink_to(secret.parent, target_is_directory=True)
    (design / "real.svg").write_text(SVG, encoding="utf-8")
    (design / "inner.svg").symlink_to(design / "real.svg")  # a link that stays inside is fine
    for key, value in (("[branding]\nlogo", "logo.svg"), ("[template]\noverride", "templates")):
        path = _manifest(design, f'\n{key} = "{value}"\n')
        with pytest.raises(ManifestError, match="through a symbolic link"):
            read_manifest(path)
    path = _manifest(design, '\n[branding]\nlogo = "inner.svg"\n')
    assert read_manifest(path).branding.logo == "inner.svg"


# --- templates: autoescape, StrictUndefined, Markdown without HTML or images ---------------------


def test_templates_escape_every_value_and_refuse_undefined_names() -> None:
    env = environment(None, "esrp")
    hostile = "<script>alert(1)</script>\"'&"
    rendered = env.from_string("<p title='{{ v }}'>{{ v }}</p>").render(v=hostile)
    assert "<script>" not in rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&#34;&#39;&amp;" in rendered
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ no_such_value }}").render()
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ v.no_such_attribute }}").render(v=object())


def test_markdown_keeps_raw_html_images_and_script_links_inert() -> None:
    html = str(
        markdown(
            "<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n"
            "![i](http://attacker.invalid/i.png) [a](javascript:alert(1)) [f](file:///etc/passwd) "
            "[d](data:text/html;base64,PHNjcmlwdD4=)"
        )
    )
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert 'href="javascript:' not in html and 'href="file:' not in html and 'href="data:' not in html


# --- the PDF's URL fetcher -----------------------------------------------------------------------


def test_pdf_fetcher_refuses_links_out_of_an_allowed_folder_and_remote_file_urls(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "ok.svg").write_text(SVG, encoding="utf-8")
    outside = tmp_path / "outside.svg"
    outside.write_text(SVG, encoding="utf-8")
    (allowed / "link.svg").symlink_to(outside)
    urls = [
        (allowed / "link.svg").as_uri(),  # inside by name, outside once resolved
        (allowed / ".." / "outside.svg").as_uri(),
        "file://attacker.invalid/share/x.svg",
        "ftp://127.0.0.1:9/x.svg",
    ]
    html = "".join(f'<img src="{url}">' for url in [*urls, (allowed / "ok.svg").as_uri()])
    result = render_pdf(html, allowed_roots=[allowed])
    assert sorted(result.refused) == sorted(urls)
    assert result.pages == 1


# --- archives and the catalog ----------------------------------------------------------------------


def test_nested_duplicate_and_special_members_refuse_the_whole_archive(tmp_path: Path) -> None:
    report = NETAPP_PERF.read_bytes()
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    with zipfile.ZipFile(inbox / "nested.zip", "w") as zf:
        zf.writestr("a/" + NETAPP_PERF.name, report)
        zf.writestr("a/inner.zip", b"PK\x05\x06" + bytes(18))
    with zipfile.ZipFile(inbox / "twice.zip", "w") as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name it is told to write
        zf.writestr("a/" + NETAPP_PERF.name, report)
        zf.writestr("a/" + NETAPP_PERF.name, b"<html>the second copy</html>")
    with zipfile.ZipFile(inbox / "fifo.zip", "w") as zf:
        zf.writestr("a/" + NETAPP_PERF.name, report)
        fifo = zipfile.ZipInfo("a/pipe")
        fifo.external_attr = (stat.S_IFIFO | 0o644) << 16
        zf.writestr(fifo, b"")
    with zipfile.ZipFile(inbox / "drive.zip", "w") as zf:
        zf.writestr("C:/Windows/x.html", report)
    catalog_dir = tmp_path / "cat"
    report_ = ingest([inbox], catalog_dir, jobs=1)
    reasons = {r.source: r.reason for r in report_.refusals}
    assert "nested archive" in reasons["inbox/nested.zip"]
    assert "named twice" in reasons["inbox/twice.zip"]
    assert "special file" in reasons["inbox/fifo.zip"]
    assert "absolute path" in reasons["inbox/drive.zip"]
    assert report_.runs_added == 0
    assert query.run_sql(catalog_dir, "SELECT count(*) AS n FROM runs")["n"].item() == 0


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO folders VALUES ('x', 'y', 0)",
        "UPDATE runs SET server = 'x'",
        "DROP TABLE runs",
        "CREATE TABLE evil AS SELECT 1",
        "ALTER TABLE runs ADD COLUMN evil INTEGER",
    ],
)
def test_catalog_sql_cannot_change_the_catalog(tmp_path: Path, sql: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    catalog_dir = tmp_path / "cat"
    ingest([empty], catalog_dir, jobs=1)
    database = catalog_dir / "catalog.duckdb"
    before = database.read_bytes()
    with pytest.raises(CatalogError, match="read-only"):
        query.run_sql(catalog_dir, sql)
    assert database.read_bytes() == before
    assert query.run_sql(catalog_dir, "SELECT count(*) AS n FROM folders")["n"].item() == 0


# --- counter logs (CSV/TSV): the compiled parser and the csv module's field limit ----------------


@pytest.mark.parametrize("engine", ENGINES)
def test_a_header_cell_past_the_csv_field_limit_is_a_counter_log_error(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "long.csv"
    path.write_text(
        '"(PDH-CSV 4.0) (UTC)(0)","\\\\M\\P(' + "x" * 200_000 + ')\\c"\n"01/01/2020 00:00:00.000","1"\n',
        encoding="utf-8",
    )
    with pytest.raises(EsrpError, match=r"line 1: unreadable header: field larger than field limit"):
        read_counter_csv(path, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_row_cell_past_the_csv_field_limit_costs_only_its_row(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "long.csv"
    path.write_text(
        PDH_HEADER + '"' + "1" * 300_000 + '","1"\n"01/01/2020 00:00:01.000","2"\n', encoding="utf-8"
    )
    log = read_counter_csv(path, engine=engine)
    assert log.samples.drop("timestamp").to_series(0).to_list() == [2.0]
    assert [p.location for p in log.problems] == ["line 2"]


def test_the_compiled_csv_parser_refuses_arguments_outside_its_buffer() -> None:
    parse = getattr(counter_csv._pdhcsv, "parse", None)
    if parse is None:
        pytest.skip("the compiled PDH-CSV parser was not built")
    data = b'"01/01/2020 00:00:00.000","1"\n'
    for start, columns in ((len(data) + 1, 1), (-1, 1), (0, -1)):
        with pytest.raises(ValueError, match="out of range"):
            parse(data, start, columns, ",", 1, 2)
    with pytest.raises(ValueError, match="columns x rows out of range"):
        parse(data, 0, 2**61, ",", 1, 2)  # 8 x columns x rows once wrapped to a tiny buffer
    values, *_ = parse(data, len(data), 1, ",", 1, 2)  # start at the very end: no rows, no read
    assert len(values) == 0


def _mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        at = rng.randrange(len(out) + 1)
        kind = rng.randrange(4)
        if kind == 0:
            out[at:at] = bytes(rng.choice(b'",\t\r\n\x00 .-e9') for _ in range(rng.randint(1, 8)))
        elif kind == 1:
            del out[at : at + rng.randint(1, 40)]
        elif kind == 2:
            out[at : at + 4] = rng.randbytes(4)
        else:
            out = out[:at]
    return bytes(out)


def test_damaged_counter_logs_never_crash_either_engine(tmp_path: Path) -> None:
    """Bounded random damage (the fuzzing harness of issue 8 runs far more): every outcome is a
    log or an EsrpError; a memory error in the compiled parser would kill the test process."""
    rows = "".join(f'"01/01/2020 00:{i // 60:02}:{i % 60:02}.000","{i}.5"\n' for i in range(40))
    clean = (PDH_HEADER + rows).encode("utf-8")
    rng = random.Random(8)
    path = tmp_path / "fuzz.csv"
    outcomes = {engine: {"log": 0, "error": 0} for engine in ENGINES}
    for _ in range(150):
        path.write_bytes(_mutate(clean, rng))
        for engine in ENGINES:
            try:
                read_counter_csv(path, engine=engine)
                outcomes[engine]["log"] += 1
            except EsrpError:
                outcomes[engine]["error"] += 1
    assert all(o["log"] > 0 and o["error"] > 0 for o in outcomes.values()), outcomes


# --- HTML and XML parsers: libxml2's limits hold (no huge-tree mode) ------------------------------


def test_html_reports_past_the_parser_limits_are_refused_quickly(tmp_path: Path) -> None:
    text = NETAPP_PERF.read_text(encoding="utf-8")
    for name, hostile in (("deep", "<div>" * 100_000), ("long-text", "<p>" + "A" * (12 << 20) + "</p>")):
        path = tmp_path / f"{name}.html"
        path.write_text(text.replace("<body>", "<body>" + hostile, 1), encoding="utf-8")
        started = time.perf_counter()
        with pytest.raises(InputError, match="required section missing"):
            read_report(path)  # the parser stops at its limit; the sections after it never arrive
        assert time.perf_counter() - started < 10


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"<a>" * 300 + b"</a>" * 300, "Excessive depth"),
        (b"<a>" + b"x" * 11_000_000 + b"</a>", "Text node too long"),
    ],
    ids=["depth", "text-node"],
)
def test_xml_past_the_parser_limits_is_malformed(data: bytes, message: str) -> None:
    with pytest.raises(XmlInputError, match=message):
        parse_xml(data, "huge.xml")


# --- event logs and published documents -------------------------------------------------------------


def test_an_evtx_file_without_its_signature_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "System.evtx"
    path.write_bytes(random.Random(4).randbytes(8192))
    with pytest.raises(InputError, match="no 'ElfFile' signature"):
        read_event_log(path)  # python-evtx alone reads this as a clean log with no events


def test_a_damaged_pdf_is_an_input_error() -> None:
    with pytest.raises(UnsupportedFormatError, match="the PDF cannot be read"):
        parse_document(b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 9 0 R >>\n" + os.urandom(4000), "x.pdf")


def test_a_document_over_the_size_cap_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.txt"
    with path.open("wb") as handle:
        handle.truncate(MAX_DOCUMENT_BYTES + 1)  # sparse: no disk is used
    started = time.perf_counter()
    with pytest.raises(InputError, match="at most 67,108,864 are read"):
        read_document(path)
    assert time.perf_counter() - started < 1


def test_results_folders_are_walked_without_following_symbolic_links(tmp_path: Path) -> None:
    from esrp_report.ingest.evidence import iter_files

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / NETAPP_PERF.name).write_bytes(NETAPP_PERF.read_bytes())
    folder = tmp_path / "server"
    folder.mkdir()
    (folder / "own.html").write_bytes(NETAPP_PERF.read_bytes())
    (folder / "linked.html").symlink_to(outside / NETAPP_PERF.name)
    (folder / "linked-folder").symlink_to(outside, target_is_directory=True)
    inner = folder / "inner"
    inner.mkdir()
    (inner / "kept.html").write_bytes(NETAPP_PERF.read_bytes())
    (folder / "alias.html").symlink_to(inner / "kept.html")  # inside: the same file, read once
    (folder / "inner-again").symlink_to(inner, target_is_directory=True)  # inside: walked once
    (inner / "loop").symlink_to(folder, target_is_directory=True)  # back up the tree: no loop
    (folder / "dangling.html").symlink_to(folder / "gone.html")
    (folder / "itself").symlink_to(folder / "itself")  # a loop: resolving it raises
    problems: list[Problem] = []
    files = iter_files([folder], problems)
    assert sorted(f.resolve() for f in files) == sorted(
        [(folder / "own.html").resolve(), (inner / "kept.html").resolve()]
    )
    reported = {Path(p.source).name: p.message for p in problems}
    assert "outside" in reported["linked.html"] and "outside" in reported["linked-folder"]
    assert "to nothing" in reported["dangling.html"]
    assert "cannot be resolved" in reported["itself"]
    assert set(reported) == {"linked.html", "linked-folder", "dangling.html", "itself"}


def test_an_override_template_cannot_reach_python_internals(tmp_path: Path) -> None:
    """Override templates come with the manifest: they render in Jinja2's sandbox, so a template
    that walks attributes to the os module stops with a clear error, and runs nothing."""
    shutil.copytree(SAMPLES / "3650-4", tmp_path / "3650-4")
    manifest = (SAMPLES / "netapp.toml").read_text("utf-8")
    (tmp_path / "netapp.toml").write_text(manifest + '\n[template]\noverride = "mine"\n', "utf-8")
    (tmp_path / "mine").mkdir()
    marker = tmp_path / "pwned"
    attack = "{{ cycler.__init__.__globals__.os.system('touch " + str(marker) + "') }}"
    (tmp_path / "mine" / "document.html").write_text(attack, "utf-8")
    result = CliRunner().invoke(app, ["build", str(tmp_path / "netapp.toml"), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "unsafe" in result.output and "document.html" in result.output
    assert not marker.exists()
