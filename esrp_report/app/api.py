"""The library entry points the CLI (and anyone else) calls.

What only some entry points need (the document renderer and PDF engine, the catalog's DuckDB,
the Parquet converter, the audit, the sizing) is imported inside them: `esrp-report inspect` and
`check` then pay only for reading the evidence, not for every library a build uses.
"""

from __future__ import annotations

# ruff: noqa: PLC0415 - imports inside functions are this module's design (see the docstring)
import contextlib
import math
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from esrp_report.files.safe import Tree, refuse_overwriting
from esrp_report.ingest import evidence as ev
from esrp_report.model import PLACEHOLDER, Manifest, Problem, Run, Server, Solution, TestKind
from esrp_report.model.errors import EsrpError, InputError
from esrp_report.model.sections import form_for

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from esrp_report.analysis.assess import ServerAssessment, SolutionAssessment
    from esrp_report.analysis.rules import Rule
    from esrp_report.analysis.stated import Difference
    from esrp_report.analysis.trends import Comparison
    from esrp_report.app.convert import ConvertResult
    from esrp_report.audit import AuditResult
    from esrp_report.ingest.config.placeholders import Placeholder
    from esrp_report.ingest.perfmon.blg import WindowAverages
    from esrp_report.model.sizing import SizingResult
    from esrp_report.model.trends import PublishedTable
    from esrp_report.render.document import Document
    from esrp_report.render.html import EvidenceFile, PrintPart
    from esrp_report.render.pdf import PartJob, PartResult


def check(
    paths: list[Path],
    *,
    rules_file: Path | None = None,
    target_iops: float | None = None,
    name: str | None = None,
    loosen: str | None = None,
    encoding: str | None = None,
) -> SolutionAssessment:
    """Read the evidence under ``paths`` and judge it. A rules file more lenient than Microsoft's
    thresholds is refused unless ``loosen`` says why; a ``target_iops`` that is not a finite number
    above 0 is an InputError (no rule can judge against it); ``encoding`` is the code page of every
    perfmon CSV/TSV (None: found from each file)."""
    from esrp_report.analysis.assess import assess
    from esrp_report.analysis.rules import load_rules
    from esrp_report.app import evidence
    from esrp_report.ingest.perfmon import counter_csv

    if target_iops is not None and not (math.isfinite(target_iops) and target_iops > 0):
        raise InputError("target_iops", f"is {target_iops!r}", expected="a finite number of IOPS above 0")
    rules = load_rules(rules_file, loosen=loosen)
    with counter_csv.encoding_given(encoding):
        solution = evidence.solution(paths, name or ", ".join(p.name or str(p) for p in paths))
    return assess(solution, rules, target_iops)


def inspect(path: Path, *, encoding: str | None = None) -> dict[str, Any]:
    """Describe any supported file: its format and what it holds (``encoding``: a perfmon
    CSV/TSV's code page instead of the one found from its bytes)."""
    from esrp_report.app import evidence

    return evidence.describe(path, evidence.ReadOptions(encoding))


def blg_averages(
    path: Path,
    *,
    counters: list[str] | None = None,
    begin: datetime | None = None,
    end: datetime | None = None,
) -> WindowAverages:
    """``inspect --averages``: per counter of a binary log, the exact window average from raw
    first/last values beside the mean of the cooked samples. Another format is an EsrpError."""
    from esrp_report.ingest import formats
    from esrp_report.ingest.perfmon import blg

    found = formats.detect(path)  # the detector every command uses (regular files only)
    if found is not formats.BLG:
        raise EsrpError(f"{path}: --averages needs a binary perfmon log (.blg); this is {found.looks_like}")
    return blg.window_report(path, counters=counters, begin=begin, end=end)


def convert_counter_log(
    source: Path,
    output: Path,
    *,
    counters: list[str] | None = None,
    begin: datetime | None = None,
    end: datetime | None = None,
    encoding: str | None = None,
    progress: Callable[[int], None] = lambda _written: None,
) -> ConvertResult:
    """A .blg (or perfmon CSV/TSV, in ``encoding`` if given) as relog-style CSV/TSV or Parquet,
    streaming; ``progress`` is told the samples written so far after each batch."""
    from esrp_report.app import convert as counter_convert

    return counter_convert.convert(
        source, output, counters=counters, begin=begin, end=end, encoding=encoding, progress=progress
    )


