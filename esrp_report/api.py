"""The library entry points the CLI (and anyone else) calls."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from esrp_report import convert as counter_convert
from esrp_report.assess import SolutionAssessment, assess
from esrp_report.audit import AuditResult, audit
from esrp_report.document import Document, build_document
from esrp_report.errors import EsrpError, InputError
from esrp_report.ingest import blg, config_xml, counter_csv, report_html, result_xml, test_log
from esrp_report.ingest import evidence as ev
from esrp_report.ingest.manifest import read_manifest
from esrp_report.ingest.published import read_document
from esrp_report.ingest.sizing_spec import load_sizing_spec, spec_from_table
from esrp_report.manifest_init import init_manifest
from esrp_report.model import Manifest, Problem, Solution
from esrp_report.render import payload
from esrp_report.render.audit_report import render_audit_html
from esrp_report.render.charts import draw
from esrp_report.render.html import (
    APPENDIX_TITLE,
    TEMPLATES,
    chart_plan,
    fill_charts,
    render_html,
    render_print,
)
from esrp_report.render.pdf import PartJob, join_parts, render_part, render_pdf, warm_up
from esrp_report.rules import load_rules
from esrp_report.sizing import SizingResult, SizingSpec, size


def check(
    paths: list[Path],
    *,
    rules_file: Path | None = None,
    target_iops: float | None = None,
    name: str | None = None,
) -> SolutionAssessment:
    """Read the evidence under ``paths`` and judge it."""
    rules = load_rules(rules_file)
    solution = ev.load_solution(paths, name or ", ".join(p.name or str(p) for p in paths))
    return assess(solution, rules, target_iops)


def inspect(path: Path) -> dict[str, Any]:
    """Describe any supported file: its format and what it holds."""
    fmt = ev.detect_format(path)
    out: dict[str, Any] = {"file": str(path), "format": fmt}
    if fmt == ev.REPORT_HTML:
        out.update(payload.describe_run(report_html.read_report(path)))
    elif fmt == ev.RESULT_XML:
        out.update(payload.describe_run(result_xml.read_result_xml(path)))
    elif fmt == ev.CONFIG_XML:
        profile, problems = config_xml.read_config_xml_with_problems(path)
        out.update(
            {
                "test_type": profile.test_type,
                "duration": profile.duration,
                "mailbox_count": profile.mailbox_count,
                "mailbox_iops": profile.mailbox_iops,
                "target_iops": profile.target_iops,
                "mailbox_quota_mb": profile.mailbox_quota_mb,
                "thread_count": profile.thread_count,
                "log_interval_ms": profile.log_interval_ms,
                "threshold_sets": {
                    name: {"thresholds_ms": vars(t), "test_run_types": kinds}
                    for name, (t, kinds) in profile.threshold_sets.items()
                },
                "instances": len(profile.instances),
                "problems": [payload.problem_dict(p) for p in problems],
            }
        )
    elif fmt == ev.COUNTER_CSV:
        out.update(counter_csv.describe_counter_log(counter_csv.read_counter_csv(path)))
    elif fmt == ev.BLG:
        out.update(blg.describe_blg(path))
    elif fmt == ev.TEST_LOG:
        out.update(payload.describe_test_log(test_log.read_test_log(path)))
    else:
        out["problems"] = [{"message": f"{fmt} files are recognised but not read yet"}]
    return out


def convert_counter_log(
    source: Path,
    output: Path,
    *,
    counters: list[str] | None = None,
    begin: datetime | None = None,
    end: datetime | None = None,
) -> counter_convert.ConvertResult:
    """A .blg (or perfmon CSV/TSV) as relog-style CSV/TSV or Parquet, streaming."""
    return counter_convert.convert(source, output, counters=counters, begin=begin, end=end)


@dataclass
class BuildResult:
    document: Document
    files: list[Path] = field(default_factory=list)
    pages: int | None = None
    refused: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


FORMATS = ("html", "pdf")
__all__ = [
    "FORMATS",
    "BuildResult",
    "audit_document",
    "build",
    "check",
    "convert_counter_log",
    "init_manifest",
    "inspect",
    "size_design",
    "solution_from_manifest",
    "write_audit_report",
]


def solution_from_manifest(manifest: Manifest) -> tuple[Solution, dict[str, str]]:
    """Read each server's results folders, in manifest order; label each machine as the manifest does."""
    base = Path(manifest.path).resolve().parent
    solution = Solution(Path(manifest.path).stem)
    labels: dict[str, str] = {}
    for entry in manifest.servers:
        paths = [base / p for p in entry.results]
        part = ev.load_solution(paths, entry.label)
        solution.problems.extend(part.problems)
        if len(part.servers) != 1:
            names = ", ".join(s.name for s in part.servers)
            solution.problems.append(
                Problem(
                    manifest.path,
                    f"{entry.label}: the results hold {len(part.servers)} machines ({names}); expected one",
                    severity="warning",
                )
            )
        for server in part.servers:
            if any(s.name.casefold() == server.name.casefold() for s in solution.servers):
                raise InputError(
                    manifest.path,
                    f"{entry.label}: machine {server.name} is already another server's",
                    location="[[servers]]",
                    expected="each machine's results under one server",
                )
            solution.servers.append(server)
            labels[server.name] = entry.label
    return solution, labels


