"""What the manifest states against what the evidence says (issue 22, item 5).

A manifest states facts the evidence also gives: the target IOPS (active mailboxes per server x
tested IOPS per mailbox), the mailboxes and IOPS per mailbox of the Jetstress configuration, the
Exchange and ESRP versions (the Jetstress version tells them), and per server its OS, versions,
databases, threads and database size. Each is compared here; a difference the manifest does not
explain (a ``differs`` key naming it, with the reason) is refused by `build`, and an explained one is
printed with its reason in the document's notes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from esrp_report.analysis.compare import relative_difference
from esrp_report.model import Manifest, Run, TestKind
from esrp_report.model.data import package_toml
from esrp_report.model.server_facts import FactSpec, fact_rows, fact_specs

GIB = 2**30
SAME = 1e-6  # relative difference below which a stated figure is the evidence's


@dataclass(frozen=True)
class Difference:
    """A fact the manifest states differently from the evidence: the manifest's key (with its
    table, e.g. "[profile] target_iops"), both values as text, the evidence file that gives the
    other value, and the manifest's reason for the difference (None: not explained)."""

    table: str  # "[profile]", "[document]", "[[servers]] JS16", "[tables.software]"
    key: str
    stated: str
    evidence: str
    source: str
    reason: str | None = None

    @property
    def where(self) -> str:
        return f"{self.table} {self.key}"

    def refusal(self) -> str:
        """One line: both values, where each comes from, and the two ways out."""
        differs_at = "[[servers]]" if self.table.startswith("[[servers]]") else self.table
        return (
            f"{self.where} = {self.stated}, but {Path(self.source).name} says {self.evidence}: "
            f"state the evidence's value, or say why it differs with "
            f'differs = {{ {_toml_key(self.key)} = "why" }} in {differs_at}'
        )

    def sentence(self) -> str:
        """For the document's notes, in readers' words: what is stated, what the evidence says, and why."""
        return (
            f"The manifest states the {self.subject} as {self.stated}; {Path(self.source).name} says "
            f"{self.evidence}. Stated reason: {self.reason}"
        )

    @property
    def subject(self) -> str:
        """What the fact is, in readers' words ("operating system of JS8", "Exchange version")."""
        if self.table.startswith("[[servers]]"):
            spec = fact_specs().get(self.key)
            label = spec.label if spec else self.key
            return f"{label[0].lower()}{label[1:]} of {self.table.removeprefix('[[servers]] ')}"
        return _READABLE.get(self.key, f'"{self.key}" row of {self.table}')


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else f'"{key}"'


_READABLE = {
    "active_mailboxes_per_server": "active mailboxes per server",
    "tested_iops_per_mailbox": "tested IOPS per mailbox",
    "target_iops": "target transactional IOPS per server",
    "exchange_version": "Exchange version",
    "esrp_version": "ESRP version",
}


@cache
def _generations() -> list[dict[str, object]]:
    raw = package_toml("esrp_report.analysis", "generations.toml")
    entries: list[dict[str, object]] = raw["jetstress"]
    return entries


def exchange_and_esrp(jetstress_version: str | None) -> tuple[str, str] | None:
    """The Exchange and ESRP versions a Jetstress version is evidence for (analysis/generations.toml):
    14.x is Exchange 2010 (ESRP 3.0), 15.00 Exchange 2013 and 15.01 Exchange 2016 (both ESRP 4.0);
    None for anything else."""
    parts = (jetstress_version or "").strip().split(".")
    if len(parts) < 2 or not all(p.isascii() and p.isdigit() for p in parts[:2]):
        return None
    major, minor = int(parts[0]), int(parts[1])
    for entry in _generations():
        if entry["major"] == major and entry.get("minor", minor) == minor:
            return str(entry["exchange"]), str(entry["esrp"])
    return None


# --- one server's facts, from its evidence ---------------------------------------------------------


@dataclass(frozen=True)
class EvidenceFact:
    """A fact as the evidence gives it: the value and the file it is read from."""

    value: str | int | float
    source: str


def _report(run: Run) -> str:
    return run.sources[0] if run.sources else run.machine


