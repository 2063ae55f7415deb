"""Templates, logos and the files a manifest brings cannot read outside their folders (issue 19).

Each escape is a real build of the NetApp sample from a temporary folder, through the CLI as a
user runs it. The secret is a file created outside the manifest's folder; its content must never
reach the HTML, the PDF's text or the PDF's attachments, and the build must stop with exit 2 and
a message naming the file, never a traceback. Cases that used to hang (FIFOs) run in a separate
process group with a timeout, so a regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from pypdf import PdfReader
from typer.testing import CliRunner, Result

from esrp_report.cli.main import app
from esrp_report.ingest.config.manifest import ManifestError, read_manifest
from esrp_report.model.errors import InputError, TemplateError
from esrp_report.render import html
from esrp_report.render.html import environment

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
SECRET = "TOP-SECRET-4711-do-not-embed"
runner = CliRunner()

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX feature")


@pytest.fixture
def design(tmp_path: Path) -> Path:
    """The NetApp sample's manifest and results in a folder of their own."""
    folder = tmp_path / "design"
    shutil.copytree(SAMPLES / "3650-4", folder / "3650-4")
    shutil.copy(SAMPLES / "netapp.toml", folder / "netapp.toml")
    return folder


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file the manifest's author must not be able to read, outside the manifest's folder."""
    path = tmp_path / "outside" / "secret.txt"
    path.parent.mkdir()
    path.write_text(f"<p>{SECRET}</p>\n", encoding="utf-8")
    return path


def _with(design: Path, extra: str) -> Path:
    manifest = design / "netapp.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "\n" + extra + "\n", encoding="utf-8")
    return manifest


def _override(design: Path, files: dict[str, str]) -> Path:
    """An override folder ``mine`` holding ``files`` (name -> template text), named in the manifest."""
    folder = design / "mine"
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    _with(design, '[template]\noverride = "mine"')
    return folder


def _build(design: Path) -> Result:
    return runner.invoke(app, ["build", str(design / "netapp.toml"), "-o", str(design / "out"), "-j", "1"])


def _assert_secret_nowhere(out: Path, marker: str = SECRET) -> None:
    """Not in any file written, nor in the text or attachments of any PDF written."""
    for path in out.rglob("*") if out.exists() else []:
        assert marker.encode() not in path.read_bytes(), path
        if path.suffix == ".pdf":
            reader = PdfReader(path)
            text = "\n".join(page.extract_text() for page in reader.pages)
            assert marker not in text, path
            for name, contents in reader.attachments.items():
                assert not any(marker.encode() in data for data in contents), (path, name)


def _assert_refused(result: Result, *words: str) -> None:
    """Exit 2 with one clear message, no traceback."""
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert "error:" in result.output
    for word in words:
        assert word in result.output, (word, result.output)


def _run_guarded(args: list[str], *, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run a command in a process group of its own; past ``timeout`` the whole group (workers
    included) is killed and the test fails: a FIFO must be refused, not waited on."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True
    ) as process:
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            pytest.fail(f"{args[3:]} still running after {timeout} s (blocked on a FIFO?)")
    return subprocess.CompletedProcess(args, process.returncode, output, "")


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from esrp_report.cli.main import main; main()", *args]


# --- override templates: links, names, includes ------------------------------------------------------


@pytest.mark.parametrize("target", ["secret", "/etc/passwd"])
def test_a_link_in_the_override_folder_to_a_file_outside_is_refused(
    design: Path, secret: Path, target: str
) -> None:
    """``mine/partials/kv_table.html -> secret`` was copied into the HTML and the PDF."""
    if target == "/etc/passwd" and not Path(target).is_file():
        pytest.skip("no /etc/passwd here")
    link_target, marker = (secret, SECRET) if target == "secret" else (Path(target), "root:x:0:0")
    folder = _override(design, {})
    (folder / "partials").mkdir()
    (folder / "partials" / "kv_table.html").symlink_to(link_target)
    result = _build(design)
    _assert_secret_nowhere(design / "out", marker)
    _assert_refused(result, "kv_table.html", "outside the folders it may be read from")


def test_a_linked_folder_inside_the_override_folder_is_refused(design: Path, secret: Path) -> None:
    """The override folder itself is inside the manifest's folder; a folder in it links out."""
    (secret.parent / "kv_table.html").write_text(secret.read_text(encoding="utf-8"), encoding="utf-8")
    folder = _override(design, {})
    (folder / "partials").symlink_to(secret.parent, target_is_directory=True)
    result = _build(design)
    _assert_secret_nowhere(design / "out")
    _assert_refused(result, "kv_table.html", "outside the folders it may be read from")


