"""The one kind of Rich console the CLI prints through: no string it is given is read as markup.

Text that reaches the console comes from evidence (machine, counter and instance names), a
manifest (titles, file names), a query (`catalog sql` cells) or an error message naming any of
those. Rich reads ``[...]`` in a string as markup: ``[/]`` raised ``MarkupError`` out of `check`
and `catalog sql` (issue 37), ``[link=...]`` would make a hyperlink and ``:smile:`` an emoji.
Escaping each string where it is printed is a rule every new line of code must remember; here
it cannot be forgotten instead. :class:`PlainConsole` renders every ``str`` (``print``, table
cells, titles, captions, the status line) as the characters it holds, and style is given only
as :class:`rich.text.Text` built by :func:`styled`, whose plain parts are never parsed.

Imported by the commands only when they print (Rich's console costs about 35 ms to import;
cli/output.py's docstring).
"""

from __future__ import annotations

import sys
from typing import IO, Any

from rich.console import Console, HighlighterType, JustifyMethod, OverflowMethod, RenderableType
from rich.status import Status
from rich.style import Style
from rich.text import Text

from esrp_report.cli.widths import PIPE_WIDTH

# A part of a styled line: plain text, or (text, style). The text is never read as markup.
Part = str | tuple[str, str]


def styled(*parts: Part) -> Text:
    """A line of plain parts and (text, style) parts; no part is read as markup."""
    return Text.assemble(*parts)


class PlainConsole(Console):
    """A Rich console on which a string is always plain text: markup, emoji codes and highlighting
    are off however it is asked for (``print(..., markup=True)`` included)."""

    def __init__(self, *, stderr: bool = False, soft_wrap: bool = False, file: IO[str] | None = None) -> None:
        stream = sys.stderr if stderr else sys.stdout
        super().__init__(
            file=file,
            stderr=stderr,
            markup=False,
            emoji=False,
            highlight=False,
            soft_wrap=soft_wrap,
            width=None if stream.isatty() else PIPE_WIDTH,
        )

    def render_str(
        self,
        text: str,
        *,
        style: str | Style = "",
        justify: JustifyMethod | None = None,
        overflow: OverflowMethod | None = None,
        emoji: bool | None = None,
        markup: bool | None = None,
        highlight: bool | None = None,
        highlighter: HighlighterType | None = None,
    ) -> Text:
        """``text`` as it is: every Rich renderable that holds a string comes through here."""
        return Text(text, style=style, justify=justify, overflow=overflow)

    def status(self, status: RenderableType, **options: Any) -> Status:
        """The spinner line, its text plain: Rich's spinner reads a string as markup itself."""
        return _PlainStatus(_plain(status), console=self, **options)


class _PlainStatus(Status):
    def update(self, status: RenderableType | None = None, **options: Any) -> None:
        super().update(None if status is None else _plain(status), **options)


def _plain(renderable: RenderableType) -> RenderableType:
    return Text(renderable) if isinstance(renderable, str) else renderable
