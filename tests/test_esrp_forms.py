"""Each ESRP version prints the form of its published documents (issue 32 item 2): a 4.0 manifest
(Exchange 2013/2016) follows seed 002's numbered sections, table captions and appendix order; a
3.0 manifest keeps seed 000's parts in seed 000's order.

The seeds are read by content: seed 002's table of contents ("1 Introduction ..... 4") and its
"Table N ..." captions, seed 000's table of contents. What the built document prints is read back
from its HTML and from its PDF's text, never from the template."""

from __future__ import annotations

import re
import shutil
import tomllib
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest
from pypdf import PdfReader

from esrp_report.app.api import audit_document, build
from esrp_report.ingest.config.manifest import ManifestError
from esrp_report.model.sections import form_for

DATA = Path(__file__).parent / "data" / "published"
SAMPLES = Path(__file__).resolve().parent.parent / "samples"

# A numbered heading: "4.3.1 Database read-only performance", "A.2 Server 2", "B Technical ...".
NUMBERED = re.compile(r"((?:\d+|[A-Z])(?:\.\d+)*) (\S.*)")
# Seed 002's own sections about its product (2.1, 2.2): a vendor's sections, not the form's.
SEED_002_VENDOR_SECTIONS = {"Accelerate your workloads, automate your savings", "All-new hardware platform"}


def _contents(text: str) -> list[str]:
    """The entries of a seed's table of contents, page numbers and leader dots removed."""
    lines = text.splitlines()
    start = next(
        i for i, line in enumerate(lines) if re.fullmatch(r"#*\s*Table of contents", line.strip(), re.I)
    )
    entries = []
    for line in lines[start + 1 :]:
        if not line.strip():
            if entries:
                break
            continue
        if line.strip() == "---":
            continue
        entries.append(re.sub(r"[.\s]*\t?\s*\d*\s*$", "", re.sub(r"\.{2,}.*$", "", line)).strip())
    return entries


def _numbered(entries: list[str]) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in map(NUMBERED.fullmatch, entries) if m]


def _level(number: str) -> int:
    return number.count(".") + 1


def _kind(title: str, product: str = "") -> str:
    """A heading or caption as a kind, whatever names a server or the product."""
    title = re.sub(r"\bServer \d+\b", "{server}", title)
    title = re.sub(r"^.+ solution overview$", "{product} solution overview", title)
    return title.casefold()


def _numbering_holds(numbers: list[str]) -> bool:
    """Whether numbers run on without a gap: 1, 1.1, 1.2, 2, 2.1, ..., A, A.1, A.1.1, B."""
    previous: list[str] = []
    for number in numbers:
        parts = number.split(".")
        head, last = parts[:-1], parts[-1]
        if head != previous[: len(head)]:
            return False
        before = previous[len(head)] if len(previous) > len(head) else None
        if last.isdigit():
            expected = str(int(before) + 1) if before is not None and before.isdigit() else "1"
        else:
            expected = chr(ord(before) + 1) if before is not None and before.isalpha() else "A"
        if last != expected:
            return False
        previous = parts
    return True


class _Read(HTMLParser):
    """A built page's headings (h1-h3, after the table of contents), contents entries and
    captions, as text."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.contents: list[str] = []
        self.captions: list[str] = []
        self._open: str | None = None
        self._text = ""
        self._in_toc = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "nav":
            self._in_toc = True
        if tag in {"h1", "h2", "h3", "caption", "figcaption", "li"}:
            self._open, self._text = tag, ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "nav":
            self._in_toc = False
        if tag != self._open:
            return
        text = " ".join(self._text.split())
        if tag == "li" and self._in_toc:
            self.contents.append(text)
        elif tag in {"caption", "figcaption"}:
            self.captions.append(text)
        elif tag.startswith("h") and not self._in_toc:
            self.headings.append(text)
        self._open = None

    def handle_data(self, data: str) -> None:
        if self._open:
            self._text += data


def _read_html(path: Path) -> _Read:
    reader = _Read()
    reader.feed(path.read_text(encoding="utf-8"))
    return reader


def _vendor_titles(manifest: Path) -> set[str]:
    data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    return {section["title"] for section in data.get("section", [])}


def _expected_002(*, backup: bool, recovery: bool) -> list[tuple[int, str]]:
    """Seed 002's numbered sections as (level, kind), less the seed vendor's own sections and the
    backup and recovery sections the evidence has no report for."""
    entries = _numbered(_contents((DATA / "dellemc-002.txt").read_text(encoding="utf-8")))
    assert len(entries) > 30  # the whole contents list was read
    dropped = set(SEED_002_VENDOR_SECTIONS)
    if not backup:
        dropped.add("Database read-only performance")
    if not recovery:
        dropped.add("Transaction log recovery/snapshot performance")
    if not backup and not recovery:
        dropped.add("Database backup and recovery performance")
    return [(_level(n), _kind(t)) for n, t in entries if t not in dropped]


def _ours(headings: list[str], vendor: set[str]) -> tuple[list[str], list[tuple[int, str]]]:
    """Our numbered headings: their numbers, and (level, kind) less the manifest's own sections."""
    found = _numbered(headings)
    return [n for n, _ in found], [(_level(n), _kind(t)) for n, t in found if t not in vendor]


