"""Variants of the bundled samples that tests and benchmarks build.

The VMAX sample's appendix reproduces Server 4's reports, as the published document does. A
document with every server's reports in its appendix (the table of contents' page numbers for
many servers, the audit of every appendix table, a 60-page PDF to audit) is built from a copy of
the sample whose manifest says ``servers = "all"``; the evidence is copied with it, because a
manifest names its evidence relative to its own folder.

The sample's evidence agrees with itself (samples/README.md); how a document tells a figure that
two sources give differently is tested on a copy whose counter log is made to disagree.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from esrp_report.ingest.jetstress.report_html import read_report
from esrp_synth.jetstress_counters import synthesize, write_log

VMAX_FOLDERS = ("vmax", "EMAIL5", "branding")
# The Performance test of Server 1 (EMAIL2): its logged Total read size of one instance 0.58 %
# above the report's (as the demo's evidence was before the samples were made to agree), which
# puts the transactional read size worked out from it 3.5 % above the report's.
DISAGREEING_REPORT = "vmax/EMAIL2/Performance_2011_3_11_13_27_46"
DISAGREEING_FIGURE = ("Instance3100.3", "I/O Database Reads Average Bytes")
DISAGREEING_FACTOR = 1.0058
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


def vmax_with_a_disagreement(samples: Path, target: Path) -> Path:
    """Copy the VMAX sample into ``target`` with one figure of one counter log off its report
    (``DISAGREEING_*``); returns the manifest."""
    target.mkdir(parents=True, exist_ok=True)
    for folder in VMAX_FOLDERS:
        shutil.rmtree(target / folder, ignore_errors=True)
        shutil.copytree(samples / folder, target / folder)
    run = read_report(target / f"{DISAGREEING_REPORT}.html")
    write_log(
        target / f"{DISAGREEING_REPORT}.csv", synthesize(run, plant={DISAGREEING_FIGURE: DISAGREEING_FACTOR})
    )
    path = target / "vmax.toml"
    shutil.copyfile(samples / "vmax.toml", path)
    return path
