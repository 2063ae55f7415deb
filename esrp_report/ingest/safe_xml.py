"""XML parsing for untrusted files: no DTD loading, no entities, no network, no XInclude.

Jetstress XML files never declare entities, so a document that does is refused outright
rather than parsed with entities left unexpanded (which would silently change its text).
"""

from __future__ import annotations

import re
from pathlib import Path

from lxml import etree

from esrp_report.errors import UnsafeInputError, XmlInputError
from esrp_report.ingest.text import sniff_encoding

_DOCTYPE_SUBSET = re.compile(rb"<!DOCTYPE[^>\[]*\[(?P<subset>.*?)\]\s*>", re.DOTALL | re.IGNORECASE)


def _as_utf8(data: bytes, path: str | Path) -> bytes:
    """lxml handles BOMs itself; UTF-16 without BOM is re-encoded so the checks below see ASCII."""
    encoding = sniff_encoding(data[:4096])
    if encoding.startswith("utf-16"):
        try:
            text = data.decode(encoding).lstrip("\ufeff")
        except UnicodeDecodeError as exc:
            raise XmlInputError(path, f"cannot decode as {encoding}", location=f"byte {exc.start}") from exc
        text = re.sub(r'^(<\?xml[^>]*?)encoding=["\'][^"\']*["\']', r"\1", text)
        return text.encode("utf-8")
    return data


def parse_xml(data: bytes, path: str | Path) -> etree._Element:
    data = _as_utf8(data, path)
    head = data[:65536]
    if b"<!ENTITY" in head.upper() or _DOCTYPE_SUBSET.search(head):
        line = data[: data.upper().find(b"<!")].count(b"\n") + 1 if b"<!" in data else 1
        raise UnsafeInputError(
            path,
            "entity declarations are not allowed",
            location=f"line {line}",
            expected="plain XML without a DTD internal subset",
        )
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )
    try:
        root = etree.fromstring(data, parser=parser)
    except etree.XMLSyntaxError as exc:
        line, column = exc.position if exc.position else (None, None)
        raise XmlInputError(
            path, f"malformed XML: {exc.msg}", location=f"line {line}, column {column}"
        ) from None
    if root is None:
        raise XmlInputError(path, "empty XML document", location="line 1", expected="a root element")
    return root


def read_xml(path: str | Path) -> etree._Element:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise XmlInputError(path, f"cannot read file: {exc.strerror or exc}") from exc
    return parse_xml(data, path)


def root_name(head: bytes) -> str | None:
    """The root element's local name, from the first bytes of a file (no parsing of the rest)."""
    try:
        text = head.decode(sniff_encoding(head), errors="ignore").lstrip("\ufeff")
    except LookupError:
        return None
    text = re.sub(r"<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>", "", text, flags=re.DOTALL)
    match = re.search(r"<\s*([A-Za-z_][\w.:-]*)", text)
    return match.group(1).split(":")[-1] if match else None