def _seed_caption_kinds() -> list[str]:
    text = (DATA / "dellemc-002.txt").read_text(encoding="utf-8")
    captions = re.findall(r"^Table (\d+) (.+?)\s*$", text, re.M)
    assert [int(n) for n, _ in captions] == list(range(1, len(captions) + 1))
    return [_kind(title) for _, title in captions]


def _check_sequence(ours: list[tuple[int, str]], expected: list[tuple[int, str]]) -> None:
    """Same sections in the same order at the same levels: the first difference is named."""
    for i, (got, want) in enumerate(zip(ours, expected, strict=False)):
        assert got == want, f"section {i + 1}: {got} where seed 002 has {want}"
    assert len(ours) == len(expected), f"{len(ours)} sections where seed 002 has {len(expected)}"


@pytest.fixture(scope="module")
def dellemc(sample_build: Callable[[str], Path]) -> Path:
    return sample_build("dellemc")


def _dellemc_evidence() -> tuple[bool, bool]:
    names = [p.name.casefold() for p in (SAMPLES / "dellemc").rglob("*.html")]
    return any("backup" in n for n in names), any("recovery" in n for n in names)


def test_the_form_is_chosen_by_the_esrp_version_then_the_exchange_version() -> None:
    assert form_for("4.0").template == "document-4.0.html"
    assert form_for("3.0").template == "document.html"
    assert form_for("", "2016").esrp_version == "4.0"
    assert form_for("", "2013").esrp_version == "4.0"
    assert form_for("", "2010").esrp_version == "3.0"
    assert form_for("2.1", "2007").esrp_version == "3.0"  # older versions print the 3.0 form


def test_seed_002_is_read_as_numbered_sections_and_captions() -> None:
    numbers = [n for n, _ in _numbered(_contents((DATA / "dellemc-002.txt").read_text(encoding="utf-8")))]
    assert _numbering_holds(numbers)
    assert numbers[:3] == ["1", "1.1", "1.2"] and numbers[-1] == "B"
    kinds = _seed_caption_kinds()
    assert kinds[4:8] == ["{server} test results"] * 4
    assert len(kinds) == 4 + 4 + 4 * 9


@pytest.mark.parametrize("planted", ["missing", "swapped"])
def test_a_section_missing_or_out_of_order_is_caught(planted: str) -> None:
    backup, recovery = True, True
    expected = _expected_002(backup=backup, recovery=recovery)
    ours = list(expected)
    if planted == "missing":
        del ours[ours.index((2, "reliability"))]
    else:
        i = ours.index((1, "conclusion"))
        ours[i - 1], ours[i] = ours[i], ours[i - 1]
    with pytest.raises(AssertionError, match="where seed 002 has"):
        _check_sequence(ours, expected)
    assert not _numbering_holds(["1", "1.1", "1.3", "2"])  # a gap in the numbers is caught too


