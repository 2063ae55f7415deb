"""Pass/fail rules: thresholds are TOML data; this module only knows how to take each measure.

A verdict exists per rule per instance (or per run), and rolls up to server and solution.
A rule whose evidence is missing is NOT_EVALUATED, never PASS. A rule that passes on evidence
that was damaged (samples out of physical range, unreadable, missing or lost, time stamps that
run backwards) is INCOMPLETE: the damage could hide a failure. PASS rolls up only from rules
that were all evaluated on sound data and all passed.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Any

from esrp_report import model as m
from esrp_report.analysis.compare import instance_key
from esrp_report.files.safe import Tree, read_regular_file
from esrp_report.model import Generation, Run, TableKind, TestKind
from esrp_report.model.errors import InputError, RulesError

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<": lambda v, t: v < t,
    "<=": lambda v, t: v <= t,
    ">": lambda v, t: v > t,
    ">=": lambda v, t: v >= t,
}


def holds(operator: str, value: float, limit: float) -> bool:
    """Does ``value`` meet ``limit`` under ``operator``? The one comparison of a value with a limit: a rule
    asks it with its own operator, the audit with the operator a document prints beside a target."""
    return OPERATORS[operator](value, limit)


def may_hold(operator: str, value: float, half_unit: float, limit: float) -> bool:
    """Could a figure printed as ``value`` (to ``half_unit`` either way) meet ``limit`` under ``operator``?
    It could when the end of its rounding interval nearest the limit's good side does."""
    nearest = value - half_unit if operator in ("<", "<=") else value + half_unit
    return holds(operator, nearest, limit)


class Status(StrEnum):
    """A verdict, of one rule or rolled up to a run, server or solution."""

    PASS = "pass"
    FAIL = "fail"
    INCOMPLETE = "incomplete"  # nothing failed, but some rule was not evaluated or saw damage
    NOT_EVALUATED = "not evaluated"


Threshold = float | str  # a number, or "target"


@dataclass(frozen=True)
class Rule:
    """One pass/fail rule as the thresholds TOML states it: the measure it takes, its comparison and unit, and
    a threshold per test type (optionally per Jetstress generation)."""

    id: str
    description: str
    scope: str  # "instance" | "run"
    measure: str
    operator: str
    unit: str
    thresholds: dict[str, Threshold]  # test kind -> threshold
    by_generation: dict[str, dict[str, Threshold]] = field(default_factory=dict)
    applies_only_with_evidence: bool = False
    source: str = "built-in"
    # How a user's rules file made this rule more lenient than Microsoft's, and the reason the user
    # gave for it (`--loosen`, or `loosen` under the manifest's [rules]); empty when it did not.
    loosened: str = ""

    def limit(self, kind: TestKind, generation: Generation = Generation.UNKNOWN) -> float | None:
        """The numeric threshold for this test type and generation (None for "target" or none)."""
        found = self.threshold_for(kind, generation)
        return None if found is None or found == "target" else float(found)

    def holds(self, value: float, limit: float) -> bool:
        """Does ``value`` meet this rule's limit? The one comparison every report of a verdict asks."""
        return holds(self.operator, value, limit)

    def may_hold(self, value: float, half_unit: float, limit: float) -> bool:
        """Could a figure printed as ``value`` (to ``half_unit`` either way) meet this rule's limit?"""
        return may_hold(self.operator, value, half_unit, limit)

    def limit_text(
        self, kind: TestKind, generation: Generation = Generation.UNKNOWN, *, unit: str | None = None
    ) -> str:
        """The limit as a document prints it ("< 20 msec", "<= 12.25 ms"): the rule's own operator,
        the threshold to its last stated digit, "N/A" when the rule sets none for this test."""
        value = self.limit(kind, generation)
        if value is None:
            return "N/A"
        return f"{self.operator} {format(value, ',.15g')} {self.unit if unit is None else unit}".strip()

    def threshold_for(self, kind: TestKind, generation: Generation) -> Threshold | None:
        """The threshold for this test type and generation (a number, or "target" for the target IOPS): the
        generation's own when the rule has one, else the test type's; None when the rule does not apply."""
        specific = self.by_generation.get(generation.value, {})
        if kind.value in specific:
            return specific[kind.value]
        return self.thresholds.get(kind.value)


