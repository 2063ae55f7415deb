"""Worked formulas, "Name = expression = ... = value unit", on a line of their own (LaTeX and
Markdown markup removed); their arithmetic is checked by ``analysis/formulas.py``."""

from __future__ import annotations

import re

from esrp_report.ingest.documents.cells import strip_markup
from esrp_report.model import Formula, PublishedDocument


def formulas(doc: PublishedDocument, in_report: set[int]) -> None:
    """Lines outside the appendix's reports that are not table rows: "Name = expression = ... =
    value unit"."""
    for i, line in enumerate(doc.lines):
        if i in in_report or line.cells or "=" not in line.text or len(line.text) > 400 or "://" in line.text:
            continue
        text = _latex_to_text(line.raw)
        parts = [p.strip() for p in text.split("=")]
        if len(parts) < 2 or not parts[0] or not re.search(r"\d", parts[-1]):
            continue
        name = parts[0].strip(" *$")
        if len(name) > 80 or not re.search(r"[A-Za-z]", name):
            continue
        doc.formulas.append(Formula(name, parts[1:], line.no))


def _latex_to_text(raw: str) -> str:
    text = raw.strip().strip("$").strip()
    text = re.sub(r"\\text\{([^}]*)\}", r"\1", text)
    text = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"(\1) / (\2)", text)
    text = text.replace("\\ ", " ").replace("\\&", "&").replace("\\*", "*").replace("\\", "")
    text = text.replace("*", " * ").replace("{", "").replace("}", "")
    return " ".join(strip_markup(text).split())
