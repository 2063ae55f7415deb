"""Decoding of text inputs that come as UTF-8, UTF-8 with BOM, UTF-16 or Windows-1252."""

from __future__ import annotations

import codecs
from pathlib import Path

from esrp_report.ingest.guards import require_regular_file
from esrp_report.model.errors import InputError

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


# The first bytes of common binary files a user may name by mistake where a text is read: said
# as what they are, not as the first byte no code page decodes ("cannot decode as cp1252",
# issue 32). Each signature is long or specific enough that no text begins with it.
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"PK\x03\x04", "a ZIP archive, or a Word, Excel or PowerPoint file"),
    (b"PK\x05\x06", "an empty ZIP archive"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an Office 97-2003 file (Word, Excel) or an Outlook message"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"\x7fELF", "a program (ELF)"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"PAR1", "a Parquet file"),
)


def binary_kind(head: bytes) -> str | None:
    """What a file whose first bytes are ``head`` is, when a common binary signature says so
    (e.g. "a PNG image"); None for anything else, text or not."""
    for signature, kind in _SIGNATURES:
        if head.startswith(signature):
            return kind
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "a WebP image"
    if head.startswith(b"MZ") and b"\x00" in head[:64]:  # a text may start "MZ"; an .exe has NULs
        return "a Windows program"
    return None


def sniff_encoding(head: bytes) -> str:
    """Guess the encoding of a text file from its first bytes.

    A BOM decides; otherwise NUL bytes in alternate positions mean UTF-16 without BOM;
    otherwise UTF-8 if the head decodes, else Windows-1252 (what perfmon writes as "ANSI").
    """
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    sample = head[:4096]
    if len(sample) >= 4:
        even_nuls = sample[0::2].count(0)
        odd_nuls = sample[1::2].count(0)
        half = len(sample) // 2
        if odd_nuls > half * 0.4 and even_nuls < half * 0.05:
            return "utf-16-le"
        if even_nuls > half * 0.4 and odd_nuls < half * 0.05:
            return "utf-16-be"
    try:
        # A multi-byte character cut at the end of the sample is not an error.
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError:
        return "cp1252"
    return "utf-8"


def decode_bytes(data: bytes, path: str | Path) -> tuple[str, str]:
    """Decode a whole file's bytes; returns (text, encoding used)."""
    encoding = sniff_encoding(data[:65536])
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        if encoding == "utf-8":
            # The head was UTF-8 but a later byte is not: an ANSI file with late accents.
            return data.decode("cp1252", errors="replace"), "cp1252"
        raise InputError(
            path,
            f"cannot decode as {encoding}",
            location=f"byte {exc.start}",
            expected=f"text in {encoding}",
        ) from exc
    return text, encoding


def read_text(path: str | Path) -> tuple[str, str]:
    """Read a text file in any of the supported encodings; returns (text, encoding)."""
    require_regular_file(path)  # never open a FIFO or a device: the read would not end
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot read file: {exc.strerror or exc}") from exc
    return decode_bytes(data, path)
