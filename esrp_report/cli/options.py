"""Numbers typed as options, refused where they enter when no command could use them.

Click reads ``--target-iops inf``, ``1e999`` (which a float reads as infinity) and ``nan`` as
floats; each then reached arithmetic or the printer's rounding and ended in a traceback
(``decimal.InvalidOperation``, issue 37). Every number option of the CLI is parsed by one of
these functions instead; tests/test_hostile_input.py checks that none is left to click's own
float or int type. A refusal is an :class:`OptionNumberError`, which the command group prints
as one line naming the option, exit status 2.
"""

from __future__ import annotations

import math
from typing import Annotated

import typer

# Processes a command may start: far above any machine's cores, low enough that a typo
# (-j 1000000) is refused instead of forking until the machine stops.
MAX_JOBS = 1024
MAX_WHOLE = 2**53  # the largest whole number below which every whole number is an exact float


# Long work (build, convert, audit, catalog ingest) shows progress on a terminal's stderr; this
# option turns it off. Off too when stderr is not a terminal.
QuietOption = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress line on the terminal while it works.")
]


class OptionNumberError(typer.BadParameter):
    """An option's number that no command could use (not a number, not finite, out of range)."""


def finite(text: str) -> float:
    """A finite float: not ``inf``, ``nan``, or a literal past the float range such as ``1e999``."""
    try:
        value = float(text)
    except ValueError:
        raise OptionNumberError(f"{_shown(text)} is not a number; expected a finite number") from None
    if not math.isfinite(value):
        raise OptionNumberError(
            f"{_shown(text)} is not a finite number; expected a finite number "
            "(not inf or nan, and within about 1.8e308, the float range)"
        )
    return value


def positive(text: str) -> float:
    """A finite float above zero: a target (IOPS) of 0 or less would make every achieved figure
    meet it, so a sign typed by mistake passed the design instead of being said (issue 32)."""
    value = finite(text)
    if value <= 0:
        raise OptionNumberError(f"{_shown(text)} is not above zero; a target must be greater than 0")
    return value


def whole(text: str) -> int:
    """A whole number a float holds exactly (up to 2**53): counts the sizing model multiplies as
    floats. More digits than that cannot be a count of mailboxes, databases or copies."""
    digits = text.strip()
    if not digits.isascii() or not digits.lstrip("-").isdigit():
        raise OptionNumberError(f"{_shown(text)} is not a whole number; expected 1, 2, 3 ...")
    if len(digits) > len(str(MAX_WHOLE)) or abs(int(digits)) > MAX_WHOLE:
        raise OptionNumberError(f"{_shown(text)} is too large; expected at most {MAX_WHOLE:,}")
    return int(digits)


def jobs(text: str) -> int:
    """A count of processes, 1 to MAX_JOBS."""
    digits = text.strip()
    if not digits.isascii() or not digits.isdigit() or len(digits) > len(str(MAX_JOBS)):
        raise OptionNumberError(f"{_shown(text)} is not a count of processes; expected 1 to {MAX_JOBS}")
    value = int(digits)
    if not 1 <= value <= MAX_JOBS:
        raise OptionNumberError(f"{value} processes; expected 1 to {MAX_JOBS}")
    return value


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def number_option(*flags: str, help: str, above_zero: bool = False) -> typer.models.OptionInfo:
    """A float option parsed by :func:`finite` (:func:`positive` with ``above_zero``): one
    declaration for every such option of the CLI."""
    parser = positive if above_zero else finite
    return typer.Option(*flags, parser=parser, metavar="NUMBER", help=help)  # type: ignore[no-any-return]
