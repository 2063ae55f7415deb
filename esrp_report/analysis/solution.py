"""Assemble what was read into runs and servers.

A run is one Jetstress test on one server: its HTML report, its result XML and its counter
log belong together (same file-name stem, or the counter log the report names). Where a report
and its result XML give the same figure, the XML is used and every disagreement is stated; this
comparison is why assembling is analysis, not reading (:mod:`esrp_report.ingest.evidence`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from esrp_report.analysis.compare import compare_tables, instance_key
from esrp_report.analysis.vetting import vet_figures, vet_once
from esrp_report.ingest.formats import Evidence
from esrp_report.ingest.jetstress.names import kind_from_name, normalized_stem
from esrp_report.model import InstanceTable, Problem, Run, Solution, TestKind

if TYPE_CHECKING:
    from esrp_report.ingest import event_log


def _merge_result_xml(run: Run, xml_run: Run) -> list[Problem]:
    """The result XML is machine-written at full precision: its figures are used, cell by cell. Where
    the report and the XML state one figure differently beyond the report's rounding, or one states a
    figure the other lacks, or their verdicts differ, the evidence contradicts itself: a problem with
    ``doubt`` set (the verdict is INCOMPLETE at best), never a silent choice of one."""
    problems: list[Problem] = []
    xml_source = xml_run.sources[0] if xml_run.sources else "result XML"
    html_source = run.sources[0] if run.sources else "report"
    # The HTML prints three decimals, so anything beyond half a unit of the third decimal differs.
    for d in compare_tables(
        xml_run.tables,
        xml_source,
        run.tables,
        html_source,
        tolerance=0.0,
        absolute_tolerance=0.0005 * (1 + 1e-9),
    ):
        problems.append(
            Problem(
                html_source,
                f"report and result XML disagree on {d.table} {d.instance} {d.metric}: "
                f"HTML {d.second_value!r}, XML {d.first_value!r}",
                severity="error",
                doubt=True,
            )
        )
    for kind, xml_table in xml_run.tables.items():
        html_table = run.tables.get(kind)
        if html_table is None:
            run.tables[kind] = xml_table
            continue
        problems.extend(_merge_table(html_table, xml_table, html_source, xml_source))
    for attr in (
        "achieved_iops",
        "target_iops",
        "initial_database_bytes",
        "final_database_bytes",
        "database_files",
    ):
        xml_value = getattr(xml_run.sizing, attr)
        html_value = getattr(run.sizing, attr)
        if xml_value is None:
            continue
        if html_value is not None and not (abs(float(xml_value) - float(html_value)) <= 0.0005 * (1 + 1e-9)):
            problems.append(
                Problem(
                    html_source,
                    f"report and result XML disagree on {attr}: HTML {html_value!r}, XML {xml_value!r}",
                    severity="error",
                    doubt=True,
                )
            )
        setattr(run.sizing, attr, xml_value)
    if xml_run.overall_result:
        run.reported_results[xml_source] = xml_run.overall_result
    if (
        xml_run.overall_result
        and run.overall_result
        and xml_run.overall_result.casefold() != run.overall_result.casefold()
    ):
        problems.append(
            Problem(
                html_source,
                f"report says {run.overall_result!r} but result XML says {xml_run.overall_result!r}",
                severity="error",
                doubt=True,
            )
        )
    run.issues.extend(xml_run.issues)
    run.sources.extend(xml_run.sources)
    run.problems.extend(xml_run.problems)
    return problems


def _merge_table(html: InstanceTable, xml: InstanceTable, html_source: str, xml_source: str) -> list[Problem]:
    """XML figures over the report's, row by row; a figure or a row one of them lacks is named."""
    problems: list[Problem] = []
    html_rows = {instance_key(row.instance): row for row in html.rows}
    xml_keys = {instance_key(row.instance) for row in xml.rows}
    # The report's columns: a figure the XML has in a column the report prints is one the report lost.
    printed = {metric for row in html.rows for metric in row.values}
    for row in xml.rows:
        mine = html_rows.get(instance_key(row.instance))
        if mine is None:
            html.rows.append(row)
            message = f"{html.kind.value} {row.instance}: in the result XML, not in the report"
            problems.append(Problem(html_source, message, severity="error", doubt=True))
            continue
        for metric in sorted(set(mine.values) - set(row.values)):
            problems.append(
                Problem(
                    xml_source,
                    f"{xml.kind.value} {row.instance} {metric}: in the report ({mine.values[metric]!r}), "
                    "not in the result XML",
                    severity="error",
                    doubt=True,
                )
            )
        for metric in sorted((set(row.values) - set(mine.values)) & printed):
            problems.append(
                Problem(
                    html_source,
                    f"{html.kind.value} {row.instance} {metric}: in the result XML ({row.values[metric]!r}), "
                    "not in the report",
                    severity="error",
                    doubt=True,
                )
            )
        mine.values.update(row.values)
    for key, row in html_rows.items():
        if key not in xml_keys:
            message = f"{html.kind.value} {row.instance}: in the report, not in the result XML"
            problems.append(Problem(xml_source, message, severity="error", doubt=True))
    return problems


