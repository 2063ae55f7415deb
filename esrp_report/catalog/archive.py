"""Find results folders in folders and ``.zip`` archives, safely.

Archives come from other parties. A member whose name is absolute or climbs out of the archive
(``..``), a symbolic link, or a member that would expand past the limits (a zip bomb) makes the
whole archive refused: nothing of it is extracted. Accepted archives are extracted into a private
staging folder inside the catalog, never beside the archive. Folders are walked without following
symbolic links; a link is refused by name and not read.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import stat
import struct
import unicodedata
import zipfile
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO, Protocol

from esrp_report.model.errors import InputError

HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class Limits:
    """What an archive may expand to before it is treated as a zip bomb."""

    max_members: int = 100_000
    max_total_bytes: int = 64 << 30
    max_member_bytes: int = 16 << 30
    # Deflate cannot exceed about 1,032:1; perfmon CSV reaches ~40:1. Judged per member and for
    # the whole archive (expanded bytes / archive bytes), once above ``ratio_floor_bytes``, so
    # tiny highly repetitive files pass.
    max_ratio: float = 200.0
    ratio_floor_bytes: int = 1 << 20
    # Windows paths stop at 260 characters; a longer name is no Jetstress result, and the bound
    # keeps the collision check's memory to members x this.
    max_name_length: int = 1024


class HostileArchiveError(InputError):
    """An archive that tries to write outside its folder, links elsewhere, or expands too far."""


@dataclass(frozen=True)
class SourceFile:
    """One evidence file found for the catalog: its catalog name, where it can be read now, its size in bytes
    and SHA-256."""

    name: str  # where the file sits, as the catalog records it: "<input>/<relative path>"
    path: Path  # where it can be read now (the input itself, or its staged copy)
    size: int
    sha256: str


@dataclass
class ResultsFolder:
    """The files of one folder: one server's Jetstress results, usually."""

    location: str  # "<input>/<relative folder>", stable across re-ingests
    files: list[SourceFile] = field(default_factory=list)

    @property
    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        for f in sorted(self.files, key=lambda f: f.name):
            digest.update(f"{f.name}\0{f.sha256}\n".encode())
        return digest.hexdigest()


@dataclass(frozen=True)
class Refusal:
    """An input the catalog would not read (a symbolic link, a hostile or unreadable archive) and why."""

    source: str
    reason: str


@dataclass
class Archive:
    """A ``.zip`` input: hashed first, so an unchanged archive is never opened again."""

    name: str
    size: int
    sha256: str


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file's bytes as hex, read in chunks so a large file is never held whole."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def hash_files(paths: list[Path], threads: int = 2) -> list[str]:
    """SHA-256 of each file; hashlib releases the GIL, so threads overlap on both cores."""
    if len(paths) < 2 or threads < 2:
        return [sha256_file(p) for p in paths]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(sha256_file, paths))


def walk(root: Path, label: str) -> tuple[list[tuple[str, Path]], list[Path], list[Refusal]]:
    """Every regular file under ``root`` as (catalog name, path), the zip archives apart, and
    the symbolic links refused. Links are never followed."""
    files: list[tuple[str, Path]] = []
    zips: list[Path] = []
    refused: list[Refusal] = []
    if root.is_symlink():
        return [], [], [Refusal(str(root), "symbolic link refused: the catalog reads only what is inside")]
    if root.is_file():
        candidates: Iterable[tuple[Path, str]] = [(root, label)]
    else:
        candidates = _tree(root, label, refused)
    for path, name in candidates:
        if path.suffix.casefold() == ".zip":
            zips.append(path)
        else:
            files.append((name, path))
    return files, zips, refused


def _tree(root: Path, label: str, refused: list[Refusal]) -> Iterator[tuple[Path, str]]:
    for folder, dirs, names in os.walk(root, followlinks=False):
        here = Path(folder)
        dirs.sort()
        for d in list(dirs):
            if (here / d).is_symlink():
                refused.append(Refusal(str(here / d), "symbolic link refused: not followed"))
                dirs.remove(d)
        for n in sorted(names):
            path = here / n
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                refused.append(Refusal(str(path), "symbolic link refused: not followed"))
            elif stat.S_ISREG(mode):
                yield path, f"{label}/{path.relative_to(root).as_posix()}"