def _main_runs(runs: Sequence[Run]) -> list[Run]:
    """The runs whose reports carry the test summary, the performance test first."""
    order = (TestKind.PERFORMANCE, TestKind.STRESS)
    main = sorted((r for r in runs if r.kind in order), key=lambda r: order.index(r.kind))
    return main + [r for r in runs if r.kind not in order]


def server_evidence(runs: Sequence[Run]) -> dict[str, EvidenceFact]:
    """What one server's evidence says of each fact in model/server_facts.toml, where it says it."""
    found: dict[str, EvidenceFact] = {}
    for run in _main_runs(runs):
        texts: dict[str, str | None] = {
            "os": run.operating_system,
            "jetstress_version": run.jetstress_version,
            "ese_version": run.ese_version,
            "thread_count": run.parameters.get("Thread Count")
            or (str(run.config.thread_count) if run.config and run.config.thread_count else None),
        }
        for key, text in texts.items():
            if text and key not in found:
                found[key] = EvidenceFact(text.strip(), _report(run))
        if run.kind is not TestKind.PERFORMANCE:
            continue
        databases = len(run.databases) or len(run.instance_names())
        if databases and "databases" not in found:
            found["databases"] = EvidenceFact(databases, _report(run))
        size = run.sizing.initial_database_bytes
        if size is not None and "database_size_gb" not in found:
            found["database_size_gb"] = EvidenceFact(size / GIB, _report(run))
    return found


def normal_os(text: str) -> str:
    """A Windows edition as compared: without "Microsoft", "(R)" or the bracketed build number,
    "Service Pack N" as "SPN", case and spacing aside."""
    text = re.sub(r"\(\s*\d+(?:\.\d+)+\s*\)", " ", text)
    text = re.sub(r"\(R\)|®|™|\bMicrosoft\b", " ", text, flags=re.IGNORECASE)
    text = re.sub(r"\bService\s+Pack\s+(\d+)", r"SP\1", text, flags=re.IGNORECASE)
    return " ".join(text.split()).casefold()


def same(spec: FactSpec, stated: str | int | float, evidence: str | int | float) -> bool:
    """Whether a stated value is the evidence's, compared as the fact's kind says."""
    if spec.kind == "count":
        return isinstance(stated, int) and stated == evidence
    if spec.kind == "gb":
        return isinstance(stated, int | float) and abs(float(stated) - float(evidence)) <= 0.5
    if spec.kind == "os":
        return normal_os(str(stated)) == normal_os(str(evidence))
    return " ".join(str(stated).split()).casefold() == " ".join(str(evidence).split()).casefold()


def shown(spec: FactSpec, value: str | int | float) -> str:
    """A fact's value as text for a message or the document."""
    if spec.kind == "gb":
        return f"{float(value):,.0f} GB"
    if isinstance(value, str):
        return f'"{value}"'
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def row_names(spec: FactSpec, row: str, evidence: str | int | float) -> bool:
    """Whether a key/value table row (e.g. "Host OS": "JS16: ...; JS8: ...") names the evidence's value."""
    if spec.kind == "os":
        return normal_os(str(evidence)) in normal_os(row)
    return " ".join(str(evidence).split()).casefold() in " ".join(row.split()).casefold()


# --- the manifest against the evidence -------------------------------------------------------------


def differences(manifest: Manifest, servers: Sequence[tuple[str, Sequence[Run]]]) -> list[Difference]:
    """Every fact ``manifest`` states differently from the evidence of ``servers`` (each a manifest
    label and the runs read for it), with the manifest's reason where it gives one."""
    found = [*_profile(manifest, servers), *_document(manifest, servers), *_servers(manifest, servers)]
    found += _tables(manifest, servers)
    out: list[Difference] = []
    for d in found:
        if d.table.startswith("[[servers]]"):
            label = d.table.removeprefix("[[servers]] ")
            reasons = next((s.differs for s in manifest.servers if s.label == label), {})
        elif d.table.startswith("[tables."):
            key = d.table.removeprefix("[tables.").removesuffix("]")
            reasons = next((t.differs for t in manifest.tables if t.key == key), {})
        else:
            reasons = manifest.differs.get(d.table.strip("[]"), {})
        out.append(Difference(d.table, d.key, d.stated, d.evidence, d.source, reasons.get(d.key)))
    return out