def build(
    manifest_path: Path,
    out_dir: Path,
    *,
    formats: tuple[str, ...] = FORMATS,
    generated: datetime | None = None,
    progress: Callable[[str], None] = lambda _message: None,
    jobs: int | None = None,
) -> BuildResult:
    """Manifest + results folders -> HTML and/or PDF solution document under ``out_dir``.

    ``jobs``: processes for laying out the PDF and drawing charts (default: the usable cores)."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise EsrpError(f"unknown output format {', '.join(unknown)}; choose from {', '.join(FORMATS)}")
    manifest = read_manifest(manifest_path)
    progress(f"read {manifest_path.name}: {len(manifest.servers)} servers")
    jobs = max(1, jobs if jobs is not None else len(os.sched_getaffinity(0)))
    with _workers(jobs) as pool:
        return _build(
            manifest,
            manifest_path=manifest_path,
            out_dir=out_dir,
            formats=formats,
            generated=generated,
            progress=progress,
            jobs=jobs,
            pool=pool,
        )


def _build(
    manifest: Manifest,
    *,
    manifest_path: Path,
    out_dir: Path,
    formats: tuple[str, ...],
    generated: datetime | None,
    progress: Callable[[str], None],
    jobs: int,
    pool: ProcessPoolExecutor | None,
) -> BuildResult:
    if pool is not None:  # workers load their libraries while the evidence is read here
        for _ in range(jobs):
            pool.submit(warm_up)
    solution, labels = solution_from_manifest(manifest)
    progress(f"read the evidence of {len(solution.servers)} machines")
    base = Path(manifest.path).resolve().parent
    rules = load_rules(base / manifest.rules_file if manifest.rules_file else None)
    assessment = assess(solution, rules)
    doc = build_document(manifest, assessment, rules, labels)
    when = generated or datetime.now(UTC)
    result = BuildResult(doc)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = manifest_path.stem
    plan = chart_plan(doc)
    drawn: dict[str, str] = {}
    pending = []
    parts = []
    if "pdf" in formats:
        parts = render_print(doc, generated=when, plan=plan)
        part_jobs = [PartJob(p.html, p.charts, [base, TEMPLATES], base) for p in parts]
        progress(f"laying out {len(parts)} pieces of the PDF on {jobs} core{'s' if jobs > 1 else ''}")
        pending = [pool.submit(render_part, job) for job in part_jobs] if pool else []
    # The screen HTML is rendered while the workers lay out the PDF; its charts go in at the end.
    screen = render_html(doc, generated=when, plan=plan, drawn=None) if "html" in formats else None
    if "pdf" in formats:
        pieces = [f.result() for f in pending] if pool else [render_part(job) for job in part_jobs]
        joined = join_parts(
            pieces, appendix_title=APPENDIX_TITLE, anchors=[p.anchor for p in parts], number_from=1
        )
        for piece in pieces:
            drawn.update(piece.drawn)
            result.refused += piece.refused
            result.warnings += [w for w in piece.warnings if w not in result.warnings]
        target = out_dir / f"{stem}.pdf"
        target.write_bytes(joined.pdf)
        result.files.append(target)
        result.pages = joined.pages
        progress(f"wrote {target} ({joined.pages} pages)")
    if screen is not None:
        missing = [spec for spec in plan.all() if spec.key not in drawn]
        keys = [spec.key for spec in missing]
        drawn.update(zip(keys, pool.map(draw, missing) if pool else map(draw, missing), strict=True))
        target = out_dir / f"{stem}.html"
        target.write_text(fill_charts(screen, drawn, for_pdf=False), encoding="utf-8")
        result.files.insert(0, target)
        progress(f"wrote {target}")
    return result


@contextmanager
def _workers(jobs: int) -> Iterator[ProcessPoolExecutor | None]:
    """Worker processes for the PDF's pieces and the charts; none when one core is asked for.
    Spawned, not forked: the parent has Polars' threads running."""
    if jobs == 1:
        yield None
        return
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


def size_design(spec: Path | None = None, *, overrides: Mapping[str, Any] | None = None) -> SizingResult:
    """Capacity and IOPS sizing (docs/sizing.md): the spec file's inputs (default: the 004 paper's
    §6.3 example) with ``overrides`` (spec keys, e.g. ``{"users": 5000}``) applied on top."""
    base = load_sizing_spec(spec) if spec is not None else SizingSpec()
    return size(spec_from_table(overrides or {}, source="overrides", base=base))


def audit_document(path: Path, *, rules_file: Path | None = None) -> AuditResult:
    """Read a published document (PDF, HTML, text or Markdown) and check it against itself."""
    return audit(read_document(path), load_rules(rules_file))


def write_audit_report(
    result: AuditResult,
    out_dir: Path,
    *,
    formats: tuple[str, ...] = FORMATS,
    generated: datetime | None = None,
) -> list[Path]:
    """The audit as an HTML and/or PDF report through the document templates."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise EsrpError(f"unknown output format {', '.join(unknown)}; choose from {', '.join(FORMATS)}")
    out_dir.mkdir(parents=True, exist_ok=True)
    html = render_audit_html(result, generated=generated or datetime.now(UTC))
    stem = Path(result.source).stem + "-audit"
    written = []
    if "html" in formats:
        target = out_dir / f"{stem}.html"
        target.write_text(html, encoding="utf-8")
        written.append(target)
    if "pdf" in formats:
        target = out_dir / f"{stem}.pdf"
        target.write_bytes(render_pdf(html, allowed_roots=[TEMPLATES]).pdf)
        written.append(target)
    return written
