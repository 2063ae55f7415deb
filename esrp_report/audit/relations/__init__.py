"""The audit's relations, one module per kind of table they hold against each other: per-server
tables (``servers``), the aggregate (``aggregate``), backup and replay (``backup``), configuration
facts (``config``), one appendix report (``appendix``), trend tables and test series (``trends``),
worked formulas (``formulas``). Each is a plain function of the audit's ``Context``; the order
they run in is ``esrp_report.audit.audit``'s."""
