"""Plain typed data describing Jetstress evidence (``model.core``), the error hierarchy
(``model.errors``), the documents' rounding (``model.numbers``), trend and sizing data.

The names of ``model.core`` are read from here (``from esrp_report.model import Run``) but
loaded on first use: ``model.core`` needs Polars, and a command that only reports an error
(``model.errors``) or prints help must not pay for it (docs/benchmarks.md, start-up).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from esrp_report.model.core import *  # noqa: F403 - the names this package re-exports


def __getattr__(name: str) -> Any:
    """A name of ``model.core``, imported on first use."""
    if name.startswith("__") or name == "core":
        raise AttributeError(name)
    # import_module, not "from esrp_report.model import core": that asks this function for "core".
    value = getattr(importlib.import_module("esrp_report.model.core"), name)
    # Kept here, so the next use is a plain attribute: the counter metrics read ``model.X`` tens of
    # thousands of times in a build, each a call of this function and import_module otherwise.
    globals()[name] = value
    return value
