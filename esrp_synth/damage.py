"""Damage and contradictions planted in one real-shaped Jetstress run, for the verdict's property test.

A run here is the four files Jetstress leaves for one Performance test on one server: the HTML
report, the result XML, the perfmon counter log (CSV) and the configuration XML. ``RunFiles``
holds their text; every ``Damage`` is a pure function from one ``RunFiles`` to another, so a
property test can draw any combination of them over every source and write the result to a
folder. ``failing_twin`` makes the same run fail honestly in every source (the report, the XML
and the log all say the same 25 ms), so that a test can require that no damage turns it into
a PASS.

Not part of the product: nothing under ``esrp_report/`` imports this.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path

STAMP = "%m/%d/%Y %H:%M:%S.%f"
HTML_COLUMNS = (
    "db_read_latency",
    "db_write_latency",
    "db_reads",
    "db_writes",
    "db_read_bytes",
    "db_write_bytes",
    "log_read_latency",
    "log_write_latency",
    "log_reads",
    "log_writes",
    "log_read_bytes",
    "log_write_bytes",
)
XML_COUNTERS = {
    "db_read_latency": "I/O Database Reads Average Latency",
    "db_write_latency": "I/O Database Writes Average Latency",
    "db_reads": "I/O Database Reads/sec",
    "db_writes": "I/O Database Writes/sec",
    "log_write_latency": "I/O Log Writes Average Latency",
    "log_writes": "I/O Log Writes/sec",
}
# The figures the rules judge (an average latency per instance, the IOPS from the reads and writes).
JUDGED = ("db_read_latency", "log_write_latency", "db_reads", "db_writes")
LOG_COUNTERS = {
    "db_read_latency": "I/O Database Reads Average Latency",
    "log_write_latency": "I/O Log Writes Average Latency",
    "db_reads": "I/O Database Reads/sec",
}


@dataclass(frozen=True)
class RunFiles:
    """The text of one run's files, by role."""

    stem: str
    html: str = field(repr=False)
    xml: str = field(repr=False)
    csv: str = field(repr=False)
    config: str = field(repr=False)

    @classmethod
    def read(cls, folder: Path, stem: str) -> RunFiles:
        return cls(
            stem,
            (folder / f"{stem}.html").read_text(encoding="utf-8"),
            (folder / f"{stem}.xml").read_text(encoding="utf-8"),
            (folder / f"{stem}.csv").read_text(encoding="utf-8"),
            (folder / "JetstressConfig.xml").read_text(encoding="utf-8"),
        )

    def write(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{self.stem}.html").write_text(self.html, encoding="utf-8")
        (folder / f"{self.stem}.xml").write_text(self.xml, encoding="utf-8")
        (folder / f"{self.stem}.csv").write_text(self.csv, encoding="utf-8")
        (folder / "JetstressConfig.xml").write_text(self.config, encoding="utf-8")
        return folder

    # ---------------------------------------------------------------- the counter log as rows

    def log_rows(self) -> list[list[str]]:
        return list(csv.reader(io.StringIO(self.csv)))

    def with_log_rows(self, rows: list[list[str]]) -> RunFiles:
        out = io.StringIO()
        csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\r\n").writerows(rows)
        return replace(self, csv=out.getvalue())

    def collection_window(self) -> tuple[datetime, datetime]:
        """The report's collection window, in the log's local time."""

        def cell(label: str) -> datetime:
            found = re.search(rf"{label}</td>\s*<td>([^<]+)</td>", self.html)
            assert found, label
            return datetime.strptime(found.group(1), "%m/%d/%Y %I:%M:%S %p")

        return cell("Collection Start Time"), cell("Collection End Time")

    def instances(self) -> list[str]:
        section = _section(self.html, "Transactional I/O Performance")
        return re.findall(r"<tr>\s*<td>([^<]+)</td>", section)


def _section(html: str, legend: str) -> str:
    start = html.index(f"<legend>{legend}</legend>")
    return html[start : html.index("</fieldset>", start)]


def _replace_section(html: str, legend: str, new: str) -> str:
    start = html.index(f"<legend>{legend}</legend>")
    end = html.index("</fieldset>", start)
    return html[:start] + new + html[end:]


# ---------------------------------------------------------------- cell edits, one per source


def html_cell(files: RunFiles, instance: str, column: str) -> str:
    """One cell of the report's Transactional table, as printed."""
    section = _section(files.html, "Transactional I/O Performance")
    row = re.search(rf"<tr>\s*<td>{re.escape(instance)}</td>(.*?)</tr>", section, re.S)
    if row is None:
        return ""
    cells: list[str] = re.findall(r"<td>([^<]*)</td>", row.group(1))
    return cells[HTML_COLUMNS.index(column)]


def set_html_cell(files: RunFiles, instance: str, column: str, text: str) -> RunFiles:
    """One cell of the report's Transactional table, as printed text."""
    legend = "Transactional I/O Performance"
    section = _section(files.html, legend)
    row = re.search(rf"<tr>\s*<td>{re.escape(instance)}</td>(.*?)</tr>", section, re.S)
    if row is None:
        return files  # dropped already
    cells = list(re.finditer(r"<td>([^<]*)</td>", row.group(1)))
    target = cells[HTML_COLUMNS.index(column)]
    body = row.group(1)
    body = body[: target.start(1)] + text + body[target.end(1) :]
    section = section[: row.start(1)] + body + section[row.end(1) :]
    return replace(files, html=_replace_section(files.html, legend, section))


def drop_html_row(files: RunFiles, instance: str) -> RunFiles:
    """An instance's row gone from every per-instance table of the report."""
    html = files.html
    for legend in (
        "Transactional I/O Performance",
        "Background Database Maintenance I/O Performance",
        "Log Replication I/O Performance",
        "Total I/O Performance",
    ):
        section = _section(html, legend)
        section = re.sub(rf"<tr>\s*<td>{re.escape(instance)}</td>.*?</tr>", "", section, flags=re.S)
        html = _replace_section(html, legend, section)
    return replace(files, html=html)


def set_html_summary(files: RunFiles, label: str, text: str) -> RunFiles:
    """A label/value row of the report's summary tables (Overall Test Result, Target ..., Machine Name)."""
    html, n = re.subn(
        rf"({re.escape(label)}</td>\s*<td[^>]*>)([^<]*)(</td>)",
        lambda m: m.group(1) + text + m.group(3),
        files.html,
    )
    assert n, label
    return replace(files, html=html)


def set_xml_counter(files: RunFiles, instance: str, column: str, text: str | None) -> RunFiles:
    """One transactional counter of the result XML; None removes the element."""
    counter = XML_COUNTERS[column]
    start = files.xml.index("<disk-subsystem-transactional>")
    end = files.xml.index("</disk-subsystem-transactional>")
    part = files.xml[start:end]
    if f'<instance name="{instance}">' not in part:
        return files  # gone already (another damage dropped it)
    inst = part.index(f'<instance name="{instance}">')
    close = part.index("</instance>", inst)
    block = part[inst:close]
    pattern = rf'<counter name="{re.escape(counter)}" average="[^"]*"/>'
    new = "" if text is None else f'<counter name="{counter}" average="{text}"/>'
    block, n = re.subn(pattern, new, block)
    if n == 0:
        return files  # removed already
    part = part[:inst] + block + part[close:]
    return replace(files, xml=files.xml[:start] + part + files.xml[end:])


def drop_xml_instance(files: RunFiles, instance: str) -> RunFiles:
    """An instance gone from every per-instance section of the result XML."""
    xml = re.sub(rf'\s*<instance name="{re.escape(instance)}">.*?</instance>', "", files.xml, flags=re.S)
    return replace(files, xml=xml)


def set_xml_element(files: RunFiles, name: str, text: str) -> RunFiles:
    xml, n = re.subn(rf'(<element name="{re.escape(name)}" value=")[^"]*(")', rf"\g<1>{text}\g<2>", files.xml)
    assert n, name
    return replace(files, xml=xml)


def set_config(files: RunFiles, tag: str, text: str) -> RunFiles:
    config, n = re.subn(rf"(<{tag}>)[^<]*(</{tag}>)", rf"\g<1>{text}\g<2>", files.config)
    assert n, tag
    return replace(files, config=config)


def log_columns(files: RunFiles, instance: str, column: str) -> list[int]:
    header = files.log_rows()[0]
    counter = LOG_COUNTERS[column]
    return [
        i
        for i, name in enumerate(header)
        if name.endswith((f"/{instance})\\{counter}", f"({instance})\\{counter}"))
    ]


def set_log_column(files: RunFiles, instance: str, column: str, value: Callable[[float], float]) -> RunFiles:
    """Every sample of one instance's counter in the counter log, through ``value``."""
    rows = files.log_rows()
    for col in log_columns(files, instance, column):
        for row in rows[1:]:
            if row[col].strip():
                row[col] = repr(value(float(row[col])))
    return files.with_log_rows(rows)


# ---------------------------------------------------------------- a run that fails honestly


def failing_twin(files: RunFiles, instance: str | None = None, latency: float = 25.0) -> RunFiles:
    """The same run with one instance's database read latency at ``latency`` in every source: the report,
    the XML and every sample of the log agree, and the average rule fails on all of them."""
    name = instance or files.instances()[0]
    out = set_html_cell(files, name, "db_read_latency", f"{latency:.3f}")
    out = set_xml_counter(out, name, "db_read_latency", f"{latency}")
    out = set_log_column(out, name, "db_read_latency", lambda _v: latency)
    return set_html_summary(
        set_xml_element(out, "Overall Test Result", "Fail"), "Overall Test Result", "Fail"
    )


# ---------------------------------------------------------------- damage to the counter log


def _stamps(rows: list[list[str]]) -> list[datetime]:
    return [datetime.strptime(r[0], STAMP) for r in rows[1:]]


def _write_stamp(moment: datetime) -> str:
    return moment.strftime(STAMP)[:-3]


def log_window_rows(files: RunFiles) -> tuple[list[list[str]], int, int]:
    """The log's rows and the index range (of rows, header at 0) inside the report's window."""
    rows = files.log_rows()
    start, end = files.collection_window()
    stamps = _stamps(rows)
    first = next(i for i, s in enumerate(stamps) if s >= start) + 1
    last = max(i for i, s in enumerate(stamps) if s <= end) + 1
    return rows, first, last


def log_keep_fraction(files: RunFiles, fraction: float, where: float = 0.0) -> RunFiles:
    """Only ``fraction`` of the window's samples left, starting ``where`` (0..1) into it."""
    rows, first, last = log_window_rows(files)
    span = last - first + 1
    keep = max(1, int(span * fraction))
    begin = first + int((span - keep) * where)
    return files.with_log_rows([rows[0], *rows[begin : begin + keep]])


def log_remove_middle(files: RunFiles, share: float = 0.5) -> RunFiles:
    rows, first, last = log_window_rows(files)
    span = last - first + 1
    cut = max(2, int(span * share))
    mid = first + (span - cut) // 2
    return files.with_log_rows(rows[:mid] + rows[mid + cut :])


def log_shift(files: RunFiles, seconds: float) -> RunFiles:
    rows = files.log_rows()
    for row in rows[1:]:
        row[0] = _write_stamp(datetime.strptime(row[0], STAMP) + timedelta(seconds=seconds))
    return files.with_log_rows(rows)


def log_restamp(files: RunFiles, where: float, seconds_into_window: float) -> RunFiles:
    """A sample from outside the window (taken while Jetstress attained its prerequisites, or after
    the test) given a time ``seconds_into_window`` after the window's start, where it is judged."""
    rows, first, last = log_window_rows(files)
    outside = [*range(1, first), *range(last + 1, len(rows))]
    index = outside[min(len(outside) - 1, int(len(outside) * where))]
    start, _end = files.collection_window()
    rows[index][0] = _write_stamp(start + timedelta(seconds=seconds_into_window))
    return files.with_log_rows(rows)


def log_duplicate_row(files: RunFiles, where: float) -> RunFiles:
    rows, first, last = log_window_rows(files)
    index = first + int((last - first) * where)
    return files.with_log_rows([*rows[: index + 1], list(rows[index]), *rows[index + 1 :]])


def log_same_named_column(files: RunFiles, instance: str, column: str, value: float) -> RunFiles:
    """A second column with the same counter path as an existing one, reading ``value`` throughout."""
    rows = files.log_rows()
    col = log_columns(files, instance, column)[0]
    rows[0].append(rows[0][col])
    for row in rows[1:]:
        row.append(repr(value))
    return files.with_log_rows(rows)


def log_rename_machine(files: RunFiles, machine: str) -> RunFiles:
    rows = files.log_rows()
    rows[0] = [re.sub(r"^\\\\[^\\]+\\", lambda _m: f"\\\\{machine}\\", name) for name in rows[0]]
    return files.with_log_rows(rows)


def log_extra_instance(files: RunFiles, name: str, peak: float) -> RunFiles:
    """Another instance's columns (a copy of the first instance's), whose read latency reaches ``peak``
    once inside the window."""
    rows, first, last = log_window_rows(files)
    source = files.instances()[0]
    cols = [i for i, h in enumerate(rows[0]) if f"/{source})\\" in h or f"({source})\\" in h]
    read = LOG_COUNTERS["db_read_latency"]
    spike = first + (last - first) // 2
    for i in cols:
        rows[0].append(rows[0][i].replace(source, name))
        for r, row in enumerate(rows[1:], start=1):
            cell = row[i]
            if r == spike and rows[0][i].endswith(read):
                cell = repr(peak)
            row.append(cell)
    return files.with_log_rows(rows)


def log_drop_instance(files: RunFiles, instance: str) -> RunFiles:
    rows = files.log_rows()
    keep = [i for i, h in enumerate(rows[0]) if f"/{instance})\\" not in h and f"({instance})\\" not in h]
    return files.with_log_rows([[row[i] for i in keep] for row in rows])


def log_spike(files: RunFiles, instance: str, column: str, value: float, where: float) -> RunFiles:
    """One in-window sample of one counter set to ``value``."""
    rows, first, last = log_window_rows(files)
    index = first + int((last - first) * where)
    for col in log_columns(files, instance, column):
        rows[index][col] = repr(value)
    return files.with_log_rows(rows)


def log_cell(files: RunFiles, instance: str, column: str, text: str, where: float) -> RunFiles:
    """One in-window cell of one counter as text (may be no number at all)."""
    rows, first, last = log_window_rows(files)
    index = first + int((last - first) * where)
    for col in log_columns(files, instance, column):
        rows[index][col] = text
    return files.with_log_rows(rows)
