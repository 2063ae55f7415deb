from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree

from esrp_report.ingest.jetstress.config_xml import read_config_xml
from esrp_report.ingest.jetstress.result_xml import read_result_xml
from esrp_report.ingest.safe_xml import parse_xml, read_xml, root_name, xml_number
from esrp_report.model.errors import UnsafeInputError, XmlInputError

PASSWD = Path("/etc/passwd")
XXE = b'<?xml version="1.0"?>\n<!DOCTYPE output [\n<!ENTITY e SYSTEM "file:///etc/passwd">\n]>\n<output>&e;</output>'
XXE_IN_ATTRIBUTE = (
    b'<!DOCTYPE output [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
    b'<output><test-summary><element name="Machine Name" value="&e;"/></test-summary></output>'
)
BOMB = (
    b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol0 "lol">'
    + b"".join(b'<!ENTITY lol%d "%s">' % (i, b"&lol%d;" % (i - 1) * 10) for i in range(1, 10))
    + b"]><output>&lol9;</output>"
)
PARAMETER = b'<!DOCTYPE x [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]><output/>'
INTERNAL_PARAMETER = b"<!DOCTYPE x [<!ENTITY % p \"<!ENTITY q 'v'>\"> %p;]><output>&q;</output>"
# expat stops reporting declarations after an unread parameter entity; libxml2 still records the
# declaration, so only the second guard (the parsed internal subset) sees this one.
AFTER_UNKNOWN_PARAMETER = b'<!DOCTYPE r [ %undefined; <!ENTITY x "y"> ]>\n<r>&x;</r>'
BOMB_AFTER_UNKNOWN_PARAMETER = BOMB.replace(b"<!DOCTYPE lolz [", b"<!DOCTYPE lolz [ %undefined; ")
XINCLUDE = (
    b'<output xmlns:xi="http://www.w3.org/2001/XInclude"><test-summary>'
    b'<xi:include href="file:///etc/passwd" parse="text"/></test-summary></output>'
)


def _secret() -> str:
    """A line of /etc/passwd that must never leak; a stand-in where the file is missing."""
    if PASSWD.exists():
        first = PASSWD.read_text(encoding="utf-8", errors="replace").splitlines()
        if first and first[0].strip():
            return first[0].strip()
    return "root:x:0:0"


@pytest.mark.parametrize(
    "data",
    [
        XXE,
        XXE_IN_ATTRIBUTE,
        BOMB,
        PARAMETER,
        INTERNAL_PARAMETER,
        AFTER_UNKNOWN_PARAMETER,
        BOMB_AFTER_UNKNOWN_PARAMETER,
    ],
    ids=[
        "external-entity",
        "external-entity-in-attribute",
        "billion-laughs",
        "external-parameter-entity",
        "internal-parameter-entity",
        "declaration-expat-skips",
        "bomb-expat-skips",
    ],
)
def test_entity_declarations_are_refused_quickly(data: bytes) -> None:
    started = time.perf_counter()
    with pytest.raises(UnsafeInputError, match="entity declarations are not allowed") as info:
        parse_xml(data, "evil.xml")
    assert time.perf_counter() - started < 1.0  # refused, never expanded
    assert str(info.value).startswith("evil.xml")
    assert _secret() not in str(info.value)


def test_external_entity_location_is_the_declaration_line() -> None:
    with pytest.raises(UnsafeInputError) as info:
        parse_xml(XXE, "evil.xml")
    assert info.value.location == "line 3"


@pytest.mark.parametrize("reader", [read_result_xml, read_config_xml, read_xml])
def test_passwd_never_reaches_any_output(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], reader: object
) -> None:
    secret = _secret()
    for number, data in enumerate((XXE, XXE_IN_ATTRIBUTE, XXE.replace(b"output", b"configuration"))):
        path = tmp_path / f"Performance_{number}.xml"
        path.write_bytes(data)
        with pytest.raises(UnsafeInputError) as info:
            reader(path)  # type: ignore[operator]
        assert secret not in str(info.value) and secret not in repr(info.value.__dict__)
    out, err = capfd.readouterr()
    assert secret not in out and secret not in err


def test_xinclude_is_left_as_an_element(tmp_path: Path) -> None:
    root = parse_xml(XINCLUDE, "xi.xml")
    (include,) = root.iter("{http://www.w3.org/2001/XInclude}include")
    assert include.get("href") == "file:///etc/passwd"
    assert _secret() not in etree.tostring(root, encoding="unicode")
    path = tmp_path / "Performance_2013_6_3_19_41_47.xml"
    path.write_bytes(XINCLUDE)
    run = read_result_xml(path)
    assert run.summary == {} and _secret() not in repr(run)


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A local TCP port that records every connection made to it."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0.1)
    seen: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with connection:
                connection.settimeout(1)
                try:
                    seen.append(connection.recv(4096))
                except OSError:
                    seen.append(b"")
                connection.sendall(
                    b'HTTP/1.0 200 OK\r\nContent-Type: application/xml-dtd\r\n\r\n<!ATTLIST output leaked CDATA "yes">'
                )

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], seen
    finally:
        stop.set()
        thread.join(timeout=2)
        server.close()


