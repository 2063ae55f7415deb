"""No PASS from damaged or contradictory evidence: a property test over every source of one run.

The EMAIL5 sample's Performance run (report HTML, result XML, counter log, configuration XML) is
damaged by generated combinations of damage and contradictions drawn from every source
(`esrp_synth.damage`), not by a list of cases. Two properties:

- no damaged or contradicted variant of the passing run passes (each says why it does not);
- no variant of its failing twin (the same run failing in every source alike) passes.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from esrp_report.analysis.assess import SolutionAssessment
from esrp_report.analysis.rules import Status
from esrp_report.app import api
from esrp_synth import damage as d
from tests.conftest import SAMPLES

STEM = "Performance_2011_3_11_13_27_46"
Damage = Callable[[d.RunFiles], d.RunFiles]


class Planted:
    """A damage with its name, shown by its name in a falsifying example."""

    def __init__(self, name: str, damage: Damage) -> None:
        self.name, self.damage = name, damage

    def __repr__(self) -> str:
        return self.name


@functools.cache
def _sample() -> d.RunFiles:
    # Not a fixture: Hypothesis prints every argument of a falsifying example, and this is 2 MB.
    return d.RunFiles.read(SAMPLES / "EMAIL5", STEM)


def _verdict(files: d.RunFiles, folder: Path) -> SolutionAssessment:
    if folder.exists():
        shutil.rmtree(folder)
    files.write(folder)
    return api.check([folder])


IMPOSSIBLE = ("-25", "-5", "-3", "NaN", "inf", "-inf", "1e999", "", "n/a")
INSTANCE = st.integers(min_value=0, max_value=19)
WHERE = st.floats(min_value=0.0, max_value=1.0)


def _instance(_files: d.RunFiles, index: int) -> str:
    # The undamaged run's names: another damage may have dropped a row of this one.
    return _sample().instances()[index]


@st.composite
def _damages(draw: st.DrawFn) -> tuple[str, Damage]:
    """One damage or contradiction, in any source, with its parameters drawn."""
    kind = draw(
        st.sampled_from(
            [
                "html-cell",
                "html-cell-contradicts",
                "html-row-dropped",
                "html-result",
                "html-target",
                "html-achieved",
                "html-files",
                "html-machine",
                "xml-counter",
                "xml-counter-removed",
                "xml-result",
                "xml-target",
                "xml-achieved",
                "config-mailboxes",
                "log-cut",
                "log-middle",
                "log-shift",
                "log-restamp",
                "log-duplicate-row",
                "log-same-named-column",
                "log-machine",
                "log-extra-instance",
                "log-instance-dropped",
                "log-cell",
                "log-contradicts",
            ]
        )
    )
    i = draw(INSTANCE)
    column = draw(st.sampled_from(d.JUDGED))
    where = draw(WHERE)
    bad = draw(st.sampled_from(IMPOSSIBLE))
    if kind == "html-cell":
        return f"{kind} {i} {column} {bad!r}", lambda f: d.set_html_cell(f, _instance(f, i), column, bad)
    if kind == "html-cell-contradicts":
        factor = draw(st.sampled_from([0.5, 0.9, 1.1, 1.5, 10.0]))

        def scaled(f: d.RunFiles) -> d.RunFiles:
            name = _instance(f, i)  # the XML and the log keep their figure
            try:
                value = float(d.html_cell(f, name, column))
            except ValueError:
                return f  # another damage left no number here
            return d.set_html_cell(f, name, column, f"{value * factor:.3f}")

        return f"{kind} {i} {column} x{factor}", scaled
    if kind == "html-row-dropped":
        return f"{kind} {i}", lambda f: d.drop_html_row(f, _instance(f, i))
    if kind == "html-result":
        return kind, lambda f: d.set_html_summary(f, "Overall Test Result", "Fail")
    if kind == "html-target":
        text = draw(st.sampled_from(["-5", "0", "2000", "NaN", "1e999"]))
        return f"{kind} {text}", lambda f: d.set_html_summary(f, "Target Transactional I/O per Second", text)
    if kind == "html-achieved":
        text = draw(st.sampled_from(["-1445.341", "1e999", "inf", "NaN", "2000"]))
        return f"{kind} {text}", lambda f: d.set_html_summary(
            f, "Achieved Transactional I/O per Second", text
        )
    if kind == "html-files":
        text = draw(st.sampled_from(["19", "21", "-20", "0"]))
        return f"{kind} {text}", lambda f: d.set_html_summary(f, "Database Files (Count)", text)
    if kind == "html-machine":
        return kind, lambda f: d.set_html_summary(f, "Machine Name", "EMAIL9")
    if kind == "xml-counter":
        return f"{kind} {i} {column} {bad!r}", lambda f: d.set_xml_counter(f, _instance(f, i), column, bad)
    if kind == "xml-counter-removed":
        return f"{kind} {i} {column}", lambda f: d.set_xml_counter(f, _instance(f, i), column, None)
    if kind == "xml-result":
        return kind, lambda f: d.set_xml_element(f, "Overall Test Result", "Fail")
    if kind == "xml-target":
        text = draw(st.sampled_from(["-5", "0", "2000", "NaN"]))
        return f"{kind} {text}", lambda f: d.set_xml_element(f, "Target Transactional I/O per Second", text)
    if kind == "xml-achieved":
        text = draw(st.sampled_from(["-1", "inf", "1e999", "2000"]))
        return f"{kind} {text}", lambda f: d.set_xml_element(f, "Achieved Transactional I/O per Second", text)
    if kind == "config-mailboxes":
        text = draw(st.sampled_from(["20000", "5000", "-10000"]))
        return f"{kind} {text}", lambda f: d.set_config(f, "MailboxCount", text)
    if kind == "log-cut":
        fraction = draw(st.sampled_from([0.1, 0.5, 0.8]))
        return f"{kind} {fraction} at {where:.2f}", lambda f: d.log_keep_fraction(f, fraction, where)
    if kind == "log-middle":
        share = draw(st.sampled_from([0.1, 0.5]))
        return f"{kind} {share}", lambda f: d.log_remove_middle(f, share)
    if kind == "log-shift":
        seconds = draw(st.sampled_from([-3600.0, 3600.0, 1800.0, -7200.0]))
        return f"{kind} {seconds}", lambda f: d.log_shift(f, seconds)
    if kind == "log-restamp":
        into = draw(st.sampled_from([8.0, 60.0, 3000.0]))
        return f"{kind} {where:.2f} -> +{into}s", lambda f: d.log_restamp(f, where, into)
    if kind == "log-duplicate-row":
        return f"{kind} {where:.2f}", lambda f: d.log_duplicate_row(f, where)
    if kind == "log-same-named-column":
        value = draw(st.sampled_from([150.0, 5.0]))
        return f"{kind} {i} {value}", lambda f: d.log_same_named_column(
            f, _instance(f, i), "db_read_latency", value
        )
    if kind == "log-machine":
        return kind, lambda f: d.log_rename_machine(f, "EMAIL9")
    if kind == "log-extra-instance":
        return kind, lambda f: d.log_extra_instance(f, "Instance2756.21", 150.0)
    if kind == "log-instance-dropped":
        return f"{kind} {i}", lambda f: d.log_drop_instance(f, _instance(f, i))
    if kind == "log-cell":
        text = draw(st.sampled_from(["-5", "NaN", "", "1e999", "x"]))
        return f"{kind} {i} {column} {text!r} at {where:.2f}", lambda f: d.log_cell(
            f, _instance(f, i), column if column in d.LOG_COUNTERS else "db_read_latency", text, where
        )
    assert kind == "log-contradicts"
    factor = draw(st.sampled_from([0.5, 1.5, 3.0]))
    return f"{kind} {i} x{factor}", lambda f: d.set_log_column(
        f, _instance(f, i), "db_read_latency", lambda v: v * factor
    )


def damages() -> st.SearchStrategy[Planted]:
    return _damages().map(lambda pair: Planted(*pair))


def _apply(files: d.RunFiles, chosen: list[Planted]) -> d.RunFiles:
    for planted in chosen:
        files = planted.damage(files)
    return files


def test_the_undamaged_run_passes_and_its_twin_fails(tmp_path: Path) -> None:
    assert _verdict(_sample(), tmp_path / "sound").status is Status.PASS
    twin = _verdict(d.failing_twin(_sample()), tmp_path / "twin")
    assert twin.status is Status.FAIL


@given(chosen=st.lists(damages(), min_size=1, max_size=2))
@settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
def test_no_damaged_or_contradicted_run_passes(tmp_path: Path, chosen: list[Planted]) -> None:
    result = _verdict(_apply(_sample(), chosen), tmp_path / "variant")
    names = chosen
    assert result.status is not Status.PASS, names
    assert result.reason, names  # never silent: the verdict says why it is not a pass


@given(chosen=st.lists(damages(), min_size=1, max_size=2))
@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
def test_no_damage_turns_the_failing_twin_into_a_pass(tmp_path: Path, chosen: list[Planted]) -> None:
    twin = d.failing_twin(_sample())
    result = _verdict(_apply(twin, chosen), tmp_path / "variant")
    assert result.status is not Status.PASS, chosen


# The cases issue 37 named, each with the verdict it must get and the words that say why.
NAMED = [
    (
        "report read latency -25 while the log reads 25",
        lambda f: d.set_log_column(
            d.set_xml_counter(
                d.set_html_cell(f, f.instances()[0], "db_read_latency", "-25"),
                f.instances()[0],
                "db_read_latency",
                "-25",
            ),
            f.instances()[0],
            "db_read_latency",
            lambda _v: 25.0,
        ),
        Status.FAIL,
        "cannot exist",
    ),
    (
        "log write latency -3",
        lambda f: d.set_html_cell(f, f.instances()[1], "log_write_latency", "-3"),
        Status.INCOMPLETE,
        "cannot exist",
    ),
    (
        "target IOPS -5",
        lambda f: d.set_xml_element(
            d.set_html_summary(f, "Target Transactional I/O per Second", "-5"),
            "Target Transactional I/O per Second",
            "-5",
        ),
        Status.INCOMPLETE,
        "target_iops",
    ),
    (
        "target IOPS 0 while the configuration says 1,400",
        lambda f: d.set_xml_element(
            d.set_html_summary(f, "Target Transactional I/O per Second", "0"),
            "Target Transactional I/O per Second",
            "0",
        ),
        Status.INCOMPLETE,
        "cannot exist",
    ),
    (
        "achieved IOPS 1e999",
        lambda f: d.set_html_summary(f, "Achieved Transactional I/O per Second", "1e999"),
        Status.INCOMPLETE,
        "achieved",
    ),
    (
        "XML cell NaN",
        lambda f: d.set_xml_counter(f, f.instances()[2], "db_read_latency", "NaN"),
        Status.INCOMPLETE,
        "not a number",
    ),
    (
        "XML cell empty",
        lambda f: d.set_xml_counter(f, f.instances()[2], "db_read_latency", ""),
        Status.INCOMPLETE,
        "no average",
    ),
    (
        "log cut to 10 % of the window",
        lambda f: d.log_keep_fraction(f, 0.1, 0.5),
        Status.INCOMPLETE,
        "covers",
    ),
    ("log's middle half removed", lambda f: d.log_remove_middle(f, 0.5), Status.INCOMPLETE, "gap"),
    ("every stamp an hour late", lambda f: d.log_shift(f, 3600.0), Status.INCOMPLETE, "covers"),
    (
        "a sample re-stamped 8 s into the window",
        lambda f: d.log_restamp(f, 0.0, 8.0),
        Status.INCOMPLETE,
        "earlier than the sample before",
    ),
    ("a duplicated row", lambda f: d.log_duplicate_row(f, 0.5), Status.INCOMPLETE, "repeat the time stamp"),
    (
        "a same-named column at 150 ms",
        lambda f: d.log_same_named_column(f, f.instances()[0], "db_read_latency", 150.0),
        Status.INCOMPLETE,
        "more than one column",
    ),
    ("a log naming EMAIL9", lambda f: d.log_rename_machine(f, "EMAIL9"), Status.INCOMPLETE, "EMAIL9"),
    (
        "a 21st instance in the log peaking at 150 ms",
        lambda f: d.log_extra_instance(f, "Instance2756.21", 150.0),
        Status.FAIL,
        "different databases",
    ),
    (
        "an instance dropped from the report, the file count still 20",
        lambda f: d.drop_xml_instance(d.drop_html_row(f, f.instances()[3]), f.instances()[3]),
        Status.INCOMPLETE,
        "different databases",
    ),
    (
        "result XML Fail beside HTML Pass",
        lambda f: d.set_xml_element(f, "Overall Test Result", "Fail"),
        Status.FAIL,
        "result XML says",
    ),
    (
        "report 18.47 ms against every log sample at 25 ms",
        lambda f: d.set_log_column(f, f.instances()[0], "db_read_latency", lambda _v: 25.0),
        Status.FAIL,
        "disagree",
    ),
]


@pytest.mark.parametrize(("case", "damage", "expected", "words"), NAMED, ids=[n[0] for n in NAMED])
def test_each_named_case_gets_its_verdict_and_says_why(
    tmp_path: Path, case: str, damage: Damage, expected: Status, words: str
) -> None:
    result = _verdict(damage(_sample()), tmp_path / "variant")
    assert result.status is expected, (case, result.reason)
    said = " ".join(p.describe() for s in result.servers for r in s.runs for p in r.problems)
    said += " " + " ".join(p.describe() for p in result.problems) + " " + result.reason
    assert words.casefold() in said.casefold(), (case, said[:2000])
