"""Windows 11 binary logs (issue 29) against the CSV Windows' relog made of each, cell by cell.

The logs have no licence: they are read from ``../shared/data/blg/win11/`` beside the repository,
never copied into it. Under CI (``CI`` set) a missing file fails; elsewhere the test skips."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from esrp_report.cli.main import app
from esrp_report.ingest.perfmon.blg import BlgFile

WIN11 = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "blg" / "win11"
# (log, rows, counters of its relog twin): the README beside the files.
LOGS = [("babylon-og", 33, 290), ("three-ssx2", 89, 262)]


def _present(name: str) -> Path:
    path = WIN11 / f"{name}.blg"
    if not path.is_file() or not path.with_suffix(".csv").is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{path} or its relog CSV is missing (the shared data must be present under CI)")
        pytest.skip(f"{path} or its relog CSV is not here (shared data, not in the repository)")
    return path


def _rows(path: Path, encoding: str) -> list[list[str]]:
    with path.open(encoding=encoding, newline="") as handle:
        return list(csv.reader(handle))


def _equal(ours: str, theirs: str) -> bool:
    """Equal at the CSV's precision: relog prints up to 20 significant digits, convert the
    shortest form that reads back as its double; a blank is exactly " "."""
    if theirs == " " or ours == " ":
        return ours == theirs
    a, b = float(ours), float(theirs)
    return a == b or abs(a - b) <= 1e-15 * max(abs(a), abs(b))


@pytest.mark.parametrize(("name", "rows", "counters"), LOGS)
def test_a_windows_11_log_converts_to_every_cell_of_its_relog_twin(
    tmp_path: Path, name: str, rows: int, counters: int
) -> None:
    blg = _present(name)
    out = tmp_path / f"{name}.csv"
    result = CliRunner().invoke(app, ["convert", str(blg), "-o", str(out)])
    assert result.exit_code == 0, result.output
    ours = _rows(out, "utf-8")
    twin = _rows(blg.with_suffix(".csv"), "cp1250")  # relog writes the machine's ANSI code page
    assert (len(twin) - 1, len(twin[0]) - 1) == (rows, counters)
    assert (len(ours) - 1, len(ours[0]) - 1) == (rows, counters)
    # The same paths in correct Unicode (Polish names: "Pamięć", "Czas użytkownika (%)").
    assert sorted(ours[0][1:]) == sorted(twin[0][1:])
    assert any("Pamięć" in path for path in ours[0])
    where = {path: k for k, path in enumerate(ours[0])}
    compared = equal = 0
    unequal = []
    for mine, theirs in zip(ours[1:], twin[1:], strict=True):
        compared += 1
        equal += mine[0] == theirs[0]  # every stamp to the millisecond
        for k, path in enumerate(twin[0][1:], start=1):
            compared += 1
            if _equal(mine[where[path]], theirs[k]):
                equal += 1
            elif len(unequal) < 5:
                unequal.append((theirs[0], path, mine[where[path]], theirs[k]))
    assert (equal, unequal) == (compared, [])
    assert compared == rows * (counters + 1)


def test_the_counter_set_sub_record_is_read_and_the_padding_is_a_note_not_damage() -> None:
    blg = _present("babylon-og")
    with BlgFile(blg) as log:
        for _batch in log.batches():
            pass
        assert (log.samples_read, log.samples_lost) == (33, 0)
        paths = [c.path for c in log.columns]
        # Kind 42 4C 03 15 holds GPU Adapter Memory(*)\*: 2 adapters x 3 counters named by record 38.
        assert sum("GPU Adapter Memory(" in p for p in paths) == 6
        assert (
            "\\\\DESKTOP-JULIA\\GPU Adapter Memory(luid_0x00000000_0x0000D953_phys_0)\\Total Committed"
            in paths
        )
        assert not [p for p in log.problems if "42 4C 03 15" in p.message]
        [padding] = [p for p in log.problems if "short of its length" in p.message]
        assert padding.severity == "note" and "38518" in padding.message and padding.lost == 0
