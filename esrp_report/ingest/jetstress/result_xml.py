"""Jetstress result XML (``Performance*.xml``, root ``output``; facts §2.2).

Machine-written at full precision, so it is preferred over the HTML report when both exist.
Unknown elements are ignored; a value that cannot be read becomes a :class:`Problem` and the
rest of the file is still used.
"""

from __future__ import annotations

import re
from pathlib import Path

from lxml import etree

from esrp_report.ingest.jetstress import labels as L
from esrp_report.ingest.jetstress import times
from esrp_report.ingest.jetstress.names import kind_from_name
from esrp_report.ingest.safe_xml import read_xml, root_name, xml_number
from esrp_report.model import InstanceRow, InstanceTable, Problem, Run, TableKind, TestKind
from esrp_report.model.errors import UnsupportedFormatError

ROOT = "output"

# Section element -> table, compared with case, '-' and '_' ignored. The first three are seen
# in a source (facts §2.2); the transactional spellings are inferred from them, not seen.
TABLE_SECTIONS: dict[str, TableKind] = {
    "disksubsystemtotal": TableKind.TOTAL,
    "disksubsystemofdbmaintenance": TableKind.BACKGROUND_MAINTENANCE,
    "disksubsystemofdatabasemaintenance": TableKind.BACKGROUND_MAINTENANCE,
    "disksubsystemoflogreplication": TableKind.LOG_REPLICATION,
    "disksubsystemtransactional": TableKind.TRANSACTIONAL,
    "disksubsystemoftransactional": TableKind.TRANSACTIONAL,
    "disksubsystemtransaction": TableKind.TRANSACTIONAL,
    "disksubsystemoftransaction": TableKind.TRANSACTIONAL,
}

SUMMARY_TIMES = {
    "test start time": "test_start",
    "test end time": "test_end",
    "collection start time": "collection_start",
    "collection end time": "collection_end",
}
SUMMARY_TEXTS = {
    "overall test result": "overall_result",
    "test description": "test_description",
    "jetstress version": "jetstress_version",
    "ese version": "ese_version",
    "operating system": "operating_system",
    "performance log": "performance_log",
}
# Attributes of <counter> besides name/average: no place in the model, counted in a note.
_COUNTER_CORE_ATTRIBUTES = frozenset({"name", "average"})
_TOTAL_INSTANCE = re.compile(r"^_?total$", re.IGNORECASE)


def sniff_result_xml(head: bytes) -> bool:
    """Does a file's head look like a Jetstress result XML (root element <output>)?"""
    return root_name(head) == ROOT


def _section_key(tag: str) -> str:
    return re.sub(r"[-_\s]", "", tag).casefold()


def _local(element: etree._Element) -> str:
    return etree.QName(element).localname


def _where(element: etree._Element) -> str:
    return f"line {element.sourceline}, <{_local(element)}>"


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[Problem] = []

    def problem(
        self,
        message: str,
        element: etree._Element,
        lost: int = 0,
        severity: str = "warning",
        *,
        doubt: bool = False,
    ) -> None:
        self.problems.append(
            Problem(self.source, message, location=_where(element), severity=severity, lost=lost, doubt=doubt)
        )

    def unreadable_figure(self, message: str, element: etree._Element) -> None:
        """A figure Jetstress wrote that is no number: the verdict must not rest on the other sources'."""
        self.problem(message, element, lost=1, severity="error", doubt=True)

    def elements(self, root: etree._Element, section: str) -> list[tuple[str, str, etree._Element]]:
        """(name, value, element) of ``<section><element name=... value=...>``, in file order."""
        found: list[tuple[str, str, etree._Element]] = []
        for element in _section_elements(root, section):
            name = element.get("name")
            if name is None:
                self.problem(f"<element> in <{section}> has no name attribute; skipped", element, lost=1)
                continue
            found.append((name, element.get("value", "").strip(), element))
        return found


def _section_elements(root: etree._Element, section: str) -> list[etree._Element]:
    return [
        element
        for holder in root
        if isinstance(holder.tag, str) and _local(holder) == section
        for element in holder
        if isinstance(element.tag, str) and _local(element) == "element"
    ]


def read_result_xml(path: str | Path) -> Run:
    """Read a Jetstress result XML into a :class:`Run` (with any problems on ``run.problems``)."""
    source = str(path)
    root = read_xml(path)
    if _local(root) != ROOT:
        raise UnsupportedFormatError(
            path,
            "not a Jetstress result XML",
            location=f"line {root.sourceline}, root element",
            expected=f"<{ROOT}>",
            found=f"<{_local(root)}>",
        )
    reader = _Reader(source)
    summary_rows = reader.elements(root, "test-summary")
    summary = {name: value for name, value, _ in summary_rows}
    by_label = {L.normalize_label(name): (value, element) for name, value, element in summary_rows}

    def text(label: str) -> str | None:
        value = by_label.get(label, ("", None))[0]
        return value or None

    kind = (
        kind_from_name(source)
        or kind_from_name(text("performance log") or "")
        or _kind_from_label(text("test type"))
    )
    if kind is None:
        kind = TestKind.PERFORMANCE
        reader.problems.append(
            Problem(
                source,
                "test type not named by the file or its performance log; taken as Performance",
                location="test-summary",
                severity="note",
            )
        )
    machine = text("machine name")
    if machine is None:
        reader.problems.append(
            Problem(source, "no 'Machine Name' in <test-summary>", location="test-summary")
        )
    run = Run(kind=kind, machine=machine or "", sources=[source], summary=summary)
    for label, attr in SUMMARY_TEXTS.items():
        setattr(run, attr, text(label))
    # The summary's own times decide the order of day and month (the machine's culture prints them).
    day_first = times.day_first_of(by_label.get(label, ("", None))[0] for label in SUMMARY_TIMES)
    for label, attr in SUMMARY_TIMES.items():
        value, element = by_label.get(label, ("", None))
        if not value or element is None:
            continue
        stamp = times.parse_stamp(value, day_first)
        if stamp is None:
            reader.problem(f"{label!r}: not a time: {value!r}; expected {times.EXPECTED}", element)
        setattr(run, attr, stamp)

    # Issues are free text in @value; a name attribute, when present, adds nothing.
    run.issues = [
        value for e in _section_elements(root, "test-issues") if (value := (e.get("value") or "").strip())
    ]
    _read_sizing(reader, root, run)
    run.parameters.update({name: value for name, value, _ in reader.elements(root, "jetstress-system")})
    _read_tables(reader, root, run)
    run.problems = reader.problems
    return run


