"""Readers of published ESRP documents (HTML, PDF, text), the input of the audit."""
