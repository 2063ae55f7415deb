"""Find results folders in folders and ``.zip`` archives, safely.

Archives come from other parties. A member whose name is absolute or climbs out of the archive
(``..``), a symbolic link, or a member that would expand past the limits (a zip bomb) makes the
whole archive refused: nothing of it is extracted. Accepted archives are extracted into a private
staging folder inside the catalog, never beside the archive. Folders are walked without following
symbolic links; a link is refused by name and not read.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import zipfile
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from esrp_report.errors import InputError

HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class Limits:
    """What an archive may expand to before it is treated as a zip bomb."""

    max_members: int = 100_000
    max_total_bytes: int = 64 << 30
    max_member_bytes: int = 16 << 30
    # Deflate cannot exceed about 1,032:1; perfmon CSV reaches ~40:1. Only members above
    # ``ratio_floor_bytes`` are judged, so tiny highly repetitive files pass.
    max_ratio: float = 200.0
    ratio_floor_bytes: int = 1 << 20


class HostileArchiveError(InputError):
    """An archive that tries to write outside its folder, links elsewhere, or expands too far."""


@dataclass(frozen=True)
class SourceFile:
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
    source: str
    reason: str


@dataclass
class Archive:
    """A ``.zip`` input: hashed first, so an unchanged archive is never opened again."""

    name: str
    size: int
    sha256: str


def sha256_file(path: Path) -> str:
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


def check_zip(info_list: list[zipfile.ZipInfo], archive: str, limits: Limits) -> None:
    """Refuse the archive from its central directory alone, before anything is extracted."""
    if len(info_list) > limits.max_members:
        raise HostileArchiveError(
            archive, f"{len(info_list):,} members, more than the limit of {limits.max_members:,}"
        )
    total = 0
    for info in info_list:
        member_target(info.filename, archive)
        kind = stat.S_IFMT(info.external_attr >> 16)
        if kind == stat.S_IFLNK:
            raise HostileArchiveError(archive, "symbolic link member refused", found=info.filename)
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise HostileArchiveError(archive, "special file member refused", found=info.filename)
        if info.file_size > limits.max_member_bytes:
            raise HostileArchiveError(
                archive,
                f"member expands to {info.file_size:,} bytes (limit {limits.max_member_bytes:,})",
                found=info.filename,
            )
        if info.file_size > limits.ratio_floor_bytes and info.file_size > limits.max_ratio * max(
            info.compress_size, 1
        ):
            ratio = info.file_size / max(info.compress_size, 1)
            raise HostileArchiveError(
                archive,
                f"member expands {ratio:,.0f}:1 (limit {limits.max_ratio:,.0f}:1): a zip bomb",
                found=info.filename,
            )
        total += info.file_size
    if total > limits.max_total_bytes:
        raise HostileArchiveError(
            archive, f"archive expands to {total:,} bytes (limit {limits.max_total_bytes:,})"
        )


def extract_zip(archive: Path, label: str, staging: Path, limits: Limits) -> list[tuple[str, Path]]:
    """Extract into ``staging`` (created empty) after every member passed ``check_zip``.

    The bytes written are counted as they are written, so a member whose header understates its
    size cannot expand past the limits either.
    """
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(archive, f"not a readable zip archive: {exc}") from exc
    files: list[tuple[str, Path]] = []
    with zf:
        infos = zf.infolist()
        check_zip(infos, str(archive), limits)
        if staging.exists():
            shutil.rmtree(staging)
        staging.mkdir(parents=True)
        root = staging.resolve()
        written = 0
        for info in infos:
            relative = member_target(info.filename, str(archive))
            if info.is_dir() or not relative.parts:
                continue
            if relative.suffix.casefold() == ".zip":
                raise HostileArchiveError(archive, "nested archive refused", found=info.filename)
            target = (root / relative).resolve()
            if not target.is_relative_to(root):
                raise HostileArchiveError(archive, "member escaping the staging folder", found=info.filename)
            target.parent.mkdir(parents=True, exist_ok=True)
            member_bytes = 0
            try:
                with zf.open(info) as source, target.open("xb") as sink:
                    while chunk := source.read(HASH_CHUNK):
                        member_bytes += len(chunk)
                        written += len(chunk)
                        if member_bytes > limits.max_member_bytes or written > limits.max_total_bytes:
                            raise HostileArchiveError(
                                archive,
                                "archive expands past its limits while extracting",
                                found=info.filename,
                            )
                        sink.write(chunk)
            except FileExistsError as exc:
                raise HostileArchiveError(archive, "member named twice", found=info.filename) from exc
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                if isinstance(exc, HostileArchiveError):
                    raise
                raise InputError(archive, f"member cannot be extracted: {exc}", found=info.filename) from exc
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
