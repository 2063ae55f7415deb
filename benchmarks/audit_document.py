"""Audit published documents: a 60-page PDF (target < 5 s), the whole VMAX PDF and its HTML.

    python -m benchmarks.audit_document

The documents are the VMAX sample with every server's reports in its appendix, built by
`esrp-report build` (benchmarks/data/vmax-out, built
again at every run so the audit reads what the current code writes) and its first 60 pages cut
out with pypdf. Each audit runs as `esrp-report audit` in a
child process — reading, rebuilding the tables and checking every relation — and its wall time
is the median of five runs. The PDF text extraction alone is also timed with PDFium and with
pypdf, the pure-Python reader the audit does not use, to show why.

Bounded cost (``python -m benchmarks.audit_document --bounded``, also part of ``main``): four
generated 50 MB texts — a published document (tests/data/published/vmax-000.txt) repeated with
junk lines between the copies, junk lines alone, one line with no newline, and 1 MB lines — and
a 5,000-page junk PDF, each audited once as a child process, with its wall time, CPU time and
peak RSS (docs/audit.md, "Bounded cost").
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from esrp_synth.sample_variants import vmax_with_every_server

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "vmax-out"
RUNS = 5
BOUNDED = DATA.parent / "audit-bounded"
MB = 1024 * 1024
_WORDS = ("the", "quick", "brown", "fox", "storage", "server", "12", "3.5", "lorem", "ipsum", "|")


def _documents() -> dict[str, Path]:
    from pypdf import PdfReader, PdfWriter

    exe = str(Path(sys.executable).with_name("esrp-report"))
    # Every server's reports in the appendix (the sample reproduces one server's, as published):
    # a document long enough to cut 60 pages from.
    manifest = vmax_with_every_server(ROOT / "samples", DATA.parent / "vmax-all")
    subprocess.run([exe, "build", str(manifest), "-o", str(DATA)], check=True, capture_output=True)
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


def text_pdf(pages: list[list[str]]) -> bytes:
    """A PDF whose pages carry the given lines of text (Helvetica), written object by object with
    its cross-reference table, so that PDFium extracts exactly those lines."""
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    kids = []
    for lines in pages:
        shown = " ".join(
            "(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") Tj T*"
            for line in lines
        )
        stream = f"BT /F1 10 Tf 12 TL 40 800 Td {shown} ET".encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents %d 0 R "
            b"/Resources << /Font << /F1 3 0 R >> >> >>" % len(objects)
        )
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids),
        len(kids),
    )
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def junk_lines(count: int, seed: int) -> list[str]:
    """Lines of words and figures that are no ESRP document (some end in figures: table rows)."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(10)) for _ in range(count)]


_BOUNDED_FILES = {
    "50 MB: a published text repeated, junk between": "text-0.txt",
    "50 MB: junk lines": "text-1.txt",
    "50 MB: no newline": "text-2.txt",
    "50 MB: 1 MB lines": "text-3.txt",
    "5,000-page junk PDF": "junk-5000-pages.pdf",
}


def _write_bounded_inputs() -> None:
    BOUNDED.mkdir(parents=True, exist_ok=True)
    size = 50 * MB
    published = (ROOT / "tests" / "data" / "published" / "vmax-000.txt").read_text(encoding="utf-8")
    junk = "\n".join(junk_lines(2000, seed=1)) + "\n"
    one_line = junk.replace("\n", " ")
    texts = (
        (published + junk) * (size // len(published + junk) + 1),
        junk * (size // len(junk) + 1),
        one_line * (size // len(one_line) + 1),
        "\n".join([(one_line * (MB // len(one_line) + 1))[: MB - 1]] * 50),
    )
    for text, name in zip(texts, _BOUNDED_FILES.values(), strict=False):
        (BOUNDED / name).write_text(text[:size], encoding="utf-8")
    pdf = text_pdf([junk_lines(40, seed=page) for page in range(5000)])
    (BOUNDED / _BOUNDED_FILES["5,000-page junk PDF"]).write_bytes(pdf)


def _one_run(args: list[str]) -> dict[str, float | int]:
    """Wall time, CPU time and peak RSS of one child process (os.wait4: that child's own usage)."""
    start = time.perf_counter()
    quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_WRONLY, 0) for fd in (1, 2)]
    pid = os.posix_spawn(args[0], args, dict(os.environ), file_actions=quiet)
    _pid, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024),
        "exit": os.waitstatus_to_exitcode(status),
    }


def bounded() -> dict[str, object]:
    exe = str(Path(sys.executable).with_name("esrp-report"))
    figures: dict[str, object] = {}
    # Written by a child: a child's peak RSS counts the pages of the process that spawned it (up
    # to its exec), so this one must not hold 200 MB of generated text.
    subprocess.run([sys.executable, "-m", "benchmarks.audit_document", "--write-bounded-inputs"], check=True)
    for name, file in _BOUNDED_FILES.items():
        path = BOUNDED / file
        run = _one_run([exe, "audit", str(path), "--json"])
        figures[name] = run | {"bytes": path.stat().st_size}
        print(
            f"audit {name}: {run['wall_s']} s wall, {run['cpu_s']} s CPU, "
            f"peak RSS {run['peak_rss_mb']} MB, exit {run['exit']} (target: 50 MB of text < 30 s)"
        )
    return figures


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
    figures["bounded cost"] = bounded()
    return figures


if __name__ == "__main__":
    if "--write-bounded-inputs" in sys.argv[1:]:
        _write_bounded_inputs()
    elif "--bounded" in sys.argv[1:]:
        bounded()
    else:
        main()
