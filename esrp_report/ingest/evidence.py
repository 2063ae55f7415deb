"""Find the evidence files under the paths a command is given: the walk every command shares.

Each file found is detected, read and merged by its format (ingest/formats.py) in the evidence
pipeline of app/evidence.py; what was read is grouped into runs and servers by
:mod:`esrp_report.analysis.solution`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from esrp_report.ingest import formats
from esrp_report.ingest.guards import require_regular_file
from esrp_report.model import Problem

# The format names, as before the registry (ingest/formats.py) held them.
REPORT_HTML = formats.REPORT_HTML.name
RESULT_XML = formats.RESULT_XML.name
CONFIG_XML = formats.CONFIG_XML.name
TEST_LOG = formats.TEST_LOG.name
COUNTER_CSV = formats.COUNTER_CSV.name
BLG = formats.BLG.name
EVENT_LOG = formats.EVENT_LOG.name
detect_format = formats.detect_format
Evidence = formats.Evidence


def iter_files(paths: Iterable[Path], problems: list[Problem] | None = None) -> list[Path]:
    """The files under ``paths``: each path named directly, which must be a regular file (a FIFO
    or a device is refused by name at once, never opened: reading either would hang), and a
    folder's regular files, in name order.

    Inside a folder, a symbolic link is followed when it resolves inside that folder, and
    otherwise named in ``problems`` and not read (docs/security.md); so is anything that is not
    a regular file. A file reached twice (a link beside its target) is read once."""
    files: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        if not path.is_dir():
            require_regular_file(path)
            files.append(path)
            seen.add(path.resolve())
            continue
        root = path.resolve()
        for found in _walk(path, root, problems if problems is not None else [], set()):
            real = found.resolve()
            if real not in seen:
                seen.add(real)
                files.append(found)
    return files


def _walk(folder: Path, root: Path, problems: list[Problem], visited: set[Path]) -> Iterable[Path]:
    real_folder = folder.resolve()
    if real_folder in visited:  # a link back up the tree: walked once
        return
    visited.add(real_folder)
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        problems.append(Problem(str(folder), f"cannot list folder: {exc.strerror or exc}", severity="error"))
        return
    for entry in entries:
        if entry.is_symlink():
            try:
                target = entry.resolve(strict=False)
            except (RuntimeError, OSError) as exc:  # a link to itself, a loop of links
                reason = f"symbolic link that cannot be resolved ({exc}): not read"
                problems.append(Problem(str(entry), reason))
                continue
            if not target.is_relative_to(root):
                problems.append(
                    Problem(
                        str(entry),
                        f"symbolic link to {target}, outside {root}: not read",
                        severity="warning",
                    )
                )
                continue
        if entry.is_dir():
            yield from _walk(entry, root, problems, visited)
        elif entry.is_file():
            yield entry
        elif entry.exists():
            problems.append(Problem(str(entry), "not a regular file (a FIFO, socket or device): not read"))
        elif entry.is_symlink():
            problems.append(Problem(str(entry), "symbolic link to nothing: not read"))
