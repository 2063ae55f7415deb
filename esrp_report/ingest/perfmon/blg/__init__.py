r"""Windows perfmon binary counter logs (``.blg``, Windows Vista and later), read natively.

The file is an event-trace log: fixed-size buffers of events carrying records, one record per
sample. A sample record holds sub-records, and each sub-record's tag says which of two layouts
it belongs to: ``BL 03 05``, a perflib ``PERF_DATA_BLOCK`` (the Vista layout), or ``BL 03 01``
/ ``BL 03 02`` / ``BL 03 15``, PDH raw counters named by the log's counter list (the raw-counter
layout). The layout is dispatched on that tag, sub-record by sub-record (``samples.py``); a kind
not known is skipped and counted, the sample's other sub-records read. The format is
described in docs/blg.md.

Speed comes from layouts: a sample whose structure (every byte except counter data and clocks)
equals the previous sample's is not parsed again. Consecutive samples of one layout are stacked
into a matrix, every raw value gathered at once and cooked by the published formulas
(``esrp_report.ingest.perfmon.counter_types``) a counter type at a time. Reading is streaming,
buffer by buffer: memory follows the number of counters, not the length. Damage never stops the
reader: what it skips is reported with the buffer index, byte offset and what was lost.

The package, a module a line; each imports only modules above it:

- ``filetime.py``: FILETIME stamps as UTC datetimes (:func:`utc_stamps`) or local text, and
  per-stamp offsets in a zone with daylight saving (:func:`local_offsets`).
- ``header.py``: the log-file header (:class:`BlgHeader`, :func:`parse_log_header`).
- ``timezone.py``: the header's zone resolved to IANA (:func:`resolve_zone`, ``tzres.toml``) and
  named as Windows prints it (:func:`zone_name`).
- ``container.py``: buffers, events (header types), fragments reassembled into records (``KIND_*``).
- ``layouts.py``: what both layouts share: slots (constant ones too), the layout and its builder.
- ``columns.py``: the counter columns (:class:`BlgColumn`) and the ``--counters`` :class:`Selector`.
- ``perflib.py``: the Vista layout (``BL 03 05``): PERF_DATA_BLOCK objects, instances, name tables.
- ``raw_counters.py``: the raw-counter layout (``BL 03 01``, ``02``): record 32's paths, PDH statuses.
- ``countersets.py``: Windows 11 counter sets: record 38 (names, types) and ``BL 03 15`` values.
- ``samples.py``: the sample record: each sub-record handed to its layout by tag (a new layout goes here).
- ``window.py``: exact window averages: ``_Window``, fed each cooked run; :class:`WindowAverages`.
- ``decoding.py``: runs of one layout stacked, gathered and cooked (NumPy or ``_blgcook``); :class:`BlgBatch`.
- ``file.py``: :class:`BlgFile`, an open log: its records walked, its samples decoded batch by batch.
- ``reading.py``: :func:`read_blg`, :func:`describe_blg`, :func:`window_report`, the errors of an
  unreadable log (:func:`no_samples_error`, :func:`no_columns_error`).
- ``stream.py``: large logs as streamed counter logs, decoded again batch by batch.

The cheap sniff (:func:`sniff_blg`) lives beside the package in ``perfmon/blg_signature.py``, so
that recognising a file's format imports neither this package nor NumPy.
"""

from __future__ import annotations

from esrp_report.ingest.perfmon.blg.columns import BlgColumn, Selector
from esrp_report.ingest.perfmon.blg.container import KIND_CATALOG, KIND_NAMES, KIND_PATHS, KIND_SAMPLE
from esrp_report.ingest.perfmon.blg.decoding import ENGINES, BlgBatch, native_engine_built
from esrp_report.ingest.perfmon.blg.decoding import _blgcook as _blgcook  # None when not built
from esrp_report.ingest.perfmon.blg.file import BlgFile, Catalog
from esrp_report.ingest.perfmon.blg.filetime import local_times, utc_stamps
from esrp_report.ingest.perfmon.blg.header import EXPECTED_FILE, BlgHeader, parse_log_header
from esrp_report.ingest.perfmon.blg.raw_counters import PDH_STATUS_NAMES, PathEntry, parse_path_entries
from esrp_report.ingest.perfmon.blg.reading import (
    aware,
    describe_blg,
    no_columns_error,
    no_samples_error,
    read_blg,
    window_averages,
    window_report,
)
from esrp_report.ingest.perfmon.blg.timezone import BlgZone, resolve_zone, zone_name
from esrp_report.ingest.perfmon.blg.window import WindowAverages
from esrp_report.ingest.perfmon.blg_signature import BUFFER_HEADER, sniff_blg

__all__ = [
    "BUFFER_HEADER",
    "ENGINES",
    "EXPECTED_FILE",
    "KIND_CATALOG",
    "KIND_NAMES",
    "KIND_PATHS",
    "KIND_SAMPLE",
    "PDH_STATUS_NAMES",
    "BlgBatch",
    "BlgColumn",
    "BlgFile",
    "BlgHeader",
    "BlgZone",
    "Catalog",
    "PathEntry",
    "Selector",
    "WindowAverages",
    "aware",
    "describe_blg",
    "local_times",
    "native_engine_built",
    "no_columns_error",
    "no_samples_error",
    "parse_log_header",
    "parse_path_entries",
    "read_blg",
    "resolve_zone",
    "sniff_blg",
    "utc_stamps",
    "window_averages",
    "window_report",
    "zone_name",
]
