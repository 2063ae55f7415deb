"""A printed label matched against a vocabulary (``vocabulary.py``): normalised, then, failing an
exact match, by similarity, so that OCR damage ("Achieved transactlonal") still matches."""

from __future__ import annotations

import re
from collections import Counter
from difflib import SequenceMatcher
from functools import lru_cache

from esrp_report.ingest.jetstress import labels as L

_UNIT = re.compile(r"\((?:msec|ms|sec)\)")
_SLASH = re.compile(r"\s*/\s*")
_STAR_COLON = re.compile(r"[*:]")


def normalize(label: str) -> str:
    """A label as the tables are looked up by: case, spacing, units in parentheses, "*" and ":" do not
    matter."""
    label = L.normalize_label(label)
    label = _UNIT.sub("", label)
    label = _SLASH.sub("/", label)
    return " ".join(_STAR_COLON.sub(" ", label).split())


# A damaged label is matched only when its best key wins clearly: a label as close (within this
# much) to a label of another key is ambiguous, not read ("database rea?s/sec" could be reads or
# writes: "... read latency" and "... write latency" are 0.93 alike).
MARGIN = 0.05


def fuzzy_key(label: str, table: dict[str, str], cutoff: float = 0.86) -> str | None:
    """The key of the closest known label; OCR damage ("Achieved transactlonal") still matches,
    unless a label of another key is about as close (``MARGIN``): then None, not a guess."""
    text = normalize(label)
    if text in table:
        return table[text]
    return _labels_of(table).closest(text, cutoff)


# The tables asked about are module constants: found by identity, not by hashing a tuple of
# their thirty items on every call (once per table row of a document).
_BY_TABLE: dict[int, tuple[dict[str, str], _KnownLabels]] = {}


def _labels_of(table: dict[str, str]) -> _KnownLabels:
    entry = _BY_TABLE.get(id(table))
    if entry is None or entry[0] is not table:  # kept alive by the entry: its id is not reused
        if len(_BY_TABLE) >= 32:
            _BY_TABLE.clear()
        entry = (table, _known_labels(tuple(table.items())))
        _BY_TABLE[id(table)] = entry
    return entry[1]


class _KnownLabels:
    """One table's labels, with their lengths and letter counts worked out once, and the answers
    already given (a document repeats its labels; so do a fuzzer's mutants of one document)."""

    MAX_ANSWERS = 8192  # forgotten all at once past this
    MAX_TEXT = 256  # longer texts are not remembered (the lengths alone rule them out at once)

    def __init__(self, items: tuple[tuple[str, str], ...]) -> None:
        self.labels = tuple((known, key, len(known), Counter(known)) for known, key in items)
        self.answers: dict[tuple[str, float], str | None] = {}

    def closest(self, text: str, cutoff: float) -> str | None:
        remembered = len(text) <= self.MAX_TEXT
        if remembered:
            answer = self.answers.get((text, cutoff), _UNKNOWN)  # one lookup: safe if cleared meanwhile
            if answer is not _UNKNOWN:
                return answer
        best, score = None, cutoff
        rival = 0.0  # the best ratio of a label of another key than ``best``'s
        length_a = len(text)
        counts: Counter[str] | None = None
        for known, key, length_b, known_counts in self.labels:
            # SequenceMatcher(None, text, known)'s quick ratios, computed as difflib does without
            # building a matcher for every label: upper bounds of ratio(), they rule out most
            # labels on the lengths or the letter counts alone. A label is needed while it could
            # win or come within MARGIN of the winner.
            floor = score - MARGIN
            length = length_a + length_b
            if _ratio(min(length_a, length_b), length) <= floor:
                continue  # real_quick_ratio()
            if counts is None:
                counts = Counter(text)
            if _ratio(sum(min(n, known_counts[c]) for c, n in counts.items()), length) <= floor:
                continue  # quick_ratio()
            ratio = SequenceMatcher(None, text, known).ratio()
            if ratio > score:
                if best is not None and key != best:
                    rival = max(rival, score)
                best, score = key, ratio
            elif key != best:
                rival = max(rival, ratio)
        if best is not None and rival > score - MARGIN:
            best = None  # two keys about as close: ambiguous
        if remembered:
            if len(self.answers) >= self.MAX_ANSWERS:
                self.answers.clear()
            self.answers[text, cutoff] = best
        return best


_UNKNOWN = "\0not yet asked"  # not a key of any table


def _ratio(matches: int, length: int) -> float:
    """difflib's ratio of matches to the two lengths, to the same float."""
    return 2.0 * matches / length if length else 1.0


@lru_cache(maxsize=32)
def _known_labels(items: tuple[tuple[str, str], ...]) -> _KnownLabels:
    return _KnownLabels(items)
