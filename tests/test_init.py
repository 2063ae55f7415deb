"""`esrp-report init` writes what the evidence says (issue 22, item 5): the profile from the configuration
XML or the reports, the Exchange/ESRP versions from the Jetstress version, each server's OS, and one server
per folder of a parent folder."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from esrp_report.app import api
from esrp_report.app.manifest_init import exchange_and_esrp
from esrp_report.cli.main import app
from esrp_report.ingest.config.manifest import ManifestError, read_manifest
from esrp_report.model import Manifest

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SERVERS = ("JS16", "JS17", "JS8", "JS9")
runner = CliRunner()


@pytest.fixture
def dellemc(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLES / "dellemc", tmp_path / "dellemc")
    return tmp_path / "dellemc"


def _init(*folders: Path, out: Path) -> Manifest:
    result = runner.invoke(app, ["init", *map(str, folders), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return read_manifest(out)


def _row(manifest: Manifest, key: str) -> str:
    return next(v for table in manifest.tables for k, v in table.rows if k == key)


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("14.01.0225.017", ("2010", "3.0")),
        ("14.02.0247.001", ("2010", "3.0")),
        ("15.00.0995.000", ("2013", "4.0")),
        ("15.01.1019.000", ("2016", "4.0")),
        ("08.02.0060.000", None),
        (None, None),
    ],
)
def test_the_exchange_and_esrp_versions_follow_the_jetstress_version(
    version: str | None, expected: tuple[str, str] | None
) -> None:
    assert exchange_and_esrp(version) == expected


def test_four_server_folders_give_the_evidence_profile_versions_and_each_os(dellemc: Path) -> None:
    manifest = _init(*(dellemc / s for s in SERVERS), out=dellemc.parent / "m.toml")
    profile = manifest.profile
    assert profile.active_mailboxes_per_server == 3500
    assert profile.iops_per_mailbox == pytest.approx(0.1)
    assert profile.tested_iops == pytest.approx(0.1)
    assert profile.active_mailboxes_per_server * profile.tested_iops == pytest.approx(350)
    assert profile.mailboxes == 14000 and profile.servers_per_dag == 4 and profile.copies_per_database == 2
    assert (manifest.document.exchange_version, manifest.document.esrp_version) == ("2016", "4.0")
    assert manifest.convention == "esrp-4.0"
    host_os = _row(manifest, "Host OS")
    assert "JS16, JS17: Windows Server 2016 Datacenter" in host_os
    assert "JS8, JS9: Windows Server 2012 R2 Datacenter" in host_os
    assert [s.label for s in manifest.servers] == list(SERVERS)
    assert [s.results for s in manifest.servers] == [[f"dellemc/{s}"] for s in SERVERS]


def test_without_config_xml_the_profile_comes_from_the_reports(dellemc: Path) -> None:
    for config in dellemc.glob("*/JetstressConfig.xml"):
        config.unlink()
    profile = _init(dellemc, out=dellemc.parent / "m.toml").profile
    # "3,500 Mailboxes ..." in the test description, 350 target IOPS in the reports
    assert profile.active_mailboxes_per_server == 3500 and profile.mailboxes == 14000
    assert profile.iops_per_mailbox == pytest.approx(0.1)
    for report in dellemc.glob("*/Performance_*.*"):
        if report.suffix in (".html", ".xml"):
            text = report.read_text(encoding="utf-8")
            report.write_text(text.replace("3,500 Mailboxes", "Mailbox test"), encoding="utf-8")
    again = _init(dellemc, out=dellemc.parent / "m2.toml").profile
    # only the target left: its product still makes 350, never the old 1000 x 0.1
    assert again.active_mailboxes_per_server * again.tested_iops == pytest.approx(350)


def test_a_parent_folder_gives_one_server_per_folder_and_builds_target_350(dellemc: Path) -> None:
    out = dellemc.parent / "m.toml"
    manifest = _init(dellemc, out=out)
    assert [s.label for s in manifest.servers] == list(SERVERS)
    assert [s.results for s in manifest.servers] == [[f"dellemc/{s}"] for s in SERVERS]
    out.write_text(out.read_text(encoding="utf-8").replace("TODO(vendor): ", ""), encoding="utf-8")
    built = runner.invoke(app, ["build", str(out), "-o", str(dellemc.parent / "out"), "--format", "html"])
    assert built.exit_code == 0, built.output
    page = re.sub(r"<[^>]+>", " ", (dellemc.parent / "out" / "m.html").read_text(encoding="utf-8"))
    page = " ".join(page.split())
    assert "Target transactional IOPS per server 350" in page
    assert "Target transactional IOPS per server 100" not in page


def test_servers_sharing_a_folder_are_named_by_their_files(dellemc: Path) -> None:
    flat = dellemc.parent / "flat"
    flat.mkdir()
    for server in ("JS16", "JS8"):
        for report in (dellemc / server).glob("Performance_*"):
            shutil.copy(report, flat / report.name)
    manifest = _init(flat, out=dellemc.parent / "m.toml")
    assert sorted(s.label for s in manifest.servers) == ["JS16", "JS8"]
    for server in manifest.servers:
        assert len(server.results) == 3 and all(r.startswith("flat/Performance_") for r in server.results)
    assert not set(manifest.servers[0].results) & set(manifest.servers[1].results)


# --- each server's facts, and `build` refusing a manifest the evidence contradicts -----------------


def _built(manifest: Path) -> tuple[int, str]:
    result = runner.invoke(
        app, ["build", str(manifest), "-o", str(manifest.parent / "out"), "--format", "html", "--allow-fail"]
    )
    return result.exit_code, result.output


def _ready(dellemc: Path) -> Path:
    """An init'd manifest of the four servers with the vendor's placeholders filled in."""
    out = dellemc.parent / "m.toml"
    _init(dellemc, out=out)
    out.write_text(out.read_text(encoding="utf-8").replace("TODO(vendor): ", ""), encoding="utf-8")
    return out


def _edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def test_init_writes_each_servers_own_os_and_facts_with_their_source(dellemc: Path) -> None:
    out = _ready(dellemc)
    manifest = read_manifest(out)
    facts = {s.label: s.facts for s in manifest.servers}
    assert facts["JS16"]["os"] == "Windows Server 2016 Datacenter (6.2.9200.0)"
    assert facts["JS8"]["os"] == "Windows Server 2012 R2 Datacenter (6.2.9200.0)"
    assert facts["JS9"]["jetstress_version"] == "15.01.1019.000"
    assert facts["JS9"]["ese_version"] == "15.01.1034.026"
    assert (facts["JS16"]["databases"], facts["JS16"]["thread_count"]) == (5, "10")
    assert facts["JS16"]["database_size_gb"] == pytest.approx(9397052899328 / 2**30, abs=0.5)
    text = out.read_text(encoding="utf-8")
    # each fact names the file it was read from
    assert (
        'os = "Windows Server 2012 R2 Datacenter (6.2.9200.0)"  # Performance_2017_9_15_11_29_57.html' in text
    )
    # only what the evidence carries: it names no processor or memory, so none is written
    assert set(facts["JS16"]) == {
        "os",
        "jetstress_version",
        "ese_version",
        "databases",
        "thread_count",
        "database_size_gb",
    }
    code, output = _built(out)
    assert code == 0, output
    page = (dellemc.parent / "out" / "m.html").read_text(encoding="utf-8")
    table = page[page.index('id="server-facts"') :]
    assert "<td>JS8</td><td>Windows Server 2012 R2 Datacenter (6.2.9200.0)</td>" in table


@pytest.mark.parametrize(
    ("old", "new", "named"),
    [
        (
            "active_mailboxes_per_server = 3500",
            "active_mailboxes_per_server = 1000",
            ("[profile] active_mailboxes_per_server = 1,000", "JetstressConfig.xml", "MailboxCount 3,500"),
        ),
        (
            "iops_per_mailbox = 0.1\n",
            "iops_per_mailbox = 0.14\n",
            ("[profile] tested_iops_per_mailbox = 0.14", "JetstressConfig.xml", "MailboxIops 0.1"),
        ),
        (
            'exchange_version = "2016"',
            'exchange_version = "2010"',
            ('[document] exchange_version = "2010"', "Performance_2017_9_15_11_30_4.html", "Exchange 2016"),
        ),
        (
            'esrp_version = "4.0"',
            'esrp_version = "3.0"',
            ('[document] esrp_version = "3.0"', "Jetstress 15.01.1019.000", "ESRP 4.0"),
        ),
        (
            'os = "Windows Server 2012 R2 Datacenter (6.2.9200.0)"',
            'os = "Windows Server 2016 Datacenter"',
            (
                '[[servers]] JS8 os = "Windows Server 2016 Datacenter"',
                "Performance_2017_9_15_11_29_57.html",
                '"Windows Server 2012 R2 Datacenter (6.2.9200.0)"',
            ),
        ),
        (
            "databases = 5",
            "databases = 6",
            ("[[servers]] JS16 databases = 6", "Performance_2017_9_15_11_30_4.html", "says 5"),
        ),
        (
            '["Host OS", "JS16, JS17: Windows Server 2016 Datacenter (6.2.9200.0); JS8, JS9: Windows Server 2012 R2 Datacenter (6.2.9200.0)"]',
            '["Host OS", "Windows Server 2016 Datacenter"]',
            ("[tables.software] Host OS", "Performance_2017_9_15_11_29_57.html", "2012 R2"),
        ),
    ],
)
def test_build_refuses_a_stated_fact_the_evidence_contradicts(
    dellemc: Path, old: str, new: str, named: tuple[str, str, str]
) -> None:
    out = _ready(dellemc)
    _edit(out, old, new)
    code, output = _built(out)
    assert code == 2, output
    line = " ".join(output.split())  # the console wraps long lines
    assert "Traceback" not in output and line.startswith(f"error: {out}")
    for text in named:
        assert text in line, (text, line)
    assert "differs = {" in line
    assert not (dellemc.parent / "out" / "m.html").exists()


def test_without_config_xml_the_target_is_checked_against_the_reports(dellemc: Path) -> None:
    for config in dellemc.glob("*/JetstressConfig.xml"):
        config.unlink()
    out = _ready(dellemc)
    _edit(out, "active_mailboxes_per_server = 3500", "active_mailboxes_per_server = 1000")
    code, output = _built(out)
    line = " ".join(output.split())
    assert code == 2, output
    assert "[profile] target_iops = 100 (1,000 mailboxes per server x 0.1 IOPS per mailbox)" in line
    assert "Performance_2017_9_15_11_30_4.html says a target of 350 transactional IOPS (JS16)" in line


def test_a_stated_reason_lets_the_difference_through_and_the_review_prints_it(dellemc: Path) -> None:
    """The stated difference names an evidence file: the reviewer's report prints it, the vendor's
    document (a published document names no evidence file) does not."""
    out = _ready(dellemc)
    _edit(out, 'exchange_version = "2016"', 'exchange_version = "2019"')
    _edit(
        out,
        'os = "Windows Server 2012 R2 Datacenter (6.2.9200.0)"',
        'os = "Windows Server 2016 Datacenter"\ndiffers = { os = "JS8 was upgraded after the test." }',
    )
    assert _built(out)[0] == 2  # the Exchange version is still unexplained
    _edit(
        out, "[document]\n", '[document]\ndiffers = { exchange_version = "The design runs Exchange 2019." }\n'
    )
    code, output = _built(out)
    assert code == 0, output
    document = (dellemc.parent / "out" / "m.html").read_text(encoding="utf-8")
    assert "Stated reason" not in document and "Performance_2017_9_15_11_30_4.html" not in document
    page = re.sub(r"<[^>]+>", " ", (dellemc.parent / "out" / "m-review.html").read_text(encoding="utf-8"))
    page = " ".join(html.unescape(page).split())
    assert (
        'The manifest states the Exchange version as "2019"; Performance_2017_9_15_11_30_4.html says' in page
    )
    assert "Stated reason: The design runs Exchange 2019." in page
    assert 'The manifest states the operating system of JS8 as "Windows Server 2016 Datacenter"' in page
    assert "Stated reason: JS8 was upgraded after the test." in page


@pytest.mark.parametrize(
    ("addition", "message"),
    [
        ('differs = { mailboxes = "x" }', "unknown key 'mailboxes'"),
        ('differs = { target_iops = " " }', "the reason must be text"),
        ('differs = "because"', "differs must be a table"),
    ],
)
def test_a_differs_key_is_checked(dellemc: Path, addition: str, message: str) -> None:
    out = _ready(dellemc)
    _edit(out, "[profile]\n", f"[profile]\n{addition}\n")
    with pytest.raises(ManifestError, match=re.escape(message)):
        read_manifest(out)


@pytest.mark.parametrize("sample", sorted(SAMPLES.glob("*.toml")), ids=lambda p: p.stem)
def test_every_bundled_manifest_states_what_its_evidence_says(sample: Path) -> None:
    manifest = read_manifest(sample)
    solution, labels = api.solution_from_manifest(manifest)
    api.refuse_unexplained_differences(manifest, solution, labels)  # raises InputError on a difference
