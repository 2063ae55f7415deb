"""docs/architecture.md is held to the code (issue 31, item 5): every file or folder it names
exists, every name it gives after a file is in that file, and its rank table is the layer test's."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_layers import LAYER_RANKS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "esrp_report"
DOC = ROOT / "docs" / "architecture.md"

_PATH = re.compile(r"`([\w./-]+(?:/|\.(?:py|toml|html|md|css)))`")
# The names given right after a path: "`file.py` (`A`, `B.c`, or `D`)" or "`file.py`: `A`, `B`".
_NAMES_AFTER = re.compile(r"\s*(?::|\()\s*((?:`[^`]+`(?:,\s*(?:or\s+|and\s+)?|\s+or\s+|\s+and\s+)?)+)")
_NAME = re.compile(r"[A-Za-z_][\w.]*")


def _where(path: str) -> Path | None:
    """A path as the doc writes it: from the checkout's root or from the package's folder."""
    for base in (ROOT, PACKAGE):
        if (base / path).exists():
            return base / path
    return None


def claims(text: str) -> list[tuple[str, list[str]]]:
    """Each path the text names and the names it gives right after it."""
    found = []
    for match in _PATH.finditer(text):
        after = _NAMES_AFTER.match(text, match.end())
        names = re.findall(r"`([^`]+)`", after.group(1)) if after else []
        found.append(
            (match.group(1), [n for n in names if _NAME.fullmatch(n) and not _PATH.fullmatch(f"`{n}`")])
        )
    return found


def broken(text: str) -> list[str]:
    """What the text claims that the checkout does not hold."""
    wrong = []
    for path, names in claims(text):
        where = _where(path)
        if where is None:
            wrong.append(f"{path}: no such file or folder")
            continue
        if where.is_dir():
            continue
        source = where.read_text(encoding="utf-8")
        wrong += [
            f"{path}: no {name}"
            for name in names
            if not all(re.search(rf"\b{re.escape(part)}\b", source) for part in name.split("."))
        ]
    return wrong


def test_every_path_and_name_the_architecture_page_gives_is_in_the_code() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert len(claims(text)) > 30  # the page names its steps by file
    assert broken(text) == []


def test_the_check_catches_a_missing_file_and_a_missing_name() -> None:
    text = "one `model/sections.py` (`DOCUMENT_PARTS`, or `NO_SUCH_NAME`), two `render/nowhere.py`."
    assert broken(text) == ["model/sections.py: no NO_SUCH_NAME", "render/nowhere.py: no such file or folder"]


def test_the_rank_table_is_the_layer_test_s() -> None:
    text = DOC.read_text(encoding="utf-8")
    ranks = {
        folder: int(rank)
        for rank, folders in re.findall(r"^\| (\d) \| ([^|]+) \|", text, re.MULTILINE)
        for folder in re.findall(r"`(\w+)/`", folders)
    }
    assert ranks == LAYER_RANKS