@dataclass(frozen=True)
class RuleResult:
    """One rule judged on one instance (or on the whole run): the value against its threshold, where the value
    came from, and the damage behind it."""

    rule_id: str
    description: str
    server: str
    run_kind: str
    run_source: str
    instance: str | None
    status: Status
    value: float | None
    threshold: float | None
    operator: str
    unit: str
    evidence: str  # where the value came from
    reason: str = ""
    damaged: int = 0  # samples behind the value that were damage (left out)
    caveat: str = ""  # why the value may hide a failure (damage, lost samples)

    @property
    def margin(self) -> float | None:
        """Headroom: positive means inside the threshold, negative means over it."""
        if self.value is None or self.threshold is None:
            return None
        if self.operator in ("<", "<="):
            return self.threshold - self.value
        return self.value - self.threshold

    @property
    def subject(self) -> str:
        return f"{self.server}/{self.instance}" if self.instance else self.server


# ---------------------------------------------------------------- loading


def _parse_rule(raw: dict[str, Any], source: str, base: Rule | None) -> Rule:
    known = {
        "id",
        "description",
        "scope",
        "measure",
        "operator",
        "unit",
        "threshold",
        "generation",
        "applies_only_with_evidence",
    }
    unknown = set(raw) - known
    if unknown:
        raise RulesError(f"{source}: rule {raw.get('id')!r}: unknown keys {sorted(unknown)}")
    rule_id = raw.get("id")
    if not isinstance(rule_id, str) or not rule_id:
        raise RulesError(f"{source}: every [[rule]] needs an id")
    fields: dict[str, Any] = {}
    for key in ("description", "scope", "measure", "operator", "unit"):
        if key in raw:
            fields[key] = str(raw[key])
    if "applies_only_with_evidence" in raw:
        fields["applies_only_with_evidence"] = bool(raw["applies_only_with_evidence"])
    # A known rule keeps every threshold the file does not restate (a file that tightens Performance
    # leaves Stress as it was); an empty `threshold = {}` says the rule applies to no test at all.
    if "threshold" in raw:
        stated = _thresholds(raw["threshold"], source, rule_id)
        kept = base.thresholds if base is not None and stated else {}
        fields["thresholds"] = {**kept, **stated}
    if "generation" in raw:
        by_generation = dict(base.by_generation) if base is not None else {}
        for gen, spec in raw["generation"].items():
            stated = _thresholds(spec.get("threshold", {}), source, rule_id)
            by_generation[str(gen)] = {**by_generation.get(str(gen), {}), **stated}
        fields["by_generation"] = by_generation
    if base is not None:
        rule = replace(base, source=source, **fields)
    else:
        missing = {"description", "scope", "measure", "operator", "thresholds"} - set(fields)
        if missing:
            raise RulesError(f"{source}: new rule {rule_id!r} lacks {sorted(missing)}")
        fields.setdefault("unit", "")
        rule = Rule(id=rule_id, source=source, **fields)
    if rule.operator not in OPERATORS:
        raise RulesError(f"{source}: rule {rule_id!r}: operator must be one of {sorted(OPERATORS)}")
    if rule.scope not in ("instance", "run"):
        raise RulesError(f"{source}: rule {rule_id!r}: scope must be 'instance' or 'run'")
    if rule.measure not in MEASURES:
        raise RulesError(
            f"{source}: rule {rule_id!r}: unknown measure {rule.measure!r}; "
            f"known: {', '.join(sorted(MEASURES))}"
        )
    if MEASURES[rule.measure].scope != rule.scope:
        raise RulesError(
            f"{source}: rule {rule_id!r}: measure {rule.measure!r} is a {MEASURES[rule.measure].scope}"
            " measure"
        )
    return rule


