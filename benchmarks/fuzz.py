"""Fuzz every reader: `python -m benchmarks.fuzz --format all --inputs 100000` (docs/fuzzing.md).

One harness per input format (CSV/TSV counter logs, BLG, HTML report, result XML, config XML,
test log, manifest, audit document). Each harness writes an input to one file in a private
working folder and calls the reader on it. The expected outcomes are a result or an
``InputError`` (the project's error for bad input); anything else is an *uncaught exception*, and
a worker that dies, stops making progress (``--timeout`` per input) or grows past ``--rss-mb``
is a finding too. Every finding's input is saved as a reproducer under ``--out``.

Inputs come from the project's own samples (cut down so one input costs milliseconds), mutated by
a structure-aware mutator: byte flips, truncation, splicing with another seed, duplicated,
removed and swapped lines, huge and odd numbers, re-encoding (UTF-16 with and without a BOM,
Latin-1), NULs, deep nesting and entities for markup, separators for CSV.

Two engines drive the mutator:

* ``atheris`` (coverage-guided; used when the package is installed): libFuzzer keeps the inputs
  that reach new code of ``esrp_report`` and mutates those, half of the time with libFuzzer's own
  byte mutations and half with the structure-aware mutator above.
* ``random`` (always available; what the test suite runs): the same mutator on the seeds and
  on earlier mutants, driven by ``random.Random(seed)``, so a run is reproducible input by input.

Workers run as subprocesses (``--jobs``) so that a crash in compiled code, a hang or a memory
blow-up is caught by this parent, which saves the input, records the finding and starts the
worker again for the inputs left.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "out" / "fuzz"
MAX_SIZE = 64 * 1024  # bytes; mutants are cut to this
STATUS_EVERY = 50  # inputs between two status writes of a worker
MAX_SAVED_PER_SIGNATURE = 1
FINDING_KINDS = ("uncaught", "hang", "memory", "died")

# --- formats ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Format:
    name: str
    filename: str  # the name the input is written under (readers look at names too)
    markup: bool  # XML/HTML: nesting and entity mutations apply
    tokens: tuple[str, ...]  # strings the mutator splices in
    binary: bool = False  # tokens are bytes (each character one byte, Latin-1), not UTF-8 text


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format(
            "csv",
            "Performance_2011_3_11_13_27_46.csv",
            False,
            (
                '"(PDH-CSV 4.0) (Eastern Standard Time)(300)"',
                '"(PDH-TSV 4.0)',
                '" "',
                '""',
                ",",
                "\t",
                '"03/11/2011 13:32:28.123"',
                '"13/45/2011 99:99:99.9"',
                "\\\\EMAIL5\\",
                "MSExchange Database(Instance1)\\I/O Database Reads/sec",
                '"-1.#IND"',
                '"1.#INF"',
            ),
        ),
        Format(
            "blg",
            "Performance_2011_3_11_13_27_46.blg",
            False,
            (
                "\x00\x00\x00\x00",
                "\xff\xff\xff\xff",
                "\x01\x00\x00\x00",
                "PDH",
                "\x00\x00\x01\x00",
                "BL\x03\x00",  # sample record, then its sub-records: raw counter, wildcard, PERF_DATA_BLOCK
                "BL\x03\x01",
                "BL\x03\x02",
                "BL\x03\x05",
                "\xd0\x07\x00\x80",  # PDH_CSTATUS_NO_MACHINE
                "\xb8\x0b\x00\xc0",  # PDH_CSTATUS_NO_OBJECT
                "\x00\x00\x00\x00\x00\x00\x00\x80",  # int64 minimum
                "\xff\xff\xff\xff\xff\xff\xff\x7f",  # int64 maximum
                "*\x00\x00\x00",  # a wildcard instance, UTF-16
                "\xff\x06\x00\x00\x08\x00\x02\x00",  # record 32's first two DWORDs
            ),
            binary=True,
        ),
        Format(
            "html",
            "Performance_2012_4_25_15_29_35.html",
            True,
            (
                "<table>",
                "</table>",
                "<tr><td>",
                "</td></tr>",
                "<td colspan=99999>",
                "<th>",
                "<br>",
                "Instance1",
                "Database Reads/sec",
                "Test Log",
                "&nbsp;",
                "&#0;",
                "Microsoft Exchange Jetstress",
            ),
        ),
        Format(
            "result_xml",
            "Performance_2011_3_11_13_27_46.xml",
            True,
            (
                '<instance name="Instance9">',
                "</instance>",
                '<counter name="x" average="1e999"/>',
                '<element name="Machine Name" value=""/>',
                "<output>",
                "</output>",
                "&#xD800;",
                "&lol;",
            ),
        ),
        Format(
            "config_xml",
            "JetstressConfig.xml",
            True,
            (
                "<MailboxCount>",
                "</MailboxCount>",
                "<MailboxIops>1e400</MailboxIops>",
                "<Type>Stress</Type>",
                "<Duration>P0Y</Duration>",
                "<DatabaseConfigurations>",
                "&amp;",
                "&#65535;",
            ),
        ),
        Format(
            "test_log",
            "Performance_2011_3_11_13_27_46.log",
            False,
            (
                "3/11/2011 1:27:01 PM -- ",
                "13/45/2011 99:61:61 PM -- ",
                " -- ",
                "Operation mix: Sessions 5, ",
                "Database read latency thresholds: (average: 1e999 msec/read, maximum: 100 msec/read).",
                "Performance logging started (interval: 99999999999999999999 ms).",
                ".blg has 4 samples.",
                "Instance2756.1 has 18.3 for I/O Database Reads Average Latency.",
                "```",
            ),
        ),
        Format(
            "manifest",
            "solution.toml",
            False,
            (
                "[[servers]]",
                "[document]",
                "[profile]",
                "[sizing]",
                "[template]",
                "[branding]",
                "[rules]",
                'override = "override"',
                'override = "."',
                'override = "logo.svg"',
                'name = "../esrp"',
                'name = "audit"',
                'logo = "logo.svg"',
                'logo = "override"',
                'logo = "missing.png"',
                'file = "rules.toml"',
                'file = "results"',
                'accent_colour = "#zzzzzz"',
                'page_size = "A3"',
                'spec = "../x.toml"',
                'results = "/etc"',
                'results = "/dev/zero"',
                'results = "fifo"',
                "mailboxes = -1",
                "iops_per_mailbox = nan",
                "= inf",
                '"""',
                "[tables.x]",
                "rows = [[1,2]]",
            ),
        ),
        Format(
            "templates",
            "bundle.txt",  # a manifest [template]/[branding] part and override partials, see _unbundle
            True,
            (
                "{{ ",
                " }}",
                "{% ",
                " %}",
                "{% endfor %}",
                "{% endif %}",
                "{% include 'partials/kv_table.html' %}",
                "{% include 'partials/missing.html' %}",
                "{% include 'document.html' %}",
                "{% extends 'document.html' %}",
                "{% block x %}{% endblock %}",
                "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1) }}",
                "{{ nosuchname }}",
                "{{ doc.nosuchattr }}",
                "{{ doc.servers[99] }}",
                "{{ doc.__class__ }}",
                "{{ ''.__class__.__mro__ }}",
                "{{ m.__init__.__globals__ }}",
                "{{ doc.manifest.path | basename }}",
                "{{ 1 / 0 }}",
                "{{ 'x' | num }}",
                "{{ none | when }}",
                "{{ doc | markdown }}",
                "{{ rows | length }}",
                "{% set x = [] %}{% do x.append(1) %}",
                "{% raw %}",
                "{# ",
                " #}",
                "--- partials/run.html ---",
                "--- document.html ---",
                "--- partials/../../x.html ---",
                '[template]\noverride = "override"',
                'name = "audit"',
                'name = "../esrp"',
                'logo = "logo.svg"',
            ),
        ),
        Format(
            "archive",
            "results.zip",
            False,
            ("PK\x03\x04", "PK\x01\x02", "PK\x05\x06", "\xff\xff\xff\xff", "../", "/", "a/b", "\x00"),
        ),
        Format(
            "published",
            "document.txt",
            True,
            (
                "Achieved Transactional I/O per Second",
                "Database Reads Average Latency (msec)",
                "Server 1",
                "\t",
                "|",
                "%PDF-1.4",
                "<html>",
                "<table><tr><td>",
                "Performance",
                "0.30.441",
                "N/A",
            ),
        ),
    )
}


