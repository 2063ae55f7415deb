"""Render a Document to one self-contained HTML file (inline CSS, inline SVG, no network).

Templates: Jinja2 with autoescape and StrictUndefined, from the manifest's override folder first,
then the project's ``templates/<name>/``; every template file is resolved and must be a regular
file inside one of those two folders (``ConfinedLoader``). Vendor Markdown is rendered with raw
HTML disabled and images disabled, so nothing in a manifest can inject markup or make a reader
fetch anything.
"""

from __future__ import annotations

import base64
import functools
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markdown_it import MarkdownIt
from markupsafe import Markup

from esrp_report import __version__
from esrp_report import model as m
from esrp_report.analysis import metrics
from esrp_report.analysis.rules import Status, find_rule
from esrp_report.files.safe import (
    Tree,
    is_plain_name,
    kind_problem,
    outside,
    read_regular_file,
    relative_parts,
)
from esrp_report.ingest.config.images import ImageError, read_image
from esrp_report.model.errors import InputError, TemplateError
from esrp_report.model.sections import PARTS_BY_KEY
from esrp_report.render import charts
from esrp_report.render.appendix import appendix_tables, test_log_lines
from esrp_report.render.document import Document, ServerView
from esrp_report.render.jetstress_text import duration, figure_name, table_name, timestamp
from esrp_report.render.outline import (
    outline,
    run_heading,
    section_anchor,
    table_words,
    vendor_sections_after,
)
from esrp_report.render.slots import CHART_MARKER, TOC_SLOT_PREFIX, fill_charts


def _templates() -> Path:
    # Installed from a wheel, the templates are inside the package (setup.py copies them there); in
    # a checkout they are the top-level folder beside it.
    package = Path(__file__).resolve().parents[1]
    inside = package / "templates"
    return inside if inside.is_dir() else package.parent / "templates"


TEMPLATES = _templates()

# Date formats a manifest's tested_date / published_date are written in ("2012-05-22",
# "May 22, 2012", "22 May 2012", "May 2012").
_DATE_FORMATS = ("%Y-%m-%d", "%B %d, %Y", "%b %d, %Y", "%d %B %Y", "%d %b %Y", "%B %Y", "%b %Y", "%Y")


def w3c_date(text: str) -> str | None:
    """A manifest's date in the W3C form the PDF metadata takes ("2012-05-22", "2012-05"), or
    None when it is empty or not a date."""
    text = " ".join(text.replace(".", " ").split())
    for fmt in _DATE_FORMATS:
        try:
            when = datetime.strptime(text, fmt)
        except ValueError:
            continue
        if "%d" in fmt:
            return when.strftime("%Y-%m-%d")
        return when.strftime("%Y-%m") if "%m" in fmt or "%b" in fmt or "%B" in fmt else when.strftime("%Y")
    return None


def document_metadata(info: m.DocumentInfo) -> dict[str, str]:
    """The PDF's metadata from the manifest's [document]: title, author (the vendor unless
    stated), subject, keywords and the created / modified dates (published, else tested), each
    as the HTML ``<meta>`` name WeasyPrint reads; a date that is not a date is left out."""
    exchange = f"Exchange {info.exchange_version}".strip() if info.exchange_version else "Exchange"
    esrp = f"ESRP-Storage {info.esrp_version}".strip() if info.esrp_version else "ESRP-Storage"
    keywords = info.keywords or ", ".join(
        x for x in (esrp, f"Microsoft {exchange}", "Jetstress", info.vendor, info.product) if x
    )
    meta = {
        "title": info.title,
        "author": info.author or info.vendor,
        "description": info.subject
        or f"{esrp} solution for Microsoft {exchange}: {info.vendor} {info.product}",
        "keywords": keywords,
    }
    created = w3c_date(info.published_date) or w3c_date(info.tested_date)
    if created:
        meta["dcterms.created"] = meta["dcterms.modified"] = created
    return meta