def test_a_linked_override_folder_pointing_outside_is_refused(design: Path, secret: Path) -> None:
    """Refused by the manifest reader, and again at render time should the folder be swapped for a
    link after the manifest was read."""
    (secret.parent / "document.html").write_text(secret.read_text(encoding="utf-8"), encoding="utf-8")
    _with(design, '[template]\noverride = "mine"')
    (design / "mine").symlink_to(secret.parent, target_is_directory=True)
    result = _build(design)
    _assert_secret_nowhere(design / "out")
    _assert_refused(result, "[template] override", "through a symbolic link")
    with pytest.raises(TemplateError, match="outside the manifest's folder"):
        html._override_folder(design.resolve(), "mine")


def test_template_name_slash_does_not_make_every_file_a_template(design: Path, secret: Path) -> None:
    """``[template] name = "/"`` was joined to templates/ unchecked, so the root folder became the
    template folder and an override could ``{% include "tmp/.../secret.txt" %}``."""
    from_root = str(secret.resolve()).lstrip("/")
    document = f'<html><body><p>x</p>{{% include "{from_root}" %}}</body></html>'
    _override(design, {"document.html": document, "appendix_part.html": "<html><body>y</body></html>"})
    _with(design, 'name = "/"')  # appended to the [template] table the override opened
    result = _build(design)
    _assert_secret_nowhere(design / "out")
    _assert_refused(result, "[template] name", "not a plain folder name")
    with pytest.raises(TemplateError, match="must be a folder name"):
        environment(None, "/")


@pytest.mark.parametrize("name", ["/", "..", "../esrp", "esrp/partials", "C:esrp", "\\\\server\\share", ".x"])
def test_template_names_that_are_not_plain_folder_names_are_refused(design: Path, name: str) -> None:
    manifest = _with(design, f"[template]\nname = '{name}'")
    with pytest.raises(ManifestError, match="not a plain folder name") as info:
        read_manifest(manifest)
    assert info.value.location == "[template] name"
    with pytest.raises(TemplateError):
        environment(None, name)


@pytest.mark.parametrize(
    "statement",
    [
        '{% include "../../outside/secret.txt" %}',
        '{% include "partials/../../../outside/secret.txt" %}',
        '{% include "ABSOLUTE" %}',
        '{% include "\\\\..\\\\..\\\\outside\\\\secret.txt" %}',
    ],
    ids=["parent", "parent-inside", "absolute", "backslashes"],
)
def test_an_include_leaving_the_template_folders_is_refused(
    design: Path, secret: Path, statement: str
) -> None:
    """Names with ``..``, a leading ``/`` or backslashes are refused before any folder is searched
    (they used to end in a TemplateNotFound traceback, and would have been one step from a read)."""
    _override(design, {"partials/kv_table.html": statement.replace("ABSOLUTE", str(secret))})
    result = _build(design)
    _assert_secret_nowhere(design / "out")
    _assert_refused(result, "a template name must stay inside the template folders")


@pytest.mark.parametrize(
    "statement",
    ['{% extends "../outside/secret.txt" %}', '{% import "/etc/passwd" as p %}{{ p }}'],
    ids=["extends", "import"],
)
def test_extends_and_import_are_confined_like_include(tmp_path: Path, secret: Path, statement: str) -> None:
    override = tmp_path / "mine"
    override.mkdir()
    (override / "page.html").write_text(statement, encoding="utf-8")
    with pytest.raises(TemplateError, match="must stay inside the template folders"):
        environment(override, "esrp").get_template("page.html").render()


