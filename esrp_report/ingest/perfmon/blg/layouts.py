"""What the two sample layouts share: the layout of a sample record, built while its sub-records
are parsed (``perflib.py``, ``raw_counters.py``) and reused while the structure holds.

A layout is the record's structure (every byte except counter data and clocks, as masked 8-byte
words) and, per counter column, the slots where its raw values sit: N, D (a base or a clock), B
(a multi count) and F (a frequency). A slot is a byte range of the record, or a constant (the
raw-counter layout's time base, from record 32). Columns cooked by one formula with the same
clocks form a group. How the engines read the slots is ``decoding.py``'s business.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from esrp_report.ingest.perfmon.counter_types import NOT_COOKED, Formula, type_name
from esrp_report.model import Problem


class _Malformed(Exception):
    pass


class _Unsupported(_Malformed):
    """A sample whose layout this reader does not know (not damage: nothing says it is broken)."""


@dataclass(frozen=True)
class _SubRecord:
    """One sub-record of a sample record, as the dispatcher (``samples.py``) hands it to its layout."""

    position: int  # record byte of its tag
    length: int  # its length, tag and length field included
    ordinal: int  # its number in the record (a raw counter's is its record-32 entry's)
    where: str  # the sample record's place in the file


class _Notes:
    """Problems of the layouts that are told once per key (a counter type not cooked, a missing
    title index, ...), in the order they are met."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[Problem] = []
        self._reported: set[tuple[str, ...]] = set()

    def once(self, key: tuple[str, ...], message: str, location: str, *, severity: str = "warning") -> None:
        if key not in self._reported:
            self._reported.add(key)
            self.problems.append(Problem(self.source, message, location=location, severity=severity))

    def not_cooked(self, obj: str, counter: str, code: int, where: str) -> None:
        self.once(
            ("type", obj, counter),
            f"{obj}\\{counter}: counter type {type_name(code)} is not cooked by this reader "
            f"({NOT_COOKED.get(code, 'unknown type')}); its raw values are kept, the displayed "
            "value is left empty",
            where,
        )


@dataclass
class _Slot:
    position: int  # byte offset in the record; the value itself when width is 0
    width: int  # 4 or 8; 0 = a constant (a raw-counter layout's time base, from record 32)


@dataclass
class _Layout:
    length: int
    words: np.ndarray[Any, np.dtype[np.int64]]  # 8-byte words holding structure
    masks: np.ndarray[Any, np.dtype[np.uint64]]
    template: np.ndarray[Any, np.dtype[np.uint64]]
    slots: list[_Slot]
    columns: np.ndarray[Any, np.dtype[np.int64]]  # global column of each layout column
    first: np.ndarray[Any, np.dtype[np.int64]]  # slot of N per layout column
    second: np.ndarray[Any, np.dtype[np.int64]]  # slot of D, -1 none
    base: np.ndarray[Any, np.dtype[np.int64]]  # slot of B (multi count), -1 none
    frequency: np.ndarray[Any, np.dtype[np.int64]]  # slot of F, -1 none, -2 = 10,000,000
    groups: list[_Group]  # layout columns cooked together
    uncooked: np.ndarray[Any, np.dtype[np.int64]]  # layout columns of types not cooked here
    failed: list[tuple[int, int]] = field(
        default_factory=list
    )  # (column or -1 for a wildcard listing none, PDH status)
    skipped: list[tuple[int, int]] = field(default_factory=list)  # (sub-record kind, bytes) not read


@dataclass
class _Group:
    """Layout columns with one formula and the same clocks: a clock is one slot for all of them."""

    formula: Formula
    members: np.ndarray[Any, np.dtype[np.int64]]  # layout columns
    clock: int  # slot of a shared D (a time), or -1 when each column has its own (a base)
    frequency: int  # slot of F, -1 none, -2 = 10,000,000