def _thresholds(raw: Any, source: str, rule_id: str) -> dict[str, Threshold]:
    if not isinstance(raw, dict):
        raise RulesError(f"{source}: rule {rule_id!r}: threshold must be a table of test kind = value")
    kinds = {k.value for k in TestKind}
    out: dict[str, Threshold] = {}
    for kind, value in raw.items():
        if kind not in kinds:
            raise RulesError(
                f"{source}: rule {rule_id!r}: unknown test kind {kind!r}; known: {sorted(kinds)}"
            )
        if value == "target" or (isinstance(value, int | float) and not isinstance(value, bool)):
            out[kind] = value if value == "target" else float(value)
        else:
            raise RulesError(f"{source}: rule {rule_id!r}: threshold for {kind} must be a number or 'target'")
    return out


def _load_document(text: str, source: str, base: dict[str, Rule]) -> dict[str, Rule]:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{source}: not valid TOML: {exc}") from exc
    rules = dict(base)
    entries = raw.get("rule", [])
    if not isinstance(entries, list):
        raise RulesError(f"{source}: rules must be written as [[rule]] tables")
    for entry in entries:
        rule = _parse_rule(entry, source, rules.get(str(entry.get("id"))))
        rules[rule.id] = rule
    return rules


def find_rule(rules: Iterable[Rule], rule_id: str) -> Rule | None:
    """The rule of this id, or None: how every report of a verdict finds its criterion."""
    return next((rule for rule in rules if rule.id == rule_id), None)


def _built_in() -> dict[str, Rule]:
    built_in = resources.files("esrp_report.analysis.rules").joinpath("thresholds.toml")
    text = built_in.read_text(encoding="utf-8")
    return _load_document(text, "built-in thresholds", {})


def _looser(operator: str, before: Threshold, after: Threshold | None, before_operator: str) -> bool:
    """Is ``after`` (with ``operator``) a more lenient limit than ``before`` (with ``before_operator``)?"""
    if after is None:
        return True  # the rule no longer applies to this test
    if before == "target" or after == "target":
        return before != after
    low, high = float(before), float(after)
    if before_operator in ("<", "<=") and operator in ("<", "<="):
        return high > low or (high == low and operator == "<=" and before_operator == "<")
    if before_operator in (">", ">=") and operator in (">", ">="):
        return high < low or (high == low and operator == ">=" and before_operator == ">")
    return True  # the comparison turned round: nothing of Microsoft's limit is left


def loosenings(rules: Iterable[Rule]) -> list[tuple[str, str]]:
    """Every way these rules are more lenient than Microsoft's (the built-in thresholds): a threshold
    raised (or lowered, for a minimum), an operator that now admits the limit itself, or a test type
    or generation the rule no longer applies to: (rule id, one line saying how) each."""
    built_in = _built_in()
    found: list[tuple[str, str]] = []
    by_id = {r.id: r for r in rules}
    for rule_id, base in built_in.items():
        rule = by_id.get(rule_id)
        if rule is None:
            found.append((rule_id, f"{rule_id}: removed"))
            continue
        if rule.measure != base.measure:
            found.append((rule_id, f"{rule_id}: measures {rule.measure} instead of {base.measure}"))
            continue
        for gen_name, table in [("", base.thresholds), *base.by_generation.items()]:
            for kind, limit in table.items():
                now = rule.by_generation.get(gen_name, {}).get(kind) if gen_name else None
                if now is None:
                    now = rule.thresholds.get(kind)
                if _looser(rule.operator, limit, now, base.operator):
                    where = f"{kind}" + (f" (Jetstress {gen_name})" if gen_name else "")
                    shown = f"{rule.operator} {_limit_text(now, rule.unit)}" if now is not None else ""
                    shown = shown or "no longer applies"
                    found.append(
                        (
                            rule_id,
                            f"{rule_id} {where}: Microsoft's {base.operator} {_limit_text(limit, base.unit)} "
                            f"made {shown}",
                        )
                    )
    return found


def _limit_text(limit: Threshold, unit: str) -> str:
    return "the target" if limit == "target" else f"{float(limit):g} {unit}".strip()