# --- seeds --------------------------------------------------------------------------------------


def _csv_seeds() -> list[bytes]:
    lines = (ROOT / "samples/EMAIL5/Performance_2011_3_11_13_27_46.csv").read_text("utf-8").splitlines()

    def cut(line: str, columns: int) -> str:
        return '","'.join(line.split('","')[:columns]) + ('"' if line.count('","') >= columns else "")

    small = [cut(line, 6) for line in lines[:10]]
    csv = "\r\n".join(small) + "\r\n"
    tsv = csv.replace('","', '"\t"').replace("PDH-CSV", "PDH-TSV")
    return [
        csv.encode("utf-8"),
        tsv.encode("utf-8"),
        ("\ufeff" + csv).encode("utf-16-le"),
        csv.encode("utf-8")[:-40],  # last row cut short
        ("\r\n".join(cut(line, 3) for line in lines[:30]) + "\r\n").encode("utf-8"),
    ]


def _blg_seeds() -> list[bytes]:
    import uuid
    from datetime import datetime, timedelta

    import numpy as np

    from esrp_synth import blg_writer as w

    objects = (
        w.PerfObject(
            "MSExchange Database ==> Instances",
            (
                w.Counter("I/O Database Reads/sec", w.PERF_COUNTER_COUNTER, size=4),
                w.Counter("I/O Database Reads Average Latency", w.PERF_AVERAGE_TIMER, size=4),
                w.Counter("% Processor Time", w.PERF_100NSEC_TIMER),
            ),
            ("Instance1", "Instance2"),
            has_object_time=True,
        ),
        w.PerfObject("Memory", (w.Counter("Available MBytes", w.PERF_COUNTER_LARGE_RAWCOUNT),), None),
    )
    start = datetime(2011, 3, 11, 13, 27, 46)
    seeds = []
    for pointer, catalog, count in ((4, True, 4), (8, False, 3)):
        samples = [
            w.SampleSpec(
                local_time=start + timedelta(seconds=15 * k),
                perf_time=10_000_000_000 + k * 150_000_000,
                perf_time_100ns=129_441_000_000_000_000 + k * 150_000_000,
                values={
                    objects[0].name: np.array([[100 * k + 7 * i + j for j in range(3)] for i in range(2)]),
                    objects[1].name: np.array([[4096 - k]]),
                },
                bases={objects[0].name: np.full((2, 3), 10 * k + 1)},
            )
            for k in range(count)
        ]
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "seed.blg"
            w.write_blg(
                path,
                machine="EMAIL5",
                objects=objects,
                samples=samples,
                write_catalog=catalog,
                pointer_size=pointer,
                buffer_size=8192,
                fragment_data=2000,
                start_utc=datetime(2011, 3, 11, 18, 27, 46),
                utc_offset_minutes=-300,
                log_guid=uuid.UUID(int=0x5EED + pointer),
            )
            seeds.append(path.read_bytes())
    return seeds + _blg_raw_seeds()


