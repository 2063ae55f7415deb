"""Vendor content (issue 22 item 3): the vendor's own sections in any order, images as numbered
figures from inside the manifest's folder (size limits, SVG refused when it could run or fetch
anything), the appendix's servers chosen by the manifest, and real tables in the printed appendix."""

from __future__ import annotations

import re
import shutil
import struct
import zlib
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from pypdf import PdfReader
from typer.testing import CliRunner

from esrp_report.cli.main import app
from esrp_report.ingest.config import images
from esrp_report.ingest.config.manifest import ManifestError, read_manifest

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
runner = CliRunner()

SHAPES_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="80">'
    '<rect x="1" y="1" width="198" height="78" fill="#dde6f0" stroke="#1f4e79"/>'
    '<text x="100" y="45" text-anchor="middle" font-size="14">Array ZX9 fabric</text></svg>'
)


def _png(width: int, height: int) -> bytes:
    """A valid RGB PNG of one colour (or, for a huge size, just its header: never decoded)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    rows = (
        b"".join(b"\x00" + b"\x20\x60\xa0" * width for _ in range(height)) if width * height < 10**6 else b""
    )
    return b"\x89PNG\r\n\x1a\n" + header + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def _netapp(tmp_path: Path, extra: str, files: dict[str, bytes | str] | None = None) -> Path:
    """A copy of the NetApp sample's manifest (and results) in ``tmp_path`` with ``extra`` TOML
    appended and ``files`` written beside it."""
    shutil.copytree(SAMPLES / "3650-4", tmp_path / "3650-4")
    for name, content in (files or {}).items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            target.write_text(content, encoding="utf-8")
        else:
            target.write_bytes(content)
    manifest = tmp_path / "netapp.toml"
    text = (SAMPLES / "netapp.toml").read_text(encoding="utf-8")
    manifest.write_text(text + "\n" + extra, encoding="utf-8")
    return manifest


def _refused(manifest: Path, *words: str) -> str:
    """The manifest is refused with a ManifestError naming each of ``words``; also one line, exit 2,
    from `esrp-report build`."""
    with pytest.raises(ManifestError) as caught:
        read_manifest(manifest)
    message = str(caught.value)
    for word in words:
        assert word in message, message
    result = runner.invoke(app, ["build", str(manifest), "-o", str(manifest.parent / "out")])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return message


# --- manifest: sections and figures ------------------------------------------------------------


def test_a_section_needs_exactly_one_of_body_and_file(tmp_path: Path) -> None:
    both = '[[section]]\ntitle = "Design"\nbody = "x"\nfile = "d.md"\n'
    _refused(
        _netapp(tmp_path / "a", both, {"d.md": "x"}), "[[section]] #1", "exactly one of 'body' and 'file'"
    )
    neither = '[[section]]\ntitle = "Design"\n'
    _refused(_netapp(tmp_path / "b", neither), "[[section]] #1", "exactly one")


def test_an_unknown_place_and_a_ring_of_sections_are_refused(tmp_path: Path) -> None:
    unknown = '[[section]]\ntitle = "Design"\nbody = "x"\nafter = "nowhere"\n'
    _refused(_netapp(tmp_path / "a", unknown), "[[section]] #1 after", "'nowhere'", "solution_description")
    ring = (
        '[[section]]\nid = "a"\ntitle = "A"\nbody = "x"\nafter = "b"\n'
        '[[section]]\nid = "b"\ntitle = "B"\nbody = "y"\nafter = "a"\n'
    )
    _refused(_netapp(tmp_path / "b", ring), "ring")
    clash = '[[section]]\nid = "overview"\ntitle = "Overview again"\nbody = "x"\n'
    _refused(_netapp(tmp_path / "c", clash), "[[section]] #1 id", "'overview'")
    twice = '[[section]]\ntitle = "Design"\nbody = "x"\n[[section]]\ntitle = "Design"\nbody = "y"\n'
    _refused(_netapp(tmp_path / "d", twice), "[[section]] #2 id", "another section's")


def test_a_figure_must_name_a_section_the_document_has(tmp_path: Path) -> None:
    # best_practices is a known key, but the NetApp manifest does not fill it: no heading to go under.
    extra = '[[figure]]\nfile = "d.svg"\ncaption = "Design"\nsection = "best_practices"\n'
    _refused(_netapp(tmp_path, extra, {"d.svg": SHAPES_SVG}), "[[figure]] #1 section", "'best_practices'")


# --- sandbox: images stay inside the manifest's folder and within their limits -------------------


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("../outside.png", ("leaves the manifest's folder",)),
        ("/etc/hostname.png", ("leaves the manifest's folder",)),
        ("missing.png", ("does not exist",)),
        ("diagram.gif", ("not an image kind", ".png, .jpg/.jpeg or .svg")),
    ],
)
def test_an_image_outside_the_folder_missing_or_of_another_kind_is_refused(
    tmp_path: Path, path: str, words: tuple[str, ...]
) -> None:
    (tmp_path / "outside.png").write_bytes(_png(2, 2))
    files: dict[str, bytes | str] = {"diagram.gif": b"GIF89a"}
    extra = f'[[figure]]\nfile = "{path}"\ncaption = "Design"\nsection = "overview"\n'
    _refused(_netapp(tmp_path / "m", extra, files), "[[figure]] #1 file", *words)


def test_a_symbolic_link_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.png"
    secret.write_bytes(_png(2, 2))
    manifest = _netapp(tmp_path / "m", '[[figure]]\nfile = "d.png"\ncaption = "D"\nsection = "overview"\n')
    (tmp_path / "m" / "d.png").symlink_to(secret)
    _refused(manifest, "[[figure]] #1 file", "symbolic link")


def test_an_image_beyond_the_limits_is_refused_naming_the_limit(tmp_path: Path) -> None:
    extra = '[[figure]]\nfile = "big.png"\ncaption = "Design"\nsection = "overview"\n'
    big = _png(8, 8) + b"\0" * images.MAX_IMAGE_BYTES  # trailing bytes after IEND: only the size is wrong
    _refused(
        _netapp(tmp_path / "bytes", extra, {"big.png": big}), "big.png", f"{images.MAX_IMAGE_BYTES:,} bytes"
    )
    # 20,000 x 20,000 pixels declared by a 60-byte file: refused from the header, never decoded
    huge = _png(20_000, 20_000)
    assert len(huge) < 200
    _refused(_netapp(tmp_path / "pixels", extra, {"big.png": huge}), "20000 x 20000 pixels", "10,000 pixels")
    # a PNG named .jpg is not taken on its name
    named = '[[figure]]\nfile = "d.jpg"\ncaption = "D"\nsection = "overview"\n'
    _refused(_netapp(tmp_path / "named", named, {"d.jpg": _png(2, 2)}), "content is PNG")


@pytest.mark.parametrize(
    ("svg", "words"),
    [
        (SHAPES_SVG.replace("</svg>", "<script>alert(1)</script></svg>"), ("<script>", "line 1")),
        (SHAPES_SVG.replace("<rect ", '<rect onclick="alert(1)" '), ("event attribute onclick",)),
        (
            SHAPES_SVG.replace(
                "</svg>", '<image href="https://example.com/x.png" width="9" height="9"/></svg>'
            ),
            ("<image>",),
        ),
        (
            SHAPES_SVG.replace("<svg ", '<svg xmlns:xlink="http://www.w3.org/1999/xlink" ').replace(
                "</svg>", '<use xlink:href="file:///etc/passwd#x"/></svg>'
            ),
            ("a reference to 'file:///etc/passwd#x'",),
        ),
        (SHAPES_SVG.replace('fill="#dde6f0"', 'fill="url(https://example.com/p)"'), ("loads from outside",)),
        (
            SHAPES_SVG.replace("</svg>", "<style>@import 'https://example.com/a.css';</style></svg>"),
            ("<style>",),
        ),
        (SHAPES_SVG.replace("</svg>", "<foreignObject><p>x</p></foreignObject></svg>"), ("<foreignObject>",)),
        ('<?xml-stylesheet href="https://example.com/a.css"?>' + SHAPES_SVG, ("processing instruction",)),
        (
            '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
            '<svg xmlns="http://www.w3.org/2000/svg"><text>&x;</text></svg>',
            ("entity",),
        ),
    ],
)
def test_an_svg_that_could_run_or_fetch_anything_is_refused(
    tmp_path: Path, svg: str, words: tuple[str, ...]
) -> None:
    extra = '[[figure]]\nfile = "d.svg"\ncaption = "Design"\nsection = "overview"\n'
    message = _refused(_netapp(tmp_path, extra, {"d.svg": svg}), "d.svg", *words)
    assert "Design" not in message or "[[figure]]" in message


def test_shapes_text_and_fragment_references_are_accepted(tmp_path: Path) -> None:
    svg = SHAPES_SVG.replace(
        "</svg>",
        '<defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/></linearGradient></defs>'
        '<rect width="5" height="5" fill="url(#g)"/><use href="#g"/></svg>',
    )
    (tmp_path / "d.svg").write_text(svg, encoding="utf-8")
    checked = images.read_image(tmp_path / "d.svg", within=tmp_path, what="[[figure]] #1 file")
    assert (checked.media_type, checked.data) == ("image/svg+xml", svg.encode("utf-8"))  # embedded as drawn
    (tmp_path / "d.png").write_bytes(_png(3, 2))
    checked = images.read_image(tmp_path / "d.png", within=tmp_path, what="x")
    assert (checked.media_type, checked.width_px, checked.height_px) == ("image/png", 3, 2)


# --- a build with the vendor's content ---------------------------------------------------------

ORDERED = """
[[section]]
id = "first-after-contents"
title = "Executive summary"
body = "Summary with <script>alert(1)</script> as text."
after = "contents"