@dataclass
class BuildResult:
    """What `build` made: the document, the files written, the PDF's page count (None without a PDF), the URLs
    refused while laying it out, and WeasyPrint's warnings."""

    document: Document
    files: list[Path] = field(default_factory=list)
    pages: int | None = None
    refused: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    loosened: list[str] = field(default_factory=list)  # rules the manifest made lenient, and why
    # A draft's TODO(vendor) lines (a build that is not a draft refuses them).
    placeholders: list[Placeholder] = field(default_factory=list)
    # Why the verdict is not PASS, one line each (SolutionAssessment.blocking); empty for PASS.
    blocking: list[str] = field(default_factory=list)
    deprecated: list[str] = field(default_factory=list)  # manifest keys still read but no longer used


FORMATS = ("html", "pdf")
__all__ = [
    "FORMATS",
    "BuildResult",
    "audit_document",
    "blg_averages",
    "build",
    "check",
    "compare_catalog",
    "compare_paths",
    "compare_runs",
    "convert_counter_log",
    "init_manifest",
    "inspect",
    "load_compared_run",
    "size_design",
    "solution_from_manifest",
    "usable_cores",
    "write_audit_report",
    "write_compare_report",
]


def solution_from_manifest(manifest: Manifest) -> tuple[Solution, dict[str, str]]:
    """Read each server's results folders, in manifest order; label each machine as the manifest does."""
    solution = Solution(Path(manifest.path).stem)
    labels = {server.name: label for server, label in _read_servers(manifest, solution)}
    return solution, labels


def _read_servers(manifest: Manifest, solution: Solution) -> Iterator[tuple[Server, str]]:
    """Each server's evidence, in manifest order, added to ``solution`` (with the problems met)
    and yielded with its label as soon as it is read."""
    from esrp_report.app import evidence

    base = Path(manifest.path).resolve().parent
    for entry in manifest.servers:
        paths = [base / p for p in entry.results]
        part = evidence.solution(paths, entry.label)
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
            yield server, entry.label


def refuse_unexplained_differences(
    manifest: Manifest, solution: Solution, labels: Mapping[str, str]
) -> list[Difference]:
    """The facts the manifest states differently from the evidence, each with the manifest's reason
    (analysis/stated.py); raise InputError (exit 2) for the first one without a reason, naming the
    manifest's key and value and the evidence's file and value, and how many more there are."""
    from esrp_report.analysis.stated import differences

    by_label: dict[str, list[Run]] = {}
    for server in solution.servers:
        by_label.setdefault(labels.get(server.name, server.name), []).extend(server.runs)
    found = differences(manifest, list(by_label.items()))
    unexplained = [d for d in found if d.reason is None]
    if unexplained:
        more = f" ({len(unexplained) - 1} more difference(s) after this one)" if len(unexplained) > 1 else ""
        raise InputError(manifest.path, unexplained[0].refusal() + more)
    return found


def _output_folder(out_dir: Path) -> None:
    """The folder the documents are written to, made when missing; a file or an unwritable place
    there is the user's error, named with the fix, not a traceback."""
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(out_dir, "is a file, not a folder: name a folder for the output with -o")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(
            out_dir, f"cannot make the output folder: {exc.strerror or exc}; name another with -o"
        ) from exc


def write_output(target: Path, data: str | bytes, written: list[Path]) -> None:
    """Write one output file; a full disk, a read-only folder or a folder gone is an InputError
    naming the file and what was kept (``written``, the files of this command already whole),
    never a traceback. A partial file is removed: half a PDF is worse than none."""
    try:
        if isinstance(data, str):
            target.write_text(data, encoding="utf-8")
        else:
            target.write_bytes(data)
    except OSError as exc:
        with contextlib.suppress(OSError):
            target.unlink(missing_ok=True)
        kept = ", ".join(str(p) for p in written) or "nothing else of this command"
        raise InputError(
            target,
            f"cannot write: {exc.strerror or exc}; the partial file was removed; kept: {kept}",
            expected="a folder with room that this user can write (name another with -o)",
        ) from None


