"""read_manifest is a sequence of named steps, one per table (issue 31, item 4): each step can be
asked on its own, and the first mistake in reading order is the one reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from esrp_report.ingest.config import manifest as mf
from esrp_report.ingest.config.manifest import ManifestError, read_manifest
from esrp_report.model.sections import form_for


def _reader(tmp_path: Path) -> mf._Reader:
    return mf._Reader(tmp_path / "m.toml")


def test_the_servers_step_reads_labels_results_and_facts(tmp_path: Path) -> None:
    servers = mf._read_servers(
        _reader(tmp_path), {"servers": [{"results": "a"}, {"label": "B", "results": ["b"]}]}
    )
    assert [(s.label, s.results) for s in servers] == [("Server 1", ["a"]), ("B", ["b"])]
    with pytest.raises(ManifestError, match="no servers"):
        mf._read_servers(_reader(tmp_path), {})


def test_the_profile_step_holds_sized_keys_until_the_sizing_is_worked_out(tmp_path: Path) -> None:
    profile, stated = mf._read_profile(_reader(tmp_path), {"headroom_percent": 20}, sized=True)
    assert (profile.mailboxes, profile.iops_per_mailbox, profile.headroom_percent, stated) == (0, 0, 20.0, {})
    with pytest.raises(ManifestError, match="missing key 'mailboxes'"):
        mf._read_profile(_reader(tmp_path), {"iops_per_mailbox": 0.1}, sized=False)


def test_the_branding_and_sections_steps_refuse_what_they_do_not_know(tmp_path: Path) -> None:
    assert mf._read_branding(_reader(tmp_path), {}).page_size == "A4"
    with pytest.raises(ManifestError, match="out of range"):
        mf._read_branding(_reader(tmp_path), {"branding": {"page_size": "A3"}})
    form = form_for("3.0")
    assert mf._read_sections(_reader(tmp_path), {"sections": {"overview": "x"}}, form) == {"overview": "x"}
    with pytest.raises(ManifestError, match="unknown key 'preface'"):
        mf._read_sections(_reader(tmp_path), {"sections": {"preface": "x"}}, form)
    # A section of the 4.0 form only is refused in a 3.0 manifest, saying which form prints it.
    with pytest.raises(
        ManifestError, match=r"the ESRP 3\.0 form has no 'volume_sizing' section \(the ESRP 4\.0"
    ):
        mf._read_sections(_reader(tmp_path), {"sections": {"volume_sizing": "x"}}, form)
    assert mf._read_sections(_reader(tmp_path), {"sections": {"volume_sizing": "x"}}, form_for("4.0"))


def test_the_first_mistake_in_reading_order_is_reported(tmp_path: Path) -> None:
    """[document] is read before [[servers]] and [branding]: its mistake is the one named."""
    path = tmp_path / "m.toml"
    path.write_text(
        '[document]\nvendor = "V"\nproduct = "P"\n[profile]\nmailboxes = 1\niops_per_mailbox = 0.1\n'
        '[branding]\npage_size = "A3"\n',
        encoding="utf-8",
    )
    with pytest.raises(ManifestError) as caught:
        read_manifest(path)
    assert caught.value.location == "[document] title"