class ConfinedLoader(jinja2.BaseLoader):
    """Templates from ``folders``, the first that has the name winning, where Jinja2's
    FileSystemLoader would follow a symbolic link anywhere: a template name must be a relative,
    downward path (what ``include``, ``extends`` and ``import`` ask for included), and the file
    found must resolve inside one of the folders and be a regular file, checked before it is
    opened. A refusal is a ``TemplateError`` naming the file and the reason."""

    def __init__(self, folders: Sequence[Path], tree: Tree | None = None) -> None:
        self.folders = [Path(os.path.realpath(folder)) for folder in folders]
        self.tree = tree  # the manifest's folder: a template there must be its own file

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        """The template's source, file name and an up-to-date check, from the first folder that has it. Raises
        TemplateError for a name that leaves the folders or a file that cannot be read safely,
        TemplateNotFound when no folder has it."""
        parts = relative_parts(template)
        if parts is None:
            raise TemplateError(
                template,
                "a template name must stay inside the template folders",
                expected="a relative name such as 'partials/kv_table.html', without '..', '\\', "
                "a drive or a leading '/'",
            )
        for folder in self.folders:
            candidate = folder.joinpath(*parts)
            if not os.path.lexists(candidate):
                continue
            try:
                data = read_regular_file(
                    candidate, within=self.folders, what=f"template {template!r}", tree=self.tree
                )
            except InputError as exc:
                raise TemplateError(exc.path, exc.detail, expected=exc.expected) from None
            try:
                source = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise TemplateError(
                    candidate, "not UTF-8 text", location=f"byte {exc.start}", expected="UTF-8"
                ) from None
            return source, str(candidate), _unchanged(candidate)
        raise jinja2.TemplateNotFound(template)


def _unchanged(path: Path) -> Callable[[], bool]:
    """Jinja2's check that a cached template is still current: same target, same time stamp (a
    file turned into a link since is read, and judged, again)."""
    real = Path(os.path.realpath(path))
    mtime = real.stat().st_mtime_ns

    def check() -> bool:
        try:
            return Path(os.path.realpath(path)) == real and real.stat().st_mtime_ns == mtime
        except OSError:
            return False

    return check


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable("image")
    return md


_MD = _markdown()


