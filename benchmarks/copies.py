"""Which cells of an appendix Jetstress report repeat another of its cells in every instance row.

    python -m benchmarks.copies [FILE ...]   (default: the published seeds, tests/data/published)

For every report of every document, each per-instance column of each table (Transactional, Log
Replication, Background Maintenance, Total) is compared with every other table's columns, instance
by instance, at the printed three decimals. A pair of columns is listed with the rows where it is
equal and the rows where it is not, summed over all reports of the same test kind; a pair equal in
every row it can be compared in is a candidate copy. Equality of two columns that are both zero
everywhere (a backup's write columns) proves nothing and is left out. Whether a candidate is a copy
is Jetstress's definition, not this count: ``esrp_report/audit/jetstress.toml`` keeps the pairs that
are the same counter, with the count this script gives.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

from esrp_report.ingest.documents.published import read_document
from esrp_report.model import TableKind, TestKind

ROOT = Path(__file__).resolve().parent.parent
SEEDS = sorted((ROOT / "tests" / "data" / "published").glob("*.txt"))

Cell = tuple[TableKind, str]


def pairs(paths: list[Path]) -> dict[tuple[TestKind, Cell, Cell], list[int]]:
    """(test kind, cell, cell) -> [rows equal, rows different, rows with a non-zero figure]."""
    counts: dict[tuple[TestKind, Cell, Cell], list[int]] = defaultdict(lambda: [0, 0, 0])
    for path in paths:
        doc = read_document(path)
        for report in doc.reports:
            run = report.run
            if run is None:
                continue
            rows: dict[str, dict[Cell, float]] = defaultdict(dict)
            for kind, table in run.tables.items():
                for row in table.rows:
                    for column, value in row.values.items():
                        rows[row.instance][(kind, column)] = value
            for values in rows.values():
                cells = sorted(values, key=lambda c: (c[0].value, c[1]))
                for i, a in enumerate(cells):
                    for b in cells[i + 1 :]:
                        if a[0] is b[0]:
                            continue
                        count = counts[(run.kind, a, b)]
                        same = round(values[a], 3) == round(values[b], 3)
                        count[0 if same else 1] += 1
                        count[2] += values[a] != 0
    return counts


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or SEEDS
    found = pairs(paths)
    print(f"# candidate copies in {', '.join(p.name for p in paths)}: equal / compared rows")
    for (kind, a, b), (same, different, nonzero) in sorted(
        found.items(), key=lambda kv: (kv[0][0].value, kv[0][1][0].value, kv[0][1][1])
    ):
        if nonzero == 0 or same < max(1, (same + different) * 0.9):
            continue
        print(f"{kind.value:13} {a[0].value}.{a[1]} = {b[0].value}.{b[1]}: {same} / {same + different}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