def _blg_raw_seeds() -> list[bytes]:
    """Logs of the raw-counter layout (``esrp_synth/blg_raw_writer.py``), small buffers so records
    are cut into fragments that cross buffers:

    * a 64-bit writer (Windows 10 buffers): wildcard entries (instances ``Instance2`` twice, one
      vanishing, an empty array), single counters of every cooking family (rate, average timer,
      precision and inverse 100 ns timers, raw fraction, raw count, elapsed time, multi-timer, the
      uncooked MULTI_TIMER_INV), a parent instance with an index; failed collections (a single
      counter's CStatus, a wildcard's group CStatus);
    * a 32-bit writer (Vista buffers, as the Server 2003 log): three machines with their own
      clocks and sub-record stamps, PDH_CSTATUS_NO_MACHINE for two of them in one sample, entries
      with 8 spare bytes, a wildcard array in the 64-bit item form.
    """
    import uuid
    from datetime import datetime, timedelta

    from esrp_synth import blg_raw_writer as rw
    from esrp_synth import blg_writer as w

    def counter(path: str, kind: int, **fields: Any) -> rw.RawCounter:
        return rw.RawCounter.from_path(path, kind, **fields)

    start = datetime(2011, 3, 11, 13, 27, 46)
    second = 10_000_000
    utc0 = rw.filetime(start) + 300 * 60 * second
    seeds = []

    # A 64-bit writer, one machine.
    counters = [
        counter(
            "\\\\EMAIL5\\MSExchange Database ==> Instances(*)\\I/O Database Reads/sec", w.PERF_COUNTER_COUNTER
        ),
        counter(
            "\\\\EMAIL5\\MSExchange Database ==> Instances(*)\\I/O Database Reads Average Latency",
            w.PERF_AVERAGE_TIMER,
        ),
        counter("\\\\EMAIL5\\LogicalDisk(*)\\% Disk Time", w.PERF_PRECISION_100NS_TIMER),
        counter("\\\\EMAIL5\\Processor(_Total)\\% Processor Time", w.PERF_100NSEC_TIMER_INV),
        counter("\\\\EMAIL5\\Memory\\% Committed Bytes In Use", w.PERF_RAW_FRACTION),
        counter("\\\\EMAIL5\\Memory\\Available MBytes", w.PERF_COUNTER_RAWCOUNT, scale=-1),
        counter("\\\\EMAIL5\\Process(store)\\Elapsed Time", w.PERF_ELAPSED_TIME),
        counter("\\\\EMAIL5\\Thread(store/12#3)\\% Processor Time", w.PERF_100NSEC_TIMER),
        counter("\\\\EMAIL5\\Processor(_Total)\\% Busy Time", w.PERF_100NSEC_MULTI_TIMER),
        counter("\\\\EMAIL5\\Processor(_Total)\\% Idle Time", w.PERF_100NSEC_MULTI_TIMER_INV),
    ]
    samples = []
    for k in range(5):
        clock = rw.Clock(
            perf_time=10_000_000_000 + k * 150_000_000 + 7 * k, time_100ns=utc0 + k * 15 * second + 3
        )
        instances = ["Instance1", "Instance2", "Instance2"] if k != 3 else ["Instance1", "Instance2"]
        disks = [] if k == 2 else ["C:", "D:"]
        values = rw.sample_values(
            counters,
            clock,
            [
                [(name, 1000 * k + 37 * j) for j, name in enumerate(instances)],
                [(name, 200_000 * k + j) for j, name in enumerate(instances)],
                [(name, 40_000_000 * k + j) for j, name in enumerate(disks)],
                100_000_000 * k,
                60 + k,
                4096 - k,
                utc0 - 3600 * second,
                9_000_000 * k,
                250_000_000 * k,
                20_000_000 * k,
            ],
            [
                None,
                [(name, 10 * k + j + 1) for j, name in enumerate(instances)],
                None,
                None,
                100,
                None,
                None,
                None,
                2,
                2,
            ],
        )
        if k == 1:  # the processor counter not collected (a failed single counter)
            values[3] = rw.RawValue.failed(rw.PDH_CSTATUS_NO_INSTANCE)
        if k == 4:  # the disks' wildcard failed as a whole (group status)
            values[2] = rw.RawArray(values[2].items, rw.PDH_CSTATUS_NO_OBJECT)  # type: ignore[union-attr]
        samples.append(rw.RawSample(values, start + timedelta(seconds=15 * k)))
    header = rw.LogHeader(
        time_zone=rw.fixed_time_zone(-300, "Eastern Standard Time"), log_guid=uuid.UUID(int=0x5EED)
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "seed.blg"
        rw.write_raw_blg(path, counters, samples, header=header, buffer_size=4096, fragment_data=900)
        seeds.append(path.read_bytes())

    # A 32-bit writer, three machines sampled on their own clocks, two of them offline once.
    machines = ("S1", "S2", "S3")
    counters = [
        counter(f"\\\\{m}\\Processor(_Total)\\% Processor Time", w.PERF_100NSEC_TIMER_INV) for m in machines
    ]
    counters.append(
        counter("\\\\S1\\Network Interface(*)\\Bytes Total/sec", w.PERF_COUNTER_BULK_COUNT, scale=-4)
    )
    samples = []
    for k in range(4):
        clocks = [
            rw.Clock(
                perf_time=3_579_545 * (600 * k + 90 * j),
                time_100ns=utc0 - 120 * 60 * second + (600 * k + 90 * j) * second + 1234,  # UTC-3 h
                stamp=rw.filetime(start) + (600 * k + 90 * j) * second,
            )
            for j in range(len(machines))
        ]
        clocks.append(clocks[0])
        values = rw.sample_values(
            counters,
            clocks,
            [5_000_000_000 * k + j for j in range(len(machines))] + [[("nic a", 1000 * k), ("nic b", 5 * k)]],
        )
        if k == 2:
            values[0] = rw.RawValue.failed(rw.PDH_CSTATUS_NO_MACHINE, clocks[0].stamp)
            values[1] = rw.RawValue.failed(rw.PDH_CSTATUS_NO_MACHINE, clocks[0].stamp)
        samples.append(rw.RawSample(values))
    header = rw.LogHeader(
        perf_freq=3_579_545,
        time_zone=rw.fixed_time_zone(-180, "SA Eastern Standard Time"),
        os_version=(5, 2, 1, 2),
        os_build=3790,
        log_guid=uuid.UUID(int=0x5EED + 32),
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "seed.blg"
        rw.write_raw_blg(
            path,
            counters,
            samples,
            header=header,
            pointer_size=4,
            buffer_size=2048,
            fragment_data=300,
            entry_slack=8,
        )
        seeds.append(path.read_bytes())
    return seeds


def _html_seeds() -> list[bytes]:
    return [p.read_bytes() for p in sorted((ROOT / "samples/3650-4").glob("*.html"))] + [
        (ROOT / "samples/trends/table-06/1-512mb/Performance_2012_1_10_8_30_0.html").read_bytes()
    ]


def _result_xml_seeds() -> list[bytes]:
    text = (ROOT / "samples/EMAIL5/Performance_2011_3_11_13_27_46.xml").read_text("utf-8")
    # Two instances of twenty are enough to reach every branch and keep an input at 10 KB.
    small = re.sub(r'\s*<instance name="Instance\d+\.(?:[3-9]|\d\d)">.*?</instance>', "", text, flags=re.S)
    return [small.encode("utf-8"), small.encode("utf-16")]


def _config_xml_seeds() -> list[bytes]:
    return [
        (ROOT / "samples/config/JetstressConfig_EMAIL5.xml").read_bytes(),
        (ROOT / "samples/trends/table-06/1-512mb/JetstressConfig.xml").read_bytes(),
        (ROOT / "samples/trends/table-20-series-1/2-10000-users/MBX2/JetstressConfig.xml").read_bytes(),
    ]


def _test_log_seeds() -> list[bytes]:
    seeds = []
    for path in sorted((ROOT / "samples/data").glob("*.json")):
        log = json.loads(path.read_text("utf-8")).get("log") or []
        if log:
            seeds.append(("\r\n".join(log[:60]) + "\r\n").encode("utf-8"))
    return seeds


def _manifest_seeds() -> list[bytes]:
    """The two sample manifests, read as the build reads them (``prepare`` lays out the
    files they name): results in ``results/``, and with [template], [branding] and [rules] keys."""
    netapp = (
        (ROOT / "samples/netapp.toml").read_text("utf-8").replace('results = "3650-4"', 'results = "results"')
    )
    vmax = (ROOT / "samples/vmax.toml").read_text("utf-8")
    # One server (the others would name the same results folder: "already another server's"),
    # and vmax's own [branding] dropped for ours.
    servers = [m.start() for m in re.finditer(r"^\[\[servers\]\]", vmax, flags=re.M)]
    end = re.compile(r"^\[(?!\[servers)", re.M).search(vmax, servers[-1]).start()
    first = re.sub(r'results = (?:"[^"]*"|\[[^\]]*\])', 'results = "results"', vmax[servers[0] : servers[1]])
    vmax = vmax[: servers[0]] + first + vmax[end:]
    vmax = re.sub(r"^\[branding\][^\[]*", "", vmax, flags=re.M)
    extra = (
        '\n[template]\nname = "esrp"\noverride = "override"\n'
        '\n[branding]\nlogo = "logo.svg"\nprimary_colour = "#1f4e79"\naccent_colour = "#c00000"\n'
        'page_size = "Letter"\n\n[rules]\nfile = "rules.toml"\n'
    )
    return [netapp.encode("utf-8"), (netapp + extra).encode("utf-8"), (vmax + extra).encode("utf-8")]


# The templates harness: one input is a bundle of files, each after a line ``--- <name> ---``:
# ``manifest`` (TOML appended to a fixed manifest: [template] and [branding] keys) and override
# templates by their name under the override folder (``partials/run.html``, ``document.html``).
_BUNDLE_PART = re.compile(rb"^--- ([^\r\n]{1,200}) ---\r?$", re.MULTILINE)
_OVERRIDE_PARTIALS = ("partials/kv_table.html", "partials/run.html", "partials/failures.html")


def _bundle(parts: list[tuple[str, bytes]]) -> bytes:
    return b"".join(
        b"--- " + name.encode("utf-8") + b" ---\n" + body.rstrip(b"\n") + b"\n" for name, body in parts
    )


def _unbundle(data: bytes) -> list[tuple[str, bytes]]:
    marks = list(_BUNDLE_PART.finditer(data))
    return [
        (mark.group(1).decode("utf-8", "replace"), data[mark.end() + 1 : nxt.start() if nxt else len(data)])
        for mark, nxt in zip(marks, [*marks[1:], None], strict=False)
    ]


def _templates_seeds() -> list[bytes]:
    keys = '[template]\nname = "esrp"\noverride = "override"\n\n[branding]\nlogo = "logo.svg"\n'
    partials = {name: (ROOT / "templates/esrp" / name).read_bytes() for name in _OVERRIDE_PARTIALS}
    return [_bundle([("manifest", keys.encode()), (name, partials[name])]) for name in _OVERRIDE_PARTIALS] + [
        _bundle([("manifest", keys.encode()), *partials.items()]),
        _bundle([("manifest", b'[template]\nname = "esrp"\n')]),  # no override at all
    ]


def _sample_members(folder: str = "3650-4") -> list[tuple[str, bytes]]:
    return [(f"{folder}/{p.name}", p.read_bytes()) for p in sorted((ROOT / "samples" / folder).iterdir())]


_ZIP_TIME = (2011, 3, 11, 13, 27, 46)


def _zip(members: list[tuple[str, bytes]], method: int = 8) -> bytes:
    import io
    import warnings
    import zipfile

    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w", compression=method) as archive:
        warnings.simplefilter("ignore")  # "Duplicate name": wanted here
        for name, body in members:
            # A fixed time stamp (writestr of a name stamps the current time, so two calls a second
            # apart built different bytes); the attributes writestr gives a name.
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.external_attr = (0o40775 << 16) | 0x10 if name.endswith("/") else 0o600 << 16
            archive.writestr(info, body, compress_type=method)
    return buffer.getvalue()


def _archive_seeds() -> list[bytes]:
    import zipfile

    members = _sample_members()
    config = [(f"EMAIL5/{n}", (ROOT / "samples/EMAIL5" / n).read_bytes()) for n in ("JetstressConfig.xml",)]
    return [
        _zip(members),
        _zip(members[:2], zipfile.ZIP_STORED),
        _zip([("results/", b""), *((f"results/{n}", b) for n, b in members[:3])]),
        _zip(config + members[:1]),
    ]


def _tiny_pdf(lines: list[str]) -> bytes:
    """A one-page PDF with ``lines`` of text (Helvetica), written by hand: no PDF library needed."""

    def escape(text: str) -> str:
        return (
            text.encode("latin-1", "replace")
            .decode("latin-1")
            .translate(str.maketrans({"(": "\\(", ")": "\\)", "\\": "\\\\"}))
        )

    stream = "BT /F1 9 Tf 12 TL 40 760 Td " + " ".join(f"({escape(t)}) Tj T*" for t in lines) + " ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> "
        "/Contents 5 0 R >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
    ]
    out = "%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n"
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    return out.encode("latin-1")


def _published_seeds() -> list[bytes]:
    seeds = []
    for path in sorted((ROOT / "tests/data/published").glob("*.txt")):
        lines = path.read_text("utf-8").splitlines()
        # Parts with tables: where the results summary and the per-server tables are.
        for mark in ("Achieved Transactional", "Database Reads Average Latency"):
            at = next((i for i, line in enumerate(lines) if mark.casefold() in line.casefold()), None)
            if at is not None:
                seeds.append("\n".join(lines[max(0, at - 15) : at + 45]).encode("utf-8"))
    part = seeds[0].decode("utf-8").splitlines()
    rows = "".join(
        "<tr>" + "".join(f"<td>{cell}</td>" for cell in line.split("\t")) + "</tr>\n" for line in part[15:40]
    )
    seeds.append(f"<html><body><h2>{part[0]}</h2><table>\n{rows}</table></body></html>".encode())
    seeds.append(_tiny_pdf(part[:40]))
    return seeds


SEEDS: dict[str, Callable[[], list[bytes]]] = {
    "csv": _csv_seeds,
    "blg": _blg_seeds,
    "html": _html_seeds,
    "result_xml": _result_xml_seeds,
    "config_xml": _config_xml_seeds,
    "test_log": _test_log_seeds,
    "manifest": _manifest_seeds,
    "templates": _templates_seeds,
    "archive": _archive_seeds,
    "published": _published_seeds,
}


# --- the mutator --------------------------------------------------------------------------------

_ODD_NUMBERS = (
    b"0",
    b"-0",
    b"-1",
    b"1e308",
    b"1e999",
    b"-1e999",
    b"nan",
    b"NaN",
    b"inf",
    b"-inf",
    b"1.#INF",
    b"4294967296",
    b"18446744073709551616",
    b"9" * 400,
    b"9" * 5000,
    b"0." + b"0" * 300 + b"1",
    b"1,000,000",
    b"\xd9\xa3",
    b"\xef\xbc\x91",  # Arabic-Indic three, full-width one
)
_ENCODINGS = ("utf-16", "utf-16-le", "utf-16-be", "utf-8-sig", "latin-1", "utf-32")
_DIGITS = re.compile(rb"\d+(?:\.\d+)?")
_TAG = re.compile(rb"<[A-Za-z][^<>]{0,200}>")


def _reencode(data: bytes, rng: random.Random) -> bytes:
    text = data.decode("utf-8", "replace")
    encoding = rng.choice(_ENCODINGS)
    encoded = text.encode(encoding, "replace")
    if encoding == "utf-16-le" and rng.random() < 0.5:
        encoded = b"\xff\xfe" + encoded
    return encoded


def _nest(data: bytes, rng: random.Random) -> bytes:
    depth = rng.choice((50, 500, 5000, 20000))
    name = rng.choice((b"div", b"table", b"tr", b"td", b"b", b"element", b"instance", b"x"))
    deep = b"<" + name + b">"
    nested = deep * depth + b"</" + name + b">" * rng.choice((0, depth))
    tags = list(_TAG.finditer(data))
    at = rng.choice(tags).end() if tags else rng.randrange(len(data) + 1)
    return data[:at] + nested + data[at:]


def _entities(data: bytes, rng: random.Random) -> bytes:
    choice = rng.randrange(4)
    if choice == 0:  # an entity-expansion bomb in a DOCTYPE
        doctype = (
            b'<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
            b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>'
        )
        at = data.find(b"?>") + 2 if data.find(b"?>") >= 0 else 0
        return data[:at] + doctype + data[at:]
    if choice == 1:  # an external entity
        doctype = b'<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        at = data.find(b"?>") + 2 if data.find(b"?>") >= 0 else 0
        return data[:at] + doctype + data[at:].replace(b'value="', b'value="&x;', 1)
    token = rng.choice((b"&c;", b"&#0;", b"&#xD800;", b"&#1114112;", b"<![CDATA[", b"]]>", b"<!--", b"<?x?>"))
    at = rng.randrange(len(data) + 1)
    return data[:at] + token + data[at:]


def mutate(
    data: bytes, fmt: Format, rng: random.Random, others: list[bytes], max_size: int = MAX_SIZE
) -> bytes:
    """One to four stacked mutations of ``data``; ``others`` are inputs to splice with."""
    for _ in range(rng.choice((1, 1, 1, 2, 3, 4))):
        data = _mutate_once(data, fmt, rng, others)
    return data[:max_size]


# Mutations that keep XML well formed (mostly): lines are elements, values are attribute values.
_GENTLE = (7, 8, 9, 10, 16, 16, 16)
_VALUE = re.compile(rb'(?<==")[^"<>]{0,200}(?=")|(?<=>)[^<>]{1,200}(?=</)')


def _mutate_once(data: bytes, fmt: Format, rng: random.Random, others: list[bytes]) -> bytes:
    if fmt.name == "archive" and rng.random() < 0.35:
        return _zip_structure(rng)
    if fmt.binary and rng.random() < 0.5:
        return _binary_field(data, rng)
    size = len(data)
    if fmt.markup and rng.random() < 0.5:
        kind = rng.choice(_GENTLE)
    else:
        kind = rng.randrange(16 if fmt.markup else 14)
    if size == 0 or kind == 0:  # insert a format token or random bytes
        token = (
            rng.choice(fmt.tokens).encode("latin-1" if fmt.binary else "utf-8")
            if rng.random() < 0.7
            else bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
        )
        at = rng.randrange(size + 1)
        return data[:at] + token + data[at:]
    if kind == 1:  # flip bits
        out = bytearray(data)
        for _ in range(rng.randrange(1, 9)):
            out[rng.randrange(size)] ^= 1 << rng.randrange(8)
        return bytes(out)
    if kind == 2:  # set bytes to interesting values
        out = bytearray(data)
        for _ in range(rng.randrange(1, 5)):
            out[rng.randrange(size)] = rng.choice((0, 0xFF, 0x7F, 0x80, 0x22, 0x2C, 0x0A, 0x0D, 0x3C, 0x3E))
        return bytes(out)
    if kind == 3:  # truncate
        return data[: rng.randrange(size)]
    if kind == 4:  # delete a range
        at = rng.randrange(size)
        return data[:at] + data[at + rng.randrange(1, min(size - at, 4096) + 1) :]
    if kind == 5:  # splice with another input
        other = rng.choice(others) if others else data
        return data[: rng.randrange(size + 1)] + other[rng.randrange(len(other) + 1) :]
    if kind == 6:  # copy a range elsewhere (repeated)
        at = rng.randrange(size)
        chunk = data[at : at + rng.randrange(1, 256)]
        to = rng.randrange(size + 1)
        return data[:to] + chunk * rng.choice((1, 2, 10, 100)) + data[to:]
    lines = data.split(b"\n")
    if kind == 7:  # duplicate a line (sometimes many times)
        i = rng.randrange(len(lines))
        lines[i:i] = [lines[i]] * rng.choice((1, 1, 5, 200))
        return b"\n".join(lines)
    if kind == 8:  # remove lines
        i = rng.randrange(len(lines))
        del lines[i : i + rng.choice((1, 1, 3, 20))]
        return b"\n".join(lines)
    if kind == 9:  # swap two lines
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines)
    if kind == 10:  # an odd number instead of a number
        numbers = list(_DIGITS.finditer(data))
        if numbers:
            found = rng.choice(numbers)
            return data[: found.start()] + rng.choice(_ODD_NUMBERS) + data[found.end() :]
        return data + rng.choice(_ODD_NUMBERS)
    if kind == 11:  # another encoding
        return _reencode(data, rng)
    if kind == 12:  # NULs
        at = rng.randrange(size + 1)
        return data[:at] + b"\x00" * rng.choice((1, 2, 7, 1000)) + data[at:]
    if kind == 13:  # line ends and separators
        pairs = (
            (b"\r\n", b"\n"),
            (b"\n", b"\r"),
            (b'","', b'"\t"'),
            (b'"', b""),
            (b",", b",,"),
            (b"\t", b" "),
        )
        old, new = rng.choice(pairs)
        return data.replace(old, new, rng.choice((1, 3, -1)))
    if kind == 14:
        return _nest(data, rng)
    if kind == 15:
        return _entities(data, rng)
    values = list(_VALUE.finditer(data))  # an attribute value or element text replaced
    if not values:
        return data
    found = rng.choice(values)
    new = rng.choice(
        (
            rng.choice(_ODD_NUMBERS),
            b"",
            b" ",
            rng.choice(fmt.tokens).encode("utf-8").replace(b"<", b"&lt;").replace(b'"', b"&quot;"),
            found.group() * rng.choice((2, 50)),
            rng.choice(values).group(),
        )
    )
    return data[: found.start()] + new + data[found.end() :]


