"""``jetstress.toml``: what a Jetstress report pins between its tables and its test log (the
copies of the Total I/O table, the backup read size, the log settings), checked as it is read:
an unknown table, test kind or column is a ``ValueError`` naming the key, not a relation that
silently never applies."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from esrp_report.model import TableKind, TestKind
from esrp_report.model import core as model_core
from esrp_report.model.data import package_toml


@dataclass(frozen=True)
class Copy:
    """A Total I/O column that repeats ``source``'s column instance by instance, in ``tests``."""

    column: str
    source: TableKind
    tests: frozenset[TestKind]


def _columns() -> set[str]:
    return {
        value
        for name, value in vars(model_core).items()
        if name.isupper() and name.startswith(("DB_", "LOG_", "BDM_")) and isinstance(value, str)
    }


@cache
def settings() -> dict[str, Any]:
    """The file as read."""
    return package_toml("esrp_report.audit", "jetstress.toml")


@cache
def copies() -> tuple[Copy, ...]:
    """The Total I/O table's copies of the other tables' columns."""
    known = _columns()
    out = []
    for index, entry in enumerate(settings().get("copy", [])):
        column = entry["column"]
        if column not in known:
            raise ValueError(f"jetstress.toml copy[{index}]: unknown column {column!r}")
        tests = entry.get("tests", [kind.value for kind in TestKind])
        out.append(Copy(column, TableKind(entry["source"]), frozenset(TestKind(t) for t in tests)))
    return tuple(out)


def number(section: str, key: str) -> float:
    """One figure of the file (``[backup] tolerance``)."""
    value = settings()[section][key]
    if not isinstance(value, int | float):
        raise ValueError(f"jetstress.toml [{section}] {key}: not a number")
    return float(value)


def text(section: str, key: str) -> str:
    """One string of the file (``[checksum] start``)."""
    value = settings()[section][key]
    if not isinstance(value, str):
        raise ValueError(f"jetstress.toml [{section}] {key}: not a string")
    return value