def test_an_override_template_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    override = tmp_path / "mine"
    (override / "partials" / "kv_table.html").mkdir(parents=True)
    with pytest.raises(TemplateError, match="is a folder, not a regular file"):
        environment(override, "esrp").get_template("partials/kv_table.html")


def test_a_broken_override_template_is_a_clear_error(design: Path) -> None:
    """A template naming a partial that does not exist stopped the build with a traceback."""
    _override(design, {"partials/kv_table.html": '{% include "partials/no_such.html" %}'})
    _assert_refused(_build(design), "partials/no_such.html", "no such template")


# --- CSS, fonts and images the PDF pulls in ----------------------------------------------------------


def test_css_in_an_override_cannot_pull_a_secret_into_the_pdf(design: Path, secret: Path) -> None:
    """``@import``, ``url()`` images and fonts pointing out of the allowed folders (directly or
    through a link in the manifest's folder) are refused by the PDF's fetcher and listed."""
    leak_css = secret.parent / "leak.css"
    leak_css.write_text(f'p::before {{ content: "{SECRET}"; }}', encoding="utf-8")
    (design / "linked.css").symlink_to(leak_css)
    style = (ROOT / "templates" / "esrp" / "style.css").read_text(encoding="utf-8")
    hostile = (
        f'@import url("{leak_css.as_uri()}");\n@import url("linked.css");\n'
        f'@font-face {{ font-family: "Leak"; src: url("{secret.as_uri()}"); }}\n'
        f'body {{ background: url("{secret.as_uri()}"); }}\n'
    )
    _override(design, {"style.css": hostile + style})
    result = _build(design)
    _assert_secret_nowhere(design / "out")
    # The document is built (NetApp's evidence has no counter logs: INCOMPLETE, exit 3).
    assert result.exit_code == 3, result.output
    assert "refused to fetch" in result.output
    assert leak_css.as_uri() in result.output and (design / "linked.css").as_uri() in result.output


