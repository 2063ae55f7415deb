"""Imported by the forkserver that the PDF workers are forked from (``api._workers``): WeasyPrint
and matplotlib are loaded and warmed there once, and every worker starts with them ready."""

from esrp_report.render.pdf import warm_up

warm_up()