def load_rules(
    override: str | Path | None = None, *, loosen: str | None = None, tree: Tree | None = None
) -> list[Rule]:
    """The built-in rules, optionally overridden by a user's TOML file. A file that makes any rule
    more lenient than Microsoft's is refused unless ``loosen`` gives the reason; the loosened rules
    then say how, and why (``Rule.loosened``), for every report to show. ``tree``: the manifest's
    folder, when a manifest names the file (its identity is judged)."""
    rules = _built_in()
    if override is None:
        return list(rules.values())
    # A regular file only, judged before it is opened: a FIFO given as rules would block.
    try:
        user_text = read_regular_file(override, what="rules file", tree=tree).decode("utf-8")
    except InputError as exc:
        raise RulesError(f"{override}: {exc.detail}") from None
    except UnicodeDecodeError as exc:
        raise RulesError(f"{override}: rules file is not UTF-8 text (byte {exc.start})") from None
    rules = _load_document(user_text, str(override), rules)
    found = loosenings(rules.values())
    if found and not (loosen and loosen.strip()):
        raise RulesError(
            f"{override}: loosens Microsoft's thresholds ({'; '.join(text for _id, text in found)}); refused "
            'unless the reason is given: `--loosen "why"`, or `loosen = "why"` under [rules] in the manifest'
        )
    why = " ".join((loosen or "").split())
    for rule_id in dict.fromkeys(rule_id for rule_id, _text in found):
        how = "; ".join(text for other, text in found if other == rule_id)
        if rule_id in rules:
            rules[rule_id] = replace(rules[rule_id], loosened=f"{how} (reason given: {why})")
    return list(rules.values())


def loosened_problems(rules: Iterable[Rule]) -> list[m.Problem]:
    """A warning per rule a user's file made more lenient: on the console and in the reviewer's report."""
    return [
        m.Problem(r.source, f"rules file loosens Microsoft's threshold: {r.loosened}", severity="warning")
        for r in rules
        if r.loosened
    ]


# ---------------------------------------------------------------- measures


@dataclass
class RunEvidence:
    """What the rules look at for one run: the run itself plus counter-log figures if any."""

    run: Run
    server: str
    target_iops: float | None = None
    target_source: str = ""
    counter_tables: dict[TableKind, m.InstanceTable] = field(default_factory=dict)
    counter_maxima: dict[str, dict[str, float]] = field(default_factory=dict)
    counter_host: list[m.HostCounter] = field(default_factory=list)
    counter_source: str = ""
    # Damage in the counter log (metrics.CounterMetrics): instance -> metric -> samples, host
    # label -> samples, the largest values of samples lost whole, and run-wide caveats.
    counter_damaged: dict[str, dict[str, int]] = field(default_factory=dict)
    counter_host_damaged: dict[str, int] = field(default_factory=dict)
    counter_lost_maxima: dict[str, dict[str, float]] = field(default_factory=dict)
    counter_caveats: list[str] = field(default_factory=list)

    def damage_of(self, instance: str, metric: str) -> int:
        """How many damaged counter-log samples were left out of this instance's metric (0 when none);
        instance names match across sources."""
        wanted = instance_key(instance)
        return sum(
            per.get(metric, 0) for name, per in self.counter_damaged.items() if instance_key(name) == wanted
        )

    def lost_maximum(self, instance: str, metric: str) -> float | None:
        """The largest value among this instance's counter-log samples of the metric that were lost whole, or
        None when none was lost."""
        wanted = instance_key(instance)
        values = [
            per[metric]
            for name, per in self.counter_lost_maxima.items()
            if instance_key(name) == wanted and metric in per
        ]
        return max(values) if values else None


@dataclass(frozen=True)
class Measured:
    """A value a measure took (None when the evidence has none), where it came from, why it is missing, and
    the damage behind it."""

    value: float | None
    evidence: str
    reason: str = ""
    damaged: int = 0
    caveat: str = ""
    # The same figure from the run's other sources (source, value): each is judged too, so that no
    # source that fails is outvoted by one that passes (analysis/vetting.py names their disagreement).
    others: tuple[tuple[str, float], ...] = ()


