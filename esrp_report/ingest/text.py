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
