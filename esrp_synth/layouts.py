"""A published document's appendix rewritten the way other vendors' documents print the same
Jetstress reports, for the audit's tests (issue 30, item 1): the figures stay, the layout cues the
reader could lean on go.

Each transform imitates something seen in real ESRP documents or in the text tools give of them:

- ``untitled``: the report titles ("Performance Test Result Report", "Microsoft Exchange Server
  Jetstress – database backup") are gone: a vendor pasted the report's tables under its own
  "A.1 Server 1" heading (the held-out ESRP 4.0 document).
- ``no_summary_caption``: no "Test Summary" / "Table 9 Test Summary" caption above the summary
  table (the same document: the table is the first thing under the server's heading).
- ``headingless``: every section heading inside a report ("Transactional I/O Performance",
  "Database Sizing and Throughput", "Test log", ...) is gone; only the tables' own header rows and
  row labels remain (a PDF whose headings were images or page furniture the extractor dropped).
- ``split_headers``: an instance table's header row as a PDF copy gives it, one cell per line.
- ``no_instance_headers``: an instance table's header row removed (a header printed as an image,
  or repeated only on the first page and lost with it): only the instance rows remain.
- ``pipes`` / ``spaced``: table rows as Markdown pipes or as runs of spaces (other converters).
- ``renamed``: other instance numbers. Jetstress names each database's ESE instance
  ``Instance<process id>.<n>`` (every report of the seeds, 25 of them, and the facts notes); the
  process id changes from run to run and may have any number of digits, so that is the only
  renaming a real report could hold. "DB01" or "Mailbox Database 01" are Exchange's names for
  databases, which a Jetstress report never prints in its instance tables, so they are not made.
- ``one_report``: the document with its first appendix report only (a single-server document).

Only the seeds' own text is rewritten; every transform is deterministic (no randomness at all).
Not part of the product: nothing under ``esrp_report/`` imports this.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# A line's decorations: Markdown heading marks and bold, HTML bold, a caption's "Table 9" and a
# section number ("A.1.2").
_DECORATION = re.compile(r"^(?:#+\s*)?(?:\*\*|<b>)?\s*(?:table\s+\d+\s*:?\s*)?(?:[a-z](?:\.\d+)+\s+)?", re.I)
_CLOSING = re.compile(r"(?:\*\*|</b>)\s*$")

# The section headings Jetstress prints inside a report, as the seeds spell them.
_SECTIONS = frozenset(
    {
        "test results",
        "database sizing and throughput",
        "jetstress system parameters",
        "database configuration",
        "transactional i/o performance",
        "background database maintenance i/o performance",
        "log replication i/o performance",
        "total i/o performance",
        "host system performance",
        "test log",
        "database backup statistics - all",
        "soft recovery statistics - all",
        "soft-recovery statistics - all",
        "checksum statistics - all",
        "disk subsystem performance",
        "memory system performance",
    }
)
_QUALIFIER = re.compile(r"\s*\(of [^)]*\)$")
_SUMMARY_CAPTION = "test summary"
# A report's title: "Performance test result report", "Stress Test Result Report (from server
# 3650-4)", "Database Backup Test Results", "Microsoft Exchange Server 2010 Jetstress – soft recovery".
_TITLE = re.compile(r"test result(?:s| report)\b|^microsoft exchange server\b.*\bjetstress\b", re.I)
_INSTANCE_HEADER = re.compile(r"^m\w*exchange database ==> instances\t", re.I)
_INSTANCE = re.compile(r"\bInstance(\d+)\.(\d+)\b")
_LOG_LINE = re.compile(r"^\s*\d{1,2}/\d{1,2}/\d{4} \d{1,2}:\d{2}:\d{2} [AP]M -- ")
_APPENDIX = re.compile(r"^(?:#+\s*)?appendix\b|^a performance testing$", re.I)


def _label(line: str) -> str:
    text = _CLOSING.sub("", _DECORATION.sub("", line.strip())).replace("**", "")
    return " ".join(text.split()).casefold()


def _section(line: str) -> bool:
    """A section heading of a report ("Disk Subsystem Performance (of checksum)" included)."""
    return "\t" not in line and _QUALIFIER.sub("", _label(line)) in _SECTIONS


def _appendix_start(lines: list[str]) -> int:
    """The index of the appendix's heading (the last match: a table of contents names it first)."""
    found = [i for i, line in enumerate(lines) if "\t" not in line and _APPENDIX.match(line.strip())]
    return found[-1] if found else 0