def _from_counter_log(ev: RunEvidence, value: float | None, damaged: int, caveat: str = "") -> Measured:
    """A figure from the counter log, with the damage behind it and the log's run-wide caveats."""
    caveats = [*ev.counter_caveats, caveat] if caveat else list(ev.counter_caveats)
    if damaged:
        caveats.insert(0, f"{damaged} damaged sample(s) left out")
    return Measured(value, "counter log", damaged=damaged, caveat="; ".join(caveats))


@dataclass(frozen=True)
class Measure:
    """How to take one measure: its scope ("instance" or "run") and the function that takes it from a run's
    evidence."""

    scope: str
    take: Callable[[RunEvidence, str | None], Measured]


def _instance_average(metric: str) -> Callable[[RunEvidence, str | None], Measured]:
    def take(ev: RunEvidence, instance: str | None) -> Measured:
        assert instance is not None
        table = ev.run.tables.get(TableKind.TRANSACTIONAL)
        row = _row(table, instance)
        counter = _row(ev.counter_tables.get(TableKind.TRANSACTIONAL), instance)
        logged = counter.values.get(metric) if counter is not None else None
        if row is not None and metric in row.values:
            others = (("counter log", logged),) if logged is not None else ()
            return Measured(row.values[metric], "report", others=others)
        if logged is not None:
            return _from_counter_log(ev, logged, ev.damage_of(instance, metric))
        return Measured(None, "", "no transactional figure for this instance")

    return take


def _row(table: m.InstanceTable | None, instance: str) -> m.InstanceRow | None:
    """The row of this instance, its name matched across sources (perfmon may prefix the process)."""
    if table is None:
        return None
    wanted = instance_key(instance)
    return next((row for row in table.rows if instance_key(row.instance) == wanted), None)


def _instance_maximum(metric: str) -> Callable[[RunEvidence, str | None], Measured]:
    def take(ev: RunEvidence, instance: str | None) -> Measured:
        assert instance is not None
        wanted = instance_key(instance)
        for name, values in ev.counter_maxima.items():
            if instance_key(name) == wanted and metric in values:
                value = values[metric]
                lost = ev.lost_maximum(instance, metric)
                caveat = ""
                if lost is not None and lost > value:
                    caveat = f"a sample lost from the log reads {lost!r}, above the maximum kept"
                return _from_counter_log(ev, value, ev.damage_of(instance, metric), caveat)
        return Measured(None, "", "a maximum needs the counter log's samples")

    return take


def _table_iops(table: m.InstanceTable | None, databases: int) -> float | None:
    """The reads and writes of every instance of a table, summed; None when a row or a figure is missing
    (a sum short of an instance would fail a run for the loss of a row: that is a doubt, not a figure)."""
    if not table or not table.rows or len(table.rows) < databases:
        return None
    values = [r.values.get(m.DB_READS) for r in table.rows] + [r.values.get(m.DB_WRITES) for r in table.rows]
    if any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None)


def _transactional_iops(ev: RunEvidence, _instance: str | None) -> Measured:
    databases = len(ev.run.databases)
    if ev.run.sizing.achieved_iops is not None:
        others = tuple(
            (origin, value)
            for origin, value in (
                ("report tables", _table_iops(ev.run.tables.get(TableKind.TRANSACTIONAL), databases)),
                ("counter log", _table_iops(ev.counter_tables.get(TableKind.TRANSACTIONAL), databases)),
            )
            if value is not None
        )
        return Measured(ev.run.sizing.achieved_iops, "report", others=others)
    for table, origin in (
        (ev.run.tables.get(TableKind.TRANSACTIONAL), "report tables"),
        (ev.counter_tables.get(TableKind.TRANSACTIONAL), "counter log"),
    ):
        if table and table.rows:
            values = [r.values.get(m.DB_READS) for r in table.rows] + [
                r.values.get(m.DB_WRITES) for r in table.rows
            ]
            if all(v is not None for v in values):
                total = sum(v for v in values if v is not None)
                if origin == "counter log":
                    metrics = (m.DB_READS, m.DB_WRITES)
                    damaged = sum(ev.damage_of(r.instance, key) for r in table.rows for key in metrics)
                    return _from_counter_log(ev, total, damaged)
                return Measured(total, origin)
    return Measured(None, "", "no achieved IOPS and no complete transactional table")


