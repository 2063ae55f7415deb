"""Sizing specs (TOML): the inputs of :func:`esrp_report.analysis.sizing.size`, as a file of their own or as a
solution manifest's ``[sizing]`` table.

Keys are the fields of :class:`~esrp_report.model.sizing.SizingSpec` (docs/sizing.md); a key not given
keeps the paper's value. The quota may be given as ``mailbox_quota_mb`` or ``mailbox_quota_gb``
(1 GB = 1,000 MB, the paper's unit), not both. An unknown key, a wrong type or a value out of
range is an error naming the file, the key and what was expected.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from esrp_report.files.safe import Tree, read_toml_file
from esrp_report.model.errors import InputError
from esrp_report.model.sizing import FLAGS, INPUTS, MB_PER_GB, WHOLE, SizingError, SizingSpec

QUOTA_GB = "mailbox_quota_gb"
KEYS = (*INPUTS, QUOTA_GB)


class SizingSpecError(InputError):
    """A sizing spec file that cannot be read or holds a key or value the sizing model does not take."""


def load_sizing_spec(path: Path, *, base: SizingSpec | None = None, tree: Tree | None = None) -> SizingSpec:
    """A spec file: its keys at the top level; keys it leaves out keep ``base`` (default: the paper's).
    ``tree``: the manifest's folder, when a manifest names the file (its identity is judged)."""
    data = read_toml_file(path, what="sizing spec", error=SizingSpecError, tree=tree)
    return spec_from_table(data, source=path, base=base)


def spec_from_table(
    data: Mapping[str, Any],
    *,
    source: str | Path,
    where: str = "",
    base: SizingSpec | None = None,
    other_keys: Collection[str] = (),
) -> SizingSpec:
    """``base`` (default: the paper's values) with the keys of ``data`` applied.

    ``where`` names the table in error messages (``"[sizing]"``); ``other_keys`` are keys of that
    table that the caller reads itself (a manifest's ``spec``)."""

    def fail(key: str, message: str, expected: str | None = None) -> SizingSpecError:
        return SizingSpecError(source, message, location=f"{where} {key}".strip(), expected=expected)

    values: dict[str, Any] = {}
    for key, value in data.items():
        if key in other_keys:
            continue
        if key not in KEYS:
            raise fail(key, f"unknown key {key!r}", "one of " + ", ".join(sorted(KEYS)))
        if key in FLAGS:
            if not isinstance(value, bool):
                raise fail(key, f"{key} has the wrong type ({type(value).__name__})", "true or false")
        elif key in WHOLE:
            if isinstance(value, bool) or not isinstance(value, int):
                raise fail(key, f"{key} has the wrong type ({type(value).__name__})", "a whole number")
        elif isinstance(value, bool) or not isinstance(value, int | float):
            unit = INPUTS.get(key, ("GB", ""))[0]
            raise fail(key, f"{key} has the wrong type ({type(value).__name__})", f"a number ({unit})")
        values[key] = value if key in FLAGS or key in WHOLE else float(value)
    if QUOTA_GB in values:
        if "mailbox_quota_mb" in values:
            raise fail(QUOTA_GB, "the quota is given twice", "mailbox_quota_mb or mailbox_quota_gb, not both")
        values["mailbox_quota_mb"] = values.pop(QUOTA_GB) * MB_PER_GB
    try:
        return replace(base or SizingSpec(), **values)
    except SizingError as exc:
        key = QUOTA_GB if exc.key == "mailbox_quota_mb" and QUOTA_GB in data else exc.key
        raise fail(key, exc.detail, exc.expected) from None
