"""A sizing result for people (rich tables) and for programs (JSON, full precision)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from esrp_report.analysis.sizing import GROUPS, spec_values
from esrp_report.model.numbers import fmt_number
from esrp_report.model.sizing import INPUTS, UNITS, SizingResult


def sizing_payload(result: SizingResult) -> dict[str, Any]:
    """JSON: inputs with units, the units' meaning, every figure (value at full precision, unit,
    formula, formula worked with the numbers) and the notes. Schema in docs/sizing.md."""
    return {
        "inputs": {
            name: {"value": value, "unit": INPUTS[name][0], "meaning": INPUTS[name][1]}
            for name, value in spec_values(result.spec).items()
        },
        "units": dict(UNITS),
        "figures": {
            f.key: {
                "group": f.group,
                "label": f.label,
                "value": f.value,
                "unit": f.unit,
                "formula": f.formula,
                "worked": f.worked,
            }
            for f in result.figures
        },
        "notes": list(result.notes),
    }


def _shown(value: float, decimals: int = 2) -> str:
    text = fmt_number(value, decimals, thousands=True)
    return text.rstrip("0").rstrip(".") if "." in text else text


def sizing_tables(result: SizingResult) -> list[Table]:
    """The inputs, then one table per group of figures (mailboxes, space per mailbox, capacity,
    logs, performance, memory)."""
    inputs = Table(title="Sizing inputs", title_justify="left")
    for column in ("Input", "Value", "Unit"):
        inputs.add_column(column, justify="right" if column == "Value" else "left")
    for name, value in spec_values(result.spec).items():
        shown = "—" if value is None else str(value).lower() if isinstance(value, bool) else _shown(value, 4)
        inputs.add_row(name, shown, INPUTS[name][0])
    tables = [inputs]
    for group, title in GROUPS.items():
        figures = [f for f in result.figures if f.group == group]
        if not figures:
            continue
        table = Table(title=title, title_justify="left")
        for column in ("Figure", "Value", "Unit", "Formula, worked"):
            table.add_column(column, justify="right" if column == "Value" else "left", overflow="fold")
        for f in figures:
            table.add_row(f.label, _shown(f.value), f.unit, f.worked)
        tables.append(table)
    return tables
