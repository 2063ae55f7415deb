"""`esrp-report init`: a starting manifest written from results folders.

Everything the evidence says is filled in (servers, machine names, test dates, Jetstress, ESE and
OS versions, mailbox count and IOPS profile); everything only the vendor can say is marked with
PLACEHOLDER so `build` can list what is left to write.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from esrp_report.analysis import solution as ev
from esrp_report.model import PLACEHOLDER, Run, TestKind


def _toml(text: str) -> str:
    # JSON string escapes are valid TOML basic-string escapes.
    return json.dumps(text, ensure_ascii=False)


def _first(values: list[str | None]) -> str:
    found = Counter(v for v in values if v)
    return found.most_common(1)[0][0] if found else ""


def init_manifest(results: list[Path], manifest_path: Path) -> str:
    """TOML text for a manifest at ``manifest_path`` naming ``results`` (one folder per server)."""
    base = manifest_path.resolve().parent
    servers: list[tuple[str, str, list[Run]]] = []
    for folder in results:
        solution = ev.load_solution([folder], folder.name)
        relative = Path(os.path.relpath(folder.resolve(), base)).as_posix()
        for server in solution.servers:
            servers.append((server.name, relative, server.runs))
    runs = [run for _, _, rs in servers for run in rs]
    perf = [r for r in runs if r.kind is TestKind.PERFORMANCE]
    configs = [r.config for r in runs if r.config is not None]
    mailboxes_per_server = next((c.mailbox_count for c in configs if c.mailbox_count), None)
    iops = next((c.mailbox_iops for c in configs if c.mailbox_iops), None)
    if iops is None and mailboxes_per_server is None:
        target = next((r.sizing.target_iops for r in perf if r.sizing.target_iops), None)
        profile_note = (
            f"# The reports target {target:g} IOPS per server: mailboxes x IOPS per mailbox should make it."
            if target
            else "# No config XML or target in the evidence: state the profile."
        )
    else:
        profile_note = "# From the Jetstress configuration XML."
    dates = sorted(r.test_start for r in perf if r.test_start)
    tested = dates[0].strftime("%B %Y") if dates else PLACEHOLDER
    n = max(len(servers), 1)
    todo = f"{PLACEHOLDER}: "
    lines = [
        "# Solution manifest written by `esrp-report init`. Replace every "
        f"{PLACEHOLDER} with the vendor's text;",
        "# `esrp-report build` lists any left. Numbers the evidence gives are computed, not typed here.",
        "",
        "[document]",
        f"vendor = {_toml(todo + 'vendor name')}",
        f"product = {_toml(todo + 'storage product')}",
        f"title = {_toml(todo + 'document title')}",
        f"part_number = {_toml('')}",
        f"tested_date = {_toml(tested)}",
        f"published_date = {_toml('')}",
        'exchange_version = "2010"',
        'esrp_version = "3.0"',
        "",
        "[profile]",
        profile_note,
        f"mailboxes = {(mailboxes_per_server or 1000) * n}  # all tested servers",
        f"iops_per_mailbox = {iops if iops is not None else 0.1}",
        "headroom_percent = 0  # state the headroom included in iops_per_mailbox, if any",
        f"active_mailboxes_per_server = {mailboxes_per_server or 1000}",
        "dags = 1",
        f"servers_per_dag = {n}",
        "copies_per_database = 2",
        "",
    ]
    for machine, relative, _ in servers:
        lines += ["[[servers]]", f"label = {_toml(machine)}", f"results = {_toml(relative)}", ""]
    software = [
        ("Jetstress version", _first([r.jetstress_version for r in runs])),
        ("ESE.dll file version", _first([r.ese_version for r in runs])),
        ("Host OS", _first([r.operating_system for r in runs])),
        ("HBA driver", todo + "driver"),
        ("Multipathing", todo + "multipathing software"),
    ]
    lines += ["[tables.software]", "rows = ["]
    lines += [f"  [{_toml(k)}, {_toml(v or todo + 'not in the evidence')}]," for k, v in software]
    lines += ["]", "", "[tables.hardware]", "rows = ["]
    lines += [
        f"  [{_toml(k)}, {_toml(todo + k.lower())}],"
        for k in ("Storage connectivity", "Storage model and firmware", "Storage cache", "Host server type")
    ]
    lines += ["]", "", "[sections]"]
    for key in (
        "overview",
        "disclaimer",
        "solution_description",
        "customer_profile",
        "best_practices",
        "conclusion",
        "contact",
    ):
        lines.append(f"{key} = {_toml(todo + key.replace('_', ' '))}")
    return "\n".join(lines) + "\n"
