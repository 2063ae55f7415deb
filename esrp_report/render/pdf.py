"""PDF output through WeasyPrint, with a URL fetcher that reads nothing outside allowed folders.

The HTML is self-contained, so a normal build fetches only ``data:`` URLs. Anything else a
template or a manifest might name (``file:///etc/passwd``, ``http://...``) is refused and
recorded, never read.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit


@dataclass
class PdfResult:
    pdf: bytes
    pages: int
    refused: list[str] = field(default_factory=list)  # URLs the fetcher would not read
    warnings: list[str] = field(default_factory=list)  # WeasyPrint warnings, shown to the user


def _inside(path: Path, roots: list[Path]) -> bool:
    resolved = path.resolve()
    return any(resolved.is_relative_to(root.resolve()) for root in roots)


def render_pdf(html: str, *, allowed_roots: list[Path], base_url: Path | None = None) -> PdfResult:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from weasyprint import HTML  # noqa: PLC0415 - imports Pango; keep `esrp-report check` light
        from weasyprint.urls import URLFetcher  # noqa: PLC0415

    refused: list[str] = []

    class RestrictedFetcher(URLFetcher):  # type: ignore[misc]
        def fetch(self, url: str, headers: Any = None) -> Any:
            parts = urlsplit(url)
            if parts.scheme == "data":
                return super().fetch(url, headers)
            if (
                parts.scheme == "file"
                and not parts.netloc
                and _inside(Path(unquote(parts.path)), allowed_roots)
            ):
                return super().fetch(url, headers)
            refused.append(url)
            raise ValueError(f"esrp-report refuses to fetch {url}")

    with warnings.catch_warnings(record=True) as rendering:
        warnings.simplefilter("always")
        document = HTML(
            string=html,
            base_url=str(base_url) + "/" if base_url else None,
            url_fetcher=RestrictedFetcher(allowed_protocols=("data", "file")),
        ).render()
        pdf = document.write_pdf()
    notes = sorted({str(w.message) for w in [*caught, *rendering]})
    return PdfResult(pdf=pdf, pages=len(document.pages), refused=refused, warnings=notes)
