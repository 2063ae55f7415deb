from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from esrp_report.cli.main import app
from esrp_synth.sample_variants import vmax_with_every_server

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.fixture
def samples() -> Path:
    return SAMPLES


@pytest.fixture
def email5_copy(tmp_path: Path) -> Path:
    """A private copy of the EMAIL5 sample folder that a test may change."""
    target = tmp_path / "EMAIL5"
    shutil.copytree(SAMPLES / "EMAIL5", target)
    return target


@pytest.fixture(scope="session")
def vmax_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The VMAX sample built once per session to HTML and PDF (the build and audit tests share it)."""
    out = tmp_path_factory.mktemp("vmax")
    result = CliRunner().invoke(app, ["build", str(SAMPLES / "vmax.toml"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "PASS" in result.output
    return out


@pytest.fixture(scope="session")
def vmax_all_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The VMAX sample with every server's reports in its appendix (the sample itself reproduces
    Server 4's, as the published document does), built once per session to HTML and PDF: the
    tests of a many-server appendix (contents page numbers, joined pieces, the audit of every
    appendix table) share it. The sample's evidence is copied, so the manifest stays beside it."""
    root = tmp_path_factory.mktemp("vmax-all")
    manifest = vmax_with_every_server(SAMPLES, root)
    out = root / "out"
    result = CliRunner().invoke(app, ["build", str(manifest), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "PASS" in result.output
    return out


@pytest.fixture(scope="session")
def sample_build(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], Path]:
    """The output folder of a bundled sample (by its manifest's stem) built once per session to
    HTML and PDF, whatever its verdict (NetApp's evidence is incomplete): the layout and the
    accessibility tests read the same builds. VMAX is ``vmax_build``."""
    from esrp_report.app.api import build

    built: dict[str, Path] = {}

    def get(stem: str) -> Path:
        if stem == "vmax":
            return Path(request.getfixturevalue("vmax_build"))
        if stem not in built:
            out = tmp_path_factory.mktemp(stem)
            build(SAMPLES / f"{stem}.toml", out)
            built[stem] = out
        return built[stem]

    return get


@pytest.fixture(scope="module", params=["native", "numpy"])
def engine(request: pytest.FixtureRequest) -> Iterator[str]:
    """A .blg engine for a whole test module (the compiled gather-and-cook pass, then NumPy);
    the .blg test modules use it on every test (``pytestmark``)."""
    from esrp_report.ingest.perfmon import blg

    if request.param == "native" and not blg.native_engine_built():
        pytest.skip("the compiled .blg engine was not built (no C compiler)")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(blg.decoding, "ENGINE", request.param)
        yield request.param