@dataclass
class _Builder:
    """Collects a layout's variable byte ranges, value slots and columns while a record is parsed."""

    variable: list[tuple[int, int]] = field(default_factory=list)
    slots: list[_Slot] = field(default_factory=list)
    slot_index: dict[tuple[int, int], int] = field(default_factory=dict)
    columns: list[int] = field(default_factory=list)
    first: list[int] = field(default_factory=list)
    second: list[int] = field(default_factory=list)
    base: list[int] = field(default_factory=list)
    frequency: list[int] = field(default_factory=list)
    formulas: list[Formula | None] = field(default_factory=list)
    shared_clock: list[bool] = field(default_factory=list)
    failed: list[tuple[int, int]] = field(default_factory=list)  # (column, PDH status) without a value
    skipped: list[tuple[int, int]] = field(default_factory=list)  # (kind, bytes) of sub-records not read
    # How often each (machine, object, instance, counter) has come so far in this record.
    occurrences: dict[tuple[str, str, str | None, str], int] = field(default_factory=dict)

    def slot(self, position: int, width: int) -> int:
        key = (position, width)
        found = self.slot_index.get(key)
        if found is None:
            found = self.slot_index[key] = len(self.slots)
            self.slots.append(_Slot(position, width))
        return found

    def add(
        self,
        column: int,
        formula: Formula | None,
        *,
        first: int,
        second: int = -1,
        multi: int = -1,
        frequency: int = -1,
        shared_clock: bool = False,
    ) -> None:
        """One column, cooked by ``formula`` (None: not cooked), its values in the slots of N, D,
        B and F (-1: none; F -2: 10,000,000); ``shared_clock``: D is a clock other columns share."""
        self.columns.append(column)
        self.first.append(first)
        self.second.append(second)
        self.shared_clock.append(shared_clock)
        self.base.append(multi)
        self.frequency.append(frequency)
        self.formulas.append(formula)

    def layout(self, record: bytes) -> _Layout:
        groups: dict[tuple[Formula, int, int], list[int]] = {}
        for i, formula in enumerate(self.formulas):
            if formula is not None:
                clock = self.second[i] if self.shared_clock[i] else -1
                groups.setdefault((formula, clock, self.frequency[i]), []).append(i)
        words, masks, template = _structure(record, self.variable)
        return _Layout(
            length=len(record),
            words=words,
            masks=masks,
            template=template,
            slots=self.slots,
            columns=np.array(self.columns, dtype=np.int64),
            first=np.array(self.first, dtype=np.int64),
            second=np.array(self.second, dtype=np.int64),
            base=np.array(self.base, dtype=np.int64),
            frequency=np.array(self.frequency, dtype=np.int64),
            groups=[
                _Group(f, np.array(v, dtype=np.int64), clock, freq) for (f, clock, freq), v in groups.items()
            ],
            uncooked=np.array([i for i, f in enumerate(self.formulas) if f is None], dtype=np.int64),
            failed=self.failed,
            skipped=self.skipped,
        )


def _structure(
    record: bytes, variable: list[tuple[int, int]]
) -> tuple[
    np.ndarray[Any, np.dtype[np.int64]],
    np.ndarray[Any, np.dtype[np.uint64]],
    np.ndarray[Any, np.dtype[np.uint64]],
]:
    """The 8-byte words of a record that hold structure, their byte masks and their values."""
    stride = _stride(len(record))
    fixed = np.ones(stride, dtype=np.uint8) * 0xFF
    fixed[len(record) :] = 0
    for start, end in variable:
        fixed[start:end] = 0
    masks = fixed.view(np.uint64)
    words = np.flatnonzero(masks).astype(np.int64)
    padded = np.zeros(stride, dtype=np.uint8)
    padded[: len(record)] = np.frombuffer(record, dtype=np.uint8)
    template = padded.view(np.uint64)[words] & masks[words]
    return words, masks[words].copy(), template


def _stride(length: int) -> int:
    return (length + 7) & ~7


def numbered_instance(name: str, seen: dict[str, int]) -> str:
    """An instance name as perfmon shows a repeat within one object or wildcard: ``name``,
    ``name#1``, ``name#2``, ... (``seen`` counts the names met so far)."""
    occurrence = seen.get(name, 0)
    seen[name] = occurrence + 1
    return name if occurrence == 0 else f"{name}#{occurrence}"
