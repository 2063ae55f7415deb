"""Two outputs from one build (issue 32, item 1): the vendor's document holds only what a published
ESRP document holds; the reviewer's report beside it (``<stem>-review.html`` / ``.pdf``) holds the
tool's verdicts, evidence notes, disagreements, what was not evaluated and the files read; a
``--draft`` build marks every page of both "DRAFT".

Each sample is built once (the three samples and a draft), and both outputs' text is read: the
PDF's page by page with pypdfium2, the HTML's as a reader sees it."""

from __future__ import annotations

import hashlib
import re
from html import unescape
from pathlib import Path
from typing import NamedTuple

import pypdfium2 as pdfium
import pytest
from pypdf import PdfReader

from esrp_report.analysis.rules import Status, load_rules
from esrp_report.app import api
from esrp_report.render.document import Document
from esrp_synth.sample_variants import vmax_with_a_disagreement

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
NAMES = ("vmax", "netapp", "dellemc")

# What the tool says and a published ESRP document never does (matched without regard to case).
TOOL_PHRASES = (
    "Solution verdict",
    "Built by esrp-report",
    "esrp-report",
    "not checked",
    "not evaluated",
    "Evidence notes",
    "Problems found while reading",
    "Sources:",
    "Assessment:",
    "could be evaluated",
    "disagree",
    "diagnostics",
    "results folder",  # where the tool read the evidence: the review's provenance says it
)


class Built(NamedTuple):
    out: Path
    document: Document
    files: list[Path]


def _build(name: str, out: Path, *, draft: bool = False) -> Built:
    result = api.build(SAMPLES / f"{name}.toml", out, jobs=2, draft=draft)
    return Built(out, result.document, result.files)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Built]:
    return {name: _build(name, tmp_path_factory.mktemp(name)) for name in NAMES}


# A draft of each form: the ESRP 3.0 one (NetApp) and the 4.0 one (Dell EMC), whose templates
# both include partials/draft.html.
@pytest.fixture(scope="module", params=["netapp", "dellemc"])
def draft(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _build(request.param, tmp_path_factory.mktemp("draft"), draft=True)


def _pages(path: Path) -> list[str]:
    pdf = pdfium.PdfDocument(path)
    try:
        return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()


def _html_text(path: Path) -> str:
    page = path.read_text(encoding="utf-8")
    page = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.S)
    return unescape(re.sub(r"<[^>]+>", " ", page))


def _squeezed(text: str) -> str:
    """Text with its whitespace made single spaces, and a word the PDF broke after a hyphen at a
    line's end ("db-read-latency-" / "max") joined again."""
    return re.sub(r"(?<=\w-) (?=\w)", "", " ".join(text.split()))


def _texts(built: Built, stem: str) -> dict[str, str]:
    return {
        f"{stem}.pdf": "\n".join(_pages(built.out / f"{stem}.pdf")),
        f"{stem}.html": _html_text(built.out / f"{stem}.html"),
        # The page's markup after its style sheet (which styles the review's classes too).
        f"{stem}.html markup": (built.out / f"{stem}.html")
        .read_text(encoding="utf-8")
        .split("</style>", 1)[1],
    }


@pytest.mark.parametrize("name", NAMES)
def test_build_writes_the_document_and_the_review_beside_it(built: dict[str, Built], name: str) -> None:
    files = {path.name for path in built[name].files}
    assert {f"{name}.html", f"{name}.pdf", f"{name}-review.html", f"{name}-review.pdf"} <= files


