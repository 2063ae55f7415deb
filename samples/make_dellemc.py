"""Write the Dell EMC SCv3020 four-server sample solution (samples/dellemc/) from its transcription.

    PYTHONPATH=. .venv/bin/python samples/make_dellemc.py

Deterministic: re-running produces identical files. The figures of samples/data/dellemc/*.json are
those printed in the appendix of a published ESRP-Storage 4.0 document (Exchange 2016, Jetstress
2016 15.01.1019.000): one 2-hour performance report per mailbox server, and nothing else (the
document publishes no stress, backup or recovery report). Per server this writes the
Performance report, its result XML, a perfmon CSV whose window means equal the report's figures
and the JetstressConfig.xml the run implies (see samples/README.md and samples/data/REPAIRS.md).
"""

from __future__ import annotations

import json
import re
from datetime import timedelta

from make_samples import DATA, HERE, file_stem, run_from_json, style_for

from esrp_report.model import ConfigProfile, Run, Thresholds
from esrp_synth.jetstress_counters import synthesize, write_log
from esrp_synth.jetstress_html import write_report_html
from esrp_synth.jetstress_xml import write_config_xml, write_result_xml

SOURCE = DATA / "dellemc"
OUT = HERE / "dellemc"
INTERVAL_S = 15.0
# "3,500 Mailboxes .084 Mailbox Profile 0.10 Tested 2.5GB Mailboxes" (each report's test
# description; target 350 = 3,500 x 0.10, and 2.5 GB x 3,500 is the initial database size).
MAILBOXES = 3500
MAILBOX_IOPS = 0.10
MAILBOX_QUOTA_MB = 2560.0
_LOGGING_STARTED = re.compile(r"Performance logging started \(interval: (\d+) ms\)")
_SAMPLES = re.compile(r"\.blg has (\d+) samples\.$")


def config(run: Run) -> ConfigProfile:
    """The configuration behind a run: the profile of its test description, the thread count and
    copies of its parameters, Jetstress's default thresholds (those its test log states)."""
    threads = int(run.parameters["Thread Count"].split()[0])
    copies = int(run.parameters["Number of Copies per Database"])
    return ConfigProfile(
        source="JetstressConfig.xml",
        test_type="Performance",
        duration="P0Y0M0DT2H0M0S",
        mailbox_count=MAILBOXES,
        mailbox_iops=MAILBOX_IOPS,
        mailbox_quota_mb=MAILBOX_QUOTA_MB,
        thread_count=threads,
        database_copy_count=copies,
        log_interval_ms=int(INTERVAL_S * 1000),
        jetstress_version=run.jetstress_version,
        threshold_sets={
            "Strict": (Thresholds(20.0, 100.0, 10.0, 100.0), []),
            "Lenient": (Thresholds(20.0, 200.0, 10.0, 200.0), ["Stress"]),
        },
        instances=run.databases,
    )


def sample_layout(run: Run, lines: list[str]) -> tuple[int, int]:
    """Warm-up and tail samples around the collection window: the counter log holds as many samples
    as the test log says it has, one after the window and the rest before it, none before the test
    log says logging started."""
    assert run.test_log is not None and run.collection_start is not None and run.collection_end is not None
    started = next(e.timestamp for e in run.test_log.entries if _LOGGING_STARTED.search(e.message))
    count = next(int(m.group(1)) for line in lines if (m := _SAMPLES.search(line)))
    # synthesize() puts the first in-window sample 7 s after the collection start.
    first = run.collection_start + timedelta(seconds=7)
    inside = int((run.collection_end - first).total_seconds() // INTERVAL_S) + 1
    tail = 1
    warmup = count - inside - tail
    if not 0 < warmup <= (first - started).total_seconds() // INTERVAL_S:
        raise ValueError(f"{run.machine}: {count} samples do not fit the logging period")
    return warmup, tail


def main() -> None:
    for path in sorted(SOURCE.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        run = run_from_json(data)
        folder = OUT / run.machine
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():
            old.unlink()
        stem = file_stem(run)
        html = write_report_html(run, style=style_for(data))
        (folder / f"{stem}.html").write_text(html, encoding="utf-8", newline="\n")
        warmup, tail = sample_layout(run, data["log"])
        log = synthesize(run, interval_s=INTERVAL_S, warmup_samples=warmup, tail_samples=tail)
        write_log(folder / f"{stem}.csv", log)
        (folder / f"{stem}.xml").write_bytes(write_result_xml(run))
        (folder / "JetstressConfig.xml").write_bytes(write_config_xml(config(run)))
        print(f"wrote dellemc/{run.machine}/{stem}")


if __name__ == "__main__":
    main()
