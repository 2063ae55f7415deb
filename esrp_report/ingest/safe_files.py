"""Kept only for ``app/api.py``, ``app/convert.py`` and ``catalog/query.py``, which another branch of
issue 31 (item 2) is rewriting: they import these two names from here. The owner is
``esrp_report/files/safe.py``; once those modules import from there, this file goes."""

from __future__ import annotations

from esrp_report.files.safe import Tree, refuse_overwriting

__all__ = ["Tree", "refuse_overwriting"]
