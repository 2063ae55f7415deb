"""Only the compiled extensions (PDH-CSV parser, .blg cooking, exact sums) need setup.py; the rest is in pyproject.toml."""

from setuptools import Extension, setup

setup(
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
    ]
)
