"""The images a manifest puts in the document (``[[figure]]``), read as untrusted input.

An image comes from whoever wrote the manifest. It is read only from inside the manifest's
folder (no absolute path, no ``..``, no symbolic link out, regular files only; see
files/safe.py), its kind is judged from its bytes (the file name's extension must agree),
and it must stay within size limits: bytes for every kind, pixel dimensions for PNG and JPEG,
read from the file's header without decoding it (a small file can declare a huge image that
would take gigabytes to decode). An SVG is parsed as XML without DTDs or entities and refused,
not cleaned, when it holds anything that runs or fetches: a script, an event attribute, a
``foreignObject``, an animation, an embedded image, or a reference (``href``, ``url(...)``,
``@import``) to anything but a fragment of itself. CSS (``<style>`` and every attribute) is judged
with its comments gone and its escapes undone, as the CSS engine will read it: ``\75rl(`` is
``url(``. An SVG must also be drawable in bounded work: every ``<use>`` (and ``url(#id)``)
reference expanded, it may draw at most ``MAX_SVG_EXPANDED`` elements through at most
``MAX_SVG_REFERENCE_DEPTH`` nested references (a 2 KB file of groups using groups can stand for
billions), and its sizes and coordinates must be finite numbers of sensible magnitude (a width of
1e9 over a viewBox 1e-300 wide overflows the PDF engine). Refusing keeps the vendor's file exactly
as drawn; a cleaned copy would differ from it silently. The logo is held to the same rules: it is
read by the same function.

The bytes are embedded in the document as ``data:`` URLs (render/html.py), so the HTML stays one
self-contained file and the PDF layout fetches nothing but ``data:``. A browser shows an SVG given
as an ``<img>`` without running scripts or loading anything, which is a second guard behind the
refusal. See docs/security.md.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from esrp_report.files.safe import Tree, read_regular_file
from esrp_report.ingest.safe_xml import parse_xml
from esrp_report.model.errors import FileTooLargeError, InputError

MAX_IMAGE_BYTES = 5 * 1024 * 1024  # one image file
MAX_IMAGES_BYTES = 20 * 1024 * 1024  # all the images of one document
MAX_SIDE_PX = 10_000  # a raster image's width or height
MAX_PIXELS = 40_000_000  # a raster image's width x height (160 MB decoded as RGBA)
MAX_SVG_ELEMENTS = 50_000
MAX_SVG_EXPANDED = 200_000  # elements drawn once every <use> and url(#id) is expanded
MAX_SVG_REFERENCE_DEPTH = 16  # references through references (a <use> of a group that uses ...)
# A drawing's box: width and height of <svg>, <symbol>, <marker>, <pattern> (in their units) and
# each side of a viewBox. Below MIN the scale to the page is astronomical; above MAX no page needs it.
MIN_SVG_SIZE = 0.01
MAX_SVG_SIZE = 100_000.0
MAX_SVG_COORDINATE = 1e9  # any number in a geometry attribute (coordinates, path data, transforms)
_BOXED = {"svg", "symbol", "marker", "pattern", "view"}
_GEOMETRY = {
    "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "fx", "fy", "dx", "dy",
    "width", "height", "viewbox", "transform", "gradienttransform", "patterntransform",
    "points", "d", "rotate", "refx", "refy", "markerwidth", "markerheight", "stroke-width",
    "font-size", "stroke-dasharray", "stroke-dashoffset", "textlength", "startoffset",
}  # fmt: skip
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_LENGTH = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([a-zA-Z]*|%)\s*")

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
# url(...) naming anything but a fragment of the same file, CSS @import, and the CSS functions
# that take a URL without url(...).
_EXTERNAL_URL = re.compile(r"url\(\s*['\"]?\s*(?!#)", re.IGNORECASE)
_IMPORT = re.compile(r"@import|\bimage-set\(|\bsrc\(", re.IGNORECASE)
_FRAGMENT_URL = re.compile(r"url\(\s*['\"]?\s*#([^'\")\s]+)", re.IGNORECASE)
_CSS_COMMENT = re.compile(r"/\*.*?(?:\*/|$)", re.DOTALL)
# CSS Syntax 3, "consume an escaped code point": up to six hex digits and one white space after
# them, a line break (a continuation inside a string), any other character as itself.
_CSS_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})(?:\r\n|[ \t\n\r\f])?|(\r\n|[\n\r\f])|(.)|$)", re.DOTALL)
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


def read_image(path: Path, *, within: Path, what: str, links_allowed: bool = False) -> CheckedImage:
    """Read and check the image at ``path``, which must resolve to a regular file inside
    ``within`` and be that folder's own file (one hard link, its device; ``links_allowed`` lifts
    this); ``what`` (``[[figure]] #2 file``, ``[branding] logo``) says in an error which key named
    it. Raises ``ImageError`` naming the file, and the limit or the offending element, for
    anything refused."""
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
        data = read_regular_file(
            path, within=[within], what=what, tree=Tree(within, links_allowed), max_bytes=MAX_IMAGE_BYTES
        )
    except FileTooLargeError:  # grown since the stat; the read stopped at the limit
        raise _too_big(path, what, MAX_IMAGE_BYTES + 1) from None
    except InputError as exc:
        raise ImageError(exc.path, exc.detail, expected=exc.expected) from None
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
    _decode(data, path, what)
    return CheckedImage(kind, data, width, height)


def _decode(data: bytes, path: Path, what: str) -> None:
    """Every pixel decoded once: the PDF engine embeds a PNG's or JPEG's compressed data as it is,
    so damaged pixel data behind sound headers would be published as a broken image. The pixel
    limits above bound the work; Pillow comes with the PDF engine."""
    import io  # noqa: PLC0415 - only a build with raster figures pays for the decoder
    import warnings  # noqa: PLC0415

    from PIL import Image, ImageFile  # noqa: PLC0415

    # WeasyPrint sets Pillow's LOAD_TRUNCATED_IMAGES for the whole process when it is imported,
    # which makes a cut image load as if whole: judged here with it off, then left as found.
    lenient = ImageFile.LOAD_TRUNCATED_IMAGES
    ImageFile.LOAD_TRUNCATED_IMAGES = False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a truncated or inconsistent image is a failure, not a note
            with Image.open(io.BytesIO(data)) as image:
                image.load()
    except Exception as exc:  # Pillow raises many kinds for damaged data; each is one answer
        raise ImageError(
            path,
            f"{what}: its pixel data cannot be decoded ({type(exc).__name__}: {exc})",
            expected="a whole PNG or JPEG image (save it again from the program that made it)",
        ) from None
    finally:
        ImageFile.LOAD_TRUNCATED_IMAGES = lenient


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
        if name == "style" and _loads(css_as_read("".join(map(str, node.itertext())))):
            raise _refused(path, what, "a <style> that loads from outside the file", line)
        for attribute, raw in node.attrib.items():
            value = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
            local = etree.QName(attribute).localname
            if local.lower().startswith("on"):
                raise _refused(path, what, f"an event attribute {local}= on <{name}>", line)
            if local == "href" and not value.strip().startswith("#"):
                raise _refused(path, what, f"a reference to {value[:60]!r} on <{name}>", line)
            if _loads(css_as_read(value)):
                raise _refused(path, what, f"{local}= on <{name}> loads from outside the file", line)
            _check_numbers(path, what, name=name, attribute=local, value=value, line=line)
    _check_expansion(root, path, what)


def css_as_read(text: str) -> str:
    """CSS text as the CSS engine reads it: comments gone, then escapes undone (``\\75rl(`` is
    ``url(``, ``@\\69mport`` is ``@import``). Comments go first, as the tokenizer drops them before it
    reads escapes: an escaped ``/*`` is no comment."""

    def code_point(match: re.Match[str]) -> str:
        digits, newline, other = match.groups()
        if digits:
            value = int(digits, 16)
            if value == 0 or value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
                return "\ufffd"
            return chr(value)
        if newline is not None:
            return ""
        return other if other is not None else "\ufffd"

    return _CSS_ESCAPE.sub(code_point, _CSS_COMMENT.sub("", text))


def _loads(css: str) -> bool:
    return _EXTERNAL_URL.search(css) is not None or _IMPORT.search(css) is not None


def _check_numbers(path: Path, what: str, *, name: str, attribute: str, value: str, line: str | None) -> None:
    """Sizes and coordinates the PDF engine can draw: finite, of sensible magnitude, and a
    drawing's box neither vanishing nor huge."""
    local = attribute.lower()
    if local not in _GEOMETRY:
        return
    for number in _NUMBER.findall(value):
        figure = float(number)
        if not math.isfinite(figure) or abs(figure) > MAX_SVG_COORDINATE:
            raise _absurd(path, what, f"{attribute}={value[:60]!r} on <{name}>", line)
    if name.lower() not in _BOXED:
        return
    if local in ("width", "height"):
        match = _LENGTH.fullmatch(value)
        if match is not None and not _sensible_size(float(match.group(1)), percent=match.group(2) == "%"):
            raise _absurd(path, what, f"{attribute}={value[:60]!r} on <{name}>", line)
    elif local == "viewbox":
        parts = [float(x) for x in _NUMBER.findall(value)]
        if len(parts) != 4 or not all(_sensible_size(side) for side in parts[2:]):
            raise _absurd(path, what, f"viewBox={value[:60]!r} on <{name}>", line)


def _sensible_size(size: float, *, percent: bool = False) -> bool:
    if size == 0 and not percent:
        return True  # SVG's own "draw nothing"
    return MIN_SVG_SIZE <= size <= (1000 if percent else MAX_SVG_SIZE)


def _absurd(path: Path, what: str, thing: str, line: str | None) -> ImageError:
    return ImageError(
        path,
        f"{what}: the SVG's {thing} is not a size or coordinate a page can draw",
        location=line,
        expected=(
            f"finite numbers up to {MAX_SVG_COORDINATE:g}, and widths, heights and viewBox sides "
            f"from {MIN_SVG_SIZE:g} to {MAX_SVG_SIZE:,.0f}"
        ),
    )


def _check_expansion(root: etree._Element, path: Path, what: str) -> None:
    """Refuse an SVG whose references (``<use href="#id">``, ``url(#id)``) would make it draw more
    than ``MAX_SVG_EXPANDED`` elements, nest deeper than ``MAX_SVG_REFERENCE_DEPTH``, or refer to
    themselves. Each element's drawn count is worked out once, from its children's and its
    targets' (a walk without recursion: nesting and references together may be thousands deep)."""
    by_id: dict[str, etree._Element] = {}
    for node in root.iter():
        ident = node.get("id") if isinstance(node.tag, str) else None
        if ident is not None:
            by_id.setdefault(ident.strip(), node)

    def targets(node: etree._Element) -> list[etree._Element]:
        found: list[etree._Element] = []
        for attribute, raw in node.attrib.items():
            value = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
            names = _FRAGMENT_URL.findall(css_as_read(value))
            if etree.QName(attribute).localname == "href" and value.strip().startswith("#"):
                names.append(value.strip()[1:])
            found += [by_id[n] for n in names if n in by_id]
        return found

    def children(node: etree._Element) -> list[etree._Element]:
        return [child for child in node if isinstance(child.tag, str)]

    drawn: dict[etree._Element, int] = {}
    depth: dict[etree._Element, int] = {}
    open_nodes: set[etree._Element] = set()  # entered and not finished: the walk's ancestors
    stack: list[tuple[etree._Element, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        line = f"line {node.sourceline}" if node.sourceline else None
        if finished:
            open_nodes.discard(node)
            kids, refs = children(node), targets(node)
            count = 1 + sum(drawn[k] for k in kids) + sum(drawn[t] for t in refs)
            deep = max([depth[k] for k in kids] + [depth[t] + 1 for t in refs], default=0)
            if count > MAX_SVG_EXPANDED:
                raise ImageError(
                    path,
                    f"{what}: the SVG would draw more than {MAX_SVG_EXPANDED:,} elements once its "
                    f"<use> references are expanded (<{etree.QName(node).localname}>)",
                    location=line,
                    expected="a drawing without references multiplying references (or a PNG of it)",
                )
            if deep > MAX_SVG_REFERENCE_DEPTH:
                raise ImageError(
                    path,
                    f"{what}: the SVG nests references (<use> of an element that uses another ...) "
                    f"more than {MAX_SVG_REFERENCE_DEPTH} deep",
                    location=line,
                    expected="a drawing with fewer references through references",
                )
            drawn[node], depth[node] = count, deep
            continue
        if node in drawn:
            continue
        open_nodes.add(node)
        stack.append((node, True))
        for following in [*children(node), *targets(node)]:
            if following in open_nodes:
                raise ImageError(
                    path,
                    f"{what}: the SVG's <{etree.QName(node).localname}> refers to an element that "
                    "contains it (a loop the PDF engine would follow forever)",
                    location=line,
                    expected="references only to elements outside the referring one",
                )
            if following not in drawn:
                stack.append((following, False))


def _refused(path: Path, what: str, thing: str, location: str | None) -> ImageError:
    return ImageError(
        path,
        f"{what}: the SVG holds {thing}, refused (an image may not run code or load anything)",
        location=location,
        expected="an SVG of shapes and text only, references only to '#ids' inside it",
    )
