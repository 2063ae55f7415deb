"""Verdicts never pass bad evidence: damage is counted and shown, a rule not evaluated or
evaluated on damaged samples makes the verdict INCOMPLETE, and no damage can turn FAIL into PASS.

The logs here are counter logs alone (the case where damage matters most: every figure comes
from the samples). A rules file drops the one rule a log cannot speak to (Jetstress's own
verdict), so that a sound, good log can PASS and the tests can tell PASS from INCOMPLETE.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from esrp_report.analysis.rules import Status
from esrp_report.app import api
from esrp_report.cli.main import app
from esrp_synth.perfmon_csv import write_pdh_csv

runner = CliRunner()
OBJECT = "MSExchange Database ==> Instances"
COUNTERS = (
    "I/O Database Reads Average Latency",
    "I/O Database Reads/sec",
    "I/O Database Writes Average Latency",
    "I/O Database Writes/sec",
    "I/O Log Writes Average Latency",
    "I/O Log Writes/sec",
)
GOOD = (8.0, 100.0, 5.0, 60.0, 3.0, 50.0)  # one instance's sound sample: every rule passes
INSTANCES = ("DB1", "DB2")
PATHS = [
    f"\\\\SRV1\\{OBJECT}(Information Store/{db})\\{counter}" for db in INSTANCES for counter in COUNTERS
] + [
    "\\\\SRV1\\MSExchange Database(Information Store)\\Database Page Fault Stalls/sec",
    "\\\\SRV1\\Processor(_Total)\\% Processor Time",
]
ROWS = 40
START = datetime(2020, 1, 1, 10, 0, 0)
NO_JETSTRESS_VERDICT = '[[rule]]\nid = "reported-result"\nthreshold = {}\n'
# Dropping a Microsoft rule is loosening: refused without a reason (tests/test_loosened_rules.py).
WHY = "a counter log alone carries no Jetstress verdict"


def _values() -> np.ndarray:
    row = [*GOOD, *GOOD, 0.0, 30.0]
    values = np.tile(np.array(row), (ROWS, 1))
    values[0, :] = math.nan  # rates and averages need a sample before them: Windows writes none
    return values


def _stamps() -> list[datetime]:
    return [START + timedelta(seconds=15 * i) for i in range(ROWS)]


def _write(folder: Path, values: np.ndarray, stamps: list[datetime] | None = None) -> Path:
    path = folder / "Performance_2020_1_1_10_0_0.csv"
    write_pdh_csv(path, PATHS, stamps or _stamps(), values)
    return path


def _rules(folder: Path) -> Path:
    rules = folder / "rules.toml"
    rules.write_text(NO_JETSTRESS_VERDICT)
    return rules


def _check(path: Path, rules: Path) -> Status:
    return api.check([path], rules_file=rules, target_iops=100.0, loosen=WHY).status


def _cli(path: Path, rules: Path) -> tuple[int, dict[str, object]]:
    args = ["check", str(path), "--rules", str(rules), "--target-iops", "100", "--json", "--loosen", WHY]
    result = runner.invoke(app, args)
    return result.exit_code, json.loads(result.output)


def test_a_sound_good_log_passes(tmp_path: Path) -> None:
    assert _check(_write(tmp_path, _values()), _rules(tmp_path)) is Status.PASS


def test_a_negative_latency_is_damage_not_a_lower_average(tmp_path: Path) -> None:
    values = _values()
    values[1:, 0] = 25.0  # DB1's reads: 25 ms in every row, over the 20 ms limit
    path = _write(tmp_path, values)
    rules = _rules(tmp_path)
    assert _check(path, rules) is Status.FAIL
    values[20, 0] = -5000.0  # one impossible sample would pull the mean to 14.9 ms
    path = _write(tmp_path, values)
    code, out = _cli(path, rules)
    assert code == 1 and out["solution"]["status"] == "fail"  # type: ignore[index]
    run = out["servers"][0]["runs"][0]  # type: ignore[index]
    average = next(r for r in run["results"] if r["rule"] == "db-read-latency-avg" and r["instance"] == "DB1")
    assert average["value"] == 25.0 and average["status"] == "fail" and average["damaged_samples"] == 1
    messages = [p["message"] for p in run["problems"]]
    assert any("1 instance counter sample(s)" in m and "physical range" in m for m in messages)


def test_a_blank_column_makes_the_verdict_incomplete_never_pass(tmp_path: Path) -> None:
    values = _values()
    values[:, 0] = math.nan
    code, out = _cli(_write(tmp_path, values), _rules(tmp_path))
    assert code == 3
    assert out["solution"]["status"] == "incomplete"  # type: ignore[index]
    assert "not evaluated: db-read-latency-avg, db-read-latency-max" in out["solution"]["reason"]  # type: ignore[index]


def test_an_infinite_cell_costs_only_its_cell_and_the_worst_value_still_fails(tmp_path: Path) -> None:
    values = _values()
    values[20, 0] = 150.0  # DB1's worst read: over the 100 ms maximum
    values[20, 6] = math.inf  # DB2's read latency in the same row cannot be infinite
    path = _write(tmp_path, values)
    code, out = _cli(path, _rules(tmp_path))
    assert code == 1
    results = out["servers"][0]["runs"][0]["results"]  # type: ignore[index]
    worst = next(r for r in results if r["rule"] == "db-read-latency-max" and r["instance"] == "DB1")
    assert (worst["value"], worst["status"]) == (150.0, "fail")
    db2 = next(r for r in results if r["rule"] == "db-read-latency-avg" and r["instance"] == "DB2")
    assert db2["status"] == "incomplete" and db2["damaged_samples"] == 1


def test_a_pass_on_damaged_samples_is_incomplete_and_says_why(tmp_path: Path) -> None:
    values = _values()
    values[20, 0] = -1.0
    code, out = _cli(_write(tmp_path, values), _rules(tmp_path))
    assert code == 3
    reason = out["solution"]["reason"]  # type: ignore[index]
    assert "passed only on damaged evidence" in reason and "1 damaged sample(s) left out" in reason


def test_a_processor_share_above_100_percent_is_damage(tmp_path: Path) -> None:
    values = _values()
    values[5, -1] = 250.0
    code, out = _cli(_write(tmp_path, values), _rules(tmp_path))
    assert code == 0  # no rule rests on it: the verdict stands, and the damage is shown
    problems = [p["message"] for p in out["servers"][0]["runs"][0]["problems"]]  # type: ignore[index]
    assert any("1 sample(s) of % Processor Time outside" in m for m in problems)


def test_time_stamps_that_run_backwards_are_reported_and_block_a_pass(tmp_path: Path) -> None:
    stamps = _stamps()
    stamps[10], stamps[11] = stamps[11], stamps[10]
    code, out = _cli(_write(tmp_path, _values(), stamps), _rules(tmp_path))
    assert code == 3
    run = out["servers"][0]["runs"][0]  # type: ignore[index]
    assert run["counter_window"]["backward_time_stamps"] == 1
    assert any("earlier than the sample before them" in p["message"] for p in run["problems"])


def test_a_dropped_row_that_holds_a_worst_value_is_named_beside_the_verdict(tmp_path: Path) -> None:
    values = _values()
    values[20, 0] = 150.0
    path = _write(tmp_path, values)
    text = path.read_bytes().replace(b'"01/01/2020 10:05:00.000"', b'"not a time"')
    path.write_bytes(text)
    code, out = _cli(path, _rules(tmp_path))
    assert code == 3  # the 150 ms sample could not be placed in time: never a PASS
    results = out["servers"][0]["runs"][0]["results"]  # type: ignore[index]
    worst = next(r for r in results if r["rule"] == "db-read-latency-max" and r["instance"] == "DB1")
    assert worst["status"] == "incomplete"
    assert "a sample lost from the log reads 150.0, above the maximum kept" in worst["caveat"]


# --- the property: damage never improves a verdict from FAIL to PASS ------------------------------

_cells = st.tuples(st.integers(0, ROWS - 1), st.integers(0, len(PATHS) - 1))
_damage = st.one_of(
    st.tuples(
        st.just("cell"), _cells, st.sampled_from([b"-5000", b"inf", b"-inf", b"nan", b"x", b" ", b"1e999"])
    ),
    st.tuples(st.just("stamp"), st.integers(1, ROWS - 1), st.sampled_from(["back", "unreadable", "early"])),
    st.tuples(st.just("cut"), st.integers(1, 200), st.just(None)),
)


def _damaged(path: Path, damage: list[tuple[str, object, object]]) -> None:
    lines = path.read_bytes().split(b"\r\n")
    for kind, where, what in damage:
        if kind == "cell":
            row, column = where  # type: ignore[misc]
            cells = lines[1 + row].split(b",")
            cells[1 + column] = b'"' + what + b'"'  # type: ignore[operator]
            lines[1 + row] = b",".join(cells)
        elif kind == "stamp":
            row = where  # type: ignore[assignment]
            cells = lines[1 + row].split(b",")
            stamp = START + timedelta(seconds=15 * row)
            if what == "back":
                stamp -= timedelta(seconds=40)
            elif what == "early":
                stamp -= timedelta(days=1)
            text = b"not a time" if what == "unreadable" else stamp.strftime("%m/%d/%Y %H:%M:%S.000").encode()
            cells[0] = b'"' + text + b'"'
            lines[1 + row] = b",".join(cells)
    data = b"\r\n".join(lines)
    cuts = [int(where) for kind, where, _ in damage if kind == "cut"]  # type: ignore[call-overload]
    if cuts:
        # Cut inside the last row: a file cut exactly at a line end looks whole, and no reader
        # can tell a row that was never written from one that was lost.
        last_row = next(line for line in reversed(lines) if line)
        data = data[: len(data) - min(cuts[0], len(last_row) + 1)]
    path.write_bytes(data)


_BAD_CELLS = [b"-5000", b"inf", b"-inf", b"nan", b"x", b" ", b"1e999"]


@given(
    slow=st.lists(
        st.tuples(st.integers(1, ROWS - 1), st.sampled_from([0, 4, 6, 10])), min_size=1, max_size=3
    ),
    level=st.sampled_from([150.0, 300.0]),  # over the 100 ms maximum: the clean log fails
    slow_column=st.booleans(),  # also a whole column at 25 ms: its average fails too
    data=st.data(),
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_no_damage_turns_a_failing_log_into_a_pass(
    tmp_path: Path, slow: list[tuple[int, int]], level: float, slow_column: bool, data: st.DataObject
) -> None:
    values = _values()
    if slow_column:
        values[1:, 0] = 25.0
    for row, column in slow:
        values[row, column] = level  # latency columns of either instance
    # Half of the damage lands on the failing samples themselves: the cases that could hide a failure.
    aimed = st.one_of(
        st.tuples(st.just("cell"), st.sampled_from(slow), st.sampled_from(_BAD_CELLS)),
        st.tuples(
            st.just("stamp"),
            st.sampled_from([row for row, _ in slow]),
            st.sampled_from(["unreadable", "early"]),
        ),
    )
    damage = data.draw(st.lists(st.one_of(aimed, _damage), min_size=1, max_size=4))
    path = _write(tmp_path, values)
    rules = _rules(tmp_path)
    assert _check(path, rules) is Status.FAIL  # every generated log fails: the property is exercised
    _damaged(path, damage)
    try:
        damaged = _check(path, rules)
    except Exception as exc:  # a log damaged past reading is refused, never judged
        assert type(exc).__name__ in {"CounterLogError", "InputError"}, exc
        return
    assert damaged is not Status.PASS, damage


def test_the_review_says_why_its_verdict_is_incomplete(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent / "samples"
    built = api.build(root / "netapp.toml", tmp_path, formats=("html",), jobs=1)
    assert built.document.verdict is Status.INCOMPLETE
    html = (tmp_path / "netapp-review.html").read_text(encoding="utf-8")  # the reviewer's report says it
    assert "Solution verdict: Incomplete" in html
    assert "not evaluated: db-read-latency-max, log-write-latency-max" in html
