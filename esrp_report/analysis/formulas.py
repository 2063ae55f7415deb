"""Worked formulas as printed in a document: ``Name = symbols = figures = result unit``.

Each formula's last side must be a plain figure with an optional unit; the side before it that
holds only figures is evaluated (units KB/MB/GB/TB understood, decimal first as capacity
planning papers use them, binary second) and must give the printed result after rounding — to
nearest, or up, since sizing rounds up. A symbolic side is lined up term by term with the figures
beside it, and each term that names an earlier formula must carry that formula's result: that is
how a figure put in the place of another quantity is caught. Pure functions, no I/O.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from esrp_report.model import Formula
from esrp_report.model.findings import ERROR, Finding

_RESULT = re.compile(
    r"^\(?\s*(?P<value>[\d,]*\.?\d+)\s*(?P<unit>KB|MB|GB|TB|IOPS|IOps)?\s*\)?$", re.IGNORECASE
)
_UNIT_MB = {"kb": 1e-3, "mb": 1.0, "gb": 1e3, "tb": 1e6}
_UNIT_MB_BINARY = {"kb": 1 / 1024, "mb": 1.0, "gb": 1024.0, "tb": 1024.0**2}
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


@dataclass(frozen=True)
class Quantity:
    """A figure of a formula: its value, in MB when ``unit`` is "mb" (a size), else a plain number."""

    value: float
    unit: str | None  # "mb" for sizes (stored in MB), None for plain numbers and IOPS


def parse_result(text: str) -> tuple[float, str | None, int] | None:
    """'8098GB' -> (8098, 'gb', 0 decimals); None when the side is not a plain figure."""
    match = _RESULT.match(text.strip().rstrip("*").strip())
    if match is None:
        return None
    raw = match.group("value")
    decimals = len(raw.split(".", 1)[1]) if "." in raw else 0
    unit = (match.group("unit") or "").casefold() or None
    return float(raw.replace(",", "")), unit, decimals


def evaluate(text: str, binary: bool = False) -> Quantity | None:
    """An arithmetic side with units ('2 GB + (6900 * 12 MB)'); words are annotations and dropped.
    None when the side holds a name that is not a figure."""
    sizes = _UNIT_MB_BINARY if binary else _UNIT_MB
    has_size = False

    def unit(match: re.Match[str]) -> str:
        nonlocal has_size
        has_size = True
        return f"({match.group(1)}*{sizes[match.group(2).casefold()]!r})"

    expr = text.replace(",", "").replace("×", "*").replace("x ", "* ")
    expr = re.sub(r"(\d+(?:\.\d+)?)\s*(KB|MB|GB|TB)\b", unit, expr, flags=re.IGNORECASE)
    expr = re.sub(
        r"\b(IOPS|IOps|messages per day|messages|days|users|per day)\b", "", expr, flags=re.IGNORECASE
    )
    if re.search(r"[A-Za-z#_%]", expr):
        return None
    try:
        value = _eval(ast.parse(expr.strip() or "x", mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, TypeError, RecursionError):
        return None
    return Quantity(value, "mb" if has_size else None)


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return float(_OPS[type(node.op)](_eval(node.left), _eval(node.right)))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand)
    raise ValueError("not arithmetic")


def _rounds_to(value: float, printed: float, decimals: int) -> bool:
    scale = 10.0**decimals
    nearest = abs(value - printed) <= 0.5 / scale + 1e-9 * max(1.0, abs(printed))
    up = math.ceil(value * scale - 1e-9) / scale == printed
    return nearest or up


def _split_terms(text: str) -> tuple[list[str], list[str]]:
    """Top-level terms and the operators between them: 'a + (b * c) - d' -> [a, (b * c), d], [+, -]."""
    text = _unwrap(text.strip())
    terms: list[str] = []
    ops: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if depth == 0 and ch in "+-*/" and current and "".join(current).strip():
            terms.append("".join(current).strip())
            ops.append(ch)
            current = []
            continue
        current.append(ch)
    if "".join(current).strip():
        terms.append("".join(current).strip())
    return [t.strip("() ") for t in terms], ops


def _unwrap(text: str) -> str:
    """'(a * b)' -> 'a * b' when the outer parentheses enclose the whole side."""
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for index, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and index < len(text) - 1:
                return text
        text = text[1:-1].strip()
    return text


def _resolve(term: str, results: dict[str, tuple[float, int]]) -> list[tuple[str, float, int]]:
    """Earlier formulas a symbolic term names: exact names first, then names it begins."""
    key = " ".join(term.casefold().split())
    exact = [(name, v, line) for name, (v, line) in results.items() if name.casefold() == key]
    if exact:
        return exact
    starts = [(name, v, line) for name, (v, line) in results.items() if name.casefold().startswith(key + " ")]
    if starts:
        return starts
    return [
        (name, v, line)
        for name, (v, line) in results.items()
        if SequenceMatcher(None, key, name.casefold()).ratio() > 0.85
    ]


def check_formulas(formulas: list[Formula], facts: list[tuple[str, str, int]]) -> list[Finding]:
    """Check the document's worked formulas: each result against its evaluated figures, each symbol against
    the earlier formula it names, and the per-database rows of ``facts`` (key, text, line) against the worked
    totals."""
    findings: list[Finding] = []
    results: dict[str, tuple[float, int]] = {}  # name -> (value as printed, line)
    units: dict[str, str | None] = {}
    for formula in formulas:
        result = parse_result(formula.sides[-1])
        if result is None or len(formula.sides) < 2:
            continue
        printed, printed_unit, decimals = result
        numeric = next((s for s in reversed(formula.sides[:-1]) if evaluate(s) is not None), None)
        symbolic = [s for s in formula.sides[:-1] if evaluate(s) is None]
        where = {"section": "Sizing", "row": formula.name, "line": formula.line}
        if numeric is not None:
            findings.extend(
                _check_value(
                    formula,
                    numeric=numeric,
                    printed=printed,
                    printed_unit=printed_unit,
                    decimals=decimals,
                    where=where,
                )
            )
        if symbolic:
            findings.extend(
                _check_symbols(
                    formula,
                    symbolic,
                    numeric,
                    results=results,
                    units=units,
                    printed=printed,
                    printed_unit=printed_unit,
                    decimals=decimals,
                    where=where,
                )
            )
        results[formula.name] = (printed, formula.line)
        units[formula.name] = printed_unit
    if formulas:
        findings.extend(_per_database(results, facts, formulas[0].line))
    return findings


# A sizing summary's per-database rows and the worked totals they divide.
_PER_DATABASE = {
    "database_size": ("mailbox db size", "database size"),
    "log_files_size": ("log files capacity", "log capacity"),
    "search_catalog": ("search catalog",),
}


def _per_database(
    results: dict[str, tuple[float, int]], facts: list[tuple[str, str, int]], after: int
) -> list[Finding]:
    """'Log files size: 41 GB per database' against the worked total / number of databases."""
    later = [(key, text, line) for key, text, line in facts if line > after]
    counts = [(text, line) for key, text, line in later if key == "databases"]
    if not counts:
        return []
    match = re.match(r"\s*(\d+)", counts[-1][0])
    if match is None:
        return []
    databases = int(match.group(1))
    findings: list[Finding] = []
    for key, text, line in later:
        if key not in _PER_DATABASE or not re.search(r"per database|each", text, re.IGNORECASE):
            continue
        figure = re.match(r"\s*([\d,]*\.?\d+)\s*(KB|MB|GB|TB)?", text, re.IGNORECASE)
        total = next(
            (
                (name, v, at)
                for name, (v, at) in results.items()
                if any(w in name.casefold() for w in _PER_DATABASE[key])
            ),
            None,
        )
        if figure is None or total is None:
            continue
        printed = float(figure.group(1).replace(",", ""))
        name, value, at = total
        expected = value / databases
        if _rounds_to(expected, printed, 0):
            continue
        hint = ""
        daily = next((v for n, (v, _a) in results.items() if "daily logs" in n.casefold()), None)
        if key == "log_files_size" and daily and _rounds_to(daily / databases / 1000, printed, 0):
            hint = (
                f"; {text.split()[0]} {figure.group(2) or ''} is one day of logs ({daily:,.0f} / {databases})"
            )
        findings.append(
            Finding(
                ERROR,
                "formula.per_database",
                f"{text!r}: {name} {value:,g} (line {at}) over {databases} databases "
                f"is {expected:,.1f}{hint}",
                section="Sizing summary",
                row=key.replace("_", " "),
                line=line,
                printed=text,
                expected=f"{expected:,.1f}",
                derivation=f"{name} / number of databases ({databases}, line {counts[-1][1]})",
                relative_difference=(printed - expected) / expected if expected else None,
            )
        )
    return findings


def _check_value(
    formula: Formula,
    *,
    numeric: str,
    printed: float,
    printed_unit: str | None,
    decimals: int,
    where: dict[str, object],
) -> list[Finding]:
    for binary in (False, True):
        quantity = evaluate(numeric, binary)
        if quantity is None:
            return []
        scales = [1.0]
        if quantity.unit == "mb" and printed_unit in _UNIT_MB:
            scales = [1 / (_UNIT_MB_BINARY if binary else _UNIT_MB)[printed_unit]]
        elif quantity.unit is None and printed_unit in _UNIT_MB:
            scales = [1.0, 1e-3, 1 / 1024]  # a count of 1 MB log files printed in GB
        if any(_rounds_to(quantity.value * s, printed, decimals) for s in scales):
            return []
    quantity = evaluate(numeric)
    assert quantity is not None
    shown = quantity.value / (
        _UNIT_MB[printed_unit] if quantity.unit == "mb" and printed_unit in _UNIT_MB else 1
    )
    return [
        Finding(
            ERROR,
            "formula.arithmetic",
            f"{formula.name}: {numeric} gives {shown:,.{max(decimals, 1)}f}, printed {formula.sides[-1]}",
            printed=formula.sides[-1],
            expected=f"{shown:,.{max(decimals, 1)}f}",
            derivation=numeric,
            relative_difference=(printed - shown) / shown if shown else None,
            **where,  # type: ignore[arg-type]
        )
    ]


def _check_symbols(
    formula: Formula,
    symbolic: list[str],
    numeric: str | None,
    *,
    results: dict[str, tuple[float, int]],
    units: dict[str, str | None],
    printed: float,
    printed_unit: str | None,
    decimals: int,
    where: dict[str, object],
) -> list[Finding]:
    findings: list[Finding] = []
    for side in symbolic:
        terms, ops = _split_terms(side)
        if numeric is not None:
            figures, figure_ops = _split_terms(numeric)
            if ops == figure_ops and len(terms) == len(figures):
                for term, figure in zip(terms, figures, strict=True):
                    named = _resolve(term, results)
                    value = evaluate(figure)
                    if not named or value is None or value.unit is not None:
                        continue
                    if any(abs(v - value.value) <= 0.5 + 1e-9 for _n, v, _l in named):
                        continue
                    name, v, line = named[0]
                    fixed = evaluate(numeric.replace(figure, f"{v:g}", 1))
                    fixed_text = f"; with {v:g} the result is {fixed.value:,.0f}" if fixed else ""
                    findings.append(
                        Finding(
                            ERROR,
                            "formula.substitution",
                            f"{formula.name}: the formula takes {term!r}, which line {line} gives as {v:g} "
                            f"({name}), but the figures use {figure}{fixed_text}",
                            printed=f"{figure} (result {formula.sides[-1]})",
                            expected=f"{v:g}" + (f" (result {fixed.value:,.0f})" if fixed else ""),
                            derivation=side,
                            relative_difference=(value.value - v) / v if v else None,
                            **where,  # type: ignore[arg-type]
                        )
                    )
        elif printed_unit in _UNIT_MB and len(terms) == 2 and ops == ["*"]:
            # 'Search Catalog = (0.10 * Mailbox DB size) = 659 MB': the unit follows the named size.
            factor = evaluate(terms[0])
            named = _resolve(terms[1], results)
            if factor is None or not named:
                continue
            name, v, line = named[0]
            named_unit = units.get(name)
            if named_unit not in _UNIT_MB:
                continue
            expected = factor.value * v
            if named_unit and named_unit != printed_unit and _rounds_to(expected, printed, decimals):
                findings.append(
                    Finding(
                        ERROR,
                        "formula.unit",
                        f"{formula.name}: {factor.value:g} x {name} "
                        f"({v:g} {named_unit.upper()}, line {line}) is "
                        f"{expected:g} {named_unit.upper()}; printed {formula.sides[-1]}",
                        printed=formula.sides[-1],
                        expected=f"{expected:g} {named_unit.upper()}",
                        derivation=side,
                        relative_difference=None,
                        **where,  # type: ignore[arg-type]
                    )
                )
    return findings