def _page_fault_stalls(ev: RunEvidence, _instance: str | None) -> Measured:
    counter = ev.run.host_counter("Database Page Fault Stalls/sec")
    logged = next(
        (
            h.average
            for h in ev.counter_host
            if h.name.casefold() == "database page fault stalls/sec" and h.average is not None
        ),
        None,
    )
    if counter is not None and counter.average is not None:
        others = (("counter log", logged),) if logged is not None else ()
        return Measured(counter.average, "report", others=others)
    for host in ev.counter_host:
        if host.name.casefold() == "database page fault stalls/sec" and host.average is not None:
            return _from_counter_log(ev, host.average, ev.counter_host_damaged.get(host.name, 0))
    return Measured(None, "", "no Database Page Fault Stalls/sec figure")


def _checksum_bad_pages(ev: RunEvidence, _instance: str | None) -> Measured:
    rows = [r for r in ev.run.checksum if not r.is_sum]
    if not rows:
        rows = [r for r in ev.run.checksum if r.is_sum]
    if not rows or any(r.bad_pages is None for r in rows):
        return Measured(None, "", "no checksum statistics")
    return Measured(sum(r.bad_pages or 0.0 for r in rows), "report")


def _event_log_errors(ev: RunEvidence, _instance: str | None) -> Measured:
    if ev.run.event_log_errors is None:
        return Measured(None, "", "no event logs in the evidence")
    return Measured(float(ev.run.event_log_errors), "event logs")


_RESULT_VALUES = {"pass": 0.0, "fail": 1.0}


def _reported_result(ev: RunEvidence, _instance: str | None) -> Measured:
    # Every source's verdict is judged: a result XML saying Fail beside a report saying Pass fails.
    others = tuple(
        (source, _RESULT_VALUES[said.strip().casefold()])
        for source, said in ev.run.reported_results.items()
        if said.strip().casefold() in _RESULT_VALUES
    )
    result = (ev.run.overall_result or "").strip().casefold()
    if result == "pass":
        return Measured(0.0, "report", "Jetstress reported Pass", others=others)
    if result == "fail":
        return Measured(1.0, "report", "Jetstress reported Fail", others=others)
    if others:
        source, value = max(others, key=lambda o: o[1])
        return Measured(value, source, f"Jetstress reported {'Fail' if value else 'Pass'}", others=others)
    return Measured(None, "", "no overall test result in the evidence")


# The figures of the per-instance tables that the measures take: where two sources disagree on
# one of them, the verdict is in doubt (analysis/vetting.py).
JUDGED_METRICS = frozenset(
    {m.DB_READ_LATENCY, m.DB_WRITE_LATENCY, m.LOG_WRITE_LATENCY, m.DB_READS, m.DB_WRITES}
)

MEASURES: dict[str, Measure] = {
    "db_read_latency_avg": Measure("instance", _instance_average(m.DB_READ_LATENCY)),
    "db_write_latency_avg": Measure("instance", _instance_average(m.DB_WRITE_LATENCY)),
    "log_write_latency_avg": Measure("instance", _instance_average(m.LOG_WRITE_LATENCY)),
    "db_read_latency_max": Measure("instance", _instance_maximum(m.DB_READ_LATENCY)),
    "db_write_latency_max": Measure("instance", _instance_maximum(m.DB_WRITE_LATENCY)),
    "log_write_latency_max": Measure("instance", _instance_maximum(m.LOG_WRITE_LATENCY)),
    "transactional_iops": Measure("run", _transactional_iops),
    "page_fault_stalls_avg": Measure("run", _page_fault_stalls),
    "checksum_bad_pages": Measure("run", _checksum_bad_pages),
    "event_log_errors": Measure("run", _event_log_errors),
    "reported_result": Measure("run", _reported_result),
}


# ---------------------------------------------------------------- evaluation


