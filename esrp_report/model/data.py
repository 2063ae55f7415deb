"""The package's own data files (thresholds, vocabularies, conventions, published constants): one
way to read them, so that every layer that keeps its data as TOML reads it alike."""

from __future__ import annotations

import tomllib
from importlib import resources
from typing import Any


def package_toml(package: str, name: str) -> dict[str, Any]:
    """The TOML file ``name`` shipped inside ``package`` (``"esrp_report.audit"``), parsed. Callers
    that read it often cache what they make of it; the dict returned is theirs to keep."""
    return tomllib.loads(resources.files(package).joinpath(name).read_text(encoding="utf-8"))