def test_a_network_dtd_is_never_fetched(listener: tuple[int, list[bytes]]) -> None:
    port, seen = listener
    dtd = (
        f'<?xml version="1.0"?><!DOCTYPE output SYSTEM "http://127.0.0.1:{port}/evil.dtd"><output/>'.encode()
    )
    root = parse_xml(dtd, "dtd.xml")
    public = f'<!DOCTYPE output PUBLIC "-//X//Y//EN" "http://127.0.0.1:{port}/p.dtd"><output/>'.encode()
    parse_xml(public, "public.xml")
    with pytest.raises(UnsafeInputError):
        parse_xml(
            f'<!DOCTYPE x [<!ENTITY % p SYSTEM "http://127.0.0.1:{port}/x.dtd"> %p;]><x/>'.encode(), "p.xml"
        )
    time.sleep(0.3)  # give a stray connection time to arrive
    assert seen == []
    assert root.get("leaked") is None  # the DTD's default attribute was never applied


def test_an_external_dtd_on_disk_is_never_loaded(tmp_path: Path) -> None:
    # A parser with load_dtd=True would apply this default attribute (checked by hand with lxml);
    # libxml2 builds without HTTP cannot show the same for the network case above.
    dtd = tmp_path / "evil.dtd"
    dtd.write_text('<!ATTLIST output leaked CDATA "yes">', encoding="utf-8")
    root = parse_xml(f'<!DOCTYPE output SYSTEM "{dtd.as_uri()}"><output/>'.encode(), "disk.xml")
    assert root.get("leaked") is None


def test_malformed_xml_names_line_and_column() -> None:
    with pytest.raises(XmlInputError, match=r"^bad\.xml: line 2, column \d+: malformed XML: ") as info:
        parse_xml(b"<output>\n<a></b></output>", "bad.xml")
    assert "line 2, column" not in info.value.detail  # the position is said once, in the location
    with pytest.raises(XmlInputError, match=r"line 1, column 1: malformed XML: Document is empty"):
        parse_xml(b"", "empty.xml")
    with pytest.raises(XmlInputError, match=r"Entity 'x' not defined"):
        parse_xml(b"<a>&x;</a>", "undefined.xml")


@pytest.mark.parametrize(
    "data",
    [
        '<?xml version="1.0" encoding="utf-8"?><output><a>Zürich</a></output>'.encode(),
        b"\xef\xbb\xbf" + '<?xml version="1.0" encoding="utf-8"?><output><a>Zürich</a></output>'.encode(),
        '<?xml version="1.0" encoding="utf-16"?><output><a>Zürich</a></output>'.encode("utf-16"),
        '<?xml version="1.0" encoding="utf-16"?><output><a>Zürich</a></output>'.encode("utf-16-be"),
        b"\xfe\xff" + '<?xml version="1.0"?><output><a>Zürich</a></output>'.encode("utf-16-be"),
        '<?xml version="1.0" encoding="windows-1252"?><output><a>Zürich</a></output>'.encode("cp1252"),
        "<output><a>Zürich</a></output>".encode("utf-16-le"),
    ],
    ids=[
        "utf-8",
        "utf-8-bom",
        "utf-16-le-bom",
        "utf-16-be-no-bom",
        "utf-16-be-bom",
        "cp1252",
        "utf-16-le-no-bom",
    ],
)
def test_encodings(data: bytes) -> None:
    root = parse_xml(data, "enc.xml")
    assert root.tag == "output" and root.findtext("a") == "Zürich"


def test_bad_encodings_are_input_errors() -> None:
    with pytest.raises(XmlInputError, match=r"unknown encoding 'klingon'"):
        parse_xml(b'<?xml version="1.0" encoding="klingon"?><a/>', "k.xml")
    with pytest.raises(XmlInputError, match=r"x\.xml: line 2, byte \d+: cannot decode as utf-8"):
        parse_xml(b'<?xml version="1.0" encoding="utf-8"?>\n<a>\xff</a>', "x.xml")


def test_comments_and_processing_instructions_are_dropped() -> None:
    root = parse_xml(b"<output><!-- note --><?pi x?><a>1</a></output>", "c.xml")
    assert [child.tag for child in root] == ["a"]


@pytest.mark.parametrize(
    ("head", "name"),
    [
        (b'<?xml version="1.0"?>\n<!-- c --><output><x/>', "output"),
        ("<configuration>".encode("utf-16"), "configuration"),
        (b'<!DOCTYPE configuration [ <!ELEMENT a ANY> ]><configuration a="1">', "configuration"),
        (b"<ns:output xmlns:ns='urn:x'>", "output"),
        (b"<html><body>", "html"),
        (b"3/11/2011 1:27:46 PM -- text", None),
    ],
)
def test_root_name_from_a_head(head: bytes, name: str | None) -> None:
    assert root_name(head) == name


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("18.471", 18.471),
        (" 1400 ", 1400.0),
        ("1,445.341", 1445.341),
        ("-0.5", -0.5),
        ("1e+16", 1e16),
        (".5", 0.5),
    ],
)
def test_xml_number_accepts(text: str, value: float) -> None:
    assert xml_number(text) == value


@pytest.mark.parametrize("text", ["18,5", "NaN", "inf", "1e999", "", "12 ms", "1,44"])
def test_xml_number_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        xml_number(text)
