"""A document's text as other tools give it, for the audit's tests: a PDF viewer's copy-paste
re-wraps every line, another extractor collapses the column spacing.

Not part of the product: nothing under ``esrp_report/`` imports this.
"""

from __future__ import annotations

import re
import textwrap


def rewrapped(text: str, width: int) -> str:
    """Text as a viewer's copy-paste wraps it: each line wrapped at ``width`` columns, no word broken."""
    out: list[str] = []
    for line in text.splitlines():
        out.extend(textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False) or [""])
    return "\n".join(out) + "\n"


def collapsed(text: str) -> str:
    """Text whose column spacing an extractor collapsed: each run of whitespace one space."""
    return "\n".join(re.sub(r"\s+", " ", line).strip() for line in text.splitlines()) + "\n"
