"""What a document promises and does not hold: a truncated text (cut in half, its appendix cut off)
reads as a whole document of fewer pages unless something in it says what should follow.

Two things a document says of itself are held to it:

- its **contents**: the table of contents (a "Contents" heading, then entries of a title and a
  page number) and any list of cross-references ('"Microsoft Exchange Server 2010 Jetstress -
  soft recovery" on page 57'). Each entry's title must come as a line of its own (a title
  repeated, "Test results" under each server, is looked for once per entry, each after the one
  before). What a cut leaves out is the list's tail: the entries after the last one found. One
  missing before an entry that comes is a heading worded otherwise (001's contents list a
  "Storage Disk Configuration (Transactional Log Disks ...)" its text does not print as a
  heading), not a cut, and is not held against the document;
- its **appendix reports** against each other: a report lacking an I/O table that the other
  reports of the same test print (the last report of a text cut inside it);
- its **table captions**: a text that numbers its captions ("Table 12 ...") and refers to a
  table by a number no caption reaches ("see Table 31") has lost that table.

Each entry missing is named with the line that promised it. The result figures they would have
held are estimated from the page numbers: the figures read per page up to the last page found,
times the pages promised from the first one missing to the last one listed (at least one). It is
an estimate; the status does not rest on it: a document that misses what it promises is never
``checked`` (``AuditResult.partly_read``), whatever share of what is left it read.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter, defaultdict
from dataclasses import dataclass

from esrp_report.audit.result import Missing
from esrp_report.ingest.jetstress.labels import kind_named
from esrp_report.model import DocLine, PublishedDocument, PublishedReport, TestKind

_CONTENTS_HEADINGS = frozenset(("content", "contents", "table of contents"))
# An entry: a title with a letter in it, then dot leaders, a tab or spaces, and a page number.
_ENTRY = re.compile(r"^(?P<title>.*?[^\W\d_].*?)[\s.]*?(?:\.{2,}|\t|\s)\s*(?P<page>\d{1,4})$")
# A cross-reference list's item: a quoted title and its page.
_REFERENCE = re.compile(r"[\"“]([^\"”]{3,200})[\"”]\s+on\s+page\s+(\d{1,4})", re.IGNORECASE)
# A section number before a title ("4.3.1", "A.2", "A") is left out when titles are compared:
# the contents and the heading print it alike or not at all.
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*|[a-z](?:\.\d+)+|[a-z])\.?\s+(?=\S)")
_NON_WORD = re.compile(r"[^\w]+")
# A caption: a table's number at the start of its line (bold or not); a reference: anywhere.
_CAPTION = re.compile(r"^\W*Table\s+(\d{1,3})\b")
_TABLE_REFERENCE = re.compile(r"\bTables?\s+(\d{1,3})\b")


@dataclass(frozen=True)
class _Entry:
    title: str
    key: str
    page: int
    line: int  # the line that promises it


def missing_promises(doc: PublishedDocument, numbers_read: int) -> list[Missing]:
    """Every entry of the document's contents and cross-reference lists whose title never comes,
    and the table numbers it refers to that no caption reaches, with the result figures they are
    estimated to have held."""
    lines = doc.lines
    missing: list[_Entry] = []
    found_pages: list[int] = []
    promised_pages: list[int] = []
    lists = [*_contents(lines), *_references(lines)]
    index = _Titles(lines, {e.key for entries, _listing in lists for e in entries}) if lists else None
    for entries, listing in lists:
        gone, found = _missing_entries(index, entries, listing) if index is not None else ([], [])
        missing += gone
        found_pages += found
        promised_pages += [e.page for e in entries]
    listed = {e.key for entries, _listing in lists for e in entries}
    missing = _read_untitled(doc, missing, listed)
    out: list[Missing] = []
    if missing:
        per_page = numbers_read / max(max(found_pages, default=1), 1)
        first = min(e.page for e in missing)
        pages = max(max(promised_pages) - first + 1, 1)
        estimate = round(per_page * pages)
        titles = ", ".join(f"{e.title!r} (line {e.line})" for e in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        out.append(
            Missing(
                what=f"{len(missing)} section(s) its contents list never come: {titles}{more}",
                line=missing[0].line,
                numbers=estimate,
            )
        )
    out += _reports_short(doc)
    tables = _tables_referred_not_captioned(lines)
    if tables:
        number, line = tables[0]
        out.append(
            Missing(
                what=f"table(s) {', '.join(str(n) for n, _l in tables)} are referred to but never captioned "
                f"(the captions stop before Table {number}, referred to at line {line})",
                line=line,
                numbers=0,
            )
        )
    return out


def _read_untitled(doc: PublishedDocument, missing: list[_Entry], listed: set[str]) -> list[_Entry]:
    """A promised report whose title is not printed, while a report of its test was read after the
    line that promised it (found by its own tables, its title not one the lists give): not
    missing. Each report answers one promise."""
    reports = [
        r
        for r in doc.reports
        if r.run is not None and not any(part and part in listed for part in map(_key, r.title.split(" / ")))
    ]
    used: set[int] = set()
    kept: list[_Entry] = []
    for entry in missing:
        kind = kind_named(entry.key)
        report = next(
            (
                k
                for k, r in enumerate(reports)
                if kind is not None
                and k not in used
                and r.run is not None
                and r.run.kind is kind
                and r.first_line > entry.line
            ),
            None,
        )
        if report is None:
            kept.append(entry)
        else:
            used.add(report)
    return kept


def _key(title: str) -> str:
    text = _NON_WORD.sub(" ", title.casefold()).strip()
    return _NUMBERING.sub("", text).strip()


# An appendix's own label ("appendix a"): a heading under it is the entry's, whatever follows.
_APPENDIX_LABEL = re.compile(r"^(appendix [a-z0-9]{1,3})\b")


def _worded_otherwise(entry: str, line: DocLine, key: str) -> bool:
    """Is this heading the contents entry ``entry`` (a key), worded otherwise? Under the same
    appendix label ("Appendix A – Performance tests" over "Appendix A – EXMBX01 performance test"),
    or a heading holding every word of the entry, and more (plurals as singulars). A document's
    contents and headings are written by one hand but not always alike; a false "missing" costs the
    verdict (partly read), so a heading that says the same is taken."""
    if not key or line.cells or len(line.text) > 100:
        return False
    label = _APPENDIX_LABEL.match(entry)
    if label is not None:
        return key == label.group(1) or key.startswith(label.group(1) + " ")
    if not line.heading:
        return False
    words = {w.rstrip("s") for w in entry.split() if len(w) > 3}
    have = {w.rstrip("s") for w in key.split()}
    return bool(words) and words <= have


def _entry_text(line: DocLine) -> str:
    """A line as a contents entry reads: its Markdown table pipes become cell breaks."""
    raw = line.raw.strip()
    if raw.startswith("|"):
        raw = "  ".join(part.strip() for part in raw.strip("|").split("|") if part.strip())
    return " ".join(raw.replace("*", "").split()) if "\t" not in raw else raw.replace("*", "").strip()


def _contents(lines: list[DocLine]) -> list[tuple[list[_Entry], range]]:
    """The table of contents: its entries and the range of its lines (none: []). It ends at the
    first line after its heading that is neither an entry nor blank (a Markdown table's rule
    and empty header rows are neither)."""
    for at, line in enumerate(lines):
        if _key(line.text) not in _CONTENTS_HEADINGS:
            continue
        entries: list[_Entry] = []
        last = at
        for i in range(at + 1, len(lines)):
            text = _entry_text(lines[i])
            if not text or set(text) <= set("|-: "):
                continue
            match = _ENTRY.match(text)
            if match is None or (entries and lines[i].heading):
                if entries:
                    break
                continue  # a line between the heading and the first entry
            title = match.group("title").strip(" .\t")
            if _key(title):
                entries.append(_Entry(title, _key(title), int(match.group("page")), lines[i].no))
                last = i
        if entries:
            return [(entries, range(at, last + 1))]
    return []


def _references(lines: list[DocLine]) -> list[tuple[list[_Entry], range]]:
    """Lists of cross-references ('"title" on page N'), each with the range of its lines."""
    out: list[tuple[list[_Entry], range]] = []
    current: list[_Entry] = []
    first = last = 0
    for i, line in enumerate(lines):
        match = _REFERENCE.search(line.text)
        if match is None:
            continue
        if current and i - last > 2:
            out.append((current, range(first, last + 1)))
            current = []
        if not current:
            first = i
        current.append(_Entry(match.group(1).strip(), _key(match.group(1)), int(match.group(2)), line.no))
        last = i
    if current:
        out.append((current, range(first, last + 1)))
    return out


class _Titles:
    """Every title-like line's key, found by whole key, by its first words, and the headings in
    order: built once per document, so that each entry of each list is looked up, not searched
    for (a 50 MB text holds hundreds of contents lists, each of a dozen entries)."""

    def __init__(self, lines: list[DocLine], entries: set[str]) -> None:
        self.lines = lines
        # Only a line whose key starts with an entry's first word can be its title (or a heading
        # worded otherwise): the others are left out, so the index stays small beside a long text.
        firsts = {key.split()[0] for key in entries if key}
        self.keys = [_key(line.text) if len(line.text) <= _TITLE_LENGTH else "" for line in lines]
        for i, key in enumerate(self.keys):
            if key and not lines[i].heading and key.split(maxsplit=1)[0] not in firsts:
                self.keys[i] = ""
        self.whole: dict[str, list[int]] = defaultdict(list)
        self.starts: dict[str, list[int]] = defaultdict(list)
        self.headings: list[int] = []
        for i, key in enumerate(self.keys):
            if not key:
                continue
            self.whole[key].append(i)
            words = key.split()
            for n in range(1, min(len(words), _PREFIX_WORDS + 1)):
                self.starts[" ".join(words[:n])].append(i)
            if self.lines[i].heading:
                self.headings.append(i)

    def find(self, entry: str, cursor: int, listing: range) -> int | None:
        """The first line from ``cursor`` outside ``listing`` that is the entry's title: the same
        words, the same words and more ("Overview of ..."), or a heading worded otherwise."""
        for positions in (self.whole.get(entry, []), self.starts.get(entry, [])):
            at = _first(positions, cursor, listing)
            if at is not None:
                return at
        label = _APPENDIX_LABEL.match(entry)
        if label is not None:
            return _first(
                self.starts.get(label.group(1), []) + self.whole.get(label.group(1), []), cursor, listing
            )
        for i in self.headings[bisect_left(self.headings, cursor) :]:
            if i not in listing and _worded_otherwise(entry, self.lines[i], self.keys[i]):
                return i
        return None


_TITLE_LENGTH = 200
_PREFIX_WORDS = 8


def _first(positions: list[int], cursor: int, listing: range) -> int | None:
    """The first of these (ascending) line indices from ``cursor`` that is not in ``listing``."""
    for i in positions[bisect_left(positions, cursor) :]:
        if i not in listing:
            return i
    return None


def _missing_entries(
    titles: _Titles, entries: list[_Entry], listing: range
) -> tuple[list[_Entry], list[int]]:
    """The entries whose title comes on no line outside the list itself (before it too: a title
    page's "Revisions"); and the pages of those found. A title listed more than once ("Test
    results" under each server) is looked for each time after where it was found the time
    before; different titles in any order."""
    after: dict[str, int] = {}
    missing: list[_Entry] = []
    pages: list[int] = []
    for entry in entries:
        at = titles.find(entry.key, after.get(entry.key, 0), listing)
        if at is None:
            missing.append(entry)
            continue
        pages.append(entry.page)
        after[entry.key] = at + 1
        missing = []  # a title missing before one that comes is worded otherwise, not cut off
    return missing, pages


def _tables_referred_not_captioned(lines: list[DocLine]) -> list[tuple[int, int]]:
    """Table numbers referred to in the text beyond the last caption (with the first line that
    refers to each), when the text numbers its captions at all."""
    captions: set[int] = set()
    references: dict[int, int] = {}
    for line in lines:
        match = _CAPTION.match(line.text)
        if match:
            captions.add(int(match.group(1)))
        for ref in _TABLE_REFERENCE.finditer(line.text):
            references.setdefault(int(ref.group(1)), line.no)
    if not captions:
        return []
    last = max(captions)
    return sorted((n, at) for n, at in references.items() if n > last)


def _reports_short(doc: PublishedDocument) -> list[Missing]:
    """Appendix reports of one test that lack an I/O table the others of that test print, with
    the figures the others print in it (the most of them) as the estimate."""
    by_test: dict[TestKind, list[PublishedReport]] = {}
    for report in doc.reports:
        if report.run is not None:
            by_test.setdefault(report.run.kind, []).append(report)
    out: list[Missing] = []
    for test, reports in by_test.items():
        if len(reports) < 2:
            continue
        tables = [Counter(key[1] for key in r.cells if key[0] == "instance") for r in reports]
        every = set().union(*tables)
        for report, have in zip(reports, tables, strict=True):
            lacking = sorted(every - set(have))
            if not lacking:
                continue
            machine = report.run.machine if report.run and report.run.machine else "a server"
            out.append(
                Missing(
                    what=f"the {test.value} report of {machine} (line {report.first_line}) has no "
                    f"{', '.join(lacking)} table, which the other {test.value} reports print",
                    line=report.first_line,
                    numbers=sum(max(t[k] for t in tables) for k in lacking),
                )
            )
    return out
