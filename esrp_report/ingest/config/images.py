"""The images a manifest puts in the document (``[[figure]]``), read as untrusted input.

An image comes from whoever wrote the manifest. It is read only from inside the manifest's
folder (no absolute path, no ``..``, no symbolic link out, regular files only; see
ingest/safe_files.py), its kind is judged from its bytes (the file name's extension must agree),
and it must stay within size limits: bytes for every kind, pixel dimensions for PNG and JPEG,
read from the file's header without decoding it (a small file can declare a huge image that
would take gigabytes to decode). An SVG is parsed as XML without DTDs or entities and refused,
not cleaned, when it holds anything that runs or fetches: a script, an event attribute, a
``foreignObject``, an animation, an embedded image, or a reference (``href``, ``url(...)``,
``@import``) to anything but a fragment of itself. Refusing keeps the vendor's file exactly as
drawn; a cleaned copy would differ from it silently.

The bytes are embedded in the document as ``data:`` URLs (render/html.py), so the HTML stays one
self-contained file and the PDF layout fetches nothing but ``data:``. A browser shows an SVG given
as an ``<img>`` without running scripts or loading anything, which is a second guard behind the
refusal. See docs/security.md.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from esrp_report.ingest.safe_files import read_regular_file
from esrp_report.ingest.safe_xml import parse_xml
from esrp_report.model.errors import InputError

MAX_IMAGE_BYTES = 5 * 1024 * 1024  # one image file
MAX_IMAGES_BYTES = 20 * 1024 * 1024  # all the images of one document
MAX_SIDE_PX = 10_000  # a raster image's width or height
MAX_PIXELS = 40_000_000  # a raster image's width x height (160 MB decoded as RGBA)
MAX_SVG_ELEMENTS = 50_000

EXTENSIONS = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".svg": "image/svg+xml",
}

SVG_NAMESPACE = "http://www.w3.org/2000/svg"
# Elements that run code, show other documents, fetch, or change attributes over time (an
# animation can set an href to javascript: after the checks have looked at it).
_REFUSED_ELEMENTS = {
    "script",
    "foreignobject",
    "image",
    "feimage",
    "iframe",
    "embed",
    "object",
    "audio",
    "video",
    "animate",
    "animatemotion",
    "animatetransform",
    "animatecolor",
    "set",
    "handler",
    "listener",
}
# url(...) naming anything but a fragment of the same file, and CSS @import.
_EXTERNAL_URL = re.compile(r"url\(\s*['\"]?\s*(?!#)", re.IGNORECASE)
_IMPORT = re.compile(r"@import", re.IGNORECASE)
_INSTRUCTION = re.compile(rb"<\?(?!xml[\s?])", re.IGNORECASE)


class ImageError(InputError):
    """An image a manifest names that cannot go into the document: outside the manifest's folder,
    of an unsupported kind, beyond a size limit, or an SVG with a script or external reference."""


@dataclass(frozen=True)
class CheckedImage:
    """An image file that passed every check: its media type, bytes and (raster) pixel size."""

    media_type: str
    data: bytes
    width_px: int | None
    height_px: int | None


def read_image(path: Path, *, within: Path, what: str) -> CheckedImage:
    """Read and check the image at ``path``, which must resolve to a regular file inside
    ``within``; ``what`` (``[[figure]] #2 file``) says in an error which key named it. Raises
    ``ImageError`` naming the file, and the limit or the offending element, for anything refused."""
    expected_kind = EXTENSIONS.get(path.suffix.lower())
    if expected_kind is None:
        raise ImageError(
            path,
            f"{what}: not an image kind the document takes",
            expected="a .png, .jpg/.jpeg or .svg file",
        )
    try:
        size = path.stat().st_size
    except OSError:
        size = 0  # read_regular_file says what is wrong with it
    if size > MAX_IMAGE_BYTES:
        raise _too_big(path, what, size)
    try:
        data = read_regular_file(path, within=[within], what=what)
    except InputError as exc:
        raise ImageError(exc.path, exc.detail, expected=exc.expected) from None
    if len(data) > MAX_IMAGE_BYTES:  # grown since the stat
        raise _too_big(path, what, len(data))
    kind = _sniff(data)
    if kind != expected_kind:
        raise ImageError(
            path,
            f"{what}: the file's content is {_kind_words(kind)}, not what its name ({path.suffix}) says",
            expected=f"a file whose content is {_kind_words(expected_kind)}",
        )
    if kind == "image/svg+xml":
        _check_svg(data, path, what)
        return CheckedImage(kind, data, None, None)
    width, height = _png_size(data, path, what) if kind == "image/png" else _jpeg_size(data, path, what)
    if width > MAX_SIDE_PX or height > MAX_SIDE_PX or width * height > MAX_PIXELS:
        raise ImageError(
            path,
            f"{what}: {width} x {height} pixels is beyond the limit of {MAX_SIDE_PX:,} pixels a side "
            f"and {MAX_PIXELS:,} pixels in all",
            expected="a smaller image (scale it down; a page shows about 2,000 pixels across at 300 dpi)",
        )
    if width == 0 or height == 0:
        raise ImageError(path, f"{what}: the image declares no pixels ({width} x {height})")
    return CheckedImage(kind, data, width, height)


def _too_big(path: Path, what: str, size: int) -> ImageError:
    return ImageError(
        path,
        f"{what}: {size:,} bytes is beyond the limit of {MAX_IMAGE_BYTES:,} bytes for one image",
        expected="a smaller file (scale the image down or compress it)",
    )


def _kind_words(kind: str | None) -> str:
    return {"image/png": "PNG", "image/jpeg": "JPEG", "image/svg+xml": "SVG"}.get(
        kind or "", "no known image"
    )


def _sniff(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"<?xml", b"<svg", b"<!--")) and b"<svg" in data[:65536].lower():
        return "image/svg+xml"
    return None


def _png_size(data: bytes, path: Path, what: str) -> tuple[int, int]:
    """Width and height from the IHDR chunk, which a PNG must have first."""
    if len(data) < 24 or data[12:16] != b"IHDR":
        raise ImageError(path, f"{what}: a damaged PNG (no IHDR chunk first)", expected="a PNG file")
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


# JPEG start-of-frame markers (they carry the size); C4, C8 and CC are other segments.
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg_size(data: bytes, path: Path, what: str) -> tuple[int, int]:
    """Width and height from the first start-of-frame segment, walking the segments from the
    start (each names its length; nothing is decoded)."""
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            break
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            at += 2
            continue
        length = struct.unpack(">H", data[at + 2 : at + 4])[0]
        if marker in _SOF:
            if at + 9 > len(data):
                break
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return int(width), int(height)
        if marker == 0xDA or length < 2:  # image data before any frame header: damaged
            break
        at += 2 + length
    raise ImageError(path, f"{what}: a damaged JPEG (no frame header with its size)", expected="a JPEG file")


def _check_svg(data: bytes, path: Path, what: str) -> None:
    """Refuse an SVG that could run code or fetch anything; see the module docstring."""
    try:
        root = parse_xml(data, path)
    except InputError as exc:
        raise ImageError(path, f"{what}: not a readable SVG: {exc.detail}", location=exc.location) from None
    if etree.QName(root).localname != "svg":
        raise ImageError(path, f"{what}: the XML's root is <{etree.QName(root).localname}>, not <svg>")
    # The parser drops processing instructions, but the file is embedded as it is: look at its
    # bytes (<?xml-stylesheet href=...?> would load a stylesheet). Only the XML declaration passes.
    instruction = _INSTRUCTION.search(data)
    if instruction is not None:
        number = data.count(b"\n", 0, instruction.start()) + 1
        raise _refused(path, what, "a processing instruction (<?...?>)", f"line {number}")
    count = 0
    for node in root.iter():
        count += 1
        if count > MAX_SVG_ELEMENTS:
            raise ImageError(
                path,
                f"{what}: more than {MAX_SVG_ELEMENTS:,} SVG elements",
                expected="a simpler drawing (or a PNG of it)",
            )
        line = f"line {node.sourceline}" if node.sourceline else None
        if isinstance(node, etree._ProcessingInstruction):
            raise _refused(path, what, "a processing instruction (<?...?>)", line)
        if not isinstance(node.tag, str):
            continue  # a comment
        name = etree.QName(node).localname
        if name.lower() in _REFUSED_ELEMENTS:
            raise _refused(path, what, f"a <{name}> element", line)
        if name == "style" and node.text and (_EXTERNAL_URL.search(node.text) or _IMPORT.search(node.text)):
            raise _refused(path, what, "a <style> that loads from outside the file", line)
        for attribute, raw in node.attrib.items():
            value = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
            local = etree.QName(attribute).localname
            if local.lower().startswith("on"):
                raise _refused(path, what, f"an event attribute {local}= on <{name}>", line)
            if local == "href" and not value.strip().startswith("#"):
                raise _refused(path, what, f"a reference to {value[:60]!r} on <{name}>", line)
            if _EXTERNAL_URL.search(value) or _IMPORT.search(value):
                raise _refused(path, what, f"{local}= on <{name}> loads from outside the file", line)


def _refused(path: Path, what: str, thing: str, location: str | None) -> ImageError:
    return ImageError(
        path,
        f"{what}: the SVG holds {thing}, refused (an image may not run code or load anything)",
        location=location,
        expected="an SVG of shapes and text only, references only to '#ids' inside it",
    )
