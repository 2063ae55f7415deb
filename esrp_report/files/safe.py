"""Reading the files a manifest names: regular files only, inside the folders they must stay in.

A manifest comes from someone else. The files it brings (logo, rules, sizing spec, override
templates, and whatever their CSS points at) may be symbolic links to the reader's secrets, or a
FIFO that blocks ``open`` forever, or a device. Every such file is therefore resolved (all links
followed) and must lie inside the folders allowed for it, and it is ``stat``-ed before it is
opened: anything but a regular file is refused unopened.

A name inside the folder is not enough: a hard link in the manifest's folder to a file elsewhere
resolves inside the folder but is that other file. A file of the manifest's folder (its ``Tree``)
must therefore be its only name (one hard link) and lie on the folder's own device (not a file
system mounted into it), unless the person running the build allowed linked files. See
docs/security.md.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from collections.abc import Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from esrp_report.model.errors import FileTooLargeError, InputError, NotARegularFileError, UnsafeInputError

# A folder name such as ``esrp`` or ``my-brand_2``: no separator, no dot first (so not ``..``).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def is_plain_name(text: str) -> bool:
    """Whether ``text`` names an entry of a folder and nothing else (``/``, ``\\``, ``..``, ``C:``,
    an absolute path all fail)."""
    return _PLAIN_NAME.fullmatch(text) is not None


def relative_parts(text: str) -> tuple[str, ...] | None:
    """The parts of a relative, downward path such as ``partials/kv_table.html``; ``None`` for an
    absolute path, a drive, a backslash, an empty part, ``.`` or ``..`` (judged as both POSIX and
    Windows paths, so ``C:x`` and ``\\\\server\\share`` fail too)."""
    if not text or "\\" in text or "\0" in text:
        return None
    if PurePosixPath(text).is_absolute() or PureWindowsPath(text).anchor:
        return None
    parts = tuple(text.split("/"))
    if any(part in ("", ".", "..") for part in parts):
        return None
    return parts


def kind_of(mode: int) -> str:
    """What a ``st_mode`` is, in words for an error message."""
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def kind_problem(path: str | Path, *, folder: bool = False) -> str | None:
    """Why ``path`` is not an existing regular file (or folder, with ``folder=True``), or ``None``.

    ``os.stat`` follows links and never opens the file, so asking about a FIFO does not block."""
    try:
        mode = Path(path).stat().st_mode
    except FileNotFoundError:
        return "does not exist"
    except OSError as exc:
        return f"cannot be examined: {exc.strerror or exc}"
    wanted = stat.S_ISDIR(mode) if folder else stat.S_ISREG(mode)
    if wanted:
        return None
    return f"is {kind_of(mode)}, not {'a folder' if folder else 'a regular file'}"


def outside(path: str | Path, roots: Sequence[Path]) -> Path | None:
    """The resolved ``path`` when it lies outside every root (each root resolved too), else ``None``."""
    real = Path(os.path.realpath(path))
    if any(real.is_relative_to(os.path.realpath(root)) for root in roots):
        return None
    return real


@dataclass(frozen=True)
class Tree:
    """The manifest's folder, whose files are judged by what they are as well as by their name:
    each must have one hard link and lie on the folder's device. ``links_allowed`` is the
    build's ``--allow-linked-files`` (the person running it vouches for the files; a manifest
    cannot say so for itself)."""

    root: Path
    links_allowed: bool = False


def identity_problem(found: os.stat_result, tree: Tree) -> str | None:
    """Why a file of ``tree``, as ``fstat`` found it, may be some other file than its name says, or
    ``None``: more than one hard link (the same file is also elsewhere, possibly outside the
    tree), or a device other than the tree's (a file system mounted inside it)."""
    if tree.links_allowed:
        return None
    if found.st_nlink > 1:
        return (
            f"has {found.st_nlink} hard links: it is also a file elsewhere, perhaps outside "
            f"{tree.root} (copy it instead, or build with --allow-linked-files)"
        )
    try:
        device = tree.root.stat().st_dev
    except OSError as exc:
        return f"cannot be judged: the folder {tree.root} cannot be examined ({exc.strerror or exc})"
    if found.st_dev != device:
        return (
            f"lies on another device than {tree.root} (a file system mounted inside it), "
            "so it is not a file of the folder (build with --allow-linked-files to read it)"
        )
    return None


