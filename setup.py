"""What pyproject.toml cannot say: the compiled extensions (PDH-CSV parser, .blg cooking, exact
sums), and the top-level templates/ folder shipped inside the package (esrp_report/templates/ in
the wheel), so that an installed esrp-report builds documents (render/html.py finds either)."""

import shutil
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py


class BuildPyWithTemplates(build_py):
    """build_py that also copies templates/ into the built package."""

    def run(self) -> None:
        super().run()
        source = Path(__file__).resolve().parent / "templates"
        shutil.copytree(source, Path(self.build_lib) / "esrp_report" / "templates", dirs_exist_ok=True)


setup(
    cmdclass={"build_py": BuildPyWithTemplates},
    ext_modules=[
        Extension(
            "esrp_report.ingest._pdhcsv",
            sources=["esrp_report/ingest/_pdhcsv.c"],
            extra_compile_args=["-O2", "-std=c99", "-Wall", "-Wextra", "-Wno-unused-parameter"],
            optional=True,  # without a C compiler the PyArrow path is used
        ),
        Extension(
            "esrp_report.ingest._blgcook",
            sources=["esrp_report/ingest/_blgcook.c"],
            extra_compile_args=["-O2", "-std=c99", "-Wall", "-Wextra", "-Wno-unused-parameter"],
            optional=True,  # without a C compiler the NumPy path is used
        ),
        Extension(
            "esrp_report._exactsum",
            sources=["esrp_report/_exactsum.c"],
            extra_compile_args=["-O2", "-std=c99", "-Wall", "-Wextra", "-Wno-unused-parameter"],
            optional=True,  # without a C compiler the NumPy path is used
        ),
    ],
)