@needs_fifo
def test_the_pdf_fetcher_refuses_fifos_folders_and_links_out_without_opening_them(tmp_path: Path) -> None:
    """A FIFO given to urllib blocked the layout forever; the fetcher now reads file: URLs itself,
    only regular files inside the allowed folders."""
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    os.mkfifo(allowed / "pipe.svg")
    (allowed / "folder.svg").mkdir()
    (tmp_path / "secret.css").write_text(f'p::before {{ content: "{SECRET}"; }}', encoding="utf-8")
    (allowed / "link.css").symlink_to(tmp_path / "secret.css")
    (allowed / "ok.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>', "utf-8")
    refused = [(allowed / name).as_uri() for name in ("pipe.svg", "folder.svg", "link.css")]
    script = (
        "import sys, pathlib\n"
        "from esrp_report.render.pdf import render_pdf\n"
        "allowed = pathlib.Path(sys.argv[1])\n"
        'html = (\'<link rel="stylesheet" href="link.css"><p>x</p><img src="pipe.svg">\'\n'
        '        \'<img src="folder.svg"><img src="ok.svg">\')\n'
        "result = render_pdf(html, allowed_roots=[allowed], base_url=allowed)\n"
        "print('REFUSED', sorted(result.refused))\n"
        "import io, pypdf\n"
        "print('TEXT', pypdf.PdfReader(io.BytesIO(result.pdf)).pages[0].extract_text())\n"
    )
    run = _run_guarded([sys.executable, "-c", script, str(allowed)])
    assert run.returncode == 0, run.stdout[-2000:]
    assert f"REFUSED {sorted(refused)}" in run.stdout
    assert "TEXT x" in run.stdout and SECRET not in run.stdout


# --- every file a manifest names is a regular file ------------------------------------------------


@pytest.mark.parametrize("problem", ["missing", "folder"])
def test_a_missing_or_folder_logo_is_a_clear_error(design: Path, problem: str) -> None:
    """Both gave a traceback (FileNotFoundError, IsADirectoryError) once the evidence was read."""
    if problem == "folder":
        (design / "logo.svg").mkdir()
    manifest = _with(design, '[branding]\nlogo = "logo.svg"')
    result = _build(design)
    expected = "does not exist" if problem == "missing" else "is a folder, not a regular file"
    _assert_refused(result, "[branding] logo", "logo.svg", expected)
    with pytest.raises(ManifestError, match=expected) as info:
        read_manifest(manifest)
    assert info.value.location == "[branding] logo"


@needs_fifo
def test_a_fifo_logo_is_refused_promptly(design: Path) -> None:
    """A FIFO as logo made the build wait forever on its open."""
    os.mkfifo(design / "logo.svg")
    _with(design, '[branding]\nlogo = "logo.svg"')
    run = _run_guarded(_cli("build", str(design / "netapp.toml"), "-o", str(design / "out"), "-j", "1"))
    assert run.returncode == 2, run.stdout
    assert "Traceback" not in run.stdout
    assert "[branding] logo" in run.stdout and "logo.svg" in run.stdout
    assert "FIFO (named pipe), not a regular file" in run.stdout


@needs_fifo
def test_a_fifo_override_template_is_refused_promptly(design: Path) -> None:
    """Jinja2's FileSystemLoader opened a FIFO override template and waited forever."""
    folder = _override(design, {})
    (folder / "partials").mkdir()
    os.mkfifo(folder / "partials" / "kv_table.html")
    run = _run_guarded(_cli("build", str(design / "netapp.toml"), "-o", str(design / "out"), "-j", "1"))
    assert run.returncode == 2, run.stdout
    assert "Traceback" not in run.stdout
    assert "kv_table.html" in run.stdout and "FIFO (named pipe), not a regular file" in run.stdout


@needs_fifo
@pytest.mark.parametrize(
    ("key", "table"),
    [("[rules] file", '[rules]\nfile = "it"'), ("[sizing] spec", '[sizing]\nspec = "it"')],
    ids=["rules", "sizing"],
)
@pytest.mark.parametrize("problem", ["missing", "folder", "fifo"])
def test_rules_and_sizing_files_must_be_regular_files(
    design: Path, key: str, table: str, problem: str
) -> None:
    """Judged when the manifest is read, with ``os.stat``, before anything opens them (a FIFO
    sizing spec used to block the manifest reader; a FIFO rules file, the build)."""
    if problem == "folder":
        (design / "it").mkdir()
    elif problem == "fifo":
        os.mkfifo(design / "it")
    _with(design, table)
    run = _run_guarded(_cli("build", str(design / "netapp.toml"), "-o", str(design / "out"), "-j", "1"))
    assert run.returncode == 2, run.stdout
    assert "Traceback" not in run.stdout
    assert key in run.stdout and str(design / "it") in run.stdout
    expected = {"missing": "does not exist", "folder": "is a folder", "fifo": "is a FIFO"}[problem]
    assert expected in run.stdout


def test_the_override_folder_must_be_a_folder(design: Path) -> None:
    (design / "mine").write_text("not a folder", encoding="utf-8")
    with pytest.raises(ManifestError, match="is a regular file, not a folder") as info:
        read_manifest(_with(design, '[template]\noverride = "mine"'))
    assert info.value.location == "[template] override"
    assert isinstance(info.value, InputError)


# --- an override template cannot hang a build or fill its memory --------------------------------


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "range()"),
        ("{{ 'a' * 300000000 }}", "repetition"),
        ("{{ [0] * 10 ** 9 }}", "repetition"),
        ("{{ 2 ** 10000000 }}", "power"),
    ],
)
def test_an_override_cannot_build_without_bound(source: str, why: str) -> None:
    from jinja2.sandbox import SecurityError

    from esrp_report.render.html import BoundedSandbox

    env = BoundedSandbox()
    with pytest.raises(SecurityError, match=why):
        env.from_string(source).render()
    env.new_render()
    assert env.from_string("{% for i in range(3) %}{{ i }}{% endfor %}").render() == "012"


@pytest.mark.parametrize(
    "expression", ["{{ 1 / 0 }}", "{{ 'x' | round }}", "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}"]
)
def test_a_failing_expression_in_an_override_is_a_template_error(design: Path, expression: str) -> None:
    _override(design, {"partials/kv_table.html": expression})
    result = _build(design)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "template" in result.output.casefold()