def build(
    manifest_path: Path,
    out_dir: Path,
    *,
    formats: tuple[str, ...] = FORMATS,
    generated: datetime | None = None,
    progress: Callable[[str], None] = lambda _message: None,
    jobs: int | None = None,
    allow_linked_files: bool = False,
    draft: bool = False,
) -> BuildResult:
    """Manifest + results folders -> HTML and/or PDF solution document under ``out_dir``, and
    beside it the reviewer's report (``<stem>-review.html`` / ``.pdf``): the vendor's document
    holds what a published ESRP document holds; the tool's verdicts, evidence notes and provenance
    are the review's.

    ``jobs``: processes for laying out the PDF and drawing charts (default: one, this process).
    A worker process runs the calling script's top level again before it starts (forkserver and
    spawn both do), so a plain script without ``if __name__ == "__main__":`` broke the pool when
    every core was the default (issue 32); more than one is asked for, e.g. ``jobs=usable_cores()``,
    by a caller that has the guard, as the command line does.
    ``allow_linked_files``: the manifest's files may be hard links or on another device (the
    person running the build vouches for them; see files/safe.py).
    ``draft``: build a manifest that still holds ``TODO(vendor)`` placeholders (listed in the
    result) instead of refusing it with an InputError naming each; every page of the document
    and the review is marked "DRAFT"."""
    from concurrent.futures.process import BrokenProcessPool

    from esrp_report.analysis.sizing import sized_manifest
    from esrp_report.ingest.config.manifest import read_manifest
    from esrp_report.ingest.config.placeholders import placeholders

    _check_formats(formats)
    _output_folder(out_dir)  # before the evidence is read: a wrong -o is said at once
    manifest = sized_manifest(read_manifest(manifest_path, allow_linked_files=allow_linked_files))
    left = placeholders(manifest)
    if left and not draft:
        raise InputError(
            manifest_path,
            f"{len(left)} {PLACEHOLDER} placeholder(s) left: "
            + "; ".join(
                f"line {p.line} {p.key}" if p.file == str(manifest_path) else p.describe() for p in left
            ),
            expected="the vendor's text in each (or --draft for a draft with them)",
        )
    stem = manifest_path.stem
    outputs = [
        out_dir / f"{stem}.html",
        out_dir / f"{stem}.pdf",
        *(out_dir / f"{stem}{REVIEW_SUFFIX}.{kind}" for kind in FORMATS),
        out_dir / f"{stem}-diagnostics.txt",
    ]
    refuse_overwriting(outputs, _build_inputs(manifest, manifest_path))
    progress(f"read {manifest_path.name}: {len(manifest.servers)} servers")
    jobs = max(1, jobs if jobs is not None else 1)
    try:
        with _workers(jobs) as pool:
            built = _build(
                manifest,
                manifest_path=manifest_path,
                out_dir=out_dir,
                formats=formats,
                generated=generated,
                progress=progress,
                jobs=jobs,
                pool=pool,
                draft=draft,
            )
    except BrokenProcessPool:
        # Not a user's input error but the caller's program: said as what to change in it.
        raise EsrpError(
            f"the {jobs} worker processes of the build stopped before their work was done: a script "
            "that calls build with jobs > 1 must make the call under 'if __name__ == \"__main__\":' "
            "(each worker runs the script's top level again), or use jobs=1"
        ) from None
    built.placeholders = left
    if manifest.document.stamp is not None:
        built.deprecated.append(
            "[document] stamp is deprecated and has no effect: the vendor's document never carries "
            "the tool's stamp, the reviewer's report always does; remove the key"
        )
    return built