@pytest.mark.parametrize("name", NAMES)
def test_the_vendor_document_carries_none_of_the_tool_s_review(built: dict[str, Built], name: str) -> None:
    texts = _texts(built[name], name)
    rule_ids = {rule.id for rule in load_rules(None)}
    assert rule_ids  # the rules file names its rules: the check below is exercised
    for what, text in texts.items():
        plain = text if what.endswith("markup") else _squeezed(text)
        for phrase in TOOL_PHRASES:
            assert phrase.casefold() not in plain.casefold(), (what, phrase)
        for rule in rule_ids:
            assert not re.search(rf"(?<![\w-]){re.escape(rule)}(?![\w-])", plain), (what, rule)
    markup = texts[f"{name}.html markup"]
    assert 'name="generator"' not in markup and 'class="verdict' not in markup
    # Not even in its source: the style sheet and the charts' metadata name no tool either.
    assert "esrp-report" not in (built[name].out / f"{name}.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", NAMES)
def test_the_vendor_document_names_no_evidence_file(built: dict[str, Built], name: str) -> None:
    """No evidence file's path, and no evidence file's name but where Jetstress' own report text
    prints its Windows path ("C:\\Program Files\\Exchange Jetstress\\Performance_....xml has 477
    samples queried", as the published documents print it too)."""
    evidence = api.evidence_files(built[name].document)
    assert evidence
    for what, text in _texts(built[name], name).items():
        for file in evidence:
            assert file.name not in text, (what, file.name)
            base = file.name.rsplit("/", 1)[-1]
            for found in re.finditer(re.escape(base), text):
                assert text[found.start() - 1] == "\\", (what, base, text[found.start() - 80 : found.end()])


def test_the_vendor_document_shows_the_vendor_s_logo_only(built: dict[str, Built]) -> None:
    """The samples give no logo: no image on the title page, and no tool logo anywhere."""
    markup = (built["vmax"].out / "vmax.html").read_text(encoding="utf-8")
    assert 'class="logo"' not in markup


@pytest.mark.parametrize("name", NAMES)
def test_the_vendor_document_states_results_in_the_published_words(
    built: dict[str, Built], name: str
) -> None:
    """What a published document states of its results: the reliability it saw, the summary
    tables and each Jetstress report's own "Overall Test Result"."""
    text = _squeezed(_html_text(built[name].out / f"{name}.html"))
    assert "Test results summary" in text and "Reliability" in text
    assert "Storage performance results" in text
    assert "Overall Test Result Pass" in text


@pytest.mark.parametrize("name", NAMES)
def test_the_review_carries_the_verdicts_notes_and_files(built: dict[str, Built], name: str) -> None:
    doc = built[name].document
    for what, raw in _texts(built[name], f"{name}-review").items():
        if what.endswith("markup"):
            continue
        text = _squeezed(raw)
        assert f"Solution verdict: {doc.verdict.value.capitalize()}" in text, what
        assert "Built by esrp-report" in text, what
        for view in doc.servers:
            assert f"{view.label} {view.machine} {view.status.value.capitalize()}" in text, (what, view.label)
        for line in doc.blocking:
            assert _squeezed(line) in text, (what, line)
        for failure in doc.unchecked:
            assert f"{failure.rule} ({failure.rule_id}) {failure.status.value}" in text, (what, failure)
        for rv in (rv for view in doc.servers for rv in view.runs if not rv.judged):
            assert f"{rv.title}: not evaluated: no rule of the rules file judges this test" in text, what
        for statement in doc.not_checked:
            assert f"Reliability: {statement.text}" in text, (what, statement.text)
        for _kind, _severity, source, sentence in doc.evidence_notes:
            assert _squeezed(sentence) in text and source in text, (what, sentence)
        for difference in doc.stated_differences:
            assert _squeezed(difference.sentence()) in text, (what, difference)
        if doc.disagreements:
            assert (
                "Evidence notes" in text
                and "Figures a test report and its counter log give differently" in text
            )
        for file in api.evidence_files(doc):
            assert file.name in text, (what, file.name)
    # Each file's SHA-256, as the file's own bytes give it (the HTML; in the PDF a hash may wrap).
    html = _squeezed(_html_text(built[name].out / f"{name}-review.html"))
    files = api.evidence_files(doc)
    assert files
    for file in files:
        source = next(
            s for view in doc.servers for rv in view.runs for s in rv.run.sources if s.endswith(file.name)
        )
        assert file.sha256 == hashlib.sha256(Path(source).read_bytes()).hexdigest()
        assert f"{file.name} {file.size:,} {file.sha256}" in html, file.name


