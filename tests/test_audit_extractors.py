"""Extractor independence, measured (issue 30, item 2): every document the project has, read through
the extractions a user may have made of it, audited, and compared with the audit of the original.

Extractions: of a PDF, PDFium's plain text (pypdfium2, page by page, none of the PDF reader's own
handling), ``pdftotext`` with and without ``-layout`` (poppler-utils, installed by
``scripts/system-packages``) and pdfminer.six; of a text, a copy-paste re-wrap at 72 and 100 columns
(``textwrap.wrap`` of each line) and collapsed whitespace (each run of spaces and tabs one space).
Documents: the seeds as text (``tests/data/published/*.txt``) for the text transforms; the NetApp,
Dell EMC and VMAX samples built to PDF for the PDF extractors.

An extraction may lose reading, but must then say so: its audit either finds the same errors (the
same check ids, as many of each) with as many relations checked as the original's within
``MARGIN``, or its status is not ``checked`` (``partly_read``, ``nothing_checked``). A ``checked``
audit that lost or added an error is a wrong verdict. The combinations that give one today are
``xfail(strict=True)`` with what goes wrong; the measured matrix is in docs/audit.md, "Extractor
independence" (``python tests/test_audit_extractors.py`` prints it)."""

from __future__ import annotations

import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from esrp_report.analysis.rules import load_rules
from esrp_report.audit import audit
from esrp_report.cli.main import app
from esrp_report.ingest.documents.published import parse_document
from esrp_synth.copies import collapsed, rewrapped

DATA = Path(__file__).resolve().parent / "data" / "published"
SAMPLES = Path(__file__).resolve().parent.parent / "samples"
RULES = load_rules(None)

# How far an extraction's count of relations checked may stray from the original's and still be
# "the same reading" (a re-wrapped caption or a lost prose fact moves a few).
MARGIN = 0.15

SEEDS = sorted(p.name for p in DATA.glob("*.txt"))
BUILT = ["netapp", "dellemc", "vmax"]


@dataclass(frozen=True)
class Reading:
    """What an audit of one text made of it."""

    tables: int  # tables read (coverage)
    relations: int  # relations evaluated
    errors: Counter[str]  # error findings by check id
    status: str  # AuditResult.status

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())


def reading(data: bytes, source: str) -> Reading:
    result = audit(parse_document(data, source), RULES)
    return Reading(
        tables=len(result.coverage.tables) if result.coverage else 0,
        relations=result.checked,
        errors=Counter(f.check for f in result.findings if f.severity == "error"),
        status=result.status,
    )


# --- the text transforms ---------------------------------------------------------------------------


TEXT_EXTRACTIONS: dict[str, Callable[[str], str]] = {
    "rewrap-72": lambda text: rewrapped(text, 72),
    "rewrap-100": lambda text: rewrapped(text, 100),
    "collapsed": collapsed,
}


# --- the PDF extractors ----------------------------------------------------------------------------


