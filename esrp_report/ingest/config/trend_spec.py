"""Published trend tables to check a comparison against (TOML; docs/compare.md).

A file holds one table at its top level, or several under ``[tables.KEY]``::

    [tables.table-04]
    title = "Table 4 ..."                       # optional
    columns = ["50 msg", "150 msg", "300 msg"]  # optional; one per compared run, in order
    [tables.table-04.rows]                      # figure key -> the printed cells
    total = ["100% [575 IOPS]", "266% [1530 IOPS]", "480% [2762 IOPS]"]

Cells are kept as printed: ``"223% [5.2 msec]"``; in an ``equated`` table (004 Table 3)
``"1018 IOPS [113%]"``, ``"6.8 msec"`` or ``"unchanged"``. Other keys of a table are ignored (the
sample generator keeps its own there).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from esrp_report.files.safe import read_toml_file
from esrp_report.model import DocNumber
from esrp_report.model.errors import InputError
from esrp_report.model.trends import FIGURE, LATENCIES, PublishedCell, PublishedTable

_PERCENT_FIRST = re.compile(r"^(?P<pct>[\d.,]+)\s*%\s*\[\s*(?P<abs>[\d.,]+)\s*(?P<unit>[^\]]*)\]$")
_ABSOLUTE_FIRST = re.compile(r"^(?P<abs>[\d.,]+)\s*(?P<unit>[A-Za-z/ ]*?)\s*\[\s*(?P<pct>[\d.,]+)\s*%\s*\]$")
_PLAIN = re.compile(r"^(?P<abs>[\d.,]+)\s*(?P<unit>[A-Za-z/ ]*)$")
EQUATED_KEYS = ("achieved", "planned", *LATENCIES, *(f"{k}_equated" for k in LATENCIES))


class TrendSpecError(InputError):
    """A published trend table file (TOML) that cannot be read or holds no usable table."""


def parse_cell(text: str) -> PublishedCell | None:
    """A printed cell, or None when it is none of the known shapes."""
    cleaned = " ".join(text.replace("<br>", " ").split())
    if cleaned.casefold() == "unchanged":
        return PublishedCell(cleaned, None, None, unchanged=True)
    for pattern in (_PERCENT_FIRST, _ABSOLUTE_FIRST):
        match = pattern.match(cleaned)
        if match:
            absolute, percent = DocNumber.parse(match["abs"]), DocNumber.parse(match["pct"])
            if absolute is None or percent is None:
                return None
            return PublishedCell(cleaned, absolute, percent)
    match = _PLAIN.match(cleaned)
    if match:
        absolute = DocNumber.parse(match["abs"])
        return None if absolute is None else PublishedCell(cleaned, absolute, None)
    return None


def load_trend_table(path: Path, key: str | None = None) -> PublishedTable:
    """The table ``key`` of the file (the only one when ``key`` is None)."""
    data = read_toml_file(
        path, what="published table", error=TrendSpecError, expected="TOML (docs/compare.md)"
    )
    listed = data.get("tables")
    tables: dict[str, Any] = listed if isinstance(listed, dict) else {}
    if not tables:
        if "rows" not in data and "equated" not in data:
            raise TrendSpecError(
                path, "no table", expected="[rows] or [equated] at the top level, or [tables.KEY] tables"
            )
        tables = {key or path.stem: data}
    usable = {
        name: t for name, t in tables.items() if isinstance(t, dict) and ("rows" in t or "equated" in t)
    }
    if key is None:
        if len(usable) != 1:
            raise TrendSpecError(
                path,
                f"the file holds {len(usable)} tables; choose one with --table",
                expected="one of " + ", ".join(usable),
            )
        key = next(iter(usable))
    if key not in usable:
        raise TrendSpecError(path, f"no table {key!r}", expected="one of " + ", ".join(usable))
    return _table(path, key, usable[key])


def _strings(path: Path, where: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TrendSpecError(
            path, f"{where} must be a list of strings (the cells as printed)", location=where
        )
    return list(value)


def _cells(path: Path, where: str, value: Any, *, equated: bool) -> tuple[PublishedCell, ...]:
    cells = []
    for position, text in enumerate(_strings(path, where, value), start=1):
        cell = parse_cell(text)
        if cell is None or (not equated and (cell.percent is None or cell.absolute is None)):
            shape = "'NN% [value unit]'" if not equated else "'value unit [NN%]', 'value unit' or 'unchanged'"
            raise TrendSpecError(
                path,
                f"cell {position} is not a printed trend cell",
                location=where,
                expected=shape,
                found=text,
            )
        cells.append(cell)
    return tuple(cells)


def _table(path: Path, key: str, table: dict[str, Any]) -> PublishedTable:
    prefix = f"[tables.{key}]" if key != path.stem else ""
    rows: dict[str, tuple[PublishedCell, ...]] = {}
    for name, value in (table.get("rows") or {}).items():
        where = f"{prefix}.rows.{name}".lstrip(".")
        if name not in FIGURE:
            raise TrendSpecError(
                path, f"unknown row {name!r}", location=where, expected="one of " + ", ".join(FIGURE)
            )
        rows[name] = _cells(path, where, value, equated=False)
    equated: dict[str, tuple[PublishedCell, ...]] = {}
    for name, value in (table.get("equated") or {}).items():
        where = f"{prefix}.equated.{name}".lstrip(".")
        if name not in EQUATED_KEYS:
            raise TrendSpecError(
                path,
                f"unknown equated row {name!r}",
                location=where,
                expected="one of " + ", ".join(EQUATED_KEYS),
            )
        equated[name] = _cells(path, where, value, equated=True)
    columns = tuple(_strings(path, f"{prefix}.columns".lstrip("."), table.get("columns", [])))
    result = PublishedTable(
        key=key,
        title=str(table.get("title", key)),
        columns=columns,
        rows=rows,
        equated=equated,
        source=str(path),
    )
    if result.width == 0:
        raise TrendSpecError(
            path, "the table has no cells", location=prefix or None, expected="rows or equated rows"
        )
    if result.width < 0:
        raise TrendSpecError(
            path, "rows of different lengths", location=prefix or None, expected="one cell per run"
        )
    if columns and len(columns) != result.width:
        raise TrendSpecError(
            path,
            f"{len(columns)} column names for {result.width} cells per row",
            location=prefix or None,
            expected="one name per cell",
        )
    return result
