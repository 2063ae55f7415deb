"""Where a manifest still holds the ``TODO(vendor)`` text `esrp-report init` writes for the vendor.

`build` printed such a manifest as a passing document with the placeholders in its pages (89 in
the PDF of an unedited `init` manifest, issue 32), so it refuses one unless asked for a draft,
and the refusal names each place: the file, the TOML table and key, and the line. The lines are
read from the file's text because the parsed TOML keeps no line numbers; a comment line is not a
placeholder (init's own header names the marker). A vendor section read from a Markdown file
(``[[section]] file``) is scanned the same way, each of its lines by number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from esrp_report.model import PLACEHOLDER, Manifest

_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_.\"'-]+)\s*=")


@dataclass(frozen=True)
class Placeholder:
    """One line holding the placeholder: its file, line number and where in the manifest it is."""

    file: str
    line: int
    key: str  # "[document] vendor", "[tables.software] rows", "[[section]] file"

    def describe(self) -> str:
        """``file line N: [table] key``."""
        return f"{self.file} line {self.line}: {self.key}"


def placeholders(manifest: Manifest) -> list[Placeholder]:
    """Every line of the manifest (and of the Markdown files its vendor sections name) that holds
    the placeholder outside a comment, in file order."""
    path = Path(manifest.path)
    found = list(_in_toml(path))
    for name in _section_files(path):
        found += _in_markdown(path.parent / name)
    return found


def _in_toml(path: Path) -> list[Placeholder]:
    table, key = "", ""
    out: list[Placeholder] = []
    for number, line in enumerate(_lines(path), start=1):
        header = _TABLE.match(line)
        if header and "=" not in line.split("#", 1)[0]:
            table, key = header.group(1), ""
            continue
        assigned = _KEY.match(line)
        if assigned:
            key = assigned.group(1).strip("\"'")
        if PLACEHOLDER in line and not line.lstrip().startswith("#"):
            where = f"[{table}] {key}".strip() if table else key
            out.append(Placeholder(str(path), number, where))
    return out


def _section_files(path: Path) -> list[str]:
    """The ``file = "..."`` of each ``[[section]]``, as written (read_manifest has checked them)."""
    import tomllib  # noqa: PLC0415 - only a manifest that is built needs it

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []  # read_manifest read it a moment ago; a file changed since is its next reading's
    sections = data.get("section", [])
    if not isinstance(sections, list):
        return []
    return [s["file"] for s in sections if isinstance(s, dict) and isinstance(s.get("file"), str)]


def _in_markdown(path: Path) -> list[Placeholder]:
    return [
        Placeholder(str(path), number, "[[section]] file")
        for number, line in enumerate(_lines(path), start=1)
        if PLACEHOLDER in line
    ]


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError):
        return []  # read_manifest has read it: a file gone since is not a placeholder
