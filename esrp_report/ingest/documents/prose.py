"""Figures stated in sentences: the users of a design, the servers they are spread across and the
users per server, when one sentence states all three ("The number of users simulated was 14,000
across four servers, with 3,750 users per server"). A sentence stating fewer is not read: the
per-server figure of another sentence may count a failover load, not the same users."""

from __future__ import annotations

import re

from esrp_report.model import DocNumber, ProseUsers, PublishedDocument

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
