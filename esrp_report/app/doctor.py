"""What this installation can do: versions of the parts that matter, and whether PDF works."""

from __future__ import annotations

import ctypes
import ctypes.util
import platform
import warnings
from dataclasses import dataclass
from importlib import metadata

from esrp_report.ingest.perfmon import counter_csv


@dataclass(frozen=True)
class Component:
    """One part of the installation: its name, its version (None when it is not installed or cannot be loaded)
    and a note (how to get it, or why it did not load)."""

    name: str
    version: str | None  # None: not installed or not loadable
    note: str = ""


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _native_csv_parser() -> Component:
    if counter_csv.native_parser_available():
        return Component("native PDH-CSV parser", "built")
    return Component("native PDH-CSV parser", None, "not compiled: the PyArrow engine reads CSV logs")


def _pango_version() -> str | None:
    library = ctypes.util.find_library("pango-1.0")
    if library is None:
        return None
    try:
        pango = ctypes.CDLL(library)
    except OSError:
        return None
    pango.pango_version_string.restype = ctypes.c_char_p
    version: bytes = pango.pango_version_string()
    return version.decode()


def _pdf() -> list[Component]:
    """WeasyPrint loads Pango through cffi at import time; a missing system library shows here."""
    hint = "install the system packages: apt-get install libpango-1.0-0 libpangoft2-1.0-0"
    pango = Component("Pango", _pango_version(), "" if _pango_version() else hint)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            import weasyprint  # noqa: PLC0415 - loading it is the check: it needs system Pango
        except OSError as exc:  # the Python package is there, the system libraries are not
            return [Component("WeasyPrint", _version("weasyprint"), f"cannot load: {exc}"), pango]
        except ImportError:
            return [Component("WeasyPrint", None, "pip install weasyprint"), pango]
    # A missing optional library (HarfBuzz-Subset, say) is warned about once, at import.
    notes = "; ".join(sorted({str(w.message) for w in caught}))
    return [Component("WeasyPrint", weasyprint.__version__, notes), pango]


def pdf_works() -> tuple[bool, str]:
    """Render a one-line HTML page to PDF in memory, with no URL fetching at all."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # components() reports import-time warnings
        try:
            from weasyprint import HTML  # noqa: PLC0415 - may fail without system Pango
        except (ImportError, OSError) as exc:
            return False, str(exc)

    def refuse(url: str, timeout: int = 10, ssl_context: object = None) -> dict[str, object]:
        raise ValueError(f"no fetching during the PDF check: {url}")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            pdf = HTML(string="<p>esrp-report</p>", url_fetcher=refuse).write_pdf()
        except Exception as exc:  # any failure at all means PDF output does not work here
            return False, f"{type(exc).__name__}: {exc}"
    # Warnings (e.g. a missing optional font library) are the user's to know, not to hide.
    notes = "; ".join(sorted({str(w.message) for w in caught}))
    detail = f"{len(pdf or b'')} bytes" + (f"; warnings: {notes}" if notes else "")
    return (pdf is not None and pdf.startswith(b"%PDF")), detail


def components() -> list[Component]:
    """The parts that matter and their versions: Python, esrp-report, Polars, PyArrow, lxml, the native CSV
    parser and what PDF output needs."""
    return [
        Component("Python", platform.python_version()),
        Component("esrp-report", _version("esrp-report")),
        Component("Polars", _version("polars")),
        Component("PyArrow", _version("pyarrow")),
        Component("lxml", _version("lxml")),
        _native_csv_parser(),
        *_pdf(),
    ]
