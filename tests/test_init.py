"""`esrp-report init` writes what the evidence says (issue 22, item 5): the profile from the configuration
XML or the reports, the Exchange/ESRP versions from the Jetstress version, each server's OS, and one server
per folder of a parent folder."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from esrp_report.app.manifest_init import exchange_and_esrp
from esrp_report.cli.main import app
from esrp_report.ingest.config.manifest import read_manifest
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
