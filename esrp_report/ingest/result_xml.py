"""Jetstress result XML (``Performance*.xml``, root ``output``; facts §2.2).

Machine-written at full precision, so it is preferred over the HTML report when both exist.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from lxml import etree

from esrp_report.errors import UnsupportedFormatError
from esrp_report.ingest import labels as L
from esrp_report.ingest.names import kind_from_name
from esrp_report.ingest.safe_xml import read_xml, root_name
from esrp_report.model import InstanceRow, InstanceTable, Problem, Run, TableKind, TestKind

# Element name -> table. "disk-subsystem-transactional" is inferred, not seen in a source.
TABLE_ELEMENTS = {
    "disk-subsystem-total": TableKind.TOTAL,
    "disk-subsystem-of-dbmaintenance": TableKind.BACKGROUND_MAINTENANCE,
    "disk-subsystem-of-logreplication": TableKind.LOG_REPLICATION,
    "disk-subsystem-transactional": TableKind.TRANSACTIONAL,
}


def sniff_result_xml(head: bytes) -> bool:
    return root_name(head) == "output"


def _elements(root: etree._Element, section: str) -> dict[str, str]:
    return {
        str(e.get("name")): str(e.get("value", ""))
        for e in root.findall(f"{section}/element")
        if e.get("name") is not None
    }


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text.strip().replace(",", ""))
    except ValueError:
        return None


def _time(text: str | None) -> datetime | None:
    if not text:
        return None
    for fmt in ("%m/%d/%Y %I:%M:%S %p", "%Y-%m-%dT%H:%M:%S", "%m/%d/%Y %H:%M:%S"):
        try:
            return datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
    return None


def read_result_xml(path: str | Path) -> Run:
    source = str(path)
    root = read_xml(path)
    if etree.QName(root).localname != "output":
        raise UnsupportedFormatError(
            path,
            "not a Jetstress result XML",
            location="root element",
            expected="<output>",
            found=f"<{etree.QName(root).localname}>",
        )
    problems: list[Problem] = []
    summary = _elements(root, "test-summary")
    get = {L.normalize_label(k): v for k, v in summary.items()}.get
    kind = kind_from_name(source) or kind_from_name(get("performance log") or "") or TestKind.PERFORMANCE
    run = Run(kind=kind, machine=get("machine name") or "", sources=[source], summary=summary)
    run.overall_result = get("overall test result")
    run.test_description = get("test description")
    run.jetstress_version = get("jetstress version")
    run.ese_version = get("ese version")
    run.operating_system = get("operating system")
    run.performance_log = get("performance log")
    for attr, label in (
        ("test_start", "test start time"),
        ("test_end", "test end time"),
        ("collection_start", "collection start time"),
        ("collection_end", "collection end time"),
    ):
        setattr(run, attr, _time(get(label)))
    run.issues = [str(e.get("value")) for e in root.findall("test-issues/element") if e.get("value")]
    for label, value in _elements(root, "database-sizing").items():
        sizing_attr = L.SIZING_LABELS.get(L.normalize_label(label))
        number = _number(value)
        if sizing_attr is None:
            run.parameters[label] = value
        elif number is None:
            problems.append(Problem(source, f"{label}: not a number: {value!r}", location="database-sizing"))
        else:
            setattr(run.sizing, sizing_attr, int(number) if sizing_attr == "database_files" else number)
    run.parameters.update(_elements(root, "jetstress-system"))

    for element, kind_of_table in TABLE_ELEMENTS.items():
        section = root.find(element)
        if section is None:
            continue
        table = InstanceTable(kind_of_table, source=source)
        for instance in section.iter("instance"):
            values: dict[str, float] = {}
            for counter in instance.iter("counter"):
                name = L.normalize_header(str(counter.get("name", "")))
                key = L.INSTANCE_COLUMNS.get(name)
                if kind_of_table is TableKind.LOG_REPLICATION and key in L.REPLICATION_ALIASES:
                    key = L.REPLICATION_ALIASES[key]
                number = _number(counter.get("average"))
                if key is None:
                    continue
                if number is None:
                    problems.append(
                        Problem(
                            source,
                            f"counter {counter.get('name')!r}: average "
                            f"{counter.get('average')!r} is not a number",
                            location=element,
                        )
                    )
                    continue
                values[key] = number
            table.rows.append(InstanceRow(str(instance.get("name", "")), values))
        if table.rows:
            run.tables[kind_of_table] = table
    run.problems = problems
    return run
