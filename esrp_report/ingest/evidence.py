"""Find Jetstress evidence in files and folders, detect each file's format and read it.

What was read is grouped into runs and servers by :mod:`esrp_report.analysis.solution`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from esrp_report.ingest import formats
from esrp_report.model import Problem
from esrp_report.model.errors import InputError, UnsupportedFormatError

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


def iter_files(paths: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(p for p in sorted(path.rglob("*")) if p.is_file() and not p.is_symlink())
        elif path.exists():
            files.append(path)
        else:
            raise InputError(path, "no such file or folder")
    return files


def read_evidence(paths: Iterable[Path], *, strict_files: bool = False) -> Evidence:
    """Read every supported file. Unsupported files inside folders are noted, not fatal;
    a file named explicitly must be readable (``strict_files``)."""
    evidence = Evidence()
    explicit = {p.resolve() for p in paths if p.is_file()}
    for file in iter_files(paths):
        named = strict_files or file.resolve() in explicit
        try:
            formats.read_into(file, evidence)
        except UnsupportedFormatError as exc:
            if named:
                raise
            evidence.problems.append(Problem(str(file), f"skipped: {exc.detail}", severity="note"))
        except InputError as exc:
            # A damaged file of a known format costs itself only: it is named with its reason and
            # the verdict can be INCOMPLETE at best; the other files are judged.
            evidence.unreadable.append(exc)
            where = ": ".join(part for part in (exc.location, exc.detail) if part)
            expected = f"; expected {exc.expected}" if exc.expected else ""
            message = f"unreadable, not judged: {where}{expected}"
            evidence.problems.append(Problem(str(file), message, severity="error", unread=True))
    return evidence
