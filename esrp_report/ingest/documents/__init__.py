"""Readers of published ESRP documents (HTML, PDF, text), the input of the audit: the entry is
``published.read_document``, whose module says where each part of the reading lives."""
