"""What the HTML leaves in place for a later pass to fill, shared by `render/html.py` (which leaves
it) and `render/pdf.py` (which fills it in print): the chart markers with their charts, and the
prefix of the table of contents' page-number slots. Its own module, so that neither of the two
imports the other."""

from __future__ import annotations

import base64
import re

# A chart's place in the HTML, until it is drawn: <!--esrp-chart:KEY-->.
CHART_MARKER = re.compile(r"<!--esrp-chart:([A-Za-z0-9_.-]+)-->")
# The id prefix of the table of contents' page-number slots, one per server: each server's
# appendix is laid out as a separate piece, so the body cannot know the page it starts on. The
# body leaves a slot of figure spaces after the entry's leader dots; the print layout says where
# the slot is (`render/pdf.py`, ``TextSlot``) and the number is written there once the pieces are joined.
TOC_SLOT_PREFIX = "toc-page-"


def fill_charts(html: str, drawn: dict[str, str], *, for_pdf: bool) -> str:
    """Replace each chart marker by its chart: inline SVG on screen, an SVG image in print, where
    WeasyPrint draws it with its SVG renderer (inline, it would parse the SVG's style attributes as
    HTML CSS and warn on each)."""

    def chart(match: re.Match[str]) -> str:
        svg = drawn[match.group(1)]
        if for_pdf:
            data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
            return f'<img class="chart" alt="chart" src="data:image/svg+xml;base64,{data}">'
        return svg

    return CHART_MARKER.sub(chart, html)
