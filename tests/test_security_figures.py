"""A figure that cannot be drawn is refused, never published as a gap (issue 37 item 6).

Before this page: an SVG 1e9 wide over a viewBox 1e-300 wide built with exit 0; a 1.7 KB SVG of
groups using groups passed the figure check and hung the PDF build past 240 s; CSS escapes
(``\\75rl(``, ``@\\69mport``) got an SVG past the check; the logo had no SVG check and no size limit.
Each is refused here when the manifest is read (exit 2, one line naming the file), with bounded
inputs: a bomb is refused from its counts, never expanded. Behind those checks, an image WeasyPrint
still fails to load or draw stops the build with exit 2 naming the figure.
"""

from __future__ import annotations

import base64
import shutil
import struct
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from esrp_report.cli.main import app
from esrp_report.ingest.config import images
from esrp_report.ingest.config.images import ImageError, css_as_read, read_image
from esrp_report.ingest.config.manifest import ManifestError, read_manifest
from esrp_report.model.errors import TemplateError
from esrp_report.render.html import _data_uri
from esrp_report.render.pdf import render_pdf

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
runner = CliRunner()


def _svg(body: str, attributes: str = 'width="200" height="80"') -> str:
    return f"<svg {NS} {attributes}>{body}</svg>"


def _png_header(width: int, height: int, padding: int = 0) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = (
        b"".join(b"\x00" + b"\x20\x60\xa0" * width for _ in range(height)) if width * height < 10**4 else b""
    )
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + (chunk(b"tEXt", b"Comment\x00" + b"x" * padding) if padding else b"")
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def _check(tmp_path: Path, text: str, name: str = "d.svg") -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    read_image(tmp_path / name, within=tmp_path, what="[[figure]] #1 file")


def _netapp(tmp_path: Path, extra: str, files: dict[str, bytes | str]) -> Path:
    shutil.copytree(SAMPLES / "3650-4", tmp_path / "3650-4")
    for name, content in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            target.write_text(content, encoding="utf-8")
        else:
            target.write_bytes(content)
    manifest = tmp_path / "netapp.toml"
    manifest.write_text(
        (SAMPLES / "netapp.toml").read_text(encoding="utf-8") + "\n" + extra, encoding="utf-8"
    )
    return manifest


def _build(manifest: Path, *options: str) -> Result:
    return runner.invoke(
        app, ["build", str(manifest), "-o", str(manifest.parent / "out"), "-j", "1", *options]
    )


def _assert_exit_2(result: Result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    one_line = " ".join(result.output.split())
    for word in words:
        assert word in one_line, (word, result.output)


FIGURE = '[[figure]]\nfile = "content/f.svg"\ncaption = "Fabric"\nsection = "tested_deployment"\n'


# --- sizes and coordinates ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attributes", "body"),
    [
        ('width="1e9" height="100" viewBox="0 0 1e-300 1e-300"', ""),  # the case
        ('width="1e999" height="100"', ""),  # infinite once read
        ('width="1e-300" height="100"', ""),  # vanishing
        ('width="200000" height="100"', ""),  # no page needs it
        ('width="100" height="100" viewBox="0 0 nan nan"', ""),  # not four numbers
        ('width="100" height="100" viewBox="0 0 100 1e-9"', ""),
        ('width="100" height="100"', '<g transform="scale(1e300)"><rect width="1" height="1"/></g>'),
        ('width="100" height="100"', '<path d="M0 0 L1e999 5"/>'),
        ('width="100" height="100"', '<symbol id="s" viewBox="0 0 1e-300 1"/>'),
    ],
)
def test_sizes_and_coordinates_no_page_can_draw_are_refused(
    tmp_path: Path, attributes: str, body: str
) -> None:
    with pytest.raises(ImageError, match="not a size or coordinate a page can draw"):
        _check(tmp_path, _svg(body, attributes))


def test_ordinary_sizes_units_and_view_boxes_are_accepted(tmp_path: Path) -> None:
    _check(
        tmp_path,
        _svg('<rect width="100%" height="50%"/>', 'width="16cm" height="60mm" viewBox="0 0 0.5 0.2"'),
    )
    _check(tmp_path, _svg('<path d="M0,0 L-35.5,1e3 z"/>', 'width="100%" viewBox="-10 -10 460.8 345.6"'))


def test_an_absurd_svg_figure_stops_the_build_before_the_evidence_is_read(tmp_path: Path) -> None:
    absurd = _svg('<rect width="1" height="1"/>', 'width="1e9" height="100" viewBox="0 0 1e-300 1e-300"')
    manifest = _netapp(tmp_path, FIGURE, {"content/f.svg": absurd})
    _assert_exit_2(_build(manifest), "f.svg", "[[figure]] #1 file", "viewBox")
    assert not (tmp_path / "out" / "netapp.pdf").exists()