def markdown(text: str) -> Markup:
    """Vendor Markdown as HTML, safe to mark up: raw HTML is escaped and unsafe link targets refused."""
    # html=False escapes any raw HTML; markdown-it refuses javascript:, vbscript:, file: and
    # data: link targets. The result is therefore safe to mark up.
    return Markup(_MD.render(text))


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """The sandbox with a bound on what one render may build through ``range``, ``*`` and ``**``
    (``{% for i in range(10**5) %}`` nested, ``'a' * 10**9``). Not a full bound: string methods
    and filters (``ljust``, ``center``, ``join``) and loops over repeated lists are not counted,
    so an override template can still build large strings (docs/security.md, "Not yet").

    ``range`` hands out at most ``ITEMS`` items over a whole render (nested loops included),
    and ``*`` or ``**`` whose result would pass ``ITEMS`` items (or digits) is refused before
    it is computed. :meth:`new_render` restores the budget.
    """

    ITEMS = 1_000_000
    intercepted_binops = frozenset({"*", "**"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.items_left = self.ITEMS
        self.globals["range"] = self._range

    def new_render(self) -> None:
        """Give the next render the whole budget again."""
        self.items_left = self.ITEMS

    def _range(self, *args: int) -> range:
        numbers = range(*args)
        if len(numbers) > self.items_left:
            raise SecurityError(f"range() past the {self.ITEMS:,} items one render may build")
        self.items_left -= len(numbers)
        return numbers

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any) -> Any:
        """``*`` and ``**`` checked for size before they run."""
        if operator == "*":
            for sized, times in ((left, right), (right, left)):
                repeated = isinstance(sized, str | list | tuple) and isinstance(times, int)
                if repeated and len(sized) * max(times, 0) > self.ITEMS:
                    raise SecurityError(f"a repetition past {self.ITEMS:,} items")
        integers = operator == "**" and isinstance(left, int) and isinstance(right, int)
        if integers and abs(left) > 1 and right * abs(left).bit_length() > self.ITEMS:
            raise SecurityError(f"a power past {self.ITEMS:,} bits")
        return super().call_binop(context, operator, left, right)


def environment(override: Path | None, name: str, tree: Tree | None = None) -> BoundedSandbox:
    """A sandboxed Jinja2 environment for the named template folder (the override folder searched first), with
    the project's filters. ``tree`` is the manifest's folder, whose templates are judged by what
    they are (files.safe.identity_problem). Raises TemplateError for a name that is no plain folder
    name, a missing template folder or an override that is no folder."""
    # A plain name, or ``TEMPLATES / "/"`` would be the root folder and every file on the machine
    # a template.
    if not is_plain_name(name):
        raise TemplateError(
            name,
            "a template name must be a folder name under templates/",
            expected="a plain name such as 'esrp'",
        )
    base = TEMPLATES / name
    problem = kind_problem(base, folder=True)
    if problem is not None or outside(base, [TEMPLATES]) is not None:
        raise TemplateError(base, f"no template {name!r} under {TEMPLATES} ({problem or 'links out of it'})")
    folders = [base]
    if override is not None:
        problem = kind_problem(override, folder=True)
        if problem is not None:
            raise TemplateError(override, f"the template override folder {problem}", expected="a folder")
        folders.insert(0, override)
    # Sandboxed: an override template comes from whoever wrote the manifest, and a plain
    # environment lets a template reach Python internals (and the os module) through attributes.
    env = BoundedSandbox(
        loader=ConfinedLoader(folders, tree),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["markdown"] = markdown
    env.filters["when"] = timestamp
    env.filters["figure_name"] = figure_name
    env.filters["table_name"] = table_name
    env.filters["hms"] = duration
    env.filters["basename"] = lambda path: str(path).replace("\\", "/").rsplit("/", 1)[-1]
    env.filters["css_string"] = css_string
    env.filters["chart_slot"] = chart_slot
    env.filters["chart_caption"] = chart_caption
    env.globals["Status"] = Status
    env.globals["TableKind"] = m.TableKind
    return env


@functools.lru_cache(maxsize=8)
def _shared_environment(override: Path | None, name: str, tree: Tree | None) -> BoundedSandbox:
    """One environment per template folder for this module's renders: a build renders a dozen
    pages from the same templates, and compiling them again for each took about half the
    rendering time. Jinja2 still reloads a template whose file changed."""
    return environment(override, name, tree)


def css_string(text: str) -> str:
    """Text for a double-quoted CSS string: only letters, digits, spaces and plain punctuation
    survive, so nothing a manifest holds can close the string or the style element."""
    return "".join(c if c.isalnum() or c in " .,:;·-_()/&+#'" else " " for c in text)


APPENDIX_TITLE = PARTS_BY_KEY["appendix"].title


def appendix_title(doc: Document) -> str:
    """The appendix's heading as printed, under which the PDF's outline gathers the servers'
    bookmarks: "A Performance testing" in a numbered form."""
    heading = next((h for h in outline(doc) if h.key == "appendix"), None)
    return heading.label if heading is not None else APPENDIX_TITLE


def top_level_titles(doc: Document) -> list[str]:
    """The chapters' headings of a numbered form, whose bookmarks stay at the top of the PDF's
    outline even when laid out in a server's piece (appendix B, after the last server)."""
    return [h.label for h in outline(doc) if h.level == 1 and h.key != "appendix"]


def figures_in(manifest: m.Manifest) -> dict[str, list[m.VendorFigure]]:
    """The vendor's figures by the section they are placed in, in manifest order."""
    placed: dict[str, list[m.VendorFigure]] = {}
    for figure in manifest.figures:
        placed.setdefault(figure.section, []).append(figure)
    return placed


def table_of_contents(doc: Document) -> list[tuple[str | None, str, str]]:
    """The document's contents as (section key or None, title, anchor): the fixed sections, the
    [sections] the manifest fills and the vendor's own sections where the manifest places them."""
    after = vendor_sections_after(doc.manifest)
    entries: list[tuple[str | None, str, str]] = [
        (s.key, s.title, section_anchor(s)) for s in after.get("contents", [])
    ]
    for part in doc.form.parts:
        # A Markdown part the manifest leaves empty is not printed, but its slot still holds
        # what is placed after it.
        if not part.markdown or part.key in doc.manifest.sections:
            entries.append((part.key if part.markdown else None, part.title, part.anchor))
        if part.slot:
            entries += [(s.key, s.title, section_anchor(s)) for s in after.get(part.key, [])]
    return entries


def figure_anchor(figure: m.VendorFigure) -> str:
    """The id of a vendor figure."""
    return f"figure-{figure.anchor}"


def figure_source(figure: m.VendorFigure) -> str:
    """A vendor image as a ``data:`` URL: the HTML stays one file and the PDF fetches nothing."""
    return f"data:{figure.media_type};base64,{base64.b64encode(figure.data).decode('ascii')}"


def _data_uri(path: Path, *, within: Path, links_allowed: bool = False) -> str:
    """The logo as a ``data:`` URL, read and judged again by the figures' function (the manifest
    reader judged it too, but the file may have changed since)."""
    try:
        logo = read_image(path, within=within, what="[branding] logo", links_allowed=links_allowed)
    except ImageError as exc:
        raise TemplateError(exc.path, exc.detail, location=exc.location, expected=exc.expected) from None
    return f"data:{logo.media_type};base64,{base64.b64encode(logo.data).decode('ascii')}"


@dataclass
class ChartPlan:
    """Every chart of a document, as specs: the solution's, and per appendix run its own."""

    solution: list[charts.ChartSpec] = field(default_factory=list)
    runs: dict[str, list[charts.ChartSpec]] = field(default_factory=dict)

    def all(self) -> list[charts.ChartSpec]:
        """Every chart spec of the document: the solution's, then each appendix run's."""
        return [*self.solution, *(spec for specs in self.runs.values() for spec in specs)]


# The latency charts of a run with a counter log, and the points of a series: a chart 6.6 inches
# wide shows no more.
LATENCY_CHARTS = (
    (m.DB_READ_LATENCY, "Database read latency per instance", "db-read-latency-avg"),
    (m.LOG_WRITE_LATENCY, "Log write latency per instance", "log-write-latency-avg"),
)
CHART_POINTS = 100


def chart_plan(doc: Document, max_points: int = CHART_POINTS) -> ChartPlan:
    """What to draw: achieved vs target and the IOPS split per server, and per run with a counter
    log its latency per instance. The series are thinned to ``max_points`` here (a chart 6.6 inches
    wide shows no more), so a spec is small enough to send to a worker process."""
    plan = ChartPlan()
    if not doc.form.charts:
        return plan
    perf = [(v.label, v.achieved, v.target) for v in doc.servers if v.achieved is not None]
    if perf:
        plan.solution.append(
            charts.ChartSpec(
                "chart-achieved",
                "achieved",
                ([p[0] for p in perf], [p[1] for p in perf], [p[2] for p in perf]),
            )
        )
    split_labels: list[str] = []
    parts: dict[str, list[float]] = {"transactional": [], "maintenance (BDM) reads": [], "log writes": []}
    for view in doc.servers:
        run = next((rv.run for rv in view.runs if rv.run.kind is m.TestKind.PERFORMANCE), None)
        tables = run.tables if run else {}
        trans = tables.get(m.TableKind.TRANSACTIONAL)
        bdm = tables.get(m.TableKind.BACKGROUND_MAINTENANCE)
        if trans is None:
            continue
        split_labels.append(view.label)
        parts["transactional"].append(_column_sum(trans, m.DB_READS) + _column_sum(trans, m.DB_WRITES))
        parts["maintenance (BDM) reads"].append(_column_sum(bdm, m.BDM_READS) if bdm else 0.0)
        parts["log writes"].append(_column_sum(trans, m.LOG_WRITES))
    if split_labels:
        plan.solution.append(charts.ChartSpec("chart-split", "split", (split_labels, parts)))
    for view in doc.appendix_views:  # the latency charts are the appendix's
        plan.runs.update(view_charts(doc, view, max_points))
    return plan


def view_charts(
    doc: Document, view: ServerView, max_points: int = CHART_POINTS
) -> dict[str, list[charts.ChartSpec]]:
    """The latency charts of one server's runs that have a counter log, by run anchor."""
    runs: dict[str, list[charts.ChartSpec]] = {}
    for rv in view.runs:
        log = rv.run.counter_log
        if log is None:
            continue
        specs = []
        for metric, title, rule_id in LATENCY_CHARTS:
            # The limit line is the rule's own threshold (12.25 ms is drawn at 12.25, not as printed).
            rule = find_rule(doc.rules, rule_id)
            limit = rule.limit(rv.run.kind, rv.run.generation) if rule is not None else None
            series = metrics.instance_series(rv.run, log, metric, max_points=max_points)
            if series.width > 1:
                specs.append(
                    charts.ChartSpec(
                        f"{rv.anchor}-{metric}", "latency", (series, f"{view.label}: {title}", limit)
                    )
                )
        runs[rv.anchor] = specs
    return runs


# What each solution chart shows, for its "Figure N" caption.
CHART_CAPTIONS = {
    "achieved": "Achieved and target transactional IOPS per server",
    "split": "Transactional IOPS, maintenance (BDM) reads and log writes per server",
}


def chart_caption(spec: charts.ChartSpec) -> str:
    """The caption of a chart: what it shows (a latency chart's own title)."""
    if spec.kind == "latency":
        return str(spec.args[1])
    return CHART_CAPTIONS.get(spec.kind, spec.key)


# Where the lists of tables and figures go (the end of the table of contents), and where the
# document's body ends: the appendix's tables and figures are not numbered.
CAPTION_LISTS_MARKER = "<!--esrp-caption-lists-->"
APPENDIX_START = '<h1 id="appendix"'
_CAPTION = re.compile(r"<(caption|figcaption)\b([^>]*)>(.*?)</\1>", re.S)
_ID = re.compile(r'(?:^|\s)id="([^"]*)"')
_MARKUP = re.compile(r"<[^>]*>")
CAPTION_KINDS = {"caption": ("Table", "tbl"), "figcaption": ("Figure", "fig")}


@dataclass(frozen=True)
class Caption:
    """A numbered caption: "Table" or "Figure", its number, its title (HTML text, markup removed)
    and the id the lists link to."""

    kind: str
    number: int
    title: str
    anchor: str

    @property
    def label(self) -> str:
        """The caption as printed: "Table 3 Simulated Exchange configuration"."""
        return f"{self.kind} {self.number} {self.title}"


def number_captions(
    html: str, *, whole: bool = False, before: Sequence[Caption] = ()
) -> tuple[str, list[Caption]]:
    """Number the body's captions in document order, "Table N" for each table's ``<caption>`` and
    "Figure N" for each ``<figcaption>``, and put the lists of tables and figures at
    ``CAPTION_LISTS_MARKER``. Done on the rendered page, so that a table or figure any template adds
    is numbered, and in Python, not with CSS counters, so that the screen HTML and the PDF (whose
    body is laid out on its own) carry the same numbers. Everything from the appendix's heading on
    is left as it is, unless ``whole`` (a form that numbers its appendix's tables too, whose pieces
    go on from the ``before`` captions of the pieces ahead). A caption keeps its id if it has one,
    else gets ``tbl-N`` / ``fig-N``."""
    end = -1 if whole else html.find(APPENDIX_START)
    body, rest = (html, "") if end < 0 else (html[:end], html[end:])
    found: list[Caption] = []

    def number(match: re.Match[str]) -> str:
        tag, attributes, inner = match.groups()
        kind, prefix = CAPTION_KINDS[tag]
        count = 1 + sum(1 for c in (*before, *found) if c.kind == kind)
        named = _ID.search(attributes)
        anchor = named.group(1) if named else f"{prefix}-{count}"
        if not named:
            attributes = f'{attributes} id="{anchor}"'
        title = " ".join(_MARKUP.sub("", inner).split())
        found.append(Caption(kind, count, title, anchor))
        return f'<{tag}{attributes}><span class="caption-number">{kind} {count}</span> {inner}</{tag}>'

    body = _CAPTION.sub(number, body)
    return body.replace(CAPTION_LISTS_MARKER, caption_lists(found), 1) + rest, found


def caption_lists(captions: Sequence[Caption]) -> str:
    """The list of tables and the list of figures (each only when there is one), linking to each
    caption; in print the table of contents' leaders and page numbers apply to them too."""
    out = []
    for kind, heading, ident in (
        ("Table", "List of tables", "list-of-tables"),
        ("Figure", "List of figures", "list-of-figures"),
    ):
        entries = [c for c in captions if c.kind == kind]
        if not entries:
            continue
        out.append(f'<h2 class="caption-list-heading" id="{ident}">{heading}</h2>\n<ol class="caption-list">')
        out += [f'<li><a href="#{c.anchor}">{c.label}</a></li>' for c in entries]
        out.append("</ol>")
    return "\n".join(out)


def chart_slot(spec: charts.ChartSpec) -> Markup:
    """A marker that ``fill_charts`` replaces with the drawn chart, so a page can be laid out
    while its charts are drawn elsewhere."""
    if not CHART_MARKER.fullmatch(f"<!--esrp-chart:{spec.key}-->"):
        raise TemplateError(f"chart {spec.key!r}", "a chart key must be a plain name")
    return Markup(f"<!--esrp-chart:{spec.key}-->")


def _column_sum(table: m.InstanceTable, key: str) -> float:
    return sum(row.values.get(key) or 0.0 for row in table.rows)


def _render(
    doc: Document,
    name: str,
    *,
    generated: datetime,
    for_pdf: bool,
    plan: ChartPlan,
    draft: bool = False,
    **extra: Any,
) -> str:
    manifest_dir = Path(doc.manifest.path).resolve().parent
    override = _override_folder(manifest_dir, doc.manifest.template_override)
    allowed = doc.manifest.linked_files_allowed
    env = _shared_environment(override, doc.manifest.template, Tree(manifest_dir, allowed))
    logo = (
        _data_uri(manifest_dir / doc.manifest.branding.logo, within=manifest_dir, links_allowed=allowed)
        if doc.manifest.branding.logo
        else None
    )
    # Every Jinja2 failure, in the page or anything it includes, is the template's author's
    # mistake: one line naming the template, never a traceback.
    try:
        env.new_render()
        template = env.get_template(name)
        return _fill(
            template, doc, generated=generated, for_pdf=for_pdf, plan=plan, logo=logo, draft=draft, **extra
        )
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(
            exc.filename or name, exc.message or "syntax error", location=f"line {exc.lineno}"
        ) from None
    except SecurityError as exc:
        raise TemplateError(name, f"the template (or an override) tried something unsafe: {exc}") from None
    except jinja2.TemplateNotFound as exc:
        raise TemplateError(
            exc.message or name, f"no such template in {' or '.join(str(f) for f in _folders(override, doc))}"
        ) from None
    except jinja2.TemplateError as exc:
        raise TemplateError(name, f"the template failed: {exc.message or type(exc).__name__}") from None
    except (ArithmeticError, LookupError, TypeError, ValueError, RecursionError) as exc:
        # An expression in an override failed ({{ 1 / 0 }}, a filter given text): still the
        # template author's mistake, told in one line.
        failure = f"{type(exc).__name__}: {exc}"
        raise TemplateError(name, f"an expression in the template failed: {failure}") from None


def _folders(override: Path | None, doc: Document) -> list[Path]:
    return [*([override] if override else []), TEMPLATES / doc.manifest.template]


def _override_folder(manifest_dir: Path, override: str | None) -> Path | None:
    """The manifest's template override folder, which must still resolve inside the manifest's
    folder (the manifest reader checked it; the folder may have been swapped for a link since)."""
    if override is None:
        return None
    folder = manifest_dir / override
    real = outside(folder, [manifest_dir])
    if real is not None:
        raise TemplateError(
            folder,
            f"[template] override resolves to {real}, outside the manifest's folder",
            expected=f"a folder inside {manifest_dir}",
        )
    return folder


def _fill(
    template: jinja2.Template,
    doc: Document,
    *,
    generated: datetime,
    for_pdf: bool,
    plan: ChartPlan,
    logo: str | None,
    draft: bool,
    **extra: Any,
) -> str:
    headings = outline(doc)
    return template.render(
        draft=draft,
        doc=doc,
        m=doc.manifest,
        conv=doc.convention,
        logo=logo,
        charts=plan,
        generated=generated,
        version=__version__,
        for_pdf=for_pdf,
        appendix_tables=appendix_tables,
        test_log_lines=test_log_lines,
        toc=table_of_contents(doc),
        sections_after=vendor_sections_after(doc.manifest),
        figures_in=figures_in(doc.manifest),
        form=doc.form,
        outline=headings,
        heads={h.key: h for h in headings},
        run_heading=run_heading,
        table_words=table_words,
        section_anchor=section_anchor,
        figure_anchor=figure_anchor,
        figure_source=figure_source,
        metadata=document_metadata(doc.manifest.document),
        appendix_title=APPENDIX_TITLE,
        parts=PARTS_BY_KEY,
        caption_lists_marker=Markup(CAPTION_LISTS_MARKER),
        toc_slot_prefix=TOC_SLOT_PREFIX,
        footer_text=" · ".join(
            x for x in (doc.manifest.document.vendor, doc.manifest.document.part_number) if x
        ),
        **extra,
    )


def render_html(
    doc: Document,
    *,
    generated: datetime,
    plan: ChartPlan | None = None,
    drawn: dict[str, str] | None = None,
    draft: bool = False,
) -> str:
    """The whole document as one self-contained HTML file. Charts come drawn (``drawn``, by key);
    with ``drawn=None`` their markers stay in place for ``fill_charts``. Without a plan the
    document has no charts. ``draft`` marks it "DRAFT" (partials/draft.html)."""
    html, _ = number_captions(
        _render(
            doc,
            doc.form.template,
            generated=generated,
            for_pdf=False,
            plan=plan or ChartPlan(),
            draft=draft,
            part="all",
        ),
        whole=doc.form.numbered,
    )
    return html if drawn is None else fill_charts(html, drawn, for_pdf=False)


@dataclass
class PrintPart:
    """One separately laid-out piece of the PDF: the body, or one server's appendix."""

    html: str  # with chart markers still in place
    charts: list[charts.ChartSpec]
    anchor: str | None = None  # the server's appendix anchor; None for the body
    title: str = ""
    captions: list[Caption] = field(default_factory=list)  # those numbered in it (a numbered form's)
    opens: tuple[str, ...] = ()  # anchors of what the piece opens with besides its server (the appendix)

    @property
    def anchors(self) -> tuple[str, ...]:
        """The anchors that point at the piece's first page once the pieces are joined."""
        return (*self.opens, self.anchor) if self.anchor else self.opens


def render_print(
    doc: Document, *, generated: datetime, plan: ChartPlan | None = None, draft: bool = False
) -> list[PrintPart]:
    """The printable document in pieces that can be laid out in parallel: the body (title page
    to the start of Appendix A) and one piece per server's appendix, in document order; with
    ``draft`` each piece marks every page of its own "DRAFT"."""
    return list(iter_print(doc, generated=generated, plan=plan, draft=draft))


def iter_print(
    doc: Document, *, generated: datetime, plan: ChartPlan | None = None, draft: bool = False
) -> Iterator[PrintPart]:
    """``render_print`` one piece at a time, so each can be handed to a worker as soon as it is
    rendered."""
    plan = plan or ChartPlan()
    body, captions = number_captions(
        _render(
            doc, doc.form.template, generated=generated, for_pdf=True, plan=plan, draft=draft, part="body"
        )
    )
    yield PrintPart(body, list(plan.solution))
    for view in doc.appendix_views:
        part = appendix_part(doc, view, generated=generated, plan=plan, before=captions, draft=draft)
        captions = [*captions, *part.captions]
        yield part


def appendix_part(
    doc: Document,
    view: ServerView,
    *,
    generated: datetime,
    plan: ChartPlan,
    before: Sequence[Caption] | None = None,
    draft: bool = False,
) -> PrintPart:
    """One server's appendix as a piece of the PDF; the first server's opens with the appendix's
    heading and introduction, so that they do not stand alone on a page. A form that numbers its
    appendix's captions numbers them on from ``before``, the captions of the pieces ahead of it
    (not known for a piece laid out early: `build` lays it out again when its numbers turn out
    different)."""
    intro = bool(doc.appendix_views) and view.anchor == doc.appendix_views[0].anchor
    html = _render(
        doc,
        doc.form.appendix,
        generated=generated,
        for_pdf=True,
        plan=plan,
        draft=draft,
        view=view,
        part="appendix",
        intro=intro,
    )
    captions: list[Caption] = []
    if doc.form.numbered:
        html, captions = number_captions(html, whole=True, before=before or ())
    specs = [spec for rv in view.runs for spec in plan.runs.get(rv.anchor, [])]
    opens = (PARTS_BY_KEY["appendix"].anchor,) if intro else ()
    return PrintPart(
        html,
        specs,
        anchor=view.anchor,
        title=f"{view.label} ({view.machine})",
        captions=captions,
        opens=opens,
    )


@dataclass(frozen=True)
class EvidenceFile:
    """One evidence file a build read, for the reviewer's report: the server it is of, its name as
    given (relative to the manifest's folder when inside it), its size in bytes and the SHA-256 of
    its bytes as hex (both None: gone since it was read)."""

    server: str
    name: str
    size: int | None
    sha256: str | None = None


REVIEW_TEMPLATE = "review.html"


def render_review(
    doc: Document,
    *,
    generated: datetime,
    files: Sequence[EvidenceFile],
    for_pdf: bool,
    draft: bool = False,
) -> str:
    """The reviewer's report beside the vendor's document, from the same ``Document``: the
    verdicts (solution, server, test, each rule on each instance with its value and limit), the
    evidence notes and disagreements, what was not evaluated and why, and every evidence file read
    (``files``). One page, laid out in one piece (it has no appendix to join)."""
    return _render(
        doc,
        REVIEW_TEMPLATE,
        generated=generated,
        for_pdf=for_pdf,
        plan=ChartPlan(),
        draft=draft,
        files=list(files),
        part="review",
    )