[[section]]
id = "design"
title = "Storage design"
file = "text/design.md"
after = "solution_description"
figures = [{ file = "art/layout.png", caption = "Rack layout of the tested array" }]

[[section]]
id = "design-detail"
title = "Design details"
body = "Details follow the design."
after = "design"

[[section]]
id = "closing"
title = "Support"
body = "Support text."
after = "results"

[[figure]]
file = "art/fabric.svg"
caption = "Fabric diagram of the tested array"
section = "solution_description"
"""


@pytest.fixture(scope="module")
def vendor_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("vendor")
    manifest = _netapp(
        folder,
        ORDERED,
        {
            "text/design.md": "The design keeps **databases** and logs apart.\n",
            "art/layout.png": _png(120, 60),
            "art/fabric.svg": SHAPES_SVG,
        },
    )
    result = runner.invoke(app, ["build", str(manifest), "-o", str(folder / "out"), "--allow-fail"])
    assert result.exit_code == 0, result.output
    return folder / "out"


def _pdf_text(path: Path) -> str:
    document = pdfium.PdfDocument(path)
    return "\n".join(document[i].get_textpage().get_text_range() for i in range(len(document)))


def test_vendor_sections_come_in_the_order_the_manifest_places_them(vendor_build: Path) -> None:
    html = (vendor_build / "netapp.html").read_text(encoding="utf-8")
    body = html[html.index("</nav>") :]
    headings = re.findall(r"<h1 id=\"([^\"]+)\"", body)
    assert headings == [
        "section-first-after-contents",
        "overview",
        "disclaimer",
        "solution-description",
        "section-design",
        "section-design-detail",
        "customer-profile",
        "tested-deployment",
        "results",
        "section-closing",
        "conclusion",
        "contact",
        "appendix",
    ]
    toc = html[html.index('<nav class="toc">') : html.index("</nav>")]
    assert re.findall(r'<li><a href="#([^"]+)"', toc)[: len(headings)] == headings
    # Markdown stays safe: the manifest's <script> is text
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<strong>databases</strong>" in html  # the section's file, as Markdown


def test_figures_are_in_the_html_and_the_pdf(vendor_build: Path) -> None:
    html = (vendor_build / "netapp.html").read_text(encoding="utf-8")
    figures = re.findall(
        r'<figure id="(figure-[^"]+)" class="vendor-figure"><img src="data:([^;]+);base64,', html
    )
    assert figures == [("figure-fabric", "image/svg+xml"), ("figure-layout", "image/png")]
    assert re.search(
        r'<figcaption id="fig-\d+"><span class="caption-number">Figure \d+</span> Fabric diagram of the tested array</figcaption>',
        html,
    )
    # the SVG figure sits in the solution description, before the vendor's "Storage design"
    assert (
        html.index('id="solution-description"')
        < html.index("figure-fabric")
        < html.index('id="section-design"')
    )
    assert (
        html.index('id="section-design"')
        < html.index("figure-layout")
        < html.index('id="section-design-detail"')
    )
    pdf = vendor_build / "netapp.pdf"
    text = " ".join(_pdf_text(pdf).split())
    assert "Fabric diagram of the tested array" in text and "Rack layout of the tested array" in text
    assert "Array ZX9 fabric" in text  # the SVG's own text, drawn by the PDF
    # WeasyPrint shares one resource dictionary between a piece's pages: count distinct images
    raster = {(im.image.width, im.image.height) for page in PdfReader(pdf).pages for im in page.images}
    assert raster == {(120, 60)}


def test_the_printed_appendix_holds_real_tables(vendor_build: Path) -> None:
    """Each report's tables are tables in the PDF: one text line per row, cells in order, and the
    column headings (not a monospaced listing's wrapped heading lines)."""
    text = _pdf_text(vendor_build / "netapp.pdf")
    lines = [" ".join(line.split()) for line in text.splitlines()]
    assert "Counter Average Minimum Maximum" in lines  # the host table's heading row
    # each per-instance row of the 12-figure tables on one line, its figures in column order
    wide_rows = [line for line in lines if re.fullmatch(r"Instance\d+\.\d+( \d+\.\d{3}){12}", line)]
    assert (
        "Instance4760.1 15.079 1.021 56.901 36.476 34488.842 35483.416 0.000 0.984 0.000 31.003 0.000 4570.830"
        in wide_rows
    )
    assert len(wide_rows) >= 8  # 2 instances x 2 tables, in the performance and the stress report at least
    html = (vendor_build / "netapp.html").read_text(encoding="utf-8")
    assert 'class="listing' not in html
    print_tables = html.count('<table class="appendix-table')
    assert print_tables > 10


def test_an_unknown_appendix_server_is_refused_naming_it(tmp_path: Path) -> None:
    _refused(
        _netapp(tmp_path, '[appendix]\nservers = ["Server 9"]\n'),
        "[appendix] servers",
        "'Server 9'",
        "'3650-4'",
    )


def test_the_appendix_shows_the_servers_the_manifest_names(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "dellemc", tmp_path / "dellemc")
    shutil.copytree(SAMPLES / "dellemc-content", tmp_path / "dellemc-content")
    shutil.copytree(SAMPLES / "branding", tmp_path / "branding")
    text = (SAMPLES / "dellemc.toml").read_text(encoding="utf-8")
    assert "[appendix]" not in text  # every server's reports, as seed 002 prints them
    manifest = tmp_path / "dellemc.toml"
    manifest.write_text(
        text.replace("[sections]", '[appendix]\nservers = ["Server 3", "Server 2"]\n\n[sections]'), "utf-8"
    )
    assert read_manifest(manifest).appendix_servers == ["Server 2", "Server 3"]  # document order
    result = runner.invoke(app, ["build", str(manifest), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    reader = PdfReader(tmp_path / "out" / "dellemc.pdf")
    outline = [item.title for item in _flatten(reader.outline)]
    # The ESRP 4.0 form numbers the servers it shows: A.1, A.2.
    servers = [t for t in outline if re.fullmatch(r"A\.\d Server \d", t)]
    assert servers == ["A.1 Server 2", "A.2 Server 3"]
    text = " ".join(_pdf_text(tmp_path / "out" / "dellemc.pdf").split())
    assert "The Jetstress reports of Server 2 (JS17) and Server 3 (JS8)" in text
    assert "The results summary covers all 4 servers tested" in text
    assert "Machine Name JS17" in text and "Machine Name JS8" in text
    assert "Machine Name JS16" not in text and "Machine Name JS9" not in text
    html = (tmp_path / "out" / "dellemc.html").read_text(encoding="utf-8")
    assert html.count('<section class="appendix-server"') == 2


def _flatten(items: list[object]) -> list[object]:
    out: list[object] = []
    for item in items:
        out += _flatten(item) if isinstance(item, list) else [item]
    return out


def test_no_appendix_text_crosses_the_side_margins(vendor_build: Path) -> None:
    """The real tables keep to the text block: every character of the PDF lies between the
    16 mm side margins (the 12-figure instance tables included)."""
    document = pdfium.PdfDocument(vendor_build / "netapp.pdf")
    margin = 16 * 72 / 25.4
    outside = []
    seen = 0
    for number in range(len(document)):
        page = document[number]
        width = page.get_width()
        text = page.get_textpage()
        seen += text.count_chars()
        for i in range(text.count_chars()):
            left, _bottom, right, _top = text.get_charbox(i)
            if right > left and (left < margin - 1 or right > width - margin + 1):
                outside.append((number + 1, text.get_text_range(i, 1), round(left), round(right)))
    assert seen > 20_000  # the whole document was looked at, appendix tables included
    assert outside == []
