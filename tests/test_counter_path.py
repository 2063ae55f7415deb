from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esrp_report.ingest.counter_path import CounterPath, format_counter_path, parse_counter_path


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
    ],
)
def test_known_paths(text: str, expected: CounterPath) -> None:
    assert parse_counter_path(text) == expected
    assert format_counter_path(expected) == text


@pytest.mark.parametrize("text", ["", "Memory", r"\\HOST", r"\\HOST\Memory\ "[:-1], "\\"])
def test_unusable_paths_say_what_was_expected(text: str) -> None:
    with pytest.raises(ValueError, match="expected"):
        parse_counter_path(text)


_name = st.text(
    st.characters(codec="cp1252", exclude_characters='\\()"\r\n\t,'), min_size=1, max_size=12
).filter(lambda s: s.strip() == s and s)


@st.composite
def _instances(draw: st.DrawFn) -> str:
    """Instances with backslashes and balanced (possibly nested) parentheses."""
    parts = draw(st.lists(_name, min_size=1, max_size=3))
    text = "\\".join(parts)
    if draw(st.booleans()):
        text = f"{text}({draw(_name)})"
    if draw(st.booleans()):
        text = f"({text})x"
    return text


@given(
    machine=st.one_of(st.none(), _name),
    obj=_name,
    instance=st.one_of(st.none(), _instances()),
    counter=st.text(
        st.characters(codec="cp1252", exclude_characters='\\"\r\n\t,'), min_size=1, max_size=20
    ).filter(lambda s: s.strip() == s and s),
)
@settings(max_examples=100, deadline=None)
def test_round_trip(machine: str | None, obj: str, instance: str | None, counter: str) -> None:
    path = CounterPath(machine, obj, instance, counter)
    assert parse_counter_path(format_counter_path(path)) == path
