"""A server's appendix is laid out early, while the next servers are read; the build keeps that
piece only if it is the final one. These tests pin the check that decides it."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from esrp_report import model as m
from esrp_report.analysis import metrics
from esrp_report.analysis.assess import assess_server, combine
from esrp_report.analysis.rules import load_rules
from esrp_report.app import api
from esrp_report.ingest.config.manifest import read_manifest
from esrp_report.ingest.perfmon.counter_csv import read_counter_csv
from esrp_report.model import Solution
from esrp_report.render.charts import ChartSpec
from esrp_report.render.document import build_document
from esrp_report.render.html import CHART_POINTS, LATENCY_CHARTS, PrintPart, chart_plan, iter_print

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
CLOCK = datetime(2026, 1, 1, tzinfo=UTC)


def _early_and_final(every_server: bool = True) -> tuple[list[PrintPart], list[PrintPart]]:
    # every server's appendix, or as the sample's own manifest has it (Server 4's only)
    manifest = read_manifest(SAMPLES / "vmax.toml")
    if every_server:
        manifest = dataclasses.replace(manifest, appendix_servers=None)
    rules = load_rules(None)
    solution = Solution("vmax")
    labels: dict[str, str] = {}
    servers = []
    early = []
    for server, label in api._read_servers(manifest, solution):
        labels[server.name] = label
        servers.append(api._keep_chart_series_only(assess_server(server, rules)))  # as the build does
        early.append(api._early_appendix(manifest, servers, rules, labels, CLOCK))
    doc = build_document(manifest, combine(solution.name, servers, solution.problems), rules, labels)
    final = list(iter_print(doc, generated=CLOCK, plan=chart_plan(doc)))[1:]
    return early, final


def test_early_appendices_are_the_final_ones_and_a_changed_one_is_not() -> None:
    early, final = _early_and_final()
    assert [p.anchor for p in early] == [f"server-{n}" for n in range(1, 11)]
    assert all(api._same_part(e, f) for e, f in zip(early, final, strict=True))
    assert not api._same_part(early[0], final[1])  # another server's appendix

    piece = final[0]
    assert piece.charts, "the VMAX sample has counter logs: latency charts"
    renamed = piece.html.replace("Server 1 (", "Server 9 (", 1)
    assert renamed != piece.html
    assert not api._same_part(early[0], dataclasses.replace(piece, html=renamed))

    # One sample of one instance's latency, different: the chart would differ.
    spec = piece.charts[0]
    series, title, limit = spec.args
    column = series.columns[1]
    nudged = series.with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(pl.col(column) + 1e-9).otherwise(pl.col(column))
    )
    charts = [ChartSpec(spec.key, spec.kind, (nudged, title, limit)), *piece.charts[1:]]
    assert not api._same_part(early[0], dataclasses.replace(piece, charts=charts))
    other_limit = [ChartSpec(spec.key, spec.kind, (series, title, 25.0)), *piece.charts[1:]]
    assert not api._same_part(early[0], dataclasses.replace(piece, charts=other_limit))
    assert api._same_part(early[0], dataclasses.replace(piece, charts=list(piece.charts)))


def test_a_representative_servers_early_appendix_is_the_final_one() -> None:
    """The piece of the one server the sample's appendix shows opens with the appendix's
    introduction, which counts every server tested: laid out when four of ten were read, it must
    count ten, or the build lays the piece out a second time (about 3 s of CPU in `make demo`)."""
    early, final = _early_and_final(every_server=False)
    guess = early[3]  # Server 4 (EMAIL5), the fourth read
    assert [p.anchor for p in final] == [guess.anchor] == ["server-4"]
    assert "a representative server of the 10 tested" in guess.html
    assert api._same_part(guess, final[0])


def test_a_released_log_keeps_its_chart_series_and_refuses_the_rest() -> None:
    """The build lets each server's counter samples go once its charts are worked out; the
    series it keeps are the ones a fresh read of the log gives, and anything else is an error."""
    manifest = read_manifest(SAMPLES / "vmax.toml")
    server, _label = next(iter(api._read_servers(manifest, Solution("vmax"))))
    assessed = assess_server(server, load_rules(None))
    run = next(a.run for a in assessed.runs if a.run.counter_log is not None)  # the Performance run
    log = run.counter_log
    assert log is not None
    fresh = read_counter_csv(Path(log.source))
    api._keep_chart_series_only(assessed)
    assert log.released and log.samples.columns == ["timestamp"]
    assert log.sample_count == fresh.sample_count
    for metric, _title, _rule in LATENCY_CHARTS:
        kept = metrics.instance_series(run, log, metric, max_points=CHART_POINTS)
        assert kept.width > 1
        assert kept.equals(metrics.instance_series(run, fresh, metric, max_points=CHART_POINTS))
    with pytest.raises(RuntimeError, match="released"):
        metrics.instance_series(run, log, m.DB_WRITE_LATENCY, max_points=CHART_POINTS)