# Where the fields of a .blg's records sit: sample sub-records ("BL 03 xx"), the counter list
# (record 32's first two DWORDs), a PERF_DATA_BLOCK's signature (UTF-16 "PERF").
_BINARY_MARKS = (b"BL\x03", b"\xff\x06\x00\x00\x08\x00\x02\x00", "PERF".encode("utf-16-le"))
_FIELD_VALUES = (
    0,
    1,
    2,
    7,
    8,
    24,
    48,
    0xFF,
    0x7FFF,
    0xFFFF,
    0x7FFFFFFF,
    0x80000000,
    0xFFFFFFFF,
    0x800007D0,  # PDH_CSTATUS_NO_MACHINE
    0xC0000BB9,  # PDH_CSTATUS_NO_COUNTER
    0x10410400,  # counter types: PERF_COUNTER_COUNTER,
    0x40030402,  # PERF_AVERAGE_BASE,
    0x22510500,  # PERF_100NSEC_MULTI_TIMER,
    0x30240500,  # PERF_ELAPSED_TIME,
    0x00000B00,  # PERF_COUNTER_TEXT
    2**63 - 1,
    2**63,
    2**64 - 1,
)


def _binary_field(data: bytes, rng: random.Random) -> bytes:
    """One field of a binary input overwritten in place, so every buffer and event stays where it
    was (insertions and deletions shift the whole file, and a .blg reader then sees only broken
    buffers): a DWORD (or a WORD or QWORD) near a record mark (lengths, counts, offsets, statuses,
    counter types, time bases), or anywhere, set to an odd value, moved by a few, or made random."""
    if len(data) < 8:
        return data
    marks = [m.start() for mark in _BINARY_MARKS for m in re.finditer(re.escape(mark), data)]
    if marks and rng.random() < 0.8:
        at = rng.choice(marks) + 4 * rng.randrange(40)
    else:
        at = rng.randrange(len(data)) & ~3
    width = rng.choice((4, 4, 4, 8, 2))
    if at + width > len(data):
        return data
    current = int.from_bytes(data[at : at + width], "little")
    choice = rng.randrange(3)
    if choice == 0:
        value = rng.choice(_FIELD_VALUES)
    elif choice == 1:
        value = current + rng.choice((-24, -8, -2, -1, 1, 2, 8, 24))
    else:
        value = rng.getrandbits(8 * width)
    value &= (1 << (8 * width)) - 1
    return data[:at] + value.to_bytes(width, "little") + data[at + width :]