@pytest.mark.parametrize("name", NAMES)
def test_the_review_lists_each_disagreement_and_each_rule_result(built: dict[str, Built], name: str) -> None:
    doc = built[name].document
    markup = (built[name].out / f"{name}-review.html").read_text(encoding="utf-8")
    every = markup[markup.index('id="every-disagreement"') :] if doc.disagreements else ""
    rows = every[: every.index("</table>")].count("<tr>") - 1 if every else 0
    assert rows == len(doc.disagreements)
    judged = [f for view in doc.servers for rv in view.runs for f in rv.judged]
    assert judged  # every sample's rules are judged
    per_instance = sum(1 for f in judged if f.instance is not None)
    # One cell per instance and rule, each printed with its value.
    assert len(re.findall(r'<td class="num(?: fail)?">[^<]*(?:ms|—)[^<]*</td>', markup)) >= per_instance


def test_a_vmax_disagreement_is_named_with_its_files_in_the_review_not_in_the_document(
    built: dict[str, Built], tmp_path: Path
) -> None:
    assert built["vmax"].document.disagreements == []  # the demo's evidence agrees with itself
    # A copy whose counter log is made to disagree with its report.
    manifest = vmax_with_a_disagreement(SAMPLES, tmp_path / "vmax")
    result = api.build(manifest, tmp_path / "out", jobs=1)
    doc = result.document
    assert doc.disagreements
    markup = (tmp_path / "out" / "vmax-review.html").read_text(encoding="utf-8")
    every = markup[markup.index('id="every-disagreement"') :]
    assert every[: every.index("</table>")].count("<tr>") - 1 == len(doc.disagreements)
    text = _squeezed(_html_text(tmp_path / "out" / "vmax-review.html"))
    first = doc.disagreements[0]
    assert first.first_source.rsplit("/", 1)[-1] in text and first.second_source.rsplit("/", 1)[-1] in text
    vendor = _squeezed(_html_text(tmp_path / "out" / "vmax.html")).casefold()
    assert "disagree" not in vendor and "give differently" not in vendor


def test_the_review_pdf_is_tagged(built: dict[str, Built]) -> None:
    root = PdfReader(built["netapp"].out / "netapp-review.pdf").trailer["/Root"]
    assert "/StructTreeRoot" in root and root["/MarkInfo"]["/Marked"]
    assert root["/Lang"] == "en"


def test_draft_marks_every_page_of_the_document_and_the_review(draft: Built) -> None:
    stem = draft.files[0].stem
    for name in (f"{stem}.pdf", f"{stem}-review.pdf"):
        pages = _pages(draft.out / name)
        # Every piece the PDF joins (the body and each server's appendix) is marked.
        assert len(pages) > 1
        assert all("DRAFT" in page for page in pages), (
            name,
            [i for i, p in enumerate(pages, 1) if "DRAFT" not in p],
        )
    for name in (f"{stem}.html", f"{stem}-review.html"):
        assert 'class="draft-mark"' in (draft.out / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", NAMES)
def test_a_build_without_draft_has_no_draft_mark(built: dict[str, Built], name: str) -> None:
    for stem in (name, f"{name}-review"):
        assert not any("DRAFT" in page for page in _pages(built[name].out / f"{stem}.pdf")), stem
        assert (
            "draft-mark"
            not in (built[name].out / f"{stem}.html").read_text(encoding="utf-8").split("</style>", 1)[1]
        )


def test_a_passing_sample_says_pass_in_the_review_only(built: dict[str, Built]) -> None:
    assert built["vmax"].document.verdict is Status.PASS
    review = _squeezed(_html_text(built["vmax"].out / "vmax-review.html"))
    assert "Pass: every server meets every threshold that could be evaluated." in review