# --- <use> expansion ---------------------------------------------------------------------------------


def _use_bomb(levels: int = 9, fan: int = 10) -> str:
    """Each group uses the previous one ``fan`` times: ``fan ** levels`` rectangles in about 1.7 KB."""
    groups = ['<g id="g0"><rect width="1" height="1"/></g>']
    for level in range(1, levels + 1):
        uses = "".join(f'<use xlink:href="#g{level - 1}"/>' for _ in range(fan))
        groups.append(f'<g id="g{level}">{uses}</g>')
    return _svg(f"<defs>{''.join(groups)}</defs><use xlink:href='#g{levels}'/>")


def test_a_use_bomb_is_refused_from_its_counts_without_expanding_it(tmp_path: Path) -> None:
    bomb = _use_bomb()
    assert len(bomb) < 2_500  # the size class; 10 ** 9 rectangles once expanded
    with pytest.raises(ImageError, match=r"more than 200,000 elements once its <use> references"):
        _check(tmp_path, bomb)


def test_references_nested_past_the_depth_limit_are_refused(tmp_path: Path) -> None:
    chain = '<g id="g0"><rect width="1" height="1"/></g>' + "".join(
        f'<g id="g{i}"><use href="#g{i - 1}"/></g>' for i in range(1, 20)
    )
    with pytest.raises(ImageError, match="more than 16 deep"):
        _check(tmp_path, _svg(f"<defs>{chain}</defs><use href='#g19'/>"))


@pytest.mark.parametrize(
    "body",
    [
        '<g id="a"><use href="#a"/></g>',  # a group using itself
        '<g id="a"><use href="#b"/></g><g id="b"><use href="#a"/></g>',  # two using each other
        '<pattern id="p" width="4" height="4"><rect width="4" height="4" fill="url(#p)"/></pattern>',
    ],
)
def test_references_that_loop_are_refused(tmp_path: Path, body: str) -> None:
    with pytest.raises(ImageError, match="refers to an element that contains it"):
        _check(tmp_path, _svg(body))


def test_a_drawing_that_reuses_symbols_and_gradients_is_accepted(tmp_path: Path) -> None:
    defs = (
        '<defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/></linearGradient>'
        '<symbol id="disk" viewBox="0 0 10 10"><rect width="10" height="10" fill="url(#g)"/></symbol></defs>'
    )
    uses = "".join(f'<use href="#disk" x="{12 * i}" width="10" height="10"/>' for i in range(200))
    _check(tmp_path, _svg(defs + uses))


# --- CSS, as the engine reads it -----------------------------------------------------------------------


def test_css_escapes_are_undone_before_css_is_judged() -> None:
    assert css_as_read(r"\75rl(x)") == "url(x)"
    assert css_as_read(r"@\69mport 'a'") == "@import 'a'"
    assert css_as_read("\\000075 rl(x)") == "url(x)"  # six digits, one space eaten
    assert css_as_read(r"\55 RL(x)") == "URL(x)"
    assert css_as_read(r"u\rl(x)") == "url(x)"  # a letter escaped as itself
    assert css_as_read(r"\2f* url(x) *\2f") == "/* url(x) */"  # escaped: no comment
    assert css_as_read("u/* a */rl(x)") == "url(x)"
    assert css_as_read("\\0 \\110000") == "\ufffd\ufffd"


@pytest.mark.parametrize(
    "svg",
    [
        _svg(r'<rect width="1" height="1" style="fill: \75rl(https://example.com/a.png)"/>'),
        _svg(r"<style>@\69mport 'https://example.com/a.css';</style>"),
        _svg(r"<style>rect { fill: u\72l(file:///etc/passwd) }</style>"),
        _svg(r"<style>rect { fill: \000055RL(file:///etc/passwd) }</style>"),
        _svg(r'<rect width="1" height="1" fill="\75 rl(https://example.com/a.png)"/>'),
        _svg("<style>rect { background: image-set('https://example.com/a.png' 1x) }</style>"),
    ],
)
def test_css_escapes_do_not_get_an_svg_past_the_check(tmp_path: Path, svg: str) -> None:
    with pytest.raises(ImageError, match="loads from outside the file"):
        _check(tmp_path, svg)


def test_escaped_references_to_the_file_itself_are_accepted(tmp_path: Path) -> None:
    _check(tmp_path, _svg(r'<linearGradient id="g"/><rect width="1" height="1" style="fill: \75rl(#g)"/>'))