def _patch_headers(data: bytes, local_at: int, central_at: int, value: int, width: int) -> bytes:
    """Every local (``PK\\3\\4``) and central (``PK\\1\\2``) header with a field set to ``value``."""
    out = bytearray(data)
    for signature, at in ((b"PK\x03\x04", local_at), (b"PK\x01\x02", central_at)):
        start = out.find(signature)
        while start >= 0 and start + at + width <= len(out):
            out[start + at : start + at + width] = value.to_bytes(width, "little")
            start = out.find(signature, start + 4)
    return bytes(out)


def _zip_structure(rng: random.Random) -> bytes:
    """A zip built to be awkward, from a few members of a sample results folder: names that repeat,
    a file and a folder of one name, names climbing out or absolute, links and devices, sizes
    declared far past the limits, hundreds of members, unknown or encrypted compression."""
    import stat
    import zipfile

    members = _sample_members()[: rng.randrange(1, 4)]
    choice = rng.randrange(12)
    name = members[0][0]
    if choice == 0:  # the same name twice
        members = [*members, (name, b"second")]
    elif choice == 1:  # a file, then a folder of the same name (or the reverse)
        pair = [(name, b"file"), (f"{name}/inner.html", b"inner")]
        members = [*members, *(pair if rng.random() < 0.5 else pair[::-1])]
    elif choice == 2:  # names climbing out, absolute, drive letters, backslashes
        odd = rng.choice(
            ("../x.html", "a/../../x", "/etc/x", "C:x.html", "..\\x.html", "a\\..\\..\\x", ".", "./")
        )
        members = [*members, (odd, b"x")]
    elif choice == 3:  # hundreds of members
        members = [(f"r/{i}", b"") for i in range(rng.choice((300, 600)))]
    elif choice == 4:  # a very long name, very deep folders
        members = [*members, (rng.choice(("a" * 300, "/".join(["d"] * 400), "x" * 5000)), b"x")]
    elif choice == 5:  # a nested archive
        members = [*members, ("r/inner.zip", _zip(members[:1]))]
    data = _zip(members, rng.choice((zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)))
    if choice in (6, 7):  # a link, a FIFO, a device: the type bits of the external attributes
        kind = rng.choice((stat.S_IFLNK, stat.S_IFIFO, stat.S_IFCHR, stat.S_IFBLK, stat.S_IFSOCK))
        data = _patch_headers(data, 10**9, 38, (kind | 0o644) << 16, 4)
    elif choice == 8:  # sizes declared past the limits (uncompressed, then compressed)
        data = _patch_headers(
            data, rng.choice((22, 18)), rng.choice((24, 20)), rng.choice((0xFFFFFFFF, 1 << 31)), 4
        )
    elif choice == 9:  # a compression method zipfile does not know, or one it does not ship
        data = _patch_headers(data, 8, 10, rng.choice((1, 6, 9, 12, 14, 93, 98, 99, 0xFFFF)), 2)
    elif choice == 10:  # the encrypted flag, or the data-descriptor and UTF-8 flags
        data = _patch_headers(data, 6, 8, rng.choice((1, 8, 0x800, 0x41)), 2)
    elif choice == 11:  # a CRC that does not match
        data = _patch_headers(data, 14, 16, rng.randrange(1 << 32), 4)
    return data[:MAX_SIZE]


