"""Small defences every reader shares: ASCII numbers, regular files, printable names.

Evidence comes from someone else's machine, so a reader must end in a result or an
:class:`~esrp_report.model.errors.InputError` for any bytes, never in a traceback or a hang:

* ``str.isdigit()`` and ``int()`` accept far more than ``0-9`` (``'²'.isdigit()`` is true and
  ``int('²')`` raises; ``int('٣')`` is 3), so numbers read from untrusted text go through
  :func:`ascii_int`, which takes ``[0-9]+`` and nothing else;
* opening a FIFO for reading blocks until a writer appears (forever), and ``/dev/zero`` never
  ends, so every file opened as evidence is first checked by :func:`require_regular_file`;
* Arrow and Polars refuse (Polars panics on) column names holding a NUL, and a line break in a
  CSV header cell breaks line-based perfmon readers, so counter paths written out go through
  :func:`printable`.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from esrp_report.files.safe import kind_of
from esrp_report.model.errors import InputError

_ASCII_DIGITS = re.compile(r"[0-9]+")
# C0 controls, DEL and C1 controls (Unicode category Cc): none is ever part of a counter path.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
REPLACEMENT = "\ufffd"


def ascii_digits(text: str) -> bool:
    """True when ``text`` is one or more ASCII digits, nothing else (no sign, no space)."""
    return _ASCII_DIGITS.fullmatch(text) is not None


def ascii_int(text: str, *, max_digits: int = 4000) -> int | None:
    """``text`` as an int when it is ``[0-9]+`` of at most ``max_digits`` digits, else None.

    The digit limit stays under Python's 4,300-digit conversion limit, which raises ValueError."""
    if len(text) > max_digits or not ascii_digits(text):
        return None
    return int(text)


def require_regular_file(path: str | Path) -> os.stat_result:
    """The ``stat`` of ``path`` when it is a regular file (links followed); else an InputError.

    Called before a file is opened as evidence: a FIFO would block the open forever and a device
    such as ``/dev/zero`` never ends, so both are refused here, at once, by name."""
    try:
        info = Path(path).stat()
    except FileNotFoundError:
        raise InputError(path, "cannot read file: no such file or folder") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(path, f"cannot read file: {reason}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(
            path,
            f"is {kind_of(info.st_mode)}, not a file; refused without opening it",
            expected="a regular file",
        )
    return info


def has_control(text: str) -> bool:
    """True when ``text`` holds a control character (NUL, line break, tab, DEL, C1)."""
    return _CONTROL.search(text) is not None


def printable(text: str) -> str:
    """``text`` with each control character replaced by U+FFFD (one for one, so positions hold)."""
    return _CONTROL.sub(REPLACEMENT, text)
