"""Jetstress file names: ``<Kind>_<Y>_<M>_<D>_<h>_<m>_<s>.<ext>`` (facts §2.3).

Test logs print the same names with spaces instead of underscores; both forms match.
"""

from __future__ import annotations

import re
from pathlib import Path

from esrp_report.model import TestKind

_STEM = re.compile(r"^(?P<kind>[A-Za-z]+)[ _](?P<stamp>\d{4}(?:[ _]\d{1,2}){5})$")
_KIND_NAMES = {k.value.casefold(): k for k in TestKind}


def normalized_stem(name: str) -> str:
    """'Performance 2011 3 11 13 27 46.blg' and 'Performance_2011_3_11_13_27_46.html' match."""
    stem = Path(name.replace("\\", "/")).stem
    return re.sub(r"[\s_]+", "_", stem).casefold()


def kind_from_name(name: str) -> TestKind | None:
    """The test type a Jetstress file name states ("Performance_2011_3_11_13_27_46.html"), or None for a name
    of another shape or an unknown type."""
    match = _STEM.match(Path(name.replace("\\", "/")).stem)
    if match:
        return _KIND_NAMES.get(match.group("kind").casefold())
    return None
