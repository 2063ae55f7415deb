"""An HTML document's lines as the audit reads them (``ingest/documents/html.py``): a chart drawn
inline as SVG is a drawing, not text — its tick labels and legend are not read as rows."""

from __future__ import annotations

from esrp_report.ingest.documents.html import html_lines


def test_an_inline_chart_s_labels_are_not_read_as_the_document_s_text() -> None:
    ticks = "".join(f"<text x='{n}' y='0'>Server {n}</text>" for n in range(1, 11))
    ticks += "".join(f"<text x='0' y='{v}'>{v}</text>" for v in (0, 500, 1000, 1500))
    html = (
        "<html><body><p>Aggregate performance across all servers</p>"
        "<table><tr><td>Achieved transactional I/O per sec</td><td>14,422.400</td></tr></table>"
        f"<figure><svg xmlns='http://www.w3.org/2000/svg'><g>{ticks}</g></svg>"
        "<figcaption>Achieved and target transactional IOPS per server</figcaption></figure>"
        "<p>After the chart.</p></body></html>"
    )
    texts = [line.raw for line in html_lines(html, "chart.html")]
    assert "Achieved transactional I/O per sec\t14,422.400" in texts
    assert "After the chart." in texts
    assert not [t for t in texts if "Server 1" in t or t.strip() in {"0", "500", "1000", "1500"}], texts
