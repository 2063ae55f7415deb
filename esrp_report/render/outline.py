"""The numbered headings of a document printed in a numbered form (ESRP 4.0, after seed 002):
"1 Introduction", "1.1 Simulated environment", ..., "A Performance testing", "A.1 Server 1",
"A.1.1 Test results", "B Technical support and resources".

Worked out once from the form's outline (model/sections.toml) and what the document prints: a
part the manifest leaves empty, a table it does not state, a test the evidence lacks is left out
and the numbers close up. The template prints each heading from here and the table of contents
lists the same entries, so the two cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from esrp_report.model import Manifest, TestKind, VendorSection
from esrp_report.model.sections import PARTS_BY_KEY, SECTION_SLOTS, Form, OutlineEntry
from esrp_report.render.appendix import test_log_lines
from esrp_report.render.document import Document, RunView, ServerView


@dataclass(frozen=True)
class Heading:
    """A numbered heading: its key (a part's, a form heading's, ``section:<id>`` for a vendor
    section, ``table:<key>``, a server's or run's anchor), level, number, words and id."""

    key: str
    level: int
    number: str
    title: str
    anchor: str
    in_appendix: bool = False  # laid out in a server's piece of the PDF, not in the body

    @property
    def label(self) -> str:
        """The heading as printed: "4.2 Storage performance results"."""
        return f"{self.number} {self.title}"


@dataclass(frozen=True)
class _Entry:
    key: str
    level: int
    title: str
    anchor: str
    letter: str = ""
    in_appendix: bool = False


def run_heading(form: Form, rv: RunView, *, log: bool) -> str:
    """A report's heading under its server: the 2-hour performance test's plainly ("Test
    results", "Test log"), another test's named first ("Stress test results")."""
    words = form.run_log if log else form.run_results
    if rv.run.kind is TestKind.PERFORMANCE:
        return words
    return f"{rv.run.kind.value} {words[0].lower()}{words[1:]}"


def table_words(form: Form, key: str, title: str) -> tuple[str, str]:
    """A [tables.*] table's heading and caption in the form (its own title for both when the form
    has no words for its key)."""
    for words in form.tables:
        if words.key == key:
            return words.title, words.caption
    return title, title


def _present(doc: Document, key: str) -> bool:
    """Whether the document prints the outline entry ``key`` (a part or a form heading)."""
    part = PARTS_BY_KEY.get(key)
    if part is not None and part.markdown:
        return key in doc.manifest.sections
    shown = {
        "server_facts": bool(doc.server_facts),
        "stress": bool(doc.stress_tables),
        "backup_recovery": bool(doc.backup_table or doc.recovery_tables),
        "backup": doc.backup_table is not None,
        "recovery": bool(doc.recovery_tables),
        "appendix": bool(doc.appendix_views),
    }
    return shown.get(key, True)


def _server_entries(form: Form, view: ServerView, level: int) -> list[_Entry]:
    entries = [
        _Entry(
            view.anchor, level, form.server_heading.format(label=view.label), view.anchor, in_appendix=True
        )
    ]
    for rv in view.runs:
        entries.append(
            _Entry(rv.anchor, level + 1, run_heading(form, rv, log=False), rv.anchor, in_appendix=True)
        )
        if test_log_lines(rv.run):
            entries.append(
                _Entry(
                    f"{rv.anchor}-log",
                    level + 1,
                    run_heading(form, rv, log=True),
                    f"{rv.anchor}-log",
                    in_appendix=True,
                )
            )
    return entries


def vendor_sections_after(manifest: Manifest) -> dict[str, list[VendorSection]]:
    """The vendor's own sections by the slot of the document they follow, each list in reading
    order: a section placed after another vendor section comes right after it (and after the
    sections placed after that one), sections after the same place keep the manifest's order."""
    children: dict[str, list[VendorSection]] = {}
    for section in manifest.vendor_sections:
        children.setdefault(section.after, []).append(section)

    def subtree(key: str) -> list[VendorSection]:
        out: list[VendorSection] = []
        for child in children.get(key, []):
            out += [child, *subtree(child.key)]
        return out

    return {slot: subtree(slot) for slot in SECTION_SLOTS if slot in children}


def section_anchor(section: VendorSection) -> str:
    """The id of a vendor section's heading (prefixed: it cannot clash with the document's own)."""
    return f"section-{section.key}"


def _entries(doc: Document, form: Form) -> list[_Entry]:
    """The outline's entries the document prints, in reading order, vendor sections placed: after
    a Markdown part right after its text, as a sibling of it or of the next heading when that is
    deeper (placed after "Introduction", it is "1.1" ahead of "1.2 Simulated environment"); after
    a part made of sub-headings ("Tested deployment", "Test results summary") after the last of
    them, at the part's level, as the 3.0 form places them."""
    after = vendor_sections_after(doc.manifest)
    product = doc.manifest.document.product
    shown = [_present(doc, e.key) for e in form.outline]
    out: list[_Entry] = []
    waiting: list[tuple[str, int]] = []  # (slot, level) of parts whose sub-headings are not done

    def place(slot: str, level: int) -> None:
        out.extend(_Entry(f"section:{s.key}", level, s.title, section_anchor(s)) for s in after.get(slot, []))

    place("contents", 1)
    for i, entry in enumerate(form.outline):
        if shown[i]:
            while waiting and entry.level <= waiting[-1][1]:
                place(*waiting.pop())
            out.extend(_expand(doc, form, entry, product))
        part = PARTS_BY_KEY.get(entry.key)
        if part is None or not part.slot:
            continue
        if part.markdown:  # its slot holds what is placed after it, filled or not (as in 3.0)
            later = zip(form.outline[i + 1 :], shown[i + 1 :], strict=True)
            following = next((e.level for e, s in later if s), 1)
            place(part.key, max(entry.level, following))
        else:
            waiting.append((part.key, entry.level))
    while waiting:
        place(*waiting.pop())
    return out


def _expand(doc: Document, form: Form, entry: OutlineEntry, product: str) -> list[_Entry]:
    if entry.key == "tables":
        return [
            _Entry(f"table:{t.key}", entry.level, table_words(form, t.key, t.title)[0], f"table-{t.key}")
            for t in doc.manifest.tables
        ]
    part = PARTS_BY_KEY.get(entry.key)
    title = (entry.title or (part.title if part else entry.key)).replace("{product}", product)
    anchor = entry.anchor or (part.anchor if part else entry.key)
    out = [_Entry(entry.key, entry.level, title, anchor, entry.letter)]
    if entry.key == "appendix":
        for view in doc.appendix_views:
            out += _server_entries(form, view, entry.level + 1)
    return out


def outline(doc: Document) -> list[Heading]:
    """The document's numbered headings in reading order; empty for a form that numbers none."""
    form = doc.form
    if not form.numbered:
        return []
    counters: list[int] = []
    main: list[int] = []  # the body's numbers, taken up again after an appendix
    prefix = ""  # the appendix letter the headings below are numbered under
    headings: list[Heading] = []
    for entry in _entries(doc, form):
        # A vendor's chapter placed after an appendix is the next appendix ("C" after "B").
        follows = prefix and entry.level == 1 and entry.key.startswith("section:")
        if entry.letter or follows:
            prefix, counters = entry.letter or chr(ord(prefix) + 1), []
            number = prefix
        else:
            if entry.level == 1 and prefix:  # the body again after an appendix
                prefix, counters = "", main
            depth = entry.level - (1 if prefix else 0)
            counters = [*counters[:depth], *[0] * (depth - len(counters))]
            counters[-1] += 1
            if not prefix:
                main = counters
            number = ".".join([*([prefix] if prefix else []), *map(str, counters)])
        headings.append(Heading(entry.key, entry.level, number, entry.title, entry.anchor, entry.in_appendix))
    return headings
