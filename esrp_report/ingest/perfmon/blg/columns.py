"""The counter columns of a log: one per (machine, object, instance, counter) met in its samples,
numbered in order of first appearance, and the ``--counters`` patterns that choose them."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass

from esrp_report.ingest.perfmon.counter_types import KNOWN, type_name


@dataclass(frozen=True)
class BlgColumn:
    """One displayed counter of one instance."""

    index: int
    path: str
    machine: str
    object: str
    instance: str | None
    counter: str
    type_code: int
    scale: int
    cooked: bool  # False: the type is not cooked here; raw values are kept

    @property
    def type_name(self) -> str:
        return type_name(self.type_code)


class _Columns:
    """Every counter column seen so far, numbered in order of first appearance."""

    def __init__(self, selector: Selector) -> None:
        self.selector = selector
        self.by_key: dict[tuple[str, str, str | None, str, int], int] = {}
        self.list: list[BlgColumn] = []
        self.unselected: set[tuple[str, str, str | None, str, int]] = set()

    def column(self, key: tuple[str, str, str | None, str, int], type_code: int, scale: int) -> int | None:
        """The column of (machine, object, instance, counter, occurrence); None when not selected."""
        machine, obj, instance, counter, _occurrence = key
        found = self.by_key.get(key)
        if found is not None:
            return found
        if key in self.unselected:
            return None
        path = f"\\\\{machine}\\{obj}" + (f"({instance})" if instance is not None else "") + f"\\{counter}"
        if not self.selector.wants(path):
            self.unselected.add(key)
            return None
        index = len(self.list)
        cooked = type_code in KNOWN
        self.list.append(BlgColumn(index, path, machine, obj, instance, counter, type_code, scale, cooked))
        self.by_key[key] = index
        return index


class Selector:
    """``--counters`` patterns: perfmon paths with ``*`` and ``?``; the machine part is optional."""

    def __init__(self, patterns: Sequence[str] | None) -> None:
        self.patterns = [self._compile(p) for p in patterns or []]

    @staticmethod
    def _compile(pattern: str) -> re.Pattern[str]:
        text = pattern.strip()
        if not text.startswith("\\\\"):
            text = "\\\\*" + (text if text.startswith("\\") else "\\" + text)
        return re.compile(fnmatch.translate(text.replace("[", "[[]")), re.IGNORECASE)

    def wants(self, path: str) -> bool:
        """Does a counter path match one of the patterns (always, when there are none)?"""
        return not self.patterns or any(p.match(path) for p in self.patterns)
