"""The facts a manifest may state about a tested server (model/server_facts.toml): their keys, how
each is compared with the evidence, the document's heading for each, and the key/value table rows
that state one of them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from esrp_report.model.data import package_toml

FACT_KINDS = ("os", "version", "text", "count", "gb")


@dataclass(frozen=True)
class FactSpec:
    """One fact: its manifest key, document heading, comparison kind and where Jetstress prints it."""

    key: str
    label: str
    kind: str
    evidence: str


@cache
def _data() -> tuple[dict[str, FactSpec], dict[str, str]]:
    raw = package_toml("esrp_report.model", "server_facts.toml")
    facts = {key: FactSpec(key, v["label"], v["kind"], v["evidence"]) for key, v in raw["facts"].items()}
    rows = {item: key for item, key in raw["rows"].items() if key in facts}
    if any(f.kind not in FACT_KINDS for f in facts.values()) or len(rows) != len(raw["rows"]):
        raise ValueError("model/server_facts.toml: a fact kind or row key is not one of those defined")
    return facts, rows


def fact_specs() -> dict[str, FactSpec]:
    """Every fact a [[servers]] table may state, by key, in document order."""
    return _data()[0]


def fact_rows() -> dict[str, str]:
    """Key/value table items (e.g. "Host OS") that state a fact, and the fact's key."""
    return _data()[1]
