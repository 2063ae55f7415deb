"""Every bound on what reading a published document may cost (docs/audit.md, "Bounded cost").

Read where they apply as ``limits.NAME``, so that a test can lower one in this one place.
"""

from __future__ import annotations

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
# A PDF's pages are extracted one by one: a 5,000-page file of anything would take minutes before
# a line is read. The largest ESRP documents seen run to about 1,200 pages (ten servers' appendix).
MAX_PDF_PAGES = 3000
# The text extracted from a PDF is held to the same bound as a text file's bytes.
MAX_PDF_TEXT_CHARS = MAX_DOCUMENT_BYTES
# Table rows and labels of ESRP documents are at most about 1,200 characters (a wide appendix
# row); a longer line is prose, or no document at all (a file without newlines). Splitting it into
# cells would build one string per word of it, all of them useless.
MAX_ROW_CHARS = 8192
MAX_TREND_CELL_CHARS = 80  # "39% [360 IOPS]": longer cells are not trend cells, and not matched