# --- the logo: the figures' rules -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("logo.svg", _svg("<script>alert(1)</script>"), "a <script> element"),
        ("logo.svg", _use_bomb(), "200,000 elements"),
        ("logo.svg", _svg(r"<style>@\69mport 'https://example.com/a.css';</style>"), "loads from outside"),
        ("logo.png", _png_header(20_000, 20_000), "20000 x 20000 pixels"),
        ("logo.png", _png_header(2, 2, padding=5 * 1024 * 1024), "5,242,880 bytes"),
        ("logo.gif", b"GIF89a\x01\x00\x01\x00\x00\x00\x00;", "not an image kind"),
        ("logo.png", _svg(""), "not what its name (.png) says"),
    ],
)
def test_the_logo_is_held_to_the_figures_rules(
    tmp_path: Path, name: str, content: bytes | str, words: str
) -> None:
    manifest = _netapp(tmp_path, f'[branding]\nlogo = "branding/{name}"\n', {f"branding/{name}": content})
    with pytest.raises(ManifestError, match="branding") as caught:
        read_manifest(manifest)
    assert words in str(caught.value), caught.value
    _assert_exit_2(_build(manifest, "--format", "html"), name, words)


def test_a_huge_logo_is_refused_from_its_size_unread(tmp_path: Path) -> None:
    """A 200 MB logo took 3.2 GB of memory; now its size refuses it before it is opened (a sparse
    file: nothing is written to disk)."""
    manifest = _netapp(tmp_path, '[branding]\nlogo = "branding/logo.png"\n', {"branding/logo.png": b""})
    with (tmp_path / "branding" / "logo.png").open("wb") as handle:
        handle.truncate(200 * 1024 * 1024)
    with pytest.raises(ManifestError, match="209,715,200 bytes is beyond the limit"):
        read_manifest(manifest)


def test_the_logo_is_judged_again_when_it_is_embedded(tmp_path: Path) -> None:
    """A logo swapped for a hostile one after the manifest was read is refused by the renderer."""
    (tmp_path / "logo.svg").write_text(_svg("<script>alert(1)</script>"), encoding="utf-8")
    with pytest.raises(TemplateError, match="a <script> element"):
        _data_uri(tmp_path / "logo.svg", within=tmp_path)
    (tmp_path / "logo.svg").write_text(_svg('<rect width="1" height="1"/>'), encoding="utf-8")
    assert _data_uri(tmp_path / "logo.svg", within=tmp_path).startswith("data:image/svg+xml;base64,")


# --- what the PDF engine cannot draw -----------------------------------------------------------------


def test_render_pdf_lists_the_images_it_could_not_load_apart_from_refused_ones(tmp_path: Path) -> None:
    broken = "data:image/svg+xml;base64," + base64.b64encode(b"<svg><rect</svg>").decode()
    fine = "data:image/svg+xml;base64," + base64.b64encode(_svg("").encode()).decode()
    outside = (tmp_path / "x.png").as_uri()
    result = render_pdf(f'<img src="{broken}"><img src="{fine}"><img src="{outside}">', allowed_roots=[])
    assert [url for url, _ in result.failed_images] == [broken]
    assert "could not be loaded" in result.failed_images[0][1]
    assert result.refused == [outside]


def test_a_figure_the_pdf_engine_cannot_draw_fails_the_build_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checks keep such files out; this is the net behind them, so the checks are switched
    off to let a figure through that WeasyPrint cannot read."""
    monkeypatch.setattr(images, "_check_svg", lambda *_args: None)
    manifest = _netapp(tmp_path, FIGURE, {"content/f.svg": f"<svg {NS}><rect</svg>"})
    result = _build(manifest, "--format", "html,pdf")
    _assert_exit_2(result, "content/f.svg", "the figure 'Fabric' cannot be drawn in the PDF")
    assert not (tmp_path / "out" / "netapp.pdf").exists()
    assert not (tmp_path / "out" / "netapp.html").exists()


def _real_png(width: int = 8, height: int = 8) -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, format="PNG")
    return out.getvalue()


def test_a_raster_whose_pixel_data_is_damaged_is_refused(tmp_path: Path) -> None:
    import weasyprint  # noqa: F401 - it makes Pillow load cut images for the whole process

    whole = _real_png()
    (tmp_path / "whole.png").write_bytes(whole)
    assert read_image(tmp_path / "whole.png", within=tmp_path, what="figure").width_px == 8
    # Sound signature and IHDR, the compressed pixels cut short: what a viewer shows broken.
    idat = whole.index(b"IDAT")
    damaged = whole[: idat + 8] + b"\x00" * 4 + whole[idat + 40 :]
    (tmp_path / "damaged.png").write_bytes(damaged)
    with pytest.raises(ImageError, match="pixel data cannot be decoded"):
        read_image(tmp_path / "damaged.png", within=tmp_path, what="figure")
    jpeg_cut = tmp_path / "cut.jpg"
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (64, 64), (10, 90, 200)).save(out, format="JPEG")
    jpeg_cut.write_bytes(out.getvalue()[: len(out.getvalue()) // 2])
    with pytest.raises(ImageError):
        read_image(jpeg_cut, within=tmp_path, what="figure")
