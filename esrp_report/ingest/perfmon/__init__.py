"""Readers of performance-monitor counter logs: CSV/TSV and binary .blg, counter paths and the
counter-type formulas that cook raw samples."""
