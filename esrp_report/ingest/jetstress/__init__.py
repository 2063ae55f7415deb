"""Readers of what Jetstress writes: HTML test reports, result and config XML, test logs, and the
names and spellings they share."""