def test_dellemc_html_follows_seed_002(dellemc: Path) -> None:
    page = _read_html(dellemc / "dellemc.html")
    vendor = _vendor_titles(SAMPLES / "dellemc.toml")
    numbers, ours = _ours(page.headings, vendor)
    assert _numbering_holds(numbers), numbers
    _check_sequence(ours, _expected_002(backup=_dellemc_evidence()[0], recovery=_dellemc_evidence()[1]))
    # The table of contents lists the same numbered headings, in the same order.
    assert _numbered(page.contents) == _numbered(page.headings)
    # Tables: numbered 1, 2, 3, ... through the appendix, of seed 002's kinds in its order.
    tables = [re.fullmatch(r"Table (\d+) (.+)", c) for c in page.captions if c.startswith("Table ")]
    assert all(tables)
    assert [int(t.group(1)) for t in tables if t] == list(range(1, len(tables) + 1))
    assert [_kind(t.group(2)) for t in tables if t] == _seed_caption_kinds()
    figures = [c for c in page.captions if c.startswith("Figure ")]
    assert [c.split()[1] for c in figures] == [str(i) for i in range(1, len(figures) + 1)]


@pytest.mark.parametrize("planted", ["missing", "swapped"])
def test_a_planted_change_in_the_built_page_is_caught(dellemc: Path, tmp_path: Path, planted: str) -> None:
    html = (dellemc / "dellemc.html").read_text(encoding="utf-8")
    reliability = re.search(r'<h2 id="reliability">.*?</h2>', html)
    conclusion = re.search(r'<h1 id="conclusion">.*?</h1>', html)
    assert reliability and conclusion
    if planted == "missing":
        html = html.replace(reliability.group(0), "")
    else:  # the conclusion moved ahead of the results
        html = html.replace(conclusion.group(0), "").replace(
            '<h1 id="results">', conclusion.group(0) + '<h1 id="results">'
        )
    (tmp_path / "planted.html").write_text(html, encoding="utf-8")
    _, ours = _ours(_read_html(tmp_path / "planted.html").headings, _vendor_titles(SAMPLES / "dellemc.toml"))
    with pytest.raises(AssertionError, match="where seed 002 has"):
        _check_sequence(ours, _expected_002(backup=_dellemc_evidence()[0], recovery=_dellemc_evidence()[1]))


def test_dellemc_pdf_follows_seed_002(dellemc: Path) -> None:
    pages = [page.extract_text() or "" for page in PdfReader(dellemc / "dellemc.pdf").pages]
    contents = next(i for i, text in enumerate(pages) if "Table of contents" in text)
    lines = [" ".join(line.split()) for text in pages[contents + 1 :] for line in text.splitlines()]
    html = _read_html(dellemc / "dellemc.html")
    labels = [h for h in html.headings if NUMBERED.fullmatch(h)]
    # Each heading printed in the PDF after the contents, in reading order (its first line of its
    # own: the running heads repeat a chapter's heading after it).
    first = [lines.index(label) if label in lines else -1 for label in labels]
    assert -1 not in first, [label for label, at in zip(labels, first, strict=True) if at < 0]
    assert first == sorted(first)
    # Every contents entry has the page its heading is printed on.
    printed_on = {}
    for number, text in enumerate(pages[contents + 1 :], start=contents + 2):
        for line in text.splitlines():
            printed_on.setdefault(" ".join(line.split()), number)
    # (Laid out by position: the numbers written in after the pieces are joined are text of their own.)
    toc = PdfReader(dellemc / "dellemc.pdf").pages[contents].extract_text(extraction_mode="layout")
    entries = [re.fullmatch(r"(.+?)\s*\.*\s*(\d+)", " ".join(line.split())) for line in toc.splitlines()]
    listed = {
        e.group(1).rstrip(". "): int(e.group(2))
        for e in entries
        if e and NUMBERED.fullmatch(e.group(1).rstrip(". "))
    }
    assert {label: listed.get(label) for label in labels} == {label: printed_on[label] for label in labels}
    tables = [re.match(r"Table (\d+) ", line) for line in lines]
    numbers = [int(t.group(1)) for t in tables if t]
    assert numbers == list(range(1, len(_seed_caption_kinds()) + 1))


def test_the_built_dellemc_pdf_is_audited_and_its_tables_read(dellemc: Path) -> None:
    result = audit_document(dellemc / "dellemc.pdf")
    assert result.errors == 0, [f.message for f in result.findings if f.severity == "error"]
    # Seed 002's layout, read from our own print: the four per-server tables and the four
    # servers' appendix reports, every one with its I/O tables.
    assert result.results_read == [
        "Performance results of 4 server(s)",
        "4 appendix report(s) with I/O tables",
    ]


