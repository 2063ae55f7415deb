"""The one evidence pipeline: collect the files under the paths given, detect each file's format,
read it (or describe it, or open it as a stream), merge what the files gave, and assemble runs.

``inspect`` (:func:`describe`), ``check``, ``init``, ``build`` and ``compare`` (:func:`solution`),
``convert`` (:func:`open_stream`) and ``catalog ingest`` (:func:`read_file` and :func:`merge`, a
file at a time so one damaged file costs only itself, then :func:`assemble`) all go through it,
and each step asks the file's format (ingest/formats.py) for its part: a new format registered
there is seen by every command without a line here.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from esrp_report.ingest import formats
from esrp_report.ingest.evidence import iter_files
from esrp_report.ingest.formats import Evidence, EvidenceFormat, ReadOptions, Unsupported
from esrp_report.model import Problem
from esrp_report.model.errors import InputError, UnsupportedFormatError

if TYPE_CHECKING:
    from esrp_report.ingest.formats import Description
    from esrp_report.model import CounterLog, Solution

AS_FOUND = ReadOptions()  # nothing said: every file read as its bytes say

__all__ = [
    "AS_FOUND",
    "Evidence",
    "ReadOptions",
    "assemble",
    "describe",
    "merge",
    "open_stream",
    "read",
    "read_file",
    "solution",
    "streaming_format",
]


def read_file(path: Path, options: ReadOptions = AS_FOUND) -> tuple[EvidenceFormat, Evidence]:
    """One file's format and what reading it gave (nothing merged yet); raises
    UnsupportedFormatError for a file no format recognises and the reader's InputError."""
    fmt = formats.detect(path)
    return fmt, fmt.read(path, options)


def merge(whole: Evidence, fmt: EvidenceFormat, one: Evidence) -> None:
    """Add one file's evidence to the whole, as its format combines files, and count the file."""
    fmt.merge(whole, one)
    whole.files_read += 1


def read(paths: Iterable[Path], *, strict_files: bool = False, options: ReadOptions = AS_FOUND) -> Evidence:
    """Read every supported file under ``paths``. Unsupported files inside folders are noted, not
    fatal; a file named explicitly must be of a supported format (``strict_files``: every file)."""
    paths = list(paths)
    evidence = Evidence()
    explicit = {p.resolve() for p in paths if p.is_file()}
    for file in iter_files(paths, evidence.problems):
        named = strict_files or file.resolve() in explicit
        try:
            fmt, one = read_file(file, options)
        except UnsupportedFormatError as exc:
            if named:
                raise
            evidence.problems.append(Problem(str(file), f"skipped: {exc.detail}", severity="note"))
            continue
        except InputError as exc:
            # A damaged file of a known format costs itself only: it is named with its reason and
            # the verdict can be INCOMPLETE at best; the other files are judged.
            evidence.unreadable.append(exc)
            where = ": ".join(part for part in (exc.location, exc.detail) if part)
            expected = f"; expected {exc.expected}" if exc.expected else ""
            message = f"unreadable, not judged: {where}{expected}"
            evidence.problems.append(Problem(str(file), message, severity="error", unread=True))
            continue
        merge(evidence, fmt, one)
    return evidence


def assemble(evidence: Evidence, name: str) -> Solution:
    """The runs and servers of what was read (analysis/solution.py pairs reports, XML, logs)."""
    from esrp_report.analysis.solution import assemble as assemble_runs  # noqa: PLC0415 - inspect needs no analysis

    return assemble_runs(evidence, name)


def solution(paths: Iterable[Path], name: str = "solution", options: ReadOptions = AS_FOUND) -> Solution:
    """Read the evidence in these files and folders and assemble it into a solution. Raises the
    reader's error when no file could be read, and InputError when no evidence was found."""
    paths = list(paths)
    evidence = read(paths, options=options)
    if evidence.files_read == 0 and evidence.unreadable:
        raise evidence.unreadable[0]  # nothing else to judge: the reader's own error, exit 2
    if evidence.files_read == 0:
        shown = ", ".join(str(p) for p in paths)
        raise InputError(
            shown,
            "no Jetstress evidence found",
            expected="HTML reports, result/config XML, test logs or perfmon CSV/TSV files",
        )
    return assemble(evidence, name)


def describe(path: Path, options: ReadOptions = AS_FOUND) -> Description:
    """What ``inspect`` prints of any supported file: its name and format, then what its format
    describes of it (only that format's reader is imported: start-up, docs/benchmarks.md)."""
    fmt = formats.detect(path)
    out: Description = {"file": str(path), "format": fmt.name}
    if isinstance(fmt.describe, Unsupported):
        out["problems"] = [{"message": f"{fmt.name} files cannot be described: {fmt.describe.reason}"}]
        return out
    out.update(fmt.describe(path, options))
    return out


def streaming_format(path: Path, *, purpose: str) -> EvidenceFormat:
    """The format of a file whose samples can be streamed; a format without samples to stream is
    an UnsupportedFormatError naming ``purpose`` and its format's reason."""
    fmt = formats.detect(path)
    if isinstance(fmt.stream, Unsupported):
        streamable = " or ".join(
            f.looks_like for f in formats.FORMATS if not isinstance(f.stream, Unsupported)
        )
        raise UnsupportedFormatError(
            path,
            f"{purpose}; this is {fmt.looks_like} ({fmt.stream.reason})",
            location="start of file",
            expected=streamable,
        )
    return fmt


def open_stream(
    path: Path, options: ReadOptions = AS_FOUND, *, found: EvidenceFormat | None = None
) -> CounterLog:
    """A file as a counter log whose samples come a bounded batch at a time (``found``: its
    format, when already detected); see :func:`streaming_format` for a file without samples."""
    fmt = found or streaming_format(path, purpose="needs a counter log")
    if isinstance(fmt.stream, Unsupported):
        raise UnsupportedFormatError(path, f"{fmt.name} cannot be streamed: {fmt.stream.reason}")
    return fmt.stream(path, options)