def read_regular_file(
    path: str | Path,
    *,
    within: Sequence[Path] | None = None,
    what: str = "",
    tree: Tree | None = None,
    max_bytes: int | None = None,
) -> bytes:
    """The bytes of ``path``, which must resolve to a regular file inside one of ``within`` (when
    given). ``what`` says what the file is for (``[branding] logo``, ``template 'x.html'``) in an
    error. A file resolving inside ``tree`` must also pass ``identity_problem``; past ``max_bytes``
    the read stops and the file is refused (a 200 MB file is never held whole). Raises
    ``UnsafeInputError`` for a file outside the allowed folders, a hard link or another device,
    ``NotARegularFileError`` for a missing file, a folder, FIFO, device or socket, and
    ``FileTooLargeError`` past ``max_bytes``."""
    label = f"{what} " if what else ""
    if within is not None:
        real = outside(path, within)
        if real is not None:
            raise UnsafeInputError(
                path,
                f"{label}resolves to {real}, outside the folders it may be read from",
                expected="a file inside " + " or ".join(str(root) for root in within),
            )
    real_path = os.path.realpath(path)
    problem = kind_problem(real_path)
    if problem is not None:
        raise NotARegularFileError(path, f"{label}{problem}", expected="a regular file")
    try:
        named = Path(real_path).stat()
    except OSError as exc:
        raise NotARegularFileError(path, f"{label}cannot be examined: {exc.strerror or exc}") from exc
    judged = tree is not None and outside(real_path, [tree.root]) is None
    # Checked again on the open descriptor: the path may have been swapped since. O_NONBLOCK keeps
    # a FIFO put there in between from blocking the open; O_NOFOLLOW refuses a link put there.
    flags = os.O_RDONLY
    for optional in ("O_NONBLOCK", "O_NOFOLLOW", "O_BINARY"):  # not every system has each
        flags |= getattr(os, optional, 0)
    try:
        descriptor = os.open(real_path, flags)
    except OSError as exc:
        raise NotARegularFileError(path, f"{label}cannot be read: {exc.strerror or exc}") from exc
    with os.fdopen(descriptor, "rb") as handle:
        found = os.fstat(handle.fileno())
        if not stat.S_ISREG(found.st_mode):
            raise NotARegularFileError(path, f"{label}is {kind_of(found.st_mode)}, not a regular file")
        if (found.st_dev, found.st_ino) != (named.st_dev, named.st_ino):
            raise UnsafeInputError(path, f"{label}was replaced by another file while it was being opened")
        if judged and tree is not None:
            problem = identity_problem(found, tree)
            if problem is not None:
                raise UnsafeInputError(
                    path, f"{label}{problem}", expected="a file of its own inside the folder"
                )
        try:
            data = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
        except OSError as exc:
            raise NotARegularFileError(path, f"{label}cannot be read: {exc.strerror or exc}") from exc
    if max_bytes is not None and len(data) > max_bytes:
        raise FileTooLargeError(
            path, f"{label}is beyond the limit of {max_bytes:,} bytes", expected="a smaller file"
        )
    return data


def _identities(paths: Iterable[Path]) -> dict[tuple[int, int], Path]:
    """Device and inode of each file named, or found under each folder named (links not followed
    into folders), to the path that reached it."""
    found: dict[tuple[int, int], Path] = {}

    def note(path: Path) -> None:
        with suppress(OSError):
            info = path.stat()
            if stat.S_ISREG(info.st_mode):
                found.setdefault((info.st_dev, info.st_ino), path)

    for path in paths:
        if path.is_dir():
            for folder, _dirs, files in os.walk(path):
                for name in files:
                    note(Path(folder) / name)
        else:
            note(path)
    return found


def refuse_overwriting(outputs: Iterable[Path], inputs: Iterable[Path], *, option: str = "-o") -> None:
    """Raise ``InputError`` before anything is written when an output is the same file as an input
    of the command (a file named, or a file under a folder named): the same resolved path, or the
    same device and inode (another spelling, a symbolic or a hard link). Writing would truncate the
    input first: ``convert X.csv -o X.csv`` deleted X.csv. An output that does not exist yet cannot
    be an input, so nothing is walked unless one exists."""
    existing = [path for path in outputs if path.exists()]
    if not existing:
        return
    known = _identities(inputs)
    for path in existing:
        info = path.stat()
        same = known.get((info.st_dev, info.st_ino))
        if same is not None:
            also = "" if os.path.realpath(same) == os.path.realpath(path) else f" ({same})"
            raise InputError(
                path,
                f"is an input of this command{also}: writing the output there would destroy it",
                expected=f"an output that is not one of the inputs (name another with {option})",
            )


def read_toml_file(
    path: Path, *, what: str, error: type[InputError], tree: Tree | None = None, expected: str = "TOML"
) -> dict[str, Any]:
    """A user's TOML file (a manifest, a sizing spec, a published table), read as every such file is:
    a regular file judged before it is opened (``tree``: the manifest's folder, when a manifest names
    it), UTF-8 with or without its mark, and every way it can fail one ``error`` naming the file."""
    try:
        raw = read_regular_file(path, what=what, tree=tree)
    except InputError as exc:
        raise error(path, exc.detail, expected=exc.expected) from None
    try:
        return tomllib.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise error(path, "not UTF-8 text", location=f"byte {exc.start}", expected="UTF-8") from exc
    except tomllib.TOMLDecodeError as exc:
        raise error(path, f"not valid TOML: {exc}", expected=expected) from exc
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise error(path, f"not valid TOML: {exc}", expected=expected) from exc
