"""What the CLI prints, without Typer: the console, error messages, a file's description.

Kept apart from :mod:`esrp_report.cli.main` so that `esrp-report inspect FILE`, answered before
Typer is imported (esrp_report/command.py), prints through the same functions as the Typer
command. A description is a two-column table of fields drawn here, not by Rich: Typer takes
about 30 ms to import and Rich's console and tables 35 ms more, together a quarter of that
command's budget (docs/benchmarks.md). Rich is imported for errors and the other commands."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from esrp_report.cli.widths import PIPE_WIDTH
from esrp_report.model.errors import EsrpError
from esrp_report.model.numbers import fmt_number

if TYPE_CHECKING:
    from esrp_report.cli.console import PlainConsole

EXIT_PASS, EXIT_FAIL, EXIT_UNUSABLE, EXIT_INCOMPLETE = 0, 1, 2, 3


def console() -> PlainConsole:
    """The console tables are printed on: PIPE_WIDTH columns when stdout is not a terminal; no
    string printed on it is read as markup (cli/console.py)."""
    from esrp_report.cli.console import PlainConsole  # noqa: PLC0415 - see the module docstring

    return PlainConsole()


def print_error(message: str) -> None:
    """``error: message`` on stderr, the message printed as written (never read as markup: it
    names manifest tables such as "[branding] logo", machine names, SQL)."""
    from esrp_report.cli.console import PlainConsole, styled  # noqa: PLC0415 - see the module docstring

    # One line whatever the message holds: a library's message or a name read from evidence may
    # carry line breaks, and the user (or a script) reads the first line as the whole error.
    line = " | ".join(part.strip() for part in message.splitlines() if part.strip())
    PlainConsole(stderr=True, soft_wrap=True).print(styled(("error:", "bold red"), " ", line))


def os_error_message(exc: OSError) -> str:
    """One line naming the path an unforeseen OSError names. The commands say what a full disk,
    a read-only folder or a vanished file cost them where they write (catalog/ingest.py, app/api.py
    write_output, app/convert.py); one the library did not foresee is still one line, never a stack."""
    return f"{exc.filename or 'a file'}: {exc.strerror or exc}"


def run_guarded(command: Callable[[], int]) -> int:
    """Run a command answered without Typer; an unforeseen OSError is said as the Typer commands
    say it (cli/main.py), on stderr with exit status 2."""
    try:
        return command()
    except OSError as exc:
        print_error(os_error_message(exc))
        return EXIT_UNUSABLE


def plain(value: Any) -> str:
    """One value of a description as table text: numbers to 3 decimals, "—" for nothing."""
    if isinstance(value, float):
        return fmt_number(value, 3)
    if isinstance(value, list):
        if value and isinstance(value[0], dict):
            return "\n".join(json.dumps(v, default=str, ensure_ascii=False) for v in value)
        return ", ".join(str(v) for v in value) if value else "—"
    if isinstance(value, dict):
        return json.dumps(value, default=str, ensure_ascii=False)
    return "—" if value is None else str(value)


def inspect_file(file: Path, *, as_json: bool, encoding: str | None = None) -> int:
    """Describe ``file`` (:func:`esrp_report.app.api.inspect`) on stdout; the exit status: 0, or
    2 with the reason on stderr when it cannot be described or its content cannot be read (what
    could be read, such as a binary log's header, is described first)."""
    from esrp_report.app import api  # noqa: PLC0415 - the readers are imported when a file is read

    try:
        description = api.inspect(file, encoding=encoding)
    except EsrpError as exc:
        print_error(str(exc))
        return EXIT_UNUSABLE
    if as_json:
        print(json.dumps(description, indent=2, default=str))
    else:
        _print_fields(file, description)
    if description.get("error"):
        print_error(str(description["error"]))
        return EXIT_UNUSABLE
    return EXIT_PASS


def _print_fields(file: Path, description: dict[str, Any]) -> None:
    width = shutil.get_terminal_size((PIPE_WIDTH, 24)).columns if sys.stdout.isatty() else PIPE_WIDTH
    print(field_table(str(file), [(key, plain(value)) for key, value in description.items()], width))


def field_table(title: str, fields: list[tuple[str, str]], width: int) -> str:
    """``fields`` (name, text) as a boxed two-column table at most ``width`` columns wide (when
    the names leave room for a value column at all), the title centred above it. A value's
    lines are kept and wrapped at spaces; a word longer than its column is cut across lines."""
    name_width = max((len(name) for name, _ in fields), default=0)
    room = max(width - name_width - 7, 10)  # 7: the borders and padding of "│ n │ v │"
    wrapped = [(name, _wrap(text, room)) for name, text in fields]
    value_width = max((len(line) for _, lines in wrapped for line in lines), default=0)
    inner = name_width + value_width + 7
    out = [title.center(inner).rstrip()] if title else []
    out.append(f"┌{'─' * (name_width + 2)}┬{'─' * (value_width + 2)}┐")
    for name, lines in wrapped:
        for index, line in enumerate(lines):
            label = name if index == 0 else ""
            out.append(f"│ {label:<{name_width}} │ {line:<{value_width}} │")
    out.append(f"└{'─' * (name_width + 2)}┴{'─' * (value_width + 2)}┘")
    return "\n".join(out)


def _wrap(text: str, width: int) -> list[str]:
    return [
        piece
        for line in text.splitlines() or [""]
        for piece in (textwrap.wrap(line, width, break_on_hyphens=False, drop_whitespace=True) or [""])
    ]
