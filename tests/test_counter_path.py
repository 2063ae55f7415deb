from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esrp_report.ingest.perfmon.counter_path import CounterPath, format_counter_path, parse_counter_path


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            r"\\EMAIL5\LogicalDisk(C:\MP\DB\DB1)\Avg. Disk sec/Read",
            CounterPath("EMAIL5", "LogicalDisk", r"C:\MP\DB\DB1", "Avg. Disk sec/Read"),
        ),
        (
            r"\\H\Network Interface(Intel(R) PRO_1000 MT)\Bytes Total/sec",
            CounterPath("H", "Network Interface", "Intel(R) PRO_1000 MT", "Bytes Total/sec"),
        ),
        (
            r"\\H\MSExchange Database ==> Instances(JetstressWin/Instance2756.1)\I/O Database Reads (Attached) Average Latency",
            CounterPath(
                "H",
                "MSExchange Database ==> Instances",
                "JetstressWin/Instance2756.1",
                "I/O Database Reads (Attached) Average Latency",
            ),
        ),
        (r"\\H\Memory\Available MBytes", CounterPath("H", "Memory", None, "Available MBytes")),
        (
            r"\Processor(_Total)\% Processor Time",
            CounterPath(None, "Processor", "_Total", "% Processor Time"),
        ),
        (r"\\H\LogicalDisk(C:\)\Free Megabytes", CounterPath("H", "LogicalDisk", "C:\\", "Free Megabytes")),
        (
            r"\\10.0.0.5\Process(svchost#1)\ID Process",
            CounterPath("10.0.0.5", "Process", "svchost#1", "ID Process"),
        ),
        (r"\\H\Obj((a)b(c(d)))\C", CounterPath("H", "Obj", "(a)b(c(d))", "C")),
    ],
)
def test_known_paths_parse_and_format_back(text: str, expected: CounterPath) -> None:
    assert parse_counter_path(text) == expected
    assert format_counter_path(expected) == text


@pytest.mark.parametrize(
    ("text", "piece"),
    [
        ("", "does not start with a backslash"),
        ("Memory", "does not start with a backslash"),
        ("\\\\HOST", "names a machine but no object"),
        ("\\\\HOST\\Memory\\", "lacks an object or a counter"),
        ("\\", "lacks an object or a counter"),
    ],
)
def test_unusable_paths_say_what_was_expected(text: str, piece: str) -> None:
    with pytest.raises(ValueError, match="expected") as info:
        parse_counter_path(text)
    assert piece in str(info.value)


_text = st.text(
    st.characters(codec="cp1252", exclude_characters='\\()"\r\n\t', exclude_categories=("Cc",)),
    min_size=1,
    max_size=10,
).filter(lambda s: s.strip() == s)


@st.composite
def _instances(draw: st.DrawFn) -> str:
    """Instances with backslashes and balanced, possibly nested, parentheses."""
    balanced = st.recursive(
        _text | st.just(""),
        lambda inner: st.builds(
            lambda a, b, c: f"{a}({b}){c}", _text | st.just(""), inner, _text | st.just("")
        ),
        max_leaves=4,
    )
    parts = draw(st.lists(balanced, min_size=1, max_size=3))
    return "\\".join(parts)


@given(
    machine=st.one_of(st.none(), _text),
    obj=_text,
    instance=st.one_of(st.none(), _instances()),
    counter=st.text(
        st.characters(codec="cp1252", exclude_characters='\\"\r\n\t', exclude_categories=("Cc",)),
        min_size=1,
        max_size=20,
    ).filter(lambda s: s.strip() == s),
)
@settings(max_examples=100, deadline=None)
def test_round_trip(machine: str | None, obj: str, instance: str | None, counter: str) -> None:
    path = CounterPath(machine, obj, instance, counter)
    assert parse_counter_path(format_counter_path(path)) == path
