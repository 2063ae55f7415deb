"""The audit as a self-contained HTML page (and, through WeasyPrint, a PDF)."""

from __future__ import annotations

from datetime import datetime

from esrp_report import __version__
from esrp_report.audit import AuditResult
from esrp_report.model.findings import ERROR, NOTE, WARNING
from esrp_report.render.html import environment


def render_audit_html(result: AuditResult, *, generated: datetime, template: str = "esrp") -> str:
    """The audit as one self-contained HTML page, from the named template folder; raises TemplateError when
    there is no such template."""
    env = environment(None, template)
    counts = {s: sum(1 for f in result.findings if f.severity == s) for s in (ERROR, WARNING, NOTE)}
    return env.get_template("audit.html").render(
        r=result, counts=counts, generated=generated, version=__version__
    )
