"""`esrp-report init`: a starting manifest written from results folders.

Everything the evidence says is filled in (servers, machine names, test dates, Jetstress, ESE and
OS versions per server, mailbox count and IOPS profile, Exchange and ESRP versions from the
Jetstress version); everything only the vendor can say is marked with
PLACEHOLDER so `build` can list what is left to write.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

from esrp_report.analysis.stated import exchange_and_esrp, server_evidence
from esrp_report.app import evidence
from esrp_report.model import PLACEHOLDER, Run, TestKind
from esrp_report.model.sections import INIT_SECTION_KEYS
from esrp_report.model.server_facts import fact_specs

__all__ = ["exchange_and_esrp", "init_manifest"]


def _toml(text: str) -> str:
    # JSON string escapes are valid TOML basic-string escapes.
    return json.dumps(text, ensure_ascii=False)


def _first(values: list[str | None]) -> str:
    found = Counter(v for v in values if v)
    return found.most_common(1)[0][0] if found else ""


def _rel(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path.resolve(), base)).as_posix()


def _results_of(folder: Path, sources: list[list[str]], base: Path) -> list[str | list[str]]:
    """Where each server's evidence is, relative to ``base``: ``folder`` for a lone server; else each server's
    own folder (the one holding all its files: a parent folder of server folders gives one server per
    folder), or its files when servers share a folder."""
    if len(sources) == 1:
        return [_rel(folder, base)]
    own = [
        Path(os.path.commonpath([Path(f).resolve().parent for f in files])) if files else None
        for files in sources
    ]
    distinct = all(o is not None for o in own) and len(set(own)) == len(own)
    if distinct and not any(o != p and p in o.parents for o in own for p in own if o and p):
        return [_rel(o, base) for o in own if o is not None]
    return [[_rel(Path(f), base) for f in sorted(set(files))] or _rel(folder, base) for files in sources]


def _results_toml(results: str | list[str]) -> str:
    if isinstance(results, str):
        return _toml(results)
    return "[" + ", ".join(_toml(r) for r in results) + "]"


def _per_server(values: list[tuple[str, str]]) -> str:
    """One value when every server has it; else each value followed by the servers that have it."""
    distinct = list(dict.fromkeys(v for _, v in values if v))
    if len(distinct) <= 1:
        return distinct[0] if distinct else ""
    return "; ".join(f"{', '.join(name for name, w in values if w == v)}: {v}" for v in distinct)


_DESCRIBED = re.compile(r"(\d[\d,]*)\s*mailboxes", re.IGNORECASE)


def _profile_of(runs: list[Run]) -> tuple[int | None, float | None, float | None]:
    """A server's mailboxes, IOPS per mailbox and target IOPS: from its configuration XML, else its reports'
    target split by the mailboxes the test description names (or at 0.1 IOPS per mailbox)."""
    target = next(
        (r.sizing.target_iops for r in runs if r.kind is TestKind.PERFORMANCE and r.sizing.target_iops),
        next((r.sizing.target_iops for r in runs if r.sizing.target_iops), None),
    )
    config = next((r.config for r in runs if r.config is not None and r.config.mailbox_count), None)
    if config is not None and config.mailbox_count and config.mailbox_iops:
        return config.mailbox_count, config.mailbox_iops, target or config.mailbox_count * config.mailbox_iops
    if not target:
        return None, None, None
    described = (_DESCRIBED.search(r.test_description or "") for r in runs)
    found = next((int(m.group(1).replace(",", "")) for m in described if m), None)
    if found:
        return found, round(target / found, 6), target
    return round(target / 0.1), 0.1, target


def _copies(run: Run) -> int | None:
    if run.config is not None and run.config.database_copy_count:
        return run.config.database_copy_count
    value = run.parameters.get("Number of Copies per Database", "")
    return int(value) if value.isdigit() else None


def _server_facts(runs: list[Run]) -> list[str]:
    """A server's facts as its evidence gives them (model/server_facts.toml), each with a comment naming
    the file and the field: `build` checks them against the evidence again."""
    specs = fact_specs()
    found = server_evidence(runs)
    lines = []
    for key, spec in specs.items():
        fact = found.get(key)
        if fact is None:
            continue
        if spec.kind == "gb":
            value = f"{float(fact.value):.0f}"
        elif isinstance(fact.value, int):
            value = str(fact.value)
        else:
            value = _toml(str(fact.value))
        lines.append(f"{key} = {value}  # {Path(fact.source).name}: {spec.evidence}")
    return lines


def init_manifest(results: list[Path], manifest_path: Path) -> str:
    """TOML text for a manifest at ``manifest_path`` naming ``results`` (one folder per server, or a parent
    folder of server folders)."""
    base = manifest_path.resolve().parent
    servers: list[tuple[str, str | list[str], list[Run]]] = []
    for given in results:
        solution = evidence.solution([given], given.name)
        sources = [[src for run in server.runs for src in run.sources] for server in solution.servers]
        for server, where in zip(solution.servers, _results_of(given, sources, base), strict=True):
            servers.append((server.name, where, server.runs))
    runs = [run for _, _, rs in servers for run in rs]
    perf = [r for r in runs if r.kind is TestKind.PERFORMANCE]
    profiles = [_profile_of(rs) for _, _, rs in servers]
    per_server = Counter((m, i) for m, i, _ in profiles if m and i)
    mailboxes_per_server, iops = per_server.most_common(1)[0][0] if per_server else (1000, 0.1)
    mailboxes = sum(m or mailboxes_per_server for m, _, _ in profiles) or mailboxes_per_server
    targets = sorted({t for _, _, t in profiles if t})
    copies = next((c for c in (_copies(r) for r in runs) if c), 2)
    if not per_server:
        profile_note = (
            f"# {PLACEHOLDER}: no config XML, test description or target in the evidence: state the profile."
        )
    else:
        said = ", ".join(f"{t:g}" for t in targets) or "no target"
        profile_note = f"# From the configuration XML / reports: {said} IOPS per server targeted."
    generation = exchange_and_esrp(_first([r.jetstress_version for r in runs]))
    exchange, esrp = generation or ("2010", "3.0")
    version_note = (
        "  # from the Jetstress version"
        if generation
        else f"  # {PLACEHOLDER}: the Jetstress version does not say"
    )
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
        f"exchange_version = {_toml(exchange)}{version_note}",
        f"esrp_version = {_toml(esrp)}{version_note}",
        "",
        "[profile]",
        profile_note,
        f"mailboxes = {mailboxes}  # all tested servers",
        f"iops_per_mailbox = {iops:g}",
        "headroom_percent = 0  # state the headroom included in iops_per_mailbox, if any",
        f"active_mailboxes_per_server = {mailboxes_per_server}",
        "dags = 1",
        f"servers_per_dag = {n}",
        f"copies_per_database = {copies}",
        "",
    ]
    for machine, relative, server_runs in servers:
        lines += ["[[servers]]", f"label = {_toml(machine)}", f"results = {_results_toml(relative)}"]
        lines += [*_server_facts(server_runs), ""]
    software = [
        (
            "Jetstress version",
            _per_server([(name, _first([r.jetstress_version for r in rs])) for name, _, rs in servers]),
        ),
        (
            "ESE.dll file version",
            _per_server([(name, _first([r.ese_version for r in rs])) for name, _, rs in servers]),
        ),
        (
            "Host OS",
            _per_server([(name, _first([r.operating_system for r in rs])) for name, _, rs in servers]),
        ),
        ("HBA driver", todo + "driver"),
        ("Multipathing", todo + "multipathing software"),
    ]
    lines += ["[tables.software]", "rows = ["]
    lines += [f"  [{_toml(k)}, {_toml(v or todo + 'not in the evidence')}]," for k, v in software]
    lines += [
        "]",
        "",
        "# The Jetstress evidence names no processor, memory, HBA or storage model: state them here.",
    ]
    lines += ["[tables.hardware]", "rows = ["]
    lines += [
        f"  [{_toml(k)}, {_toml(todo + k.lower())}],"
        for k in ("Storage connectivity", "Storage model and firmware", "Storage cache", "Host server type")
    ]
    lines += ["]", "", "[sections]"]
    for key in INIT_SECTION_KEYS:
        lines.append(f"{key} = {_toml(todo + key.replace('_', ' '))}")
    return "\n".join(lines) + "\n"