def usable_cores() -> int:
    """The cores this process may run on: the command line's number of build workers."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


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
    draft: bool,
) -> BuildResult:
    from esrp_report.analysis.assess import assess_server, combine
    from esrp_report.analysis.rules import load_rules, loosened_problems
    from esrp_report.render.charts import draw
    from esrp_report.render.document import build_document, diagnostics_text
    from esrp_report.render.html import (
        TEMPLATES,
        appendix_title,
        chart_plan,
        iter_print,
        render_html,
        render_review,
        top_level_titles,
    )
    from esrp_report.render.pdf import PartJob, PdfJoiner, render_part, render_whole
    from esrp_report.render.slots import fill_charts

    base = Path(manifest.path).resolve().parent
    tree = Tree(base, manifest.linked_files_allowed)
    rules_file = base / manifest.rules_file if manifest.rules_file else None
    rules = load_rules(rules_file, loosen=manifest.rules_loosen, tree=tree)
    when = generated or datetime.now(UTC)
    solution = Solution(Path(manifest.path).stem)
    labels: dict[str, str] = {}
    servers: list[ServerAssessment] = []
    early: dict[str | None, tuple[PrintPart, Future[PartResult]]] = {}
    # A numbered form's appendix numbers its tables on from the body's: not known while reading.
    numbered = form_for(manifest.document.esrp_version, manifest.document.exchange_version).numbered
    for server, label in _read_servers(manifest, solution):
        labels[server.name] = label
        servers.append(_keep_chart_series_only(assess_server(server, rules)))
        in_appendix = manifest.appendix_servers is None or label in manifest.appendix_servers
        if pool is not None and "pdf" in formats and in_appendix and not numbered:
            # Laid out while the next servers are read: a server's appendix depends on nothing
            # the others change. A guess all the same, checked against the final piece below.
            part = _early_appendix(manifest, servers, rules, labels, when, draft=draft)
            early[part.anchor] = (part, pool.submit(render_part, _part_job(part, tree)))
    progress(f"read the evidence of {len(solution.servers)} machines")
    stated = refuse_unexplained_differences(manifest, solution, labels)
    assessment = combine(solution.name, servers, [*solution.problems, *loosened_problems(rules)])
    doc = build_document(manifest, assessment, rules, labels, stated=stated)
    result = BuildResult(
        doc, loosened=[r.loosened for r in rules if r.loosened], blocking=assessment.blocking
    )
    stem = manifest_path.stem
    if doc.problems or doc.disagreements:
        # The full diagnostics go beside the document, not in it (it shows readers' words).
        target = out_dir / f"{stem}-diagnostics.txt"
        write_output(target, diagnostics_text(doc), result.files)
        result.files.append(target)
        progress(f"wrote {target}")
    plan = chart_plan(doc)
    drawn: dict[str, str] = {}
    parts: list[PrintPart] = []
    pending: list[Future[PartResult]] = []
    files = evidence_files(doc)
    review: Future[PartResult] | None = None
    if "pdf" in formats:
        progress(f"laying out the PDF in pieces on {jobs} core{'s' if jobs > 1 else ''}")
        # The reviewer's report (in make demo its longest piece: 22 pages of tables, none of them
        # known before the evidence is read), then the body, go before any early appendix that
        # has not started yet. The report is laid out and numbered by a worker.
        waiting = [anchor for anchor, (_, future) in early.items() if future.cancel()]
        page = render_review(doc, generated=when, files=files, for_pdf=True, draft=draft)
        job = PartJob(page, [], [tree.root, TEMPLATES], tree.root, tree)
        review = pool.submit(render_whole, job) if pool is not None else None
        for part in iter_print(doc, generated=when, plan=plan, draft=draft):
            parts.append(part)
            guess = early.get(part.anchor)
            if guess is not None and part.anchor not in waiting and _same_part(guess[0], part):
                pending.append(guess[1])
            elif pool is not None:
                pending.append(pool.submit(render_part, _part_job(part, tree)))
    # The screen HTML is rendered while the workers lay out the PDF; its charts go in at the end.
    screen = (
        render_html(doc, generated=when, plan=plan, drawn=None, draft=draft) if "html" in formats else None
    )
    if "pdf" in formats:
        joiner = PdfJoiner()
        for i, part in enumerate(parts):
            # Joined in order as they come, while the later pieces are still being laid out.
            piece = pending[i].result() if pool is not None else render_part(_part_job(part, tree))
            _refuse_undrawn_images(piece.failed_images, doc)
            joiner.add(piece)
            drawn.update(piece.drawn)
            result.refused += piece.refused
            result.warnings += [w for w in piece.warnings if w not in result.warnings]
        joined = joiner.finish(
            appendix_title=appendix_title(doc),
            anchors=[p.anchors for p in parts],
            number_from=1,
            top_level=top_level_titles(doc),
        )
        target = out_dir / f"{stem}.pdf"
        write_output(target, joined.pdf, result.files)
        result.files.append(target)
        result.pages = joined.pages
        progress(f"wrote {target} ({joined.pages} pages)")
        laid_out = review.result() if review is not None else render_whole(job)
        target = out_dir / f"{stem}{REVIEW_SUFFIX}.pdf"
        write_output(target, laid_out.pdf, result.files)
        result.files.append(target)
        progress(f"wrote {target} ({laid_out.pages} pages)")
    if screen is not None:
        missing = [spec for spec in plan.all() if spec.key not in drawn]
        keys = [spec.key for spec in missing]
        drawn.update(zip(keys, pool.map(draw, missing) if pool else map(draw, missing), strict=True))
        target = out_dir / f"{stem}.html"
        write_output(target, fill_charts(screen, drawn, for_pdf=False), result.files)
        result.files.insert(0, target)
        progress(f"wrote {target}")
        target = out_dir / f"{stem}{REVIEW_SUFFIX}.html"
        write_output(
            target, render_review(doc, generated=when, files=files, for_pdf=False, draft=draft), result.files
        )
        result.files.insert(1, target)
        progress(f"wrote {target}")
    return result


REVIEW_SUFFIX = "-review"  # <stem>-review.html and .pdf: the reviewer's report beside the document


def evidence_files(doc: Document) -> list[EvidenceFile]:
    """Every evidence file the build read, by server in document order, each once: its name
    relative to the manifest's folder (as the manifest's results folders give it), its size and its
    SHA-256 now, once the build has read it (None when it is gone since)."""
    from esrp_report.catalog.archive import sha256_file
    from esrp_report.render.html import EvidenceFile

    base = Path(doc.manifest.path).resolve().parent
    read: list[tuple[str, str, Path]] = []
    seen: set[str] = set()
    for view in doc.servers:
        for rv in view.runs:
            for source in rv.run.sources:
                if source not in seen:
                    seen.add(source)
                    read.append((view.label, source, Path(source)))

    def describe(item: tuple[str, str, Path]) -> EvidenceFile:
        server, source, path = item
        try:
            name = path.relative_to(base).as_posix()
        except ValueError:
            name = source
        try:
            return EvidenceFile(server, name, path.stat().st_size, sha256_file(path))
        except OSError:
            return EvidenceFile(server, name, None, None)

    # hashlib lets go of the GIL: two threads hash on both cores.
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(describe, read))


def _build_inputs(manifest: Manifest, manifest_path: Path) -> list[Path]:
    """What a build reads: the manifest, the files it names and its results folders."""
    base = manifest_path.resolve().parent
    named = [
        manifest.branding.logo,
        manifest.rules_file,
        manifest.template_override,
        *(figure.file for figure in manifest.figures),
    ]
    results = [base / path for server in manifest.servers for path in server.results]
    return [manifest_path, *(base / name for name in named if name), *results]


def _keep_chart_series_only(server: ServerAssessment) -> ServerAssessment:
    """Work out the latency chart series of the server's runs now and release their counter
    samples: a build then holds one server's samples at a time, not the whole solution's (about
    33 MB a server with 24-hour stress logs). Logs streamed from their file hold none anyway."""

    from esrp_report.analysis import metrics
    from esrp_report.render.html import CHART_POINTS, LATENCY_CHARTS

    for assessed in server.runs:
        log = assessed.run.counter_log
        if log is None or log.streamed:
            continue
        for metric, _title, _rule in LATENCY_CHARTS:
            metrics.instance_series(assessed.run, log, metric, max_points=CHART_POINTS)
        log.release_samples()
    return server


def _check_formats(formats: tuple[str, ...]) -> None:
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise EsrpError(f"unknown output format {', '.join(unknown)}; choose from {', '.join(FORMATS)}")


def _part_job(part: PrintPart, tree: Tree) -> PartJob:
    from esrp_report.render.html import TEMPLATES
    from esrp_report.render.pdf import PartJob

    return PartJob(part.html, part.charts, [tree.root, TEMPLATES], tree.root, tree)


def _refuse_undrawn_images(failed: list[tuple[str, str]], doc: Document) -> None:
    """A figure the PDF engine could not load or draw would be a silent gap in the published PDF:
    the build stops (exit 2) naming it, before the PDF is written. Figures and the logo are
    embedded as data: URLs, so the URL says which one it was."""
    if not failed:
        return
    from esrp_report.render.html import _data_uri, figure_source

    url, why = failed[0]
    base = Path(doc.manifest.path).resolve().parent
    names = {figure_source(f): (base / f.file, f"the figure {f.caption!r}") for f in doc.manifest.figures}
    logo = doc.manifest.branding.logo
    if logo and url.startswith("data:") and url not in names:
        with suppress(InputError):  # changed since it was embedded: then not the one the URL names
            names[_data_uri(base / logo, within=base, links_allowed=True)] = (base / logo, "[branding] logo")
    shown = url if len(url) <= 80 else url[:77] + "..."
    path, what = names.get(url, (Path(doc.manifest.path), f"an image of a template ({shown})"))
    raise InputError(
        path,
        f"{what} cannot be drawn in the PDF: {why}",
        expected="an image the PDF engine can draw (open it in a browser; simplify it or give a PNG)",
    )


def _early_appendix(
    manifest: Manifest,
    servers: list[ServerAssessment],
    rules: list[Rule],
    labels: dict[str, str],
    when: datetime,
    *,
    draft: bool = False,
) -> PrintPart:
    """The appendix of the last server read, from a document of the servers read so far."""
    from esrp_report.analysis.assess import combine
    from esrp_report.render.document import build_document
    from esrp_report.render.html import ChartPlan, appendix_part, view_charts

    # An appendix piece prints no stated differences: none are worked out for it.
    doc = build_document(manifest, combine("", servers, []), rules, labels, stated=[])
    # The intro counts every server tested, most not read yet: as many as the manifest names, each
    # one machine (if not, the final piece differs and is laid out again).
    doc.tested = len(manifest.servers)
    view = doc.servers[-1]
    return appendix_part(doc, view, generated=when, plan=ChartPlan(runs=view_charts(doc, view)), draft=draft)


def _same_part(guess: PrintPart, final: PrintPart) -> bool:
    """Whether an early piece is the final one: the same page, the same charts of the same data."""
    return (
        guess.html == final.html
        and [(s.key, s.kind) for s in guess.charts] == [(s.key, s.kind) for s in final.charts]
        and all(_same_args(a.args, b.args) for a, b in zip(guess.charts, final.charts, strict=True))
    )


def _same_args(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, pl.DataFrame) or isinstance(y, pl.DataFrame):
            if not (isinstance(x, pl.DataFrame) and isinstance(y, pl.DataFrame) and x.equals(y)):
                return False
        elif x != y:
            return False
    return True


@contextmanager
def _workers(jobs: int) -> Iterator[ProcessPoolExecutor | None]:
    """Worker processes for the PDF's pieces and the charts; none when one core is asked for.

    Forked from a forkserver, never from this process (it has Polars' threads running). The
    server loads and warms WeasyPrint and matplotlib once (render/print_worker.py; its only other
    thread is OpenBLAS's, which handles fork), so the workers start with them ready: spawned, each
    paid about 2 s of CPU for that. The server and the workers start now, while this process reads
    the evidence."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import forkserver
    from multiprocessing.context import BaseContext

    if jobs == 1:
        yield None
        return
    context: BaseContext
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["esrp_report.render.print_worker"])
        forkserver.ensure_running()
    else:  # Windows: spawned workers, each loading the libraries itself
        context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        # A worker is created on a submit, which waits for the server's warm-up: not here.
        threading.Thread(target=_start_workers, args=(pool, jobs), daemon=True).start()
        try:
            yield pool
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # a failed build lays out nothing more
            raise


def _start_workers(pool: ProcessPoolExecutor, jobs: int) -> None:
    try:
        for _ in range(jobs):
            pool.submit(os.getpid)
    except RuntimeError:
        pass  # the build ended (failed) before its workers were needed


def size_design(spec: Path | None = None, *, overrides: Mapping[str, Any] | None = None) -> SizingResult:
    """Capacity and IOPS sizing (docs/sizing.md): the spec file's inputs (default: the 004 paper's
    §6.3 example) with ``overrides`` (spec keys, e.g. ``{"users": 5000}``) applied on top."""
    from esrp_report.analysis.sizing import size
    from esrp_report.ingest.config.sizing_spec import (
        load_sizing_spec,
        spec_from_table,
    )
    from esrp_report.model.sizing import SizingSpec

    base = load_sizing_spec(spec) if spec is not None else SizingSpec()
    return size(spec_from_table(overrides or {}, source="overrides", base=base))


def audit_document(
    path: Path,
    *,
    rules_file: Path | None = None,
    loosen: str | None = None,
    progress: Callable[[str], None] = lambda _stage: None,
) -> AuditResult:
    """Read a published document (PDF, HTML, text or Markdown) and check it against itself.

    ``progress`` is told each stage as it starts (a long PDF takes seconds to read)."""
    from esrp_report.analysis.rules import load_rules
    from esrp_report.audit import audit
    from esrp_report.ingest.documents.published import read_document

    progress(f"auditing: reading {path.name}")
    rules = load_rules(rules_file, loosen=loosen)
    document = read_document(path)
    tables, reports = len(document.summary_tables), len(document.reports)
    progress(f"auditing: checking {tables:,} tables and {reports:,} reports")
    return audit(document, rules)


def _report_outputs(out_dir: Path, stem: str, formats: tuple[str, ...]) -> list[Path]:
    return [out_dir / f"{stem}.{kind}" for kind in formats]


def write_audit_report(
    result: AuditResult,
    out_dir: Path,
    *,
    formats: tuple[str, ...] = FORMATS,
    generated: datetime | None = None,
) -> list[Path]:
    """The audit as an HTML and/or PDF report through the document templates."""
    from esrp_report.render.audit_report import render_audit_html

    _check_formats(formats)
    html = render_audit_html(result, generated=generated or datetime.now(UTC))
    stem = Path(result.source).stem + "-audit"
    refuse_overwriting(_report_outputs(out_dir, stem, formats), [Path(result.source)])
    return _write_report(out_dir, stem, formats, lambda _for_pdf: html)


def _write_report(
    out_dir: Path, stem: str, formats: tuple[str, ...], page: Callable[[bool], str]
) -> list[Path]:
    """``stem``.html and/or ``stem``.pdf; ``page(for_pdf)`` renders the page for screen or print."""
    from esrp_report.render.html import TEMPLATES
    from esrp_report.render.pdf import render_pdf

    _output_folder(out_dir)
    written: list[Path] = []
    if "html" in formats:
        target = out_dir / f"{stem}.html"
        write_output(target, page(False), written)
        written.append(target)
    if "pdf" in formats:
        target = out_dir / f"{stem}.pdf"
        write_output(target, render_pdf(page(True), allowed_roots=[TEMPLATES]).pdf, written)
        written.append(target)
    return written


# --- comparisons across runs (esrp-report compare; docs/compare.md) ---------------------------------


def load_compared_run(path: Path) -> list[Run]:
    """The Performance runs a RUN argument names: every server's under a results folder, or one
    report file (with the Jetstress configuration XML beside it, for the planned IOPS)."""
    from esrp_report.app import evidence

    if not path.exists():
        raise InputError(path, "no such file or folder")
    paths = [path]
    if path.is_file():
        paths += [
            p
            for p in sorted(path.parent.glob("*.xml"))
            if p.resolve() != path.resolve() and ev.detect_format(p) == ev.CONFIG_XML
        ]
    solution = evidence.solution(paths, path.name)
    return [run for server in solution.servers for run in server.runs if run.kind is TestKind.PERFORMANCE]


def _labels(paths: Sequence[Path]) -> list[str]:
    """Each path's name, with as many parent folders as it takes to tell them apart."""
    parts = [p.resolve().parts for p in paths]
    depth = 1
    while True:
        labels = ["/".join(p[-depth:]) for p in parts]
        if len(set(labels)) == len(labels) or depth >= max(len(p) for p in parts):
            return labels
        depth += 1


def compare_runs(
    runs: Sequence[tuple[str, Run | Sequence[Run]]],
    *,
    baseline: str | int | None = None,
    published: PublishedTable | None = None,
) -> Comparison:
    """Compare labelled runs (a Run, or the Runs of one test on several servers).

    ``baseline``: a label, or a 0-based position; default the published table's 100 % column,
    else the first run. ``published``: a printed table to check (one column per run)."""
    from esrp_report.analysis import trends

    figures = [trends.run_figures(label, chosen) for label, chosen in runs]
    if published is not None:
        trends.fits(published, len(figures))
    if isinstance(baseline, int):
        index = baseline
    elif baseline is not None:
        matches = [i for i, (label, _) in enumerate(runs) if label == baseline]
        if not matches:
            raise trends.TrendError(
                f"baseline {baseline!r} is none of the runs ({', '.join(label for label, _ in runs)})"
            )
        index = matches[0]
    else:
        index = (published.baseline() if published is not None else None) or 0
    comparison = trends.compare(figures, index)
    if published is not None:
        comparison.check = trends.check_published(comparison, published)
    return comparison


def compare_paths(
    paths: Sequence[Path],
    *,
    baseline: str | None = None,
    published: Path | None = None,
    table: str | None = None,
) -> Comparison:
    """``esrp-report compare``: each path a results folder (one or more servers) or a report file.
    ``baseline`` names one of them: as given, by its label, or by its 1-based position."""
    from esrp_report.analysis import trends
    from esrp_report.ingest.config.trend_spec import load_trend_table

    if not paths:
        raise trends.TrendError("nothing to compare: give two or more results folders or reports")
    labels = _labels(paths)
    runs: list[tuple[str, Run | Sequence[Run]]] = []
    for label, path in zip(labels, paths, strict=True):
        found = load_compared_run(path)
        if not found:
            raise trends.TrendError(f"run {label!r} ({path}): no Performance test report found")
        runs.append((label, found))
    given = [str(p) for p in paths]

    def names(i: int, wanted: str) -> bool:
        return wanted in (given[i], labels[i], paths[i].name) or Path(wanted).resolve() == paths[i].resolve()

    index = _baseline_index(baseline, given, names, "as given, by its folder name")
    table_spec = load_trend_table(published, table) if published is not None else None
    return compare_runs(runs, baseline=index, published=table_spec)


def _baseline_index(
    baseline: str | None, given: Sequence[str], names: Callable[[int, str], bool], how: str
) -> int | None:
    """The run ``--baseline`` names: the first run whose ``names(i, baseline)`` is true, else a
    1-based position; None without a baseline."""
    from esrp_report.analysis import trends
    from esrp_report.ingest.guards import ascii_int

    if baseline is None:
        return None
    for i in range(len(given)):
        if names(i, baseline):
            return i
    position = ascii_int(baseline, max_digits=9)  # '²'.isdigit() is true but int('²') raises
    if position is not None and 1 <= position <= len(given):
        return position - 1
    raise trends.TrendError(
        f"--baseline {baseline!r} is none of the runs given ({', '.join(given)}); "
        f"name one {how} or by its position (1, 2, ...)"
    )


def compare_catalog(
    refs: Sequence[str],
    catalog_dir: Path,
    *,
    baseline: str | None = None,
    published: Path | None = None,
    table: str | None = None,
) -> Comparison:
    """``esrp-report compare --catalog DIR``: each ref a design (its Performance runs, one per
    server) or a run id (or unique prefix) from ``catalog list``."""
    from esrp_report.analysis import trends
    from esrp_report.catalog.query import load_runs
    from esrp_report.catalog.store import Catalog
    from esrp_report.ingest.config.trend_spec import load_trend_table

    if not refs:
        raise trends.TrendError("nothing to compare: give two or more run ids or designs")
    with Catalog.open(catalog_dir, read_only=True) as catalog:
        runs: list[tuple[str, Run | Sequence[Run]]] = [(ref, load_runs(catalog, ref)) for ref in refs]
    index = _baseline_index(baseline, list(refs), lambda i, wanted: refs[i] == wanted, "as given")
    table_spec = load_trend_table(published, table) if published is not None else None
    return compare_runs(runs, baseline=index, published=table_spec)


def write_compare_report(
    comparison: Comparison,
    out_dir: Path,
    *,
    formats: tuple[str, ...] = FORMATS,
    generated: datetime | None = None,
    stem: str = "compare",
    comparison_inputs: Sequence[Path] = (),
) -> list[Path]:
    """The comparison as a self-contained HTML page and/or a PDF (WeasyPrint); ``comparison_inputs``
    (the runs' folders and files, the published table, the catalog) are never written over."""
    from esrp_report.render.trends_report import render_compare_html

    _check_formats(formats)
    when = generated or datetime.now(UTC)

    def page(for_pdf: bool) -> str:
        return render_compare_html(comparison, generated=when, for_pdf=for_pdf)

    refuse_overwriting(_report_outputs(out_dir, stem, formats), comparison_inputs)
    return _write_report(out_dir, stem, formats, page)


def init_manifest(results: list[Path], out: Path) -> str:
    """A starting manifest for ``results`` folders, written to ``out`` (see
    :func:`esrp_report.app.manifest_init.init_manifest`); its text."""
    from esrp_report.app import manifest_init

    refuse_overwriting([out], results)  # with --force, an evidence file named by -o was lost
    return manifest_init.init_manifest(results, out)