def _kind_from_label(value: str | None) -> TestKind | None:
    if not value:
        return None
    wanted = re.sub(r"\s", "", value).casefold()
    return next((k for k in TestKind if k.value.casefold() == wanted), None)


def _read_sizing(reader: _Reader, root: etree._Element, run: Run) -> None:
    for label, value, element in reader.elements(root, "database-sizing"):
        attr = L.SIZING_LABELS.get(L.normalize_label(label))
        if attr is None:
            # Capacity/throughput percentages and the like: kept raw, as the report's parameters.
            run.parameters[label] = value
            continue
        if not value:
            continue
        try:
            number = xml_number(value)
        except ValueError:
            reader.unreadable_figure(f"{label!r}: not a number: {value!r}; ignored", element)
            continue
        if attr == "database_files":
            if not number.is_integer():
                reader.problem(f"{label!r}: not a whole count: {value!r}; ignored", element, lost=1)
                continue
            run.sizing.database_files = int(number)
        else:
            setattr(run.sizing, attr, number)


def _read_tables(reader: _Reader, root: etree._Element, run: Run) -> None:
    other_values = 0
    first_other: etree._Element | None = None
    for section in root:
        if not isinstance(section.tag, str):
            continue
        key = _section_key(_local(section))
        kind = TABLE_SECTIONS.get(key)
        if kind is None:
            if key.startswith("disksubsystem"):
                reader.problem(
                    f"unknown table section <{_local(section)}>; ignored", section, severity="note"
                )
            continue
        if kind in run.tables:
            reader.problem(f"second <{_local(section)}> section; the first is used", section)
            continue
        table = InstanceTable(kind, source=reader.source)
        for instance in _instances(reader, section):
            name = (instance.get("name") or "").strip()
            counters = [c for c in instance if isinstance(c.tag, str) and _local(c) == "counter"]
            if not name:
                reader.problem("<instance> without a name; skipped", instance, lost=len(counters))
                continue
            if _TOTAL_INSTANCE.match(name):
                # Summing instances must not count a total row twice.
                reader.problem(
                    f"instance {name!r} is a total, not a database; skipped", instance, severity="note"
                )
                continue
            if table.row(name) is not None:
                reader.problem(
                    f"instance {name!r} appears twice; the first is used", instance, lost=len(counters)
                )
                continue
            row = InstanceRow(name)
            for counter in counters:
                if any(
                    value.strip()
                    for attr, value in counter.attrib.items()
                    if attr not in _COUNTER_CORE_ATTRIBUTES
                ):
                    other_values += 1
                    first_other = first_other if first_other is not None else counter
                _read_counter(reader, counter, kind, row)
            table.rows.append(row)
        if table.rows:
            run.tables[kind] = table
    if other_values and first_other is not None:
        reader.problem(
            f"{other_values} counter(s) carry values besides the average (e.g. minimum/maximum); "
            "only averages are read",
            first_other,
            severity="note",
        )


def _instances(reader: _Reader, section: etree._Element) -> list[etree._Element]:
    found: list[etree._Element] = []
    for child in section:
        if not isinstance(child.tag, str):
            continue
        if _local(child) == "instance":
            found.append(child)
        elif _local(child) == "object":
            name = (child.get("name") or "").strip()
            if name and not L.INSTANCE_TABLE_FIRST_HEADER.match(L.normalize_label(name)):
                reader.problem(
                    f"object {name!r} is not per database instance; ignored", child, severity="note"
                )
                continue
            found += [i for i in child if isinstance(i.tag, str) and _local(i) == "instance"]
    return found


def _read_counter(reader: _Reader, counter: etree._Element, kind: TableKind, row: InstanceRow) -> None:
    label = counter.get("name") or ""
    key = L.INSTANCE_COLUMNS.get(L.normalize_header(label))
    if key is None:
        return  # a counter this tool does not use (recovery reads, ...)
    if kind is TableKind.LOG_REPLICATION:
        key = L.REPLICATION_ALIASES.get(key, key)
    average = counter.get("average")
    if average is None or not average.strip():
        reader.unreadable_figure(f"counter {label!r} of {row.instance!r} has no average; skipped", counter)
        return
    try:
        value = xml_number(average)
    except ValueError:
        reader.unreadable_figure(
            f"counter {label!r} of {row.instance!r}: average {average!r} is not a number; skipped", counter
        )
        return
    if key in row.values:
        reader.problem(
            f"counter {label!r} of {row.instance!r} appears twice; the first is used", counter, lost=1
        )
        return
    row.values[key] = value