def pdfium_text(pdf: Path) -> str:
    """PDFium's text of each page (pypdfium2, as ``ingest/documents/pdf.py`` reads a PDF), joined
    as a user's script would, without the PDF reader's dropping of running headers or joining of
    wrapped header cells."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(pdf))
    pages: list[str] = []
    try:
        for index in range(len(document)):
            page = document[index]
            textpage = page.get_textpage()
            pages.append(textpage.get_text_range())
            textpage.close()
            page.close()
    finally:
        document.close()
    return "\n".join(pages)


def pdftotext(pdf: Path, *options: str) -> str:
    done = subprocess.run(["pdftotext", *options, str(pdf), "-"], capture_output=True, check=True)
    return done.stdout.decode("utf-8")


def pdfminer_text(pdf: Path) -> str:
    from pdfminer.high_level import extract_text

    return str(extract_text(str(pdf)))


PDF_EXTRACTIONS: dict[str, Callable[[Path], str]] = {
    "pdfium-text": pdfium_text,
    "pdftotext": pdftotext,
    "pdftotext-layout": lambda pdf: pdftotext(pdf, "-layout"),
    "pdfminer": pdfminer_text,
}


# --- the readings, each worked out once ------------------------------------------------------------


@cache
def seed_original(name: str) -> Reading:
    return reading((DATA / name).read_bytes(), name)


@cache
def seed_extracted(name: str, extraction: str) -> Reading:
    text = (DATA / name).read_text(encoding="utf-8")
    return reading(TEXT_EXTRACTIONS[extraction](text).encode("utf-8"), f"{name} ({extraction})")


@cache
def pdf_original(pdf: Path) -> Reading:
    return reading(pdf.read_bytes(), pdf.name)


@cache
def pdf_extracted(pdf: Path, extraction: str) -> Reading:
    text = PDF_EXTRACTIONS[extraction](pdf)
    return reading(text.encode("utf-8"), f"{pdf.stem}.txt ({extraction})")


def build_pdf(sample: str, out: Path) -> Path:
    """``esrp-report build samples/SAMPLE.toml -o OUT --format pdf``: the PDF it writes (the NetApp
    sample's verdict is INCOMPLETE, exit 3: a rule that applies is not evaluated; its PDF is written)."""
    result = CliRunner().invoke(
        app, ["build", str(SAMPLES / f"{sample}.toml"), "-o", str(out), "--format", "pdf"]
    )
    assert result.exit_code in (0, 3), result.output
    pdf = out / f"{sample}.pdf"
    assert pdf.is_file(), result.output
    return pdf


@pytest.fixture(scope="session")
def built_pdfs(tmp_path_factory: pytest.TempPathFactory, vmax_build: Path) -> dict[str, Path]:
    """The samples built to PDF once per session (the VMAX one is the shared build's)."""
    out = tmp_path_factory.mktemp("extractors")
    pdfs = {name: build_pdf(name, out / name) for name in BUILT if name != "vmax"}
    pdfs["vmax"] = vmax_build / "vmax.pdf"
    return pdfs


def verdict(original: Reading, extracted: Reading) -> str | None:
    """What is wrong with an extraction's reading (None: nothing): a ``checked`` audit must find the
    original's errors, no more, over the original's relations within MARGIN."""
    if extracted.status != "checked":
        return None
    problems = []
    lost = original.errors - extracted.errors
    added = extracted.errors - original.errors
    if lost:
        problems.append(f"errors lost: {dict(lost)}")
    if added:
        problems.append(f"errors added: {dict(added)}")
    if abs(extracted.relations - original.relations) > MARGIN * original.relations:
        problems.append(
            f"{extracted.relations} relations against {original.relations} (beyond ±{MARGIN:.0%})"
        )
    return "; ".join(problems) or None


# --- the matrix --------------------------------------------------------------------------------------

# The combinations that give a wrong `checked` verdict today: what goes wrong (not fixed here).
# None: the re-wrapped records, server headers, fact values and worked formulas are joined back
# (ingest/documents/wrapped.py, facts.py, formulas.py) and a wrong verdict here is a regression.
XFAIL: dict[tuple[str, str], str] = {}


def _cases(documents: list[str], extractions: list[str]) -> list[object]:
    cases: list[object] = []
    for document in documents:
        for extraction in extractions:
            reason = XFAIL.get((document, extraction))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            cases.append(pytest.param(document, extraction, marks=marks, id=f"{document}-{extraction}"))
    return cases


@pytest.mark.parametrize(("name", "extraction"), _cases(SEEDS, list(TEXT_EXTRACTIONS)))
def test_a_text_extraction_reads_the_same_or_says_it_read_less(name: str, extraction: str) -> None:
    original = seed_original(name)
    assert original.status == "checked", original
    problem = verdict(original, seed_extracted(name, extraction))
    assert problem is None, f"{name} through {extraction}: {problem}"


@pytest.mark.parametrize(("sample", "extraction"), _cases(BUILT, list(PDF_EXTRACTIONS)))
def test_a_pdf_extraction_reads_the_same_or_says_it_read_less(
    built_pdfs: dict[str, Path], sample: str, extraction: str
) -> None:
    pdf = built_pdfs[sample]
    original = pdf_original(pdf)
    assert original.status == "checked" and original.error_count == 0, original
    problem = verdict(original, pdf_extracted(pdf, extraction))
    assert problem is None, f"{sample}.pdf through {extraction}: {problem}"


def test_the_matrix_has_every_kind_of_outcome() -> None:
    """The transforms are not no-ops: at least one extraction of a seed reads less and says so."""
    statuses = {seed_extracted(name, extraction).status for name in SEEDS for extraction in TEXT_EXTRACTIONS}
    assert "partly_read" in statuses


def _row(document: str, extraction: str, r: Reading) -> str:
    errors = ", ".join(f"{check} ×{n}" if n > 1 else check for check, n in sorted(r.errors.items()))
    return f"| {document} | {extraction} | {r.tables} | {r.relations} | {r.error_count} | {r.status} | {errors} |"


def main() -> None:
    """Print the measured matrix as the Markdown table of docs/audit.md."""
    print("| document | extraction | tables | relations | errors | status | error checks |")
    print("|---|---|---:|---:|---:|---|---|")
    for name in SEEDS:
        print(_row(name, "original", seed_original(name)))
        for extraction in TEXT_EXTRACTIONS:
            print(_row(name, extraction, seed_extracted(name, extraction)))
    with tempfile.TemporaryDirectory() as tmp:
        for sample in BUILT:
            pdf = build_pdf(sample, Path(tmp) / sample)
            print(_row(f"{sample} (PDF)", "original", pdf_original(pdf)))
            for extraction in PDF_EXTRACTIONS:
                print(_row(f"{sample} (PDF)", extraction, pdf_extracted(pdf, extraction)))


if __name__ == "__main__":
    main()