def member_target(name: str, archive: str) -> PurePosixPath:
    """The relative path a member may be written to, or an error saying why it may not."""
    if "\\" in name:
        name = name.replace("\\", "/")
    pure = PurePosixPath(name)
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise HostileArchiveError(archive, "member with an absolute path refused", found=name)
    if any(part == ".." for part in pure.parts):
        raise HostileArchiveError(archive, "member climbing out of the archive ('..') refused", found=name)
    if not pure.parts or name.endswith("/"):
        return PurePosixPath()
    return pure


class MemberLike(Protocol):
    """What the checks read of a member: a ``zipfile.ZipInfo`` or a ``Member`` read by us."""

    @property
    def filename(self) -> str: ...
    @property
    def file_size(self) -> int: ...
    @property
    def compress_size(self) -> int: ...
    @property
    def external_attr(self) -> int: ...
    @property
    def flag_bits(self) -> int: ...
    @property
    def compress_type(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Member:
    """One central directory entry, as much of it as the checks need (no ``ZipInfo``)."""

    filename: str
    file_size: int
    compress_size: int
    external_attr: int
    flag_bits: int
    compress_type: int


@dataclass(frozen=True)
class Expansion:
    """What an accepted archive's central directory promises."""

    members: int
    total_bytes: int


# Zip records (APPNOTE.TXT 4.3): signatures, fixed layouts, and the "see the ZIP64 record" marks.
_EOCD = struct.Struct("<4s4H2LH")
_EOCD_SIGNATURE = b"PK\x05\x06"
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_LOCATOR_SIGNATURE = b"PK\x06\x07"
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")
_ZIP64_EOCD_SIGNATURE = b"PK\x06\x06"
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")
_CENTRAL_SIGNATURE = b"PK\x01\x02"
_ZIP64_EXTRA = 0x0001
_UTF8_NAME = 0x800
_ENCRYPTED = 0x1
_MAX_COMMENT = 0xFFFF
# What zipfile can decompress: stored, deflate, bzip2, LZMA. Anything else would fail mid-way.
_METHODS = frozenset({0, 8, 12, 14})


def _unreadable(archive: str, why: str) -> InputError:
    return InputError(archive, f"not a readable zip archive: {why}")


def _central_directory(handle: BinaryIO, size: int, archive: str) -> tuple[int, int, int]:
    """(entries declared, start, length) of the central directory, from the end records only.

    Found as zipfile finds it (the end record's position minus the directory's length), so both
    read the same bytes even when something is prepended to the archive.
    """
    tail_length = min(size, _EOCD.size + _MAX_COMMENT)
    handle.seek(size - tail_length)
    tail = handle.read(tail_length)
    at = len(tail)
    while True:
        at = tail.rfind(_EOCD_SIGNATURE, 0, at)
        if at < 0:
            raise _unreadable(archive, "no end of central directory record")
        if at + _EOCD.size <= len(tail):
            record = _EOCD.unpack_from(tail, at)
            if at + _EOCD.size + record[7] <= len(tail):
                break
    _, disk, cd_disk, _, entries, length, _, _ = record
    end = size - tail_length + at
    if disk != 0 or cd_disk != 0:
        raise _unreadable(archive, "archives spanning several disks are not supported")
    locator_at = end - _ZIP64_LOCATOR.size
    if locator_at >= 0:
        handle.seek(locator_at)
        locator = handle.read(_ZIP64_LOCATOR.size)
        if locator[:4] == _ZIP64_LOCATOR_SIGNATURE:
            eocd64_at = locator_at - _ZIP64_EOCD.size
            if eocd64_at < 0:
                raise _unreadable(archive, "ZIP64 end record missing")
            handle.seek(eocd64_at)
            raw = handle.read(_ZIP64_EOCD.size)
            if len(raw) != _ZIP64_EOCD.size or raw[:4] != _ZIP64_EOCD_SIGNATURE:
                raise _unreadable(archive, "ZIP64 end record missing")
            fields = _ZIP64_EOCD.unpack(raw)
            entries, length, end = fields[7], fields[8], eocd64_at
    start = end - length
    if start < 0:
        raise _unreadable(archive, "the central directory would start before the file")
    return entries, start, length


def _zip64_sizes(extra: bytes, file_size: int, compress_size: int) -> tuple[int, int]:
    """The real sizes when the 32-bit fields say 0xFFFFFFFF (APPNOTE 4.5.3), in that order."""
    at = 0
    while at + 4 <= len(extra):
        kind, length = struct.unpack_from("<HH", extra, at)
        body = extra[at + 4 : at + 4 + length]
        if kind == _ZIP64_EXTRA:
            values = [v for (v,) in struct.iter_unpack("<Q", body[: len(body) // 8 * 8])]
            if file_size == 0xFFFFFFFF and values:
                file_size = values.pop(0)
            if compress_size == 0xFFFFFFFF and values:
                compress_size = values.pop(0)
            break
        at += 4 + length
    return file_size, compress_size


def read_central_directory(handle: BinaryIO, size: int, archive: str, limits: Limits) -> Iterator[Member]:
    """Each member of the central directory, read a record at a time (bounded memory).

    The member count declared by the end record is checked before anything else is read, and
    the records are counted as they are read, so a count that lies cannot get past the limit
    either: an archive of a million members costs a few kilobytes, not a million ``ZipInfo``.
    """
    entries, start, length = _central_directory(handle, size, archive)
    if entries > limits.max_members:
        raise _over(archive, "members", entries, "max_members", limits.max_members)
    handle.seek(start)
    stream = io.BufferedReader(_Window(handle, length), HASH_CHUNK)
    seen = 0
    while header := stream.read(_CENTRAL.size):
        if len(header) < _CENTRAL.size or header[:4] != _CENTRAL_SIGNATURE:
            raise _unreadable(archive, f"central directory entry {seen + 1:,} is damaged")
        seen += 1
        if seen > limits.max_members:
            raise _over(archive, "members (counted)", seen, "max_members", limits.max_members)
        fields = _CENTRAL.unpack(header)
        flags, method = fields[5], fields[6]
        compress_size, file_size = fields[10], fields[11]
        name_length, extra_length, comment_length = fields[12], fields[13], fields[14]
        raw_name = stream.read(name_length)
        extra = stream.read(extra_length)
        stream.read(comment_length)
        if len(raw_name) != name_length or len(extra) != extra_length:
            raise _unreadable(archive, f"central directory entry {seen:,} is cut short")
        try:
            # As zipfile decodes it, so both name a member the same.
            name = raw_name.decode("utf-8" if flags & _UTF8_NAME else "cp437")
        except UnicodeDecodeError as exc:
            raise HostileArchiveError(archive, f"member name is not valid UTF-8 (entry {seen:,})") from exc
        file_size, compress_size = _zip64_sizes(extra, file_size, compress_size)
        yield Member(name, file_size, compress_size, fields[18], flags, method)


class _Window(io.RawIOBase):
    """``length`` bytes of ``handle`` from where it stands: the central directory, nothing past."""

    def __init__(self, handle: BinaryIO, length: int) -> None:
        self.handle = handle
        self.left = length

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.left <= 0:
            return 0
        view = memoryview(buffer)[: min(len(buffer), self.left)]
        got = self.handle.readinto(view)  # type: ignore[attr-defined]
        self.left -= got
        return int(got)


def _over(archive: str, what: str, figure: int, limit: str, value: int) -> HostileArchiveError:
    return HostileArchiveError(
        archive, f"{figure:,} {what}, more than the limit {limit} = {value:,}; refused before extracting"
    )


def _member_checks(member: MemberLike, archive: str, limits: Limits) -> None:
    name = member.filename
    if len(name) > limits.max_name_length:
        raise HostileArchiveError(
            archive,
            f"member name of {len(name):,} characters, more than the limit max_name_length"
            f" = {limits.max_name_length:,}",
            found=name,
        )
    if any(ord(c) < 32 for c in name):  # a NUL cannot even be a file name; others hide in listings
        raise HostileArchiveError(archive, "member name with a control character refused", found=name)
    member_target(name, archive)
    kind = stat.S_IFMT(member.external_attr >> 16)
    if kind == stat.S_IFLNK:
        raise HostileArchiveError(archive, "symbolic link member refused", found=name)
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise HostileArchiveError(archive, "special file member refused", found=name)
    if member.flag_bits & _ENCRYPTED:
        raise HostileArchiveError(archive, "encrypted member refused (no password is ever asked)", found=name)
    if member.compress_type not in _METHODS:
        raise HostileArchiveError(
            archive, f"member compressed with unsupported method {member.compress_type}", found=name
        )
    if member.file_size > limits.max_member_bytes:
        raise HostileArchiveError(
            archive,
            f"member expands to {member.file_size:,} bytes, more than the limit max_member_bytes"
            f" = {limits.max_member_bytes:,}",
            found=name,
        )
    if member.file_size > limits.ratio_floor_bytes and member.file_size > limits.max_ratio * max(
        member.compress_size, 1
    ):
        ratio = member.file_size / max(member.compress_size, 1)
        raise HostileArchiveError(
            archive,
            f"member expands {ratio:,.0f}:1, more than the limit max_ratio = {limits.max_ratio:,.0f}:1:"
            " a zip bomb",
            found=name,
        )


def _path_key(name: str) -> tuple[str, str, bool]:
    """(folded key, spelled key, is a folder): components joined by NUL, which sorts before any
    character a name may hold, so a path's descendants sort right after it."""
    spelled_name = unicodedata.normalize("NFC", name.replace("\\", "/"))
    spelled = "\0".join(PurePosixPath(spelled_name).parts)
    folded = unicodedata.normalize("NFC", spelled.casefold())
    return folded, spelled, spelled_name.endswith("/")


def _check_collisions(keys: list[tuple[str, str, bool, str]], archive: str) -> None:
    """Refuse two members that would land on the same path on some file system.

    Sorted by folded key, members sharing a folded prefix are adjacent, so comparing each member
    with the next finds every collision: the same path twice (case, backslashes, Unicode form and
    ``a//b`` ignored), a file that is also a folder, one folder spelled two ways.
    """
    keys.sort()
    for (folded_a, spelled_a, dir_a, name_a), (folded_b, spelled_b, dir_b, name_b) in pairwise(keys):
        if folded_a == folded_b:
            if spelled_a == spelled_b and dir_a and dir_b:
                continue  # a folder entry given twice creates nothing twice
            if dir_a != dir_b:
                why = "member is both a file and a folder"
            elif name_a == name_b:
                why = "member named twice"
            else:
                why = "members name the same path"
            raise HostileArchiveError(archive, f"{why}: {name_a!r} and {name_b!r}")
        parts_a, parts_b = folded_a.split("\0"), folded_b.split("\0")
        common = 0
        while common < min(len(parts_a), len(parts_b)) and parts_a[common] == parts_b[common]:
            common += 1
        if spelled_a.split("\0")[:common] != spelled_b.split("\0")[:common]:
            raise HostileArchiveError(
                archive,
                f"members name one folder two ways: {name_a!r} and {name_b!r}",
            )
        if common == len(parts_a) and not dir_a:
            raise HostileArchiveError(
                archive, f"member is both a file and a folder: {name_a!r} and {name_b!r}"
            )


def check_zip(
    members: Iterable[MemberLike], archive: str, limits: Limits, *, archive_bytes: int
) -> Expansion:
    """Refuse the archive from its central directory alone, before anything is extracted.

    ``members`` is consumed once (it may be a stream); only one short key per member is kept, for
    the collision check.
    """
    count = total = 0
    keys: list[tuple[str, str, bool, str]] = []
    for member in members:
        count += 1
        if count > limits.max_members:
            raise _over(archive, "members", count, "max_members", limits.max_members)
        _member_checks(member, archive, limits)
        total += member.file_size
        if total > limits.max_total_bytes:
            raise _over(archive, "bytes expanded (or more)", total, "max_total_bytes", limits.max_total_bytes)
        folded, spelled, is_dir = _path_key(member.filename)
        if spelled:
            keys.append((folded, spelled, is_dir, member.filename))
    # The whole archive, not only its big members: a thousand members of 1 MiB of zeros each
    # pass the per-member check but expand a 1 MB archive to 1 GB.
    if total > limits.ratio_floor_bytes and total > limits.max_ratio * max(archive_bytes, 1):
        raise HostileArchiveError(
            archive,
            f"archive of {archive_bytes:,} bytes expands to {total:,} bytes"
            f" ({total / max(archive_bytes, 1):,.0f}:1), more than the limit max_ratio ="
            f" {limits.max_ratio:,.0f}:1: a zip bomb",
        )
    _check_collisions(keys, archive)
    return Expansion(count, total)


def extract_zip(archive: Path, label: str, staging: Path, limits: Limits) -> list[tuple[str, Path]]:
    """Extract into ``staging`` (created empty) after every member passed ``check_zip``.

    The central directory is read by ``read_central_directory`` first, so an archive past the
    limits is refused before zipfile builds a ``ZipInfo`` per member. The bytes written are
    counted as they are written, so a member whose header understates its size cannot expand
    past the limits either. Any failure while reading a member refuses the archive (an
    ``InputError``), never escapes as a traceback.
    """
    name = str(archive)
    try:
        size = archive.stat().st_size
        with archive.open("rb") as handle:
            promised = check_zip(
                read_central_directory(handle, size, name, limits), name, limits, archive_bytes=size
            )
        zf = zipfile.ZipFile(archive)
    except InputError:
        raise
    except Exception as exc:  # zipfile fails on damaged bytes in many ways; each refuses the archive
        raise _unreadable(name, f"{type(exc).__name__}: {exc}") from exc
    files: list[tuple[str, Path]] = []
    with zf:
        infos = zf.infolist()
        # zipfile read the same bytes; checked again so what is extracted is what was judged.
        if check_zip(infos, name, limits, archive_bytes=size) != promised:
            raise HostileArchiveError(archive, "the central directory reads two ways; refused")
        if staging.exists():
            shutil.rmtree(staging)
        staging.mkdir(parents=True)
        root = staging.resolve()
        written = 0
        for info in infos:
            relative = member_target(info.filename, name)
            if info.is_dir() or not relative.parts:
                continue
            if relative.suffix.casefold() == ".zip":
                raise HostileArchiveError(archive, "nested archive refused", found=info.filename)
            target = (root / relative).resolve()
            if not target.is_relative_to(root):
                raise HostileArchiveError(archive, "member escaping the staging folder", found=info.filename)
            member_bytes = 0
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as source, target.open("xb") as sink:
                    while chunk := source.read(HASH_CHUNK):
                        member_bytes += len(chunk)
                        written += len(chunk)
                        if member_bytes > limits.max_member_bytes or written > limits.max_total_bytes:
                            raise HostileArchiveError(
                                archive,
                                "archive expands past its limits while extracting"
                                f" (max_member_bytes = {limits.max_member_bytes:,},"
                                f" max_total_bytes = {limits.max_total_bytes:,})",
                                found=info.filename,
                            )
                        sink.write(chunk)
            except HostileArchiveError:
                raise
            except FileExistsError as exc:
                raise HostileArchiveError(archive, "member named twice", found=info.filename) from exc
            except Exception as exc:  # a hostile member may fail in any way: it refuses its archive
                raise InputError(
                    archive, f"member cannot be extracted: {type(exc).__name__}: {exc}", found=info.filename
                ) from exc
            files.append((f"{label}/{relative.as_posix()}", target))
    return files


def group_folders(files: list[tuple[str, Path, int, str]]) -> list[ResultsFolder]:
    """One results folder per directory that holds files, in name order."""
    folders: dict[str, ResultsFolder] = {}
    for name, path, size, digest in files:
        location = name.rsplit("/", 1)[0] if "/" in name else name
        folder = folders.setdefault(location, ResultsFolder(location))
        folder.files.append(SourceFile(name, path, size, digest))
    return [folders[k] for k in sorted(folders)]
