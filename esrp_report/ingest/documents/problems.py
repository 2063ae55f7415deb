"""What cannot be read of a document is recorded as one of its problems, never guessed."""

from __future__ import annotations

from esrp_report import model as m
from esrp_report.model import PublishedDocument


def problem(
    doc: PublishedDocument, message: str, location: str, severity: str = "warning", lost: int = 0
) -> None:
    """Record something of ``doc`` that could not be read (a warning unless told)."""
    doc.problems.append(m.Problem(doc.source, message, location=location, severity=severity, lost=lost))