@pytest.mark.parametrize("stem", ["vmax", "netapp"])
def test_3_0_samples_keep_seed_000s_parts_in_its_order(
    sample_build: Callable[[str], Path], stem: str
) -> None:
    seed = [_kind(e) for e in _contents((DATA / "vmax-000.txt").read_text(encoding="utf-8"))]
    assert seed[0] == "overview" and seed[-1] == "appendix a: test reports"
    page = _read_html(sample_build(stem) / f"{stem}.html")
    vendor = {t.casefold() for t in _vendor_titles(SAMPLES / f"{stem}.toml")}
    chapters = [_kind(h) for h in page.headings if h.casefold() in set(seed) | vendor]
    ours = [c for c in chapters if c not in vendor]
    assert not _numbered(page.headings)  # the 3.0 form numbers no heading
    assert ours == [s for s in seed if s in ours], ours  # seed 000's order
    for needed in ("overview", "tested deployment", "test results summary", "appendix a: test reports"):
        assert needed in ours


def _dellemc_copy(tmp_path: Path, edit: Callable[[str], str]) -> Path:
    """A copy of the Dell EMC sample (manifest, evidence, branding, content) with its manifest
    edited."""
    for name in ("dellemc", "dellemc-content", "branding"):
        shutil.copytree(SAMPLES / name, tmp_path / name)
    manifest = tmp_path / "dellemc.toml"
    manifest.write_text(edit((SAMPLES / "dellemc.toml").read_text(encoding="utf-8")), encoding="utf-8")
    return manifest


def test_vendor_sections_are_numbered_where_they_are_placed(tmp_path: Path) -> None:
    """A section of the vendor's own is numbered as a sibling of what it follows, after a part
    left empty too; after "Test results summary" it is the next chapter (a chapter as in the 3.0
    form); after appendix B it is appendix C."""

    def edit(text: str) -> str:
        text = re.sub(r'volume_sizing = """.*?"""\n', "", text, flags=re.S)
        return text.replace(
            "[[figure]]",
            '[[section]]\nid = "growth"\ntitle = "Growth"\nbody = "Add drives."\nafter = "volume_sizing"\n\n'
            '[[section]]\nid = "notes"\ntitle = "Test notes"\nbody = "Run in September."\nafter = "results"\n\n'
            '[[section]]\nid = "links"\ntitle = "Related resources"\nbody = "See the vendor."\nafter = "contact"\n\n'
            "[[figure]]",
            1,
        )

    out = tmp_path / "out"
    build(_dellemc_copy(tmp_path, edit), out, formats=("html",))
    headings = _read_html(out / "dellemc.html").headings
    numbered = [h for h in headings if NUMBERED.fullmatch(h)]
    assert _numbering_holds([NUMBERED.fullmatch(h).group(1) for h in numbered])  # type: ignore[union-attr]
    assert "2.2 Growth" in numbered and "2.2 Volume sizing" not in " ".join(numbered)
    assert numbered[numbered.index("5 Test notes") - 1 :][:3] == [
        "4.2 Storage performance results",
        "5 Test notes",
        "6 Conclusion",
    ]
    assert numbered[-2:] == ["B Technical support and resources", "C Related resources"]


def test_a_4_0_manifest_cannot_place_a_section_after_the_title_page_disclaimer(tmp_path: Path) -> None:
    def edit(text: str) -> str:
        return text.replace('after = "solution_description"', 'after = "disclaimer"', 1)

    with pytest.raises(ManifestError, match="no section 'disclaimer' to place"):
        build(_dellemc_copy(tmp_path, edit), tmp_path / "out", formats=("html",))


# What the tool's review says, which a published document never carries (issue 32 item 1): the 4.0
# form is written from seed 002 and holds none of it.
REVIEW_PHRASES = (
    "Solution verdict",
    "Built by esrp-report",
    "not checked",
    "Not evaluated",
    "Sources:",
    "Assessment:",
    "Evidence notes",
    "disagree",
    "Problems found",
    "threshold that could be evaluated",
)


def test_the_4_0_document_carries_none_of_the_tool_s_review(dellemc: Path) -> None:
    page = re.sub(r"<[^>]+>", " ", (dellemc / "dellemc.html").read_text(encoding="utf-8"))
    pdf = " ".join(page.extract_text() or "" for page in PdfReader(dellemc / "dellemc.pdf").pages)
    for text in (" ".join(page.split()), " ".join(pdf.split())):
        assert [p for p in REVIEW_PHRASES if p.casefold() in text.casefold()] == []
