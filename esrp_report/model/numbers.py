"""Number formatting for display. Rounding happens here and nowhere earlier."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext


def round_half_up(value: float, decimals: int) -> Decimal:
    """Round as the documents do (0.0005 -> 0.001), on the decimal text of the float.

    Any float can be printed: the context holds every digit of the result (the default 28 digits
    raised InvalidOperation from 1e26 up), and a value that is not finite is returned as it is
    (Infinity, NaN) rather than raising: what may be judged is decided where values are read."""
    exact = Decimal(repr(value))
    if not exact.is_finite():
        return exact
    quantum = Decimal(1).scaleb(-decimals)
    with localcontext() as context:
        context.prec = max(context.prec, exact.adjusted() + decimals + 2)
        return exact.quantize(quantum, rounding=ROUND_HALF_UP)


def fmt_number(value: float | None, decimals: int, *, thousands: bool = False, missing: str = "—") -> str:
    """A number rounded half up to ``decimals`` as text, with thousands separators when asked; ``missing``
    ("—") for None."""
    if value is None:
        return missing
    rounded = round_half_up(value, decimals)
    return f"{rounded:,.{decimals}f}" if thousands else f"{rounded:.{decimals}f}"


def fmt_percent(value: float | None, decimals: int = 1, missing: str = "—") -> str:
    """A fraction as a percentage rounded half up to ``decimals`` (0.125 -> "12.5%"); ``missing`` ("—") for
    None."""
    if value is None:
        return missing
    return f"{round_half_up(value * 100, decimals):.{decimals}f}%"