def evaluate_run(ev: RunEvidence, rules: Iterable[Rule]) -> list[RuleResult]:
    """Judge every rule that applies to the run's test type and generation, per instance or once for the run
    (a rule that applies only with evidence is skipped without it). A missing value or target is
    NOT_EVALUATED; a pass on damaged evidence is INCOMPLETE."""
    run = ev.run
    results: list[RuleResult] = []
    source = run.sources[0] if run.sources else ""
    counter_table = ev.counter_tables.get(TableKind.TRANSACTIONAL)
    instances = run.instance_names() or (counter_table.instances() if counter_table else [])
    # An instance only the counter log names is judged too: its samples are evidence of this test
    # (analysis/vetting.py says that the sources name different databases).
    known = {instance_key(name) for name in instances}
    for name in [*(counter_table.instances() if counter_table else []), *ev.counter_maxima]:
        if instance_key(name) not in known:
            known.add(instance_key(name))
            instances.append(name)
    for rule in rules:
        threshold = rule.threshold_for(run.kind, run.generation)
        if threshold is None:
            continue
        measure = MEASURES[rule.measure]
        subjects: list[str | None] = list(instances) if rule.scope == "instance" else [None]
        for instance in subjects:
            measured = measure.take(ev, instance)
            if measured.value is None and rule.applies_only_with_evidence:
                continue
            limit: float | None
            reason = measured.reason
            if threshold == "target":
                limit = ev.target_iops
                if limit is None:
                    reason = "no target IOPS (report, config XML or --target-iops)"
                elif ev.target_source:
                    reason = f"target from {ev.target_source}"
            else:
                limit = float(threshold)
            value, evidence = measured.value, measured.evidence
            failing = (
                [
                    (v, origin)
                    for origin, v in ((measured.evidence, measured.value), *measured.others)
                    if v is not None and not rule.holds(v, limit)
                ]
                if limit is not None
                else []
            )
            if failing:
                # The worst source speaks: the one furthest past the threshold.
                value, evidence = (max if rule.operator in ("<", "<=") else min)(failing)
            if value is None or limit is None:
                status = Status.NOT_EVALUATED
            elif failing:
                status = Status.FAIL
            elif measured.caveat:
                status = Status.INCOMPLETE  # passes on what could be read; the damage could hide a failure
            else:
                status = Status.PASS
            results.append(
                RuleResult(
                    rule_id=rule.id,
                    description=rule.description,
                    server=ev.server,
                    run_kind=run.kind.value,
                    run_source=source,
                    instance=instance,
                    status=status,
                    value=value,
                    threshold=limit,
                    operator=rule.operator,
                    unit=rule.unit,
                    evidence=evidence,
                    reason=reason,
                    damaged=measured.damaged,
                    caveat=measured.caveat,
                )
            )
    return results


def roll_up(results: Iterable[RuleResult]) -> Status:
    """FAIL if anything failed; NOT_EVALUATED if nothing was evaluated at all; INCOMPLETE if
    some rule was not evaluated or passed only on damaged evidence; PASS only when every rule
    was evaluated on sound data and passed."""
    statuses = {r.status for r in results}
    if Status.FAIL in statuses:
        return Status.FAIL
    if not statuses & {Status.PASS, Status.INCOMPLETE}:
        return Status.NOT_EVALUATED
    if statuses & {Status.NOT_EVALUATED, Status.INCOMPLETE}:
        return Status.INCOMPLETE
    return Status.PASS


def verdict_reason(results: list[RuleResult]) -> str:
    """Why a roll-up is not PASS, in one line: what failed, what was not evaluated, what saw
    damage. Empty for PASS."""
    failed = sorted({r.rule_id for r in results if r.status is Status.FAIL})
    unevaluated = sorted({r.rule_id for r in results if r.status is Status.NOT_EVALUATED})
    damaged = [r for r in results if r.status is Status.INCOMPLETE]
    parts = []
    if failed:
        parts.append(f"failed: {', '.join(failed)}")
    if damaged:
        parts.append(f"{len(damaged)} result(s) passed only on damaged evidence ({damaged[0].caveat})")
    if unevaluated:
        parts.append(f"not evaluated: {', '.join(unevaluated)}")
    if failed or not parts:
        return "; ".join(parts)
    return "nothing failed, but " + "; ".join(parts)
