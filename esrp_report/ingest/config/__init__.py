"""Readers of the files a user writes to configure a build: the solution manifest, sizing specs
and trend specs."""
