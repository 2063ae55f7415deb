"""The latency chart as plain SVG, written directly: one polyline per instance, a dashed limit.

A document has four latency charts per server (40 for the ten-server VMAX solution), and each is
drawn twice in effect: once into SVG, once by WeasyPrint into the PDF, where every element costs a
CSS cascade and every letter a text layout. Drawn with matplotlib, a chart took about 55 ms to
draw and 130 ms to lay out; written here, about 3 ms and 85 ms, with the same lines, scales and
labels. The SVG is small and self-contained (no ids, no style sheets, presentation attributes
only), so it works inline in the screen HTML and as an image in the PDF, and it is
deterministic: the same series always give the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

import numpy as np

# The figure matplotlib drew (6.6 x 2.6 inches, in points) and its margins, kept so the charts
# keep their size and place on the page.
WIDTH, HEIGHT = 475.2, 187.2
LEFT, RIGHT, TOP, BOTTOM = 0.09 * WIDTH, 0.98 * WIDTH, 0.12 * HEIGHT, 0.80 * HEIGHT
FONT = "DejaVu Sans, Arial, Helvetica, sans-serif"
FONT_SIZE, TITLE_SIZE = 8.0, 9.6
TICK = 3.5
LIMIT_COLOUR = "#c00000"


def nice_ticks(high: float, most: int = 6) -> list[float]:
    """Ticks from 0 to the first round value at or above ``high``: steps of 1, 2, 2.5 or 5 times a
    power of ten, at most ``most`` intervals."""
    if not math.isfinite(high) or high <= 0:
        high = 1.0
    power = 10.0 ** math.floor(math.log10(high / most))
    for multiple in (1.0, 2.0, 2.5, 5.0, 10.0, 20.0):
        step = multiple * power
        if math.ceil(high / step - 1e-9) <= most:
            break
    count = math.ceil(high / step - 1e-9)
    return [i * step for i in range(count + 1)]


def _decimals(ticks: Sequence[float]) -> int:
    """Digits after the point that tell the ticks apart (0 for whole steps)."""
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    for decimals in range(7):
        if abs(round(step, decimals) - step) < step * 1e-6:
            return decimals
    return 6


def _label(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}"


def _text(
    x: float, y: float, content: str, *, anchor: str = "start", size: float = FONT_SIZE, extra: str = ""
) -> str:
    size_attr = "" if size == FONT_SIZE else f' font-size="{size:g}"'
    anchor_attr = "" if anchor == "start" else f' text-anchor="{anchor}"'
    return f'<text x="{x:.2f}" y="{y:.2f}"{anchor_attr}{size_attr}{extra}>{escape(content)}</text>'


def _polylines(xs: np.ndarray, ys: np.ndarray) -> list[str]:
    """The runs of consecutive samples with a value: a missing sample breaks the line, as
    matplotlib did, rather than being drawn as zero or bridged."""
    good = np.isfinite(ys)
    runs: list[str] = []
    start = None
    for i, ok in enumerate([*good.tolist(), False]):
        if ok and start is None:
            start = i
        elif not ok and start is not None:
            runs.append(" ".join(f"{x:.2f},{y:.2f}" for x, y in zip(xs[start:i], ys[start:i], strict=True)))
            start = None
    return runs


def latency_svg(
    minutes: np.ndarray,
    lines: Sequence[np.ndarray],
    title: str,
    limit: float | None,
    *,
    colours: Sequence[str],
    x_label: str = "minutes into the collection window",
    y_label: str = "ms",
) -> str:
    """Lines over time with the threshold across: ``minutes`` from the window's start, one array
    of values (NaN = no sample) per line."""
    peak = max((float(np.nanmax(v)) for v in lines if np.isfinite(v).any()), default=0.0)
    y_ticks = nice_ticks(max(peak, limit or 0.0) * 1.05)
    span = float(minutes[-1]) if len(minutes) and minutes[-1] > 0 else 1.0
    x_ticks = [t for t in nice_ticks(span, most=8) if t <= span * (1 + 1e-9)]
    y_top = y_ticks[-1]

    def x_at(value: np.ndarray | float) -> np.ndarray | float:
        return LEFT + (RIGHT - LEFT) * np.asarray(value) / span

    def y_at(value: np.ndarray | float) -> np.ndarray | float:
        return BOTTOM - (BOTTOM - TOP) * np.asarray(value) / y_top

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}pt" height="{HEIGHT}pt" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}" '
        f'font-family="{FONT}" font-size="{FONT_SIZE:g}">'
    ]
    grid = [f"M{LEFT:.2f} {float(y_at(t)):.2f}H{RIGHT:.2f}" for t in y_ticks[1:]]
    grid += [f"M{float(x_at(t)):.2f} {TOP:.2f}V{BOTTOM:.2f}" for t in x_ticks[1:]]
    out.append(
        f'<path d="{"".join(grid)}" fill="none" stroke="#b0b0b0" stroke-opacity="0.3" stroke-width="0.8"/>'
    )
    for i, values in enumerate(lines):
        for points in _polylines(np.asarray(x_at(minutes)), np.asarray(y_at(values))):
            out.append(
                f'<polyline points="{points}" fill="none" stroke="{colours[i % len(colours)]}" '
                'stroke-opacity="0.6" stroke-width="0.7" stroke-linejoin="round"/>'
            )
    if limit is not None:
        y = float(y_at(limit))
        dash = f'stroke="{LIMIT_COLOUR}" stroke-width="1.2" stroke-dasharray="4.4 1.9"'
        out.append(f'<path d="M{LEFT:.2f} {y:.2f}H{RIGHT:.2f}" {dash}/>')
        legend = f"limit {limit:g} ms"
        out.append(f'<path d="M{RIGHT - 88:.2f} {TOP - 7:.2f}h18" {dash}/>')
        out.append(_text(RIGHT - 66, TOP - 4, legend))
    ticks = [f"M{LEFT:.2f} {float(y_at(t)):.2f}h{-TICK}" for t in y_ticks]
    ticks += [f"M{float(x_at(t)):.2f} {BOTTOM:.2f}v{TICK}" for t in x_ticks]
    out.append(f'<path d="{"".join(ticks)}" stroke="#000" stroke-width="0.8"/>')
    spines = f"M{LEFT:.2f} {TOP:.2f}V{BOTTOM:.2f}H{RIGHT:.2f}"
    out.append(f'<path d="{spines}" fill="none" stroke="#000" stroke-width="0.8"/>')
    y_decimals, x_decimals = _decimals(y_ticks), _decimals(x_ticks)
    for t in y_ticks:
        out.append(_text(LEFT - TICK - 2, float(y_at(t)) + 2.9, _label(t, y_decimals), anchor="end"))
    for t in x_ticks:
        out.append(_text(float(x_at(t)), BOTTOM + TICK + 8.5, _label(t, x_decimals), anchor="middle"))
    out.append(_text((LEFT + RIGHT) / 2, HEIGHT - 8, x_label, anchor="middle"))
    turned = f' transform="translate(10 {(TOP + BOTTOM) / 2:.2f}) rotate(-90)"'
    out.append(_text(0, 0, y_label, anchor="middle", extra=turned))
    out.append(_text(LEFT, TOP - 6, title, size=TITLE_SIZE))
    out.append("</svg>")
    return "".join(out)