# --- the harnesses ------------------------------------------------------------------------------


ARCHIVE_LIMITS_MB = (256, 64)  # total, per member: the catalog's checks with limits /dev/shm can hold
CLOCK_SECONDS = 1_700_000_000  # override files get mtimes from here on (one second per input)


def prepare(name: str, workdir: Path) -> None:
    """Files an input names besides itself, laid out once in the worker's folder: for the
    manifest and templates harnesses a results folder (samples/3650-4), a logo, a rules file,
    an override folder, a FIFO (never opened: the readers refuse it)."""
    if name not in ("manifest", "templates"):
        return
    results = workdir / "results"
    if not results.exists():
        shutil.copytree(ROOT / "samples/3650-4", results)
    shutil.copy(ROOT / "samples/branding/esrp-report-logo.svg", workdir / "logo.svg")
    (workdir / "rules.toml").write_text(
        '[[rule]]\nid = "db-read-latency-avg"\n[rule.threshold]\nPerformance = 15.0\n', "utf-8"
    )
    (workdir / "override" / "partials").mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError, AttributeError):
        os.mkfifo(workdir / "fifo")


def expected_errors(name: str) -> tuple[type[BaseException], ...]:
    """The outcomes that are clear user errors: InputError everywhere; reading a manifest as the
    build does also meets the rules file (RulesError) and the templates (render's TemplateError),
    both EsrpErrors the CLI prints as one line with exit status 2."""
    from esrp_report.model.errors import InputError, RulesError

    if name in ("manifest", "templates"):
        from esrp_report.render.html import TemplateError

        return (InputError, RulesError, TemplateError)
    return (InputError,)


def _read_as_build(path: Path) -> object:
    """``build`` up to the rendering: the manifest, its rules file, its logo and template folder,
    and the evidence of each server. A results folder outside the working folder is not walked
    (a manifest may name any folder; walking / is the user's request, not damage)."""
    from esrp_report.analysis.rules import load_rules
    from esrp_report.app import api
    from esrp_report.ingest.config import manifest as manifest_reader
    from esrp_report.model import Solution
    from esrp_report.render import html

    manifest = manifest_reader.read_manifest(path)
    base = path.parent.resolve()
    load_rules(base / manifest.rules_file if manifest.rules_file else None)
    if manifest.branding.logo:
        html._data_uri(base / manifest.branding.logo, within=base)
    override = base / manifest.template_override if manifest.template_override else None
    html.environment(override, manifest.template)
    for server in manifest.servers:
        server.results[:] = [
            p
            for p in server.results
            if not ((base / p).is_dir() and not (base / p).resolve().is_relative_to(base))
        ]
    solution = Solution(path.stem)
    return [label for _server, label in api._read_servers(manifest, solution)]


def _templates_reader() -> Callable[[Path, int], object]:
    """Render the screen HTML of the smallest sample solution (samples/netapp.toml, one server)
    with the bundle's override templates and [template]/[branding] keys; no charts, no PDF."""
    import dataclasses
    from datetime import UTC, datetime

    from esrp_report.analysis.assess import assess
    from esrp_report.analysis.rules import load_rules
    from esrp_report.app.api import solution_from_manifest
    from esrp_report.ingest.config.manifest import read_manifest
    from esrp_report.render import html
    from esrp_report.render.document import build_document

    sample = read_manifest(ROOT / "samples/netapp.toml")
    solution, labels = solution_from_manifest(sample)
    rules = load_rules(None)
    document = build_document(sample, assess(solution, rules), rules, labels)
    manifest_text = re.sub(
        r"\n\[(?:template|branding)\][^\[]*", "\n", (ROOT / "samples/netapp.toml").read_text("utf-8")
    )
    safe = re.compile(r"[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*")
    generated = datetime(2026, 1, 1, tzinfo=UTC)

    def render(path: Path, index: int) -> object:
        work = path.parent
        override = work / "override"
        shutil.rmtree(override, ignore_errors=True)
        override.mkdir()
        keys = b""
        for name, body in _unbundle(path.read_bytes()):
            if name == "manifest":
                keys += body
            elif safe.fullmatch(name) and ".." not in name.split("/"):  # the harness's own layout
                target = override / name
                with contextlib.suppress(OSError):
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(body)
                    # Jinja2 reloads a cached template when its file's mtime changes: give every
                    # input's files a new one, so a fast run never renders a stale template.
                    os.utime(target, (CLOCK_SECONDS + index, CLOCK_SECONDS + index))
        manifest_path = work / "solution.toml"
        manifest_path.write_bytes(manifest_text.encode("utf-8") + b"\n" + keys)
        manifest = read_manifest(manifest_path)
        return html.render_html(dataclasses.replace(document, manifest=manifest), generated=generated)

    return render


def reader_for(name: str) -> Callable[[Path, int], object]:
    """The reader call of one format: ``call(path, index)``; ``index`` picks an engine where two exist."""
    if name == "csv":
        from esrp_report.ingest.perfmon import counter_csv

        engines = ("auto", "pyarrow")
        return lambda path, i: counter_csv.read_counter_csv(path, engine=engines[i % 2])
    if name == "blg":
        from esrp_report.ingest.perfmon import blg

        def read(path: Path, i: int) -> object:
            blg.decoding.ENGINE = "auto" if i % 2 == 0 else "numpy"
            return blg.read_blg(path)

        return read
    if name == "html":
        from esrp_report.ingest.jetstress import report_html

        return lambda path, _i: report_html.read_report(path)
    if name == "result_xml":
        from esrp_report.ingest.jetstress import result_xml

        return lambda path, _i: result_xml.read_result_xml(path)
    if name == "config_xml":
        from esrp_report.ingest.jetstress import config_xml

        return lambda path, _i: config_xml.read_config_xml_with_problems(path)
    if name == "test_log":
        from esrp_report.ingest.jetstress import test_log

        return lambda path, _i: test_log.read_test_log(path)
    if name == "manifest":
        return lambda path, _i: _read_as_build(path)
    if name == "templates":
        return _templates_reader()
    if name == "archive":
        from esrp_report.catalog import archive

        limits = archive.Limits(
            max_total_bytes=ARCHIVE_LIMITS_MB[0] << 20, max_member_bytes=ARCHIVE_LIMITS_MB[1] << 20
        )

        def extract(path: Path, _i: int) -> object:
            staging = path.parent / "staging"
            try:
                return archive.extract_zip(path, "results", staging, limits)
            finally:
                shutil.rmtree(staging, ignore_errors=True)

        return extract
    if name == "published":
        from esrp_report.ingest.documents import published

        return lambda path, _i: published.read_document(path)
    raise ValueError(f"unknown format {name!r}")


class _Timeout(BaseException):
    """One input ran longer than the per-input time limit (raised by SIGALRM)."""


def _on_alarm(_signum: int, _frame: object) -> None:
    raise _Timeout


