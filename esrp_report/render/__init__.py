"""Rendering: documents, audits and comparisons as HTML, PDF and charts, and the plain dicts behind --json."""