def _drop(text: str, unwanted: Callable[[str], bool]) -> str:
    lines = text.splitlines()
    first = _appendix_start(lines)
    kept = lines[:first] + [line for line in lines[first:] if not unwanted(line)]
    return "\n".join(kept) + "\n"


def untitled(text: str) -> str:
    """Without the reports' title lines."""

    def title(line: str) -> bool:
        short = "\t" not in line and len(line) < 120 and not _APPENDIX.match(line.strip())
        return short and bool(_TITLE.search(_label(line)))

    return _drop(text, title)


def no_summary_caption(text: str) -> str:
    """Without the "Test Summary" captions."""
    return _drop(text, lambda line: "\t" not in line and _label(line) == _SUMMARY_CAPTION)


def headingless(text: str) -> str:
    """Without any section heading inside a report (nor title, nor Test Summary caption)."""
    text = no_summary_caption(untitled(text))
    return _drop(text, _section)


def split_headers(text: str) -> str:
    """Each instance table's header row one cell a line, as a PDF copy gives a wrapped header."""
    out: list[str] = []
    for line in text.splitlines():
        if _INSTANCE_HEADER.match(line):
            out.extend(cell.strip() for cell in line.split("\t"))
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def no_instance_headers(text: str) -> str:
    """Without the instance tables' header rows."""
    return "\n".join(line for line in text.splitlines() if not _INSTANCE_HEADER.match(line)) + "\n"


def _tables(text: str, row: Callable[[list[str]], str], rule: Callable[[int], str] | None) -> str:
    lines = text.splitlines()
    first = _appendix_start(lines)
    out = lines[:first]  # the front matter's tables are not the appendix's: left as they are
    previous_tabbed = False
    for line in lines[first:]:
        tabbed = "\t" in line and not _LOG_LINE.match(line)
        if tabbed:
            cells = [cell.strip() for cell in line.split("\t")]
            out.append(row(cells))
            if rule is not None and not previous_tabbed:
                out.append(rule(len(cells)))
        else:
            out.append(line)
        previous_tabbed = tabbed
    return "\n".join(out) + "\n"


def pipes(text: str) -> str:
    """The appendix's tab-separated rows as Markdown pipe rows, a rule row under each table's
    first row (as a converter makes any table's first row its header)."""
    return _tables(text, lambda cells: "| " + " | ".join(cells) + " |", lambda n: "|" + " --- |" * n)


def spaced(text: str) -> str:
    """The appendix's tab-separated rows with their cells apart by runs of spaces (two at least, a plain-text
    extractor padding each cell to a column)."""
    return _tables(
        text,
        lambda cells: "".join(f"{cell:<24}" if len(cell) < 22 else cell + "  " for cell in cells).rstrip(),
        None,
    )


def renamed(text: str) -> str:
    """Each Jetstress process id replaced by another (first seen first), instance numbers kept."""
    ids: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        new = ids.setdefault(match.group(1), str(5804 + 1717 * len(ids)))
        return f"Instance{new}.{match.group(2)}"

    return _INSTANCE.sub(rename, text)


def one_report(text: str) -> str:
    """The document up to the end of its first appendix report: a second report starts at its
    "Overall Test Result" row, or (a backup or recovery report has no Test Summary) at its
    statistics table's header, and its own headings just above are dropped with it."""
    lines = text.splitlines()
    first = _appendix_start(lines)
    opens = [
        i
        for i in range(first, len(lines))
        if "\t" in lines[i]
        and (
            _label(lines[i].split("\t")[0]) in ("overall test result", "database instance")
            or "\tseen pages\t" in lines[i].casefold()
        )
    ]
    if len(opens) < 2:
        return text
    end = opens[1]
    # Back over the second report's headings and captions, to the first report's last line.
    while end > 0 and (
        not lines[end - 1].strip() or ("\t" not in lines[end - 1] and not _LOG_LINE.match(lines[end - 1]))
    ):
        end -= 1
    return "\n".join(lines[:end]) + "\n"


# Each variant: the transforms in order; the name says what a real document printed.
VARIANTS: dict[str, tuple[Callable[[str], str], ...]] = {
    "untitled": (untitled, no_summary_caption),
    "headingless": (headingless,),
    "split-headers": (headingless, split_headers),
    "no-instance-headers": (headingless, no_instance_headers),
    "pipes": (headingless, pipes),
    "spaced": (headingless, spaced),
    "renamed": (headingless, renamed),
    "full": (headingless, split_headers, pipes, renamed),
    "one-report": (one_report, headingless),
}


def variant(text: str, name: str) -> str:
    """``text`` through the named variant's transforms."""
    for transform in VARIANTS[name]:
        text = transform(text)
    return text