def _signature(exc: BaseException) -> str:
    """Type and the innermost frame of the project's own code: one finding per place."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if "esrp_report" in f.filename] or frames
    where = f"{Path(own[-1].filename).name}:{own[-1].lineno}" if own else "?"
    return f"{type(exc).__name__} at {where}"


def _message_shape(text: str) -> str:
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    return re.sub(r"\d+", "N", text)[:120]


class Session:
    """Runs inputs of one format through its reader in this process and keeps the tally."""

    def __init__(self, fmt: str, workdir: Path, out: Path, *, timeout: float, rss_mb: int) -> None:
        self.fmt = FORMATS[fmt]
        self.input_error = expected_errors(fmt)
        prepare(fmt, workdir)
        self.read = reader_for(fmt)
        self.path = workdir / self.fmt.filename
        self.out = out
        self.timeout = timeout
        self.rss_mb = rss_mb
        self.count = 0
        self.outcomes: Counter[str] = Counter()
        self.shapes: set[str] = set()
        self.findings: dict[str, dict[str, Any]] = {}

    def run(self, data: bytes) -> None:
        self.path.write_bytes(data)
        index = self.count
        self.count += 1
        before = _peak_rss_mb()
        if self.timeout:
            signal.setitimer(signal.ITIMER_REAL, self.timeout)
        try:
            self.read(self.path, index)
            self.outcomes["ok"] += 1
        except _Timeout:
            self._finding("hang", f"hang (> {self.timeout:g} s)", data, "")
        except self.input_error as exc:
            self.outcomes[type(exc).__name__] += 1
            if len(self.shapes) < 10_000:
                self.shapes.add(_message_shape(getattr(exc, "detail", str(exc))))
        except RecursionError as exc:
            self._finding("uncaught", _signature(exc), data, traceback.format_exc())
        except Exception as exc:
            self._finding("uncaught", _signature(exc), data, traceback.format_exc())
        finally:
            if self.timeout:
                signal.setitimer(signal.ITIMER_REAL, 0)
        grown = _peak_rss_mb() - before
        if grown > self.rss_mb // 4:
            self._finding("memory", f"peak RSS grew {grown} MB on one input", data, "")

    def _finding(self, kind: str, signature: str, data: bytes, text: str) -> None:
        self.outcomes[kind] += 1
        entry = self.findings.setdefault(signature, {"kind": kind, "count": 0, "reproducers": []})
        entry["count"] += 1
        if len(entry["reproducers"]) < MAX_SAVED_PER_SIGNATURE:
            path = save_reproducer(self.out, self.fmt, kind, data, text)
            entry["reproducers"].append(str(path))

    def status(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "outcomes": dict(self.outcomes),
            "shapes": sorted(self.shapes),
            "findings": self.findings,
        }


def save_reproducer(out: Path, fmt: Format, kind: str, data: bytes, text: str) -> Path:
    folder = out / fmt.name
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1(data).hexdigest()[:12]
    path = folder / f"{kind}-{digest}{Path(fmt.filename).suffix}"
    path.write_bytes(data)
    if text:
        path.with_suffix(path.suffix + ".txt").write_text(text, "utf-8")
    return path


def _peak_rss_mb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def random_inputs(fmt: Format, seeds: list[bytes], count: int, seed: int) -> Iterator[bytes]:
    """The ``random`` engine: every seed once, then mutants of seeds and of earlier mutants."""
    rng = random.Random(f"{fmt.name}:{seed}")
    pool = list(seeds)
    yield from seeds[:count]
    for _ in range(count - min(count, len(seeds))):
        parent = rng.choice(pool)
        child = mutate(parent, fmt, rng, seeds)
        if len(pool) < 2000 and rng.random() < 0.05:
            pool.append(child)  # some mutants breed: deeper damage than four steps
        yield child


def run_in_process(fmt: str, count: int, seed: int = 0, *, timeout: float = 10.0) -> dict[str, Any]:
    """Run ``count`` inputs of one format here (no subprocess): what the test suite calls."""
    with tempfile.TemporaryDirectory(prefix="esrp-fuzz-") as folder:
        work = Path(folder)
        session = Session(fmt, work, work / "findings", timeout=timeout, rss_mb=4096)
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        try:
            for data in random_inputs(session.fmt, SEEDS[fmt](), count, seed):
                session.run(data)
        finally:
            signal.signal(signal.SIGALRM, previous)
        status = session.status()
        for entry in status["findings"].values():
            entry["inputs"] = [Path(p).read_bytes() for p in entry["reproducers"]]
        return status


def replay(fmt: str, files: list[Path], *, timeout: float) -> int:
    """Run saved inputs (reproducers) through one harness, as a worker would; 1 if any is a finding."""
    if fmt not in FORMATS:
        raise SystemExit(f"--replay needs one --format of: {', '.join(FORMATS)}")
    with tempfile.TemporaryDirectory(prefix="esrp-fuzz-replay-") as folder:
        work = Path(folder)
        session = Session(fmt, work, work / "findings", timeout=timeout, rss_mb=4096)
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        try:
            for file in files:
                before = dict(session.outcomes)
                session.run(file.read_bytes())
                outcome = next(k for k, v in session.outcomes.items() if v != before.get(k, 0))
                print(f"{file}: {outcome}")
        finally:
            signal.signal(signal.SIGALRM, previous)
        for signature, entry in session.findings.items():
            print(f"    {entry['kind']}: {signature} x{entry['count']}")
        return 1 if session.findings else 0


# --- worker (a subprocess) ----------------------------------------------------------------------


def _write_status(path: Path, status: dict[str, Any]) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(status), "utf-8")
    temporary.replace(path)


def worker(args: argparse.Namespace) -> None:
    work = Path(args.workdir)
    status_path = work / "status.json"
    seeds = [p.read_bytes() for p in sorted(Path(args.seeds).iterdir())]
    if args.engine == "atheris":
        import atheris

        with atheris.instrument_imports(include=["esrp_report"]):
            session = Session(args.worker, work, Path(args.out), timeout=args.timeout, rss_mb=args.rss_mb)
    else:
        session = Session(args.worker, work, Path(args.out), timeout=args.timeout, rss_mb=args.rss_mb)
    signal.signal(signal.SIGALRM, _on_alarm)
    target = args.inputs

    def one(data: bytes) -> None:
        session.run(data)
        if session.count % STATUS_EVERY == 0 or session.count >= target:
            _write_status(status_path, session.status())
        if session.count >= target:
            sys.stdout.flush()
            os._exit(0)

    if args.engine == "atheris":
        corpus = work / "corpus"
        corpus.mkdir(exist_ok=True)
        fmt = session.fmt

        def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
            rng = random.Random(seed)
            if rng.random() < 0.5:
                return bytes(atheris.Mutate(data, max_size))
            return mutate(data, fmt, rng, seeds, max_size)

        argv = [
            sys.argv[0],
            str(corpus),
            args.seeds,
            f"-runs={target + 1000}",
            f"-seed={args.seed + 1}",
            f"-max_len={MAX_SIZE}",
            "-timeout=0",
            "-rss_limit_mb=0",
            "-malloc_limit_mb=0",
            "-print_final_stats=0",
            "-reload=0",
            # libFuzzer's own artifacts (slow units) beside the reproducers, not in the current folder
            f"-artifact_prefix={Path(args.out) / fmt.name}/libfuzzer-",
        ]
        (Path(args.out) / fmt.name).mkdir(parents=True, exist_ok=True)
        atheris.Setup(argv, one, custom_mutator=custom_mutator)
        atheris.Fuzz()
    else:
        for data in random_inputs(session.fmt, seeds, target, args.seed):
            one(data)
    _write_status(status_path, session.status())


# --- parent -------------------------------------------------------------------------------------


def _rss_mb(pid: int) -> int:
    try:
        pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE") // (1024 * 1024)


@dataclass
class _Job:
    fmt: str
    index: int
    inputs: int  # still to run
    seed: int
    workdir: Path
    process: subprocess.Popen[bytes] | None = None
    done: int = 0
    restarts: int = 0
    last_change: float = 0.0
    last_mtime: int = 0


def _merge(total: dict[str, Any], status: dict[str, Any]) -> None:
    total["count"] += status["count"]
    total["outcomes"].update(status["outcomes"])
    total["shapes"].update(status["shapes"])
    for signature, entry in status["findings"].items():
        mine = total["findings"].setdefault(signature, {"kind": entry["kind"], "count": 0, "reproducers": []})
        mine["count"] += entry["count"]
        mine["reproducers"] = (mine["reproducers"] + entry["reproducers"])[:3]


def run_format(fmt: str, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    seeds_dir = out / "seeds" / fmt
    if seeds_dir.exists():
        shutil.rmtree(seeds_dir)
    seeds_dir.mkdir(parents=True)
    for number, data in enumerate(SEEDS[fmt]()):
        (seeds_dir / f"seed-{number:02d}{Path(FORMATS[fmt].filename).suffix}").write_bytes(data)
    total: dict[str, Any] = {"count": 0, "outcomes": Counter(), "shapes": set(), "findings": {}}
    base = Path(
        tempfile.mkdtemp(prefix=f"esrp-fuzz-{fmt}-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None)
    )
    share, extra = divmod(args.inputs, args.jobs)
    jobs = [
        _Job(fmt, i, share + (1 if i < extra else 0), args.seed * 1000 + i, base / f"job{i}")
        for i in range(args.jobs)
    ]
    started = time.perf_counter()
    try:
        for job in jobs:
            _start(job, args, seeds_dir, out)
        while any(job.process is not None for job in jobs):
            time.sleep(0.25)
            for job in jobs:
                _watch(job, args, seeds_dir, out, total)
    finally:
        for job in jobs:
            if job.process is not None and job.process.poll() is None:
                job.process.kill()
        shutil.rmtree(base, ignore_errors=True)
    seconds = time.perf_counter() - started
    findings = dict(total["findings"])
    return {
        "format": fmt,
        "engine": args.engine,
        "inputs": total["count"],
        "seconds": round(seconds, 1),
        "inputs_per_second": round(total["count"] / seconds, 1) if seconds else None,
        "outcomes": dict(sorted(total["outcomes"].items(), key=lambda kv: -kv[1])),
        "distinct_error_messages": len(total["shapes"]),
        "findings": findings,
        # by kind: uncaught exceptions, hangs, memory blow-ups, workers that died
        **{kind: sum(e["count"] for e in findings.values() if e["kind"] == kind) for kind in FINDING_KINDS},
        "restarts": sum(job.restarts for job in jobs),
    }


def _start(job: _Job, args: argparse.Namespace, seeds_dir: Path, out: Path) -> None:
    if job.workdir.exists():
        shutil.rmtree(job.workdir)
    job.workdir.mkdir(parents=True)
    command = [
        sys.executable, "-m", "benchmarks.fuzz", "--worker", job.fmt, "--workdir", str(job.workdir),
        "--seeds", str(seeds_dir), "--out", str(out / "findings"), "--inputs", str(job.inputs),
        "--seed", str(job.seed + 7919 * job.restarts), "--engine", args.engine,
        "--timeout", str(args.timeout), "--rss-mb", str(args.rss_mb),
    ]  # fmt: skip
    log = (job.workdir / "worker.log").open("wb")
    job.process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    job.last_change = time.monotonic()
    job.last_mtime = 0


def _watch(job: _Job, args: argparse.Namespace, seeds_dir: Path, out: Path, total: dict[str, Any]) -> None:
    process = job.process
    if process is None:
        return
    code = process.poll()
    reason = None
    input_path = job.workdir / FORMATS[job.fmt].filename
    if code is None:
        with contextlib.suppress(OSError):
            mtime = input_path.stat().st_mtime_ns
            if mtime != job.last_mtime:
                job.last_mtime, job.last_change = mtime, time.monotonic()
        if time.monotonic() - job.last_change > max(3 * args.timeout, 30):
            reason = ("hang", "worker stopped making progress")
        elif _rss_mb(process.pid) > args.rss_mb:
            reason = ("memory", f"worker RSS over {args.rss_mb} MB")
        if reason is None:
            return
        process.kill()
        process.wait()
    status_path = job.workdir / "status.json"
    status = json.loads(status_path.read_text("utf-8")) if status_path.exists() else None
    done = status["count"] if status else 0
    if status:
        _merge(total, status)
    if code == 0 and reason is None and done >= job.inputs:
        job.process = None
        return
    if reason is None:
        reason = (
            "died",
            f"worker exited with {code}"
            + (f" ({signal.Signals(-code).name})" if code is not None and code < 0 else ""),
        )
    data = input_path.read_bytes() if input_path.exists() else b""
    log = job.workdir / "worker.log"
    tail = log.read_text("utf-8", "replace")[-4000:] if log.exists() else ""
    kind, signature = reason
    path = save_reproducer(out / "findings", FORMATS[job.fmt], kind, data, tail)
    entry = total["findings"].setdefault(signature, {"kind": kind, "count": 0, "reproducers": []})
    entry["count"] += 1
    entry["reproducers"] = (entry["reproducers"] + [str(path)])[:3]
    total["count"] += 1
    total["outcomes"][kind] += 1
    job.inputs -= done + 1
    job.restarts += 1
    if job.inputs <= 0 or job.restarts > args.max_restarts:
        job.process = None
        return
    _start(job, args, seeds_dir, out)


def _print(result: dict[str, Any]) -> None:
    outcomes = ", ".join(f"{k} {v}" for k, v in result["outcomes"].items())
    print(
        f"{result['format']:<11} {result['inputs']:>8,} inputs  {result['inputs_per_second']:>8,.1f}/s  "
        + "  ".join(f"{kind} {result[kind]}" for kind in FINDING_KINDS)
        + f"  ({outcomes}; {result['distinct_error_messages']} distinct messages)"
    )
    for signature, entry in result["findings"].items():
        print(f"    {entry['kind']}: {signature} x{entry['count']}: {', '.join(entry['reproducers'])}")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fuzz", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--format", default="all", help="all, or a comma-separated list of: " + ", ".join(FORMATS)
    )
    parser.add_argument("--inputs", type=int, default=100_000, help="inputs per format (default 100,000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes per format")
    parser.add_argument("--engine", choices=("auto", "atheris", "random"), default="auto")
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds per input before it counts as a hang"
    )
    parser.add_argument("--rss-mb", type=int, default=2048, help="worker memory limit (MB)")
    parser.add_argument("--max-restarts", type=int, default=50)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    parser.add_argument("--seeds", help=argparse.SUPPRESS)
    parser.add_argument(
        "--replay",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="run saved inputs of one --format and say what each gave",
    )
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    if args.replay:
        return replay(args.format, args.replay, timeout=args.timeout)
    if args.engine == "auto":
        try:
            import atheris  # noqa: F401
        except ImportError:
            args.engine = "random"
        else:
            args.engine = "atheris"
    # SIGTERM ends the run like Ctrl-C: workers killed, working folders removed.
    signal.signal(signal.SIGTERM, lambda _signum, _frame: sys.exit(143))
    names = list(FORMATS) if args.format == "all" else args.format.split(",")
    for name in names:
        if name not in FORMATS:
            parser.error(f"unknown format {name!r}")
    args.out.mkdir(parents=True, exist_ok=True)
    summary_path = args.out / "summary.json"
    summary = json.loads(summary_path.read_text("utf-8")) if summary_path.exists() else {}
    print(f"engine {args.engine}, {args.inputs:,} inputs per format, seed {args.seed}, {args.jobs} job(s)")
    failed = False
    for name in names:
        result = run_format(name, args, args.out)
        _print(result)
        failed |= bool(result["findings"])
        summary[name] = result
        summary_path.write_text(json.dumps(summary, indent=2) + "\n", "utf-8")
    print(f"wrote {summary_path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
