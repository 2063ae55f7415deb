"""Render a Document to one self-contained HTML file (inline CSS, inline SVG, no network).

Templates: Jinja2 with autoescape and StrictUndefined, from the manifest's override folder first,
then the project's ``templates/<name>/``. Vendor Markdown is rendered with raw HTML disabled and
images disabled, so nothing in a manifest can inject markup or make a reader fetch anything.
"""

from __future__ import annotations

import base64
import mimetypes
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
from markdown_it import MarkdownIt
from markupsafe import Markup

from esrp_report import __version__, metrics
from esrp_report import model as m
from esrp_report.document import Cell, Document
from esrp_report.errors import EsrpError
from esrp_report.render import charts
from esrp_report.render.numbers import fmt_number
from esrp_report.rules import Status
from esrp_report.synth.jetstress_html import TABLE_COLUMNS, TABLE_TITLES, duration, timestamp

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


class TemplateError(EsrpError):
    pass


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable("image")
    return md


_MD = _markdown()


def markdown(text: str) -> Markup:
    # html=False escapes any raw HTML; markdown-it refuses javascript:, vbscript:, file: and
    # data: link targets. The result is therefore safe to mark up.
    return Markup(_MD.render(text))


def environment(override: Path | None, name: str) -> jinja2.Environment:
    base = TEMPLATES / name
    if not base.is_dir():
        raise TemplateError(f"no template {name!r} under {TEMPLATES}")
    loaders: list[jinja2.BaseLoader] = []
    if override is not None:
        loaders.append(jinja2.FileSystemLoader(override))
    loaders.append(jinja2.FileSystemLoader(base))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["markdown"] = markdown
    env.filters["num"] = lambda v, d=3: fmt_number(v, d, thousands=True)
    env.filters["raw_num"] = lambda v, d=3: fmt_number(v, d)
    env.filters["when"] = timestamp
    env.filters["hms"] = duration
    env.filters["basename"] = lambda path: str(path).replace("\\", "/").rsplit("/", 1)[-1]
    env.filters["css_string"] = css_string
    env.filters["chart"] = lambda svg, for_pdf: _chart_markup(svg, for_pdf=for_pdf)
    env.globals["Status"] = Status
    env.globals["TableKind"] = m.TableKind
    return env


def _chart_markup(svg: str, *, for_pdf: bool) -> Markup:
    """Inline SVG in HTML; an SVG image in the PDF, where WeasyPrint draws it with its SVG renderer
    (inline, it would parse the SVG's style attributes as HTML CSS and warn on each)."""
    if for_pdf:
        data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
        return Markup(f'<img class="chart" alt="chart" src="data:image/svg+xml;base64,{data}">')
    return Markup(svg)


def css_string(text: str) -> str:
    """Text for a double-quoted CSS string: only letters, digits, spaces and plain punctuation
    survive, so nothing a manifest holds can close the string or the style element."""
    return "".join(c if c.isalnum() or c in " .,:;·-_()/&+#'" else " " for c in text)


PROSE = (
    ("overview", "Overview", "overview"),
    ("disclaimer", "Disclaimer", "disclaimer"),
    ("features", "Features", "features"),
    ("solution_description", "Solution description", "solution-description"),
    ("customer_profile", "Targeted customer profile", "customer-profile"),
    (None, "Tested deployment", "tested-deployment"),
    ("best_practices", "Best practices", "best-practices"),
    ("backup_strategy", "Backup strategy", "backup-strategy"),
    (None, "Test results summary", "results"),
    ("conclusion", "Conclusion", "conclusion"),
    ("contact", "Contact information", "contact"),
    (None, "Appendix A: Test reports", "appendix"),
)


def table_of_contents(doc: Document) -> list[tuple[str | None, str, str]]:
    return [entry for entry in PROSE if entry[0] is None or entry[0] in doc.manifest.sections]


def _data_uri(path: Path) -> str:
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if kind not in ("image/svg+xml", "image/png", "image/jpeg", "image/gif"):
        raise TemplateError(f"{path}: a logo must be SVG, PNG, JPEG or GIF (found {kind})")
    return f"data:{kind};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def charts_for(doc: Document) -> dict[str, Any]:
    """Solution charts and, per run with a counter log, its latency charts."""
    out: dict[str, Any] = {"solution": [], "runs": {}}
    perf = [(v.label, v.achieved, v.target) for v in doc.servers if v.achieved is not None]
    if perf:
        out["solution"].append(
            charts.achieved_vs_target_chart(
                [p[0] for p in perf], [p[1] for p in perf], [p[2] for p in perf], "chart-achieved"
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
        out["solution"].append(charts.iops_split_chart(split_labels, parts, "chart-split"))
    read_limit = _limit(doc, "db-read-latency-avg")
    log_limit = _limit(doc, "log-write-latency-avg")
    for view in doc.servers:
        for rv in view.runs:
            log = rv.run.counter_log
            if log is None:
                continue
            drawn = []
            for metric, title, limit in (
                (m.DB_READ_LATENCY, "Database read latency per instance", read_limit),
                (m.LOG_WRITE_LATENCY, "Log write latency per instance", log_limit),
            ):
                series = metrics.instance_series(rv.run, log, metric)
                if series.width > 1:
                    drawn.append(
                        charts.latency_chart(series, f"{view.label}: {title}", limit, f"{rv.anchor}-{metric}")
                    )
            out["runs"][rv.anchor] = drawn
    return out


def _column_sum(table: m.InstanceTable, key: str) -> float:
    return sum(row.values.get(key) or 0.0 for row in table.rows)


def _limit(doc: Document, rule_id: str) -> float | None:
    for table in doc.performance_tables:
        for row in table.rows:
            if rule_id == "db-read-latency-avg" and row.label == doc.convention.labels["read_latency"]:
                return _parse_limit(row.target)
            if rule_id == "log-write-latency-avg" and row.label == doc.convention.labels["log_write_latency"]:
                return _parse_limit(row.target)
    return None


def _parse_limit(text: str) -> float | None:
    parts = text.split()
    try:
        return float(parts[1]) if len(parts) >= 2 else None
    except ValueError:
        return None


def render_html(
    doc: Document, *, generated: datetime, for_pdf: bool = False, include_charts: bool = True
) -> str:
    manifest_dir = Path(doc.manifest.path).resolve().parent
    override = manifest_dir / doc.manifest.template_override if doc.manifest.template_override else None
    env = environment(override, doc.manifest.template)
    logo = _data_uri(manifest_dir / doc.manifest.branding.logo) if doc.manifest.branding.logo else None
    template = env.get_template("document.html")
    return template.render(
        doc=doc,
        m=doc.manifest,
        conv=doc.convention,
        logo=logo,
        charts=charts_for(doc) if include_charts else {"solution": [], "runs": {}},
        generated=generated,
        version=__version__,
        for_pdf=for_pdf,
        Cell=Cell,
        instance_columns=instance_columns,
        table_titles=TABLE_TITLES,
        toc=table_of_contents(doc),
        footer_text=" · ".join(
            x for x in (doc.manifest.document.vendor, doc.manifest.document.part_number) if x
        ),
    )


def instance_columns(kind: m.TableKind) -> list[tuple[str, str]]:
    """(heading, metric key) in Jetstress report order, headings as Jetstress prints them."""
    return [(c.format(msec=" (msec)", persec="/sec", io="I/O"), key) for c, key in TABLE_COLUMNS[kind]]
