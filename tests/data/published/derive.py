"""Derive the audit fixtures from the published documents: tables and figures kept, prose removed.

    python tests/data/published/derive.py PATH/TO/seeds

The published documents are vendor publications whose facts and figures may be used but whose
prose may not be copied. Each line that is prose (long running text without a table cell, a
formula or a test-log timestamp) is replaced by "[prose omitted]", so line numbers — which the
tests pin — stay those of the original. Run once by a maintainer; the tests read only the output.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCUMENTS = {
    "000_1f56eeacdd63a9b1.txt": "vmax-000.txt",
    "001_f71caca7d118c9a6.txt": "netapp-001.txt",
    "002_3313bc7c523cb0c0.txt": "dellemc-002.txt",
    "004_4393873725ed1b10.txt": "equallogic-004.txt",
}
_TIMESTAMP = re.compile(r"^\s*\d{1,2}/\d{1,2}/\d{4} \d{1,2}:\d{2}:\d{2} [AP]M -- ")


def is_prose(line: str) -> bool:
    text = line.strip()
    if len(text) <= 90 or "\t" in line or text.startswith(("|", "#")) or _TIMESTAMP.match(text):
        return False
    if re.match(r"^(\*\*)?(Table|Figure) \d+", text) and not re.match(
        r"^(Table|Figure) \d+ (reports|lists|shows)", text
    ):
        return False  # a caption
    if "=" in text and re.search(r"\d", text):
        return False  # a worked formula
    words = re.findall(r"[A-Za-z]{3,}", text)
    return len(words) >= 10


def derive(source: Path, target: Path) -> None:
    lines = source.read_text(encoding="utf-8").splitlines()
    kept = ["[prose omitted]" if is_prose(line) else line for line in lines]
    target.write_text("\n".join(kept) + "\n", encoding="utf-8")


if __name__ == "__main__":
    seeds = Path(sys.argv[1])
    for name, out in DOCUMENTS.items():
        derive(seeds / name, HERE / out)
