"""Variants of the bundled samples that tests and benchmarks build.

The VMAX sample's appendix reproduces Server 4's reports, as the published document does. A
document with every server's reports in its appendix (the table of contents' page numbers for
many servers, the audit of every appendix table, a 60-page PDF to audit) is built from a copy of
the sample whose manifest says ``servers = "all"``; the evidence is copied with it, because a
manifest names its evidence relative to its own folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path

VMAX_FOLDERS = ("vmax", "EMAIL5", "branding")
_REPRESENTATIVE = '[appendix]\nservers = ["Server 4"]\n'


def vmax_with_every_server(samples: Path, target: Path) -> Path:
    """Copy the VMAX sample into ``target`` with every server in its appendix; returns the
    manifest. Raises ValueError if the sample's manifest no longer names its representative
    server as this expects (so a changed sample is noticed, not silently built as it is)."""
    manifest = (samples / "vmax.toml").read_text(encoding="utf-8")
    if _REPRESENTATIVE not in manifest:
        raise ValueError(f"{samples / 'vmax.toml'}: no {_REPRESENTATIVE!r} to replace")
    target.mkdir(parents=True, exist_ok=True)
    for folder in VMAX_FOLDERS:
        shutil.rmtree(target / folder, ignore_errors=True)
        shutil.copytree(samples / folder, target / folder)
    path = target / "vmax.toml"
    path.write_text(manifest.replace(_REPRESENTATIVE, '[appendix]\nservers = "all"\n'), encoding="utf-8")
    return path
