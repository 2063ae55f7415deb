"""One exception hierarchy for everything a user can get wrong.

Every reader raises a subclass of :class:`InputError` that names the file, where in it
(line, byte offset, column or table) and what was expected, so the CLI can print one
useful line instead of a traceback.
"""

from __future__ import annotations

from pathlib import Path


class EsrpError(Exception):
    """Base class of every error this package raises on purpose."""


class InputError(EsrpError):
    """An input file could not be used as it stands.

    ``location`` is free text such as ``"line 12"``, ``"byte 4096"`` or
    ``"table 'Transactional I/O Performance', row 3"``.
    """

    def __init__(
        self,
        path: str | Path,
        message: str,
        *,
        location: str | None = None,
        expected: str | None = None,
        found: str | None = None,
    ) -> None:
        self.path = str(path)
        self.location = location
        self.expected = expected
        self.found = found
        self.detail = message
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [self.path]
        if self.location:
            parts.append(self.location)
        text = ": ".join(parts) + ": " + self.detail
        if self.expected:
            text += f"; expected {self.expected}"
        if self.found is not None:
            shown = self.found if len(self.found) <= 80 else self.found[:77] + "..."
            text += f", found {shown!r}"
        return text


class UnsupportedFormatError(InputError):
    """The file is not one of the formats this tool reads (or is not Jetstress output)."""


class ReportFormatError(InputError):
    """A Jetstress HTML report lacks a required section or a table is malformed."""


class CounterLogError(InputError):
    """A perfmon counter log (CSV, TSV or BLG) cannot be read."""


class XmlInputError(InputError):
    """A Jetstress XML file (result or configuration) is malformed or unsafe."""


class UnsafeInputError(InputError):
    """The input tried to reach outside itself (external entity, entity bomb, path escape)."""


class NotARegularFileError(InputError):
    """A file the tool must read is missing, or is a folder, FIFO, device or socket (never opened)."""


class FileTooLargeError(InputError):
    """A file is beyond the size limit for what it is for; reading stopped at the limit."""


class TemplateError(InputError):
    """A template cannot be used: a name that leaves the template folders, a file read from outside
    them, a syntax error, or a template asking for something unsafe or undefined."""


class RulesError(EsrpError):
    """A rules (thresholds) file is malformed."""
