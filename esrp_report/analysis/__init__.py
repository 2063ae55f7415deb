"""Pure functions over the model: figures from counter logs, rules and verdicts, aggregates, comparisons,
sizing, trends and formulas. No file I/O beyond the package's own constants."""