def _profile(manifest: Manifest, servers: Sequence[tuple[str, Sequence[Run]]]) -> Iterator[Difference]:
    p = manifest.profile
    per_server = p.active_mailboxes_per_server or p.mailboxes // max(len(manifest.servers), 1)
    how = "" if p.active_mailboxes_per_server else f" ({p.mailboxes:,} mailboxes / {len(manifest.servers)})"
    target = per_server * p.tested_iops
    for label, runs in servers:
        config = next((r.config for r in _main_runs(runs) if r.config is not None), None)
        if config is not None and config.mailbox_count and config.mailbox_count != per_server:
            yield Difference(
                "[profile]",
                "active_mailboxes_per_server",
                f"{per_server:,}{how}",
                f"MailboxCount {config.mailbox_count:,} ({label})",
                config.source,
            )
            return  # the target differs too: one difference says it
        if (
            config is not None
            and config.mailbox_iops
            and relative_difference(config.mailbox_iops, p.tested_iops) > SAME
        ):
            yield Difference(
                "[profile]",
                "tested_iops_per_mailbox",
                f"{p.tested_iops:g}",
                f"MailboxIops {config.mailbox_iops:g} ({label})",
                config.source,
            )
            return
        run = next((r for r in _main_runs(runs) if r.sizing.target_iops), None)
        if (
            run is not None
            and run.sizing.target_iops
            and relative_difference(run.sizing.target_iops, target) > SAME
        ):
            yield Difference(
                "[profile]",
                "target_iops",
                f"{target:,g} ({per_server:,} mailboxes per server x {p.tested_iops:g} IOPS per mailbox)",
                f"a target of {run.sizing.target_iops:,g} transactional IOPS ({label})",
                _report(run),
            )
            return


def _document(manifest: Manifest, servers: Sequence[tuple[str, Sequence[Run]]]) -> Iterator[Difference]:
    info = manifest.document
    for label, runs in servers:
        run = next((r for r in _main_runs(runs) if exchange_and_esrp(r.jetstress_version)), None)
        if run is None:
            continue
        exchange, esrp = exchange_and_esrp(run.jetstress_version) or ("", "")
        told = f"Jetstress {run.jetstress_version} ({label}), which tests"
        if info.exchange_version.strip() != exchange:
            yield Difference(
                "[document]",
                "exchange_version",
                f'"{info.exchange_version}"',
                f"{told} Exchange {exchange}",
                _report(run),
            )
        if info.esrp_version.strip() != esrp:
            yield Difference(
                "[document]", "esrp_version", f'"{info.esrp_version}"', f"{told} ESRP {esrp}", _report(run)
            )
        return  # one server's Jetstress speaks for the document; the servers' own are checked below


def _servers(manifest: Manifest, servers: Sequence[tuple[str, Sequence[Run]]]) -> Iterator[Difference]:
    specs = fact_specs()
    evidence = {label: server_evidence(runs) for label, runs in servers}
    for entry in manifest.servers:
        given = evidence.get(entry.label, {})
        for key, stated in entry.facts.items():
            fact = given.get(key)
            if fact is None:
                continue  # the evidence does not say: nothing contradicts the statement
            if not same(specs[key], stated, fact.value):
                yield Difference(
                    f"[[servers]] {entry.label}",
                    key,
                    shown(specs[key], stated),
                    shown(specs[key], fact.value),
                    fact.source,
                )


def _tables(manifest: Manifest, servers: Sequence[tuple[str, Sequence[Run]]]) -> Iterator[Difference]:
    specs, rows = fact_specs(), fact_rows()
    evidence = [(label, server_evidence(runs)) for label, runs in servers]
    for table in manifest.tables:
        for item, text in table.rows:
            key = rows.get(item)
            if key is None:
                continue
            for label, facts in evidence:
                fact = facts.get(key)
                if fact is not None and not row_names(specs[key], text, fact.value):
                    yield Difference(
                        f"[tables.{table.key}]",
                        item,
                        f'"{text}"',
                        f"{shown(specs[key], fact.value)} for {label}",
                        fact.source,
                    )
                    break
