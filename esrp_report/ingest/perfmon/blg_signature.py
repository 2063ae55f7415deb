"""What the start of a binary perfmon log looks like, without the decoder (docs/blg.md).

Kept beside the ``blg`` package, not in it (a module of the package imports the package, and
with it the decoder), so that recognising a file's format (``ingest/formats.py``) does not import
the decoder and NumPy for every file it looks at.
"""

from __future__ import annotations

import struct

BUFFER_HEADER = 0x48  # bytes of a trace buffer's header; the first event follows
SYSTEM_HEADERS = (0x01, 0x02)  # the header types of 32- and 64-bit producers' system events
OLD_SIGNATURES = (b"PDH-BIN", "PDH-BIN".encode("utf-16-le"))  # the XP/2003 format
_U32 = struct.Struct("<I")


def sniff_blg(head: bytes) -> bool:
    """Does this look like a binary perfmon log (Vista+ or the older PDH-BIN)?"""
    if any(head.startswith(s) for s in OLD_SIGNATURES):
        return True
    if len(head) < BUFFER_HEADER + 4:
        return False
    size = _U32.unpack_from(head, 0)[0]
    return size >= 1024 and not size & (size - 1) and head[BUFFER_HEADER + 2] in SYSTEM_HEADERS