def assemble(evidence: Evidence, name: str = "solution") -> Solution:
    """Group what was read into runs and servers."""
    solution = Solution(name, problems=list(evidence.problems))
    runs = list(evidence.runs)
    # Each source's figures are checked as read, before any is merged with another's: a report's
    # figure that cannot exist is named as the report's, whatever the result XML says.
    for run in [*runs, *evidence.result_xmls]:
        run.problems.extend(vet_figures(run))
    by_stem: dict[tuple[str, str], Run] = {}
    for run in runs:
        for key in _run_keys(run):
            by_stem.setdefault(key, run)

    for xml_run in evidence.result_xmls:
        key = _key(xml_run.sources[0]) if xml_run.sources else ("", "")
        target = by_stem.get(key)
        if target is None:
            runs.append(xml_run)
            for k in _run_keys(xml_run):
                by_stem.setdefault(k, xml_run)
        else:
            target.problems.extend(_merge_result_xml(target, xml_run))

    for log in evidence.counter_logs:
        target = by_stem.get(_key(log.source))
        if target is None:
            kind = kind_from_name(log.source)
            machines = log.counters["machine"].drop_nulls().unique().to_list()
            if kind is None:
                solution.problems.append(
                    Problem(
                        log.source,
                        "counter log matches no report and its name does "
                        "not say which Jetstress test it is (e.g. Performance_...); "
                        "treated as a Performance run",
                        severity="warning",
                    )
                )
                kind = TestKind.PERFORMANCE
            target = Run(
                kind=kind,
                machine=machines[0] if machines else Path(log.source).parent.name,
                sources=[log.source],
            )
            runs.append(target)
            by_stem.setdefault(_key(log.source), target)
        elif target.counter_log is not None:
            solution.problems.append(
                Problem(
                    log.source, f"a second counter log for {target.sources[0]}; ignored", severity="warning"
                )
            )
            continue
        else:
            target.sources.append(log.source)
        target.counter_log = log

    for tlog in evidence.test_logs:
        target = by_stem.get(_key(tlog.source))
        if target is None and tlog.entries:
            first = tlog.entries[0].timestamp
            folder = Path(tlog.source).parent
            target = next(
                (
                    r
                    for r in runs
                    if r.test_start
                    and r.test_end
                    and r.test_start <= first <= r.test_end
                    and any(Path(s).parent == folder for s in r.sources)
                ),
                None,
            )
        if target is None:
            solution.problems.append(
                Problem(tlog.source, "test log matches no run; not used", severity="warning")
            )
        elif target.test_log is None:
            target.test_log = tlog
            target.sources.append(tlog.source)

    for config_path, profile in evidence.configs:
        folder = config_path.parent
        for run in runs:
            if run.config is None and any(Path(s).parent == folder for s in run.sources):
                run.config = profile

    _count_event_errors(runs, evidence.event_logs, solution.problems)
    for run in runs:
        vet_once(run)

    for run in runs:
        machine = run.machine or (Path(run.sources[0]).parent.name if run.sources else "unknown")
        solution.server(machine).runs.append(run)
    return solution


def _count_event_errors(runs: list[Run], logs: list[event_log.EventLog], problems: list[Problem]) -> None:
    """Error events inside each run's test window, from the event logs in the run's folder."""
    if not logs:
        return
    # Imported only when there are event logs: the .evtx readers cost `check` about 20 ms of
    # start-up on every folder that has none (docs/benchmarks.md, "Stop 40: check and start-up").
    from esrp_report.ingest import event_log  # noqa: PLC0415

    for run in runs:
        if run.test_start is None or run.test_end is None or not run.sources:
            continue
        folder = Path(run.sources[0]).parent
        here = [log for log in logs if Path(log.source).parent == folder]
        if not here:
            continue
        offsets = {
            r.counter_log.utc_offset_minutes
            for r in runs
            if r.counter_log is not None
            and r.counter_log.utc_offset_minutes is not None
            and Path(r.counter_log.source).parent == folder
        }
        offset = offsets.pop() if len(offsets) == 1 else None
        start, end, exact = event_log.window_utc(run.test_start, run.test_end, offset)
        errors = [e for log in here for e in log.errors_between(start, end)]
        run.event_log_errors = len(errors)
        run.sources.extend(log.source for log in here)
        if not exact:
            problems.append(
                Problem(
                    run.sources[0],
                    "time zone of the test unknown (no counter log with a bias in its folder): "
                    "event-log errors counted over the window widened by the whole UTC-12..+14 range",
                    severity="note",
                )
            )
        for e in errors:
            problems.append(
                Problem(
                    run.sources[0],
                    f"error event {e.event_id} from {e.source or 'unknown source'} at "
                    f"{e.time_utc:%Y-%m-%d %H:%M:%S} UTC during the {run.kind.value} test",
                    severity="error",
                )
            )


def _key(source: str, folder: str | None = None) -> tuple[str, str]:
    """Files of one run share a folder and a file-name stem; the same names recur in every
    server's folder, so the folder is part of the key."""
    return (str(Path(source).parent) if folder is None else folder, normalized_stem(source))


def _run_keys(run: Run) -> list[tuple[str, str]]:
    keys = [_key(s) for s in run.sources]
    if run.performance_log and run.sources:
        # The report names its counter log by a path on the tested machine; it sits beside the report.
        keys.append(_key(run.performance_log, str(Path(run.sources[0]).parent)))
    return keys
