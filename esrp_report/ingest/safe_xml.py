"""XML parsing for untrusted files: no DTD loading, no entities, no network, no XInclude.

Jetstress XML never declares entities, so a document that does is refused outright rather
than parsed with its entities left unexpanded (which would silently change its text).
Two independent guards decide that: a streaming expat pass that stops at the first entity
declaration, before anything could be expanded, and a look at the internal subset lxml
parsed, in case expat gave up early on input that libxml2 still accepts.

Every input is first decoded to text (BOM, then the XML declaration, then UTF-8) and fed to
both parsers as UTF-8 with the encoding declaration removed, so UTF-16 files and files in
legacy code pages are checked exactly like UTF-8 ones. Lines are unchanged by this, so line
numbers in errors still point into the original file.
"""

from __future__ import annotations

import codecs
import math
import re
from pathlib import Path
from xml.parsers import expat

from lxml import etree

from esrp_report.ingest.text import sniff_encoding
from esrp_report.model.errors import UnsafeInputError, XmlInputError

ENTITIES_REFUSED = "entity declarations are not allowed"

_DECLARATION = re.compile(r"^(?P<head><\?xml\b[^>]*?)\s+encoding\s*=\s*([\"'])(?P<name>[^\"']*)\2")
_DECLARED_ENCODING = re.compile(rb"^<\?xml\b[^>]*?\sencoding\s*=\s*([\"'])(?P<name>[A-Za-z0-9._:-]+)\1")

_LXML_POSITION = re.compile(r",\s*line \d+, column \d+\s*$")


class _EntityDeclared(Exception):
    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def _encoding_of(data: bytes) -> str:
    sniffed = sniff_encoding(data[:4096])
    if sniffed.startswith("utf-16") or sniffed == "utf-8-sig":
        return sniffed
    declared = _DECLARED_ENCODING.match(data[:1024].lstrip())
    if declared is not None:
        name = declared.group("name").decode("ascii")
        try:
            codec = codecs.lookup(name).name
        except LookupError:
            raise XmlInputError(
                "", f"unknown encoding {name!r} in the XML declaration", location="line 1"
            ) from None
        # Without a BOM or NUL bytes the text cannot be UTF-16/32, whatever the declaration says.
        if not codec.startswith(("utf-16", "utf-32")):
            return codec
    return "utf-8"


def _as_utf8(data: bytes, path: str | Path) -> bytes:
    try:
        encoding = _encoding_of(data)
    except XmlInputError as exc:
        raise XmlInputError(path, exc.detail, location=exc.location) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1 if not encoding.startswith("utf-16") else None
        where = f"line {line}, byte {exc.start}" if line else f"byte {exc.start}"
        raise XmlInputError(
            path, f"cannot decode as {encoding}", location=where, expected=f"text in {encoding}"
        ) from None
    text = text.lstrip("\ufeff")
    # The text is re-encoded as UTF-8 below, so a declared encoding would now be a lie.
    text = _DECLARATION.sub(r"\g<head>", text, count=1)
    return text.encode("utf-8")


def _refuse_entities(path: str | Path, line: int | None) -> UnsafeInputError:
    return UnsafeInputError(
        path,
        ENTITIES_REFUSED,
        location=f"line {line}" if line else None,
        expected="plain XML without <!ENTITY> declarations",
    )


def _declaration_line(utf8: bytes) -> int | None:
    at = utf8.upper().find(b"<!ENTITY")
    return utf8[:at].count(b"\n") + 1 if at >= 0 else None


def _expat_guard(data: bytes, path: str | Path) -> None:
    """Stop at the first entity declaration; leave every other judgement to lxml."""
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def refuse(*_args: object) -> None:
        raise _EntityDeclared(parser.CurrentLineNumber)

    def refuse_external(*_args: object) -> int:
        raise _EntityDeclared(parser.CurrentLineNumber)

    parser.EntityDeclHandler = refuse
    parser.UnparsedEntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse_external
    try:
        parser.Parse(data, True)
    except _EntityDeclared as declared:
        raise _refuse_entities(path, declared.line) from None
    except LookupError as exc:
        # An encoding declaration expat cannot look up, left in text that is not what it says
        # (bytes shifted after a UTF-16 BOM): refused here rather than handed on to lxml.
        raise XmlInputError(
            path, f"malformed XML: {exc}", location=f"line {parser.CurrentLineNumber}"
        ) from None
    except expat.ExpatError:
        return  # malformed: lxml reports it with its own line and column


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )


def parse_xml(data: bytes, path: str | Path) -> etree._Element:
    """Parse untrusted XML bytes (UTF-8, UTF-8 with BOM, UTF-16, or a declared code page).

    Raises :class:`UnsafeInputError` for entity declarations and :class:`XmlInputError` for
    anything that is not well-formed XML.
    """
    utf8 = _as_utf8(data, path)
    _expat_guard(utf8, path)
    try:
        root = etree.fromstring(utf8, parser=_parser())
    except etree.XMLSyntaxError as exc:
        if (declared_at := _declaration_line(utf8)) is not None:
            # libxml2 stopped on a declared entity (e.g. its amplification limit): still a refusal.
            raise _refuse_entities(path, declared_at) from None
        line, column = exc.position if exc.position else (exc.lineno, None)
        location = f"line {line}, column {column}" if column is not None else f"line {line}"
        message = _LXML_POSITION.sub("", str(exc.msg))
        raise XmlInputError(
            path, f"malformed XML: {message}", location=location, expected="well-formed XML"
        ) from None
    if root is None:
        raise XmlInputError(path, "empty XML document", location="line 1", expected="a root element")
    subset = root.getroottree().docinfo.internalDTD
    # lxml-stubs do not know DTD.iterentities.
    if subset is not None and any(True for _ in subset.iterentities()):  # type: ignore[union-attr]
        raise _refuse_entities(path, _declaration_line(utf8))
    return root


def read_xml(path: str | Path) -> etree._Element:
    """Read and parse an untrusted XML file. Raises XmlInputError when it cannot be read or is not
    well-formed, UnsafeInputError when it declares entities."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise XmlInputError(path, f"cannot read file: {exc.strerror or exc}") from exc
    return parse_xml(data, path)


def root_name(head: bytes) -> str | None:
    """The root element's local name, from the first bytes of a file (the rest is not parsed)."""
    text = head.decode(sniff_encoding(head), errors="ignore").lstrip("\ufeff")
    text = re.sub(r"<\?.*?\?>|<!--.*?-->|<!DOCTYPE(?:[^>\[]|\[.*?\])*>", "", text, flags=re.DOTALL)
    match = re.match(r"\s*<\s*([A-Za-z_][\w.:-]*)", text)
    return match.group(1).split(":")[-1] if match else None


_PLAIN_NUMBER = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$")
_GROUPED_NUMBER = re.compile(r"^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")


def xml_number(text: str) -> float:
    """A number as Jetstress writes it into XML: plain decimal, or grouped with commas.

    Raises ValueError for anything else, including NaN, infinity and a decimal comma
    ("18,5" could be 18.5 or 185, so it is not guessed).
    """
    stripped = text.strip()
    if _PLAIN_NUMBER.match(stripped):
        value = float(stripped)
    elif _GROUPED_NUMBER.match(stripped):
        value = float(stripped.replace(",", ""))
    else:
        raise ValueError(f"not a number: {text!r}")
    if not math.isfinite(value):
        raise ValueError(f"out of range: {text!r}")
    return value
