"""Figures stated in sentences: the users of a design, the servers they are spread across and the
users per server, when one sentence states all three ("The number of users simulated was 14,000
across four servers, with 3,750 users per server"). A sentence stating fewer is not read: the
per-server figure of another sentence may count a failover load, not the same users. And a
sentence's figure that restates a fact of the tables ("supporting 100,000 users", "a 2 GB mailbox
size"), by the words ``vocabulary/prose.toml`` binds to that fact."""

from __future__ import annotations

import re
from functools import cache

from esrp_report.model import DocNumber, ProseFact, ProseUsers, PublishedDocument
from esrp_report.model.data import package_toml

# A sentence ends at a full stop followed by a space and a capital (not a decimal point).
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_ACROSS = re.compile(
    r"(?P<total>\d{1,3}(?:,\d{3})+|\d+)\s+(?:(?:active\s+)?(?:users|mailboxes|user\s+mailboxes)\s+)?"
    r"(?:[a-z]+\s+){0,5}?across\s+(?P<servers>\w+)\s+(?:mailbox\s+|exchange\s+)?servers\b",
    re.IGNORECASE,
)
_PER_SERVER = re.compile(
    r"(?P<per>\d{1,3}(?:,\d{3})+|\d+)\s+(?:active\s+)?(?:users|mailboxes|user\s+mailboxes)\s+"
    r"(?:per|on\s+each|for\s+each)\s+(?:mailbox\s+)?server\b",
    re.IGNORECASE,
)
_WORDS = {
    word: n
    for n, word in enumerate(
        (
            *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
            *("eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen"),
            *("eighteen", "nineteen", "twenty"),
        )
    )
}
_MAX_PROSE_CHARS = 4000  # a longer line is not searched (every line of a 50 MB file passes here)


def prose_users(doc: PublishedDocument, in_report: set[int]) -> None:
    """Every sentence outside the appendix stating users, servers and users per server."""
    for index, line in enumerate(doc.lines):
        text = line.text
        if (
            index in in_report
            or line.cells is not None
            or "across" not in text  # most lines are ruled out before a regex runs
            or len(text) > _MAX_PROSE_CHARS
        ):
            continue
        for sentence in _SENTENCE.split(text):
            across, per = _ACROSS.search(sentence), _PER_SERVER.search(sentence)
            if across is None or per is None or across.start("total") == per.start("per"):
                continue
            servers = _count(across.group("servers"))
            total, per_server = DocNumber.parse(across.group("total")), DocNumber.parse(per.group("per"))
            if servers is None or total is None or per_server is None:
                continue
            doc.prose_users.append(
                ProseUsers(total, servers, across.group("servers"), per_server, line.no, sentence.strip())
            )


def _count(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    return _WORDS.get(word.casefold())


@cache
def _restatements() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(fact key, pattern) of ``vocabulary/prose.toml``; a pattern without its figure group is
    a ``ValueError`` naming its entry, not a pattern that never reads anything."""
    out = []
    entries = package_toml("esrp_report.ingest.documents", "vocabulary/prose.toml").get("restates", [])
    for index, entry in enumerate(entries):
        pattern = re.compile(entry["pattern"], re.IGNORECASE)
        if "n" not in pattern.groupindex:
            raise ValueError(f"vocabulary/prose.toml restates[{index}]: the pattern has no (?P<n>...) group")
        out.append((str(entry["fact"]), pattern))
    return tuple(out)


def prose_facts(doc: PublishedDocument, in_report: set[int]) -> None:
    """Every sentence's figure outside the appendix that restates a fact of the tables, for a
    fact the document's tables state (a sentence with nothing to be held to is not kept)."""
    wanted = [(key, pattern) for key, pattern in _restatements() if key in doc.facts]
    if not wanted:
        return
    for index, line in enumerate(doc.lines):
        text = line.text
        if index in in_report or line.cells is not None or len(text) > _MAX_PROSE_CHARS:
            continue
        for sentence in _SENTENCE.split(text):
            for key, pattern in wanted:
                for match in pattern.finditer(sentence):
                    figure = DocNumber.parse(match.group("n"))
                    if figure is None:
                        continue
                    unit = (match.groupdict().get("unit") or "").upper()
                    doc.prose_facts.append(
                        ProseFact(key, figure.at(line.no, 0), unit, line.no, sentence.strip())
                    )
