"""Label/value facts of the simulated configuration and storage tables (mailboxes, databases per
host, IOPS per mailbox, the host server, disks, capacities), and the ESRP version the document
states."""

from __future__ import annotations

from esrp_report.ingest.documents.matching import fuzzy_key
from esrp_report.ingest.documents.vocabulary import CONVENTION, FACTS
from esrp_report.model import DocLine, PublishedDocument


def facts(doc: PublishedDocument, in_report: set[int]) -> None:
    """Label/value rows outside the appendix's reports whose label is a known fact: every one in
    ``doc.all_facts``, the first of each in ``doc.facts``."""
    for i, line in enumerate(doc.lines):
        if i in in_report or not line.cells or len(line.cells) < 2:
            continue
        key = fuzzy_key(line.cells[0], FACTS, cutoff=0.9)
        if key is None:
            continue
        doc.all_facts.append((key, line.cells[1], line.no))
        doc.facts.setdefault(key, (line.cells[1], line.no))


def stated_convention(lines: list[DocLine]) -> str | None:
    """The ESRP version the document states in its first 400 lines ("3.0", "4.0")."""
    for line in lines[:400]:
        match = CONVENTION.search(line.text)
        if match:
            return match.group(1)
    return None
