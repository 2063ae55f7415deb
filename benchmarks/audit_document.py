"""Audit published documents: a 60-page PDF (target < 5 s), the whole VMAX PDF and its HTML.

    python -m benchmarks.audit_document

The documents are the VMAX sample built by `esrp-report build` (benchmarks/data/vmax-out, built
again at every run so the audit reads what the current code writes) and its first 60 pages cut
out with pypdf. Each audit runs as `esrp-report audit` in a
child process — reading, rebuilding the tables and checking every relation — and its wall time
is the median of five runs. The PDF text extraction alone is also timed with PDFium and with
pypdf, the pure-Python reader the audit does not use, to show why.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "vmax-out"
RUNS = 5


def _documents() -> dict[str, Path]:
    from pypdf import PdfReader, PdfWriter

    exe = str(Path(sys.executable).with_name("esrp-report"))
    subprocess.run(
        [exe, "build", str(ROOT / "samples" / "vmax.toml"), "-o", str(DATA)], check=True, capture_output=True
    )
    cut = DATA / "vmax-60pages.pdf"
    writer = PdfWriter()
    for page in PdfReader(DATA / "vmax.pdf").pages[:60]:
        writer.add_page(page)
    with cut.open("wb") as handle:
        writer.write(handle)
    return {"60-page PDF": cut, "whole PDF": DATA / "vmax.pdf", "HTML": DATA / "vmax.html"}


def _median_seconds(args: list[str]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode not in (0, 1):
            raise subprocess.CalledProcessError(done.returncode, args)
    return statistics.median(times)


def _extraction_seconds(pdf: Path) -> dict[str, float]:
    import pypdfium2 as pdfium
    from pypdf import PdfReader

    start = time.perf_counter()
    document = pdfium.PdfDocument(str(pdf))
    for index in range(len(document)):
        document[index].get_textpage().get_text_bounded()
    pdfium_s = time.perf_counter() - start
    start = time.perf_counter()
    for page in PdfReader(pdf).pages:
        page.extract_text()
    pypdf_s = time.perf_counter() - start
    return {
        "pdfium_s": round(pdfium_s, 2),
        "pypdf_s": round(pypdf_s, 2),
        "pypdf_over_pdfium": round(pypdf_s / pdfium_s, 1),
    }


def main() -> dict[str, object]:
    exe = str(Path(sys.executable).with_name("esrp-report"))
    documents = _documents()
    import pypdfium2 as pdfium

    figures: dict[str, object] = {"pages": len(pdfium.PdfDocument(str(documents["whole PDF"])))}
    for name, path in documents.items():
        median = _median_seconds([exe, "audit", str(path), "--json"])
        figures[name] = {"median_s": round(median, 2), "runs": RUNS}
        print(f"audit {name}: median {median:.2f} s over {RUNS} runs (target for 60 pages: < 5 s)")
    extraction = _extraction_seconds(DATA / "vmax-60pages.pdf")
    figures["text extraction, 60 pages"] = extraction
    print(f"text extraction of 60 pages: PDFium {extraction['pdfium_s']} s, pypdf {extraction['pypdf_s']} s")
    return figures


if __name__ == "__main__":
    main()
