"""Planted errors: change one digit of a number the audit says it checks, audit the changed copy,
and count how often an error is reported at the line of the changed number.

    python -m benchmarks.audit_planted [--sample 500 | --all] [--seed 1] [-j N] [--documents ...]

What is planted, and what counts (``docs/audit.md``, "Planted errors"):

- The **checked numbers** of a document are the printed cells that some evaluated relation of its
  audit was worked out from (``AuditResult.guards``). Each has a **guard**: the least change sure
  to break one of its relations (the relation's tolerance, plus how far it is from holding exactly
  today, divided by the cell's coefficient in it).
- A digit of a checked number is **vouched for** when its place value is larger than the guard:
  any change of that digit moves the number by at least its place value, so some relation must
  fail. A plant changes one vouched-for digit to one of the nine others (never a leading digit
  to 0), in the line as extracted from the document (the text of a PDF or an HTML page after
  extraction, the line itself for text and Markdown), and the changed lines are read again.
- A plant is **caught at its line** when the changed copy has an error (check, line, column)
  that the untouched document does not have, at the line of the changed number; **caught** when
  that line is among the lines of a new error's cells. A plant whose changed line no longer
  reads the changed figure in the same cell is **not placed** and counted apart.

The documents: the published seeds as this project keeps them (``tests/data/published/``) and the
documents ``build`` writes from the bundled samples (HTML and PDF), built afresh into
``benchmarks/data/planted-build``. The test suite runs a small fixed sample of the same engine
(``tests/test_audit_planted.py``).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from esrp_report.analysis.rules import Rule, load_rules
from esrp_report.audit import AuditResult, audit
from esrp_report.audit.blame import digit_places
from esrp_report.audit.coverage import vouches
from esrp_report.ingest.documents.cells import clean_line
from esrp_report.ingest.documents.lines import document_lines
from esrp_report.ingest.documents.published import parse_lines
from esrp_report.model import DocLine
from esrp_report.model.findings import ERROR
from esrp_synth.sample_variants import vmax_with_every_server

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = ROOT / "tests" / "data" / "published"
BUILT = Path(__file__).resolve().parent / "data" / "planted-build"
SEEDS = ("vmax-000.txt", "netapp-001.txt", "dellemc-002.txt", "equallogic-004.txt")
SAMPLES = ("vmax", "netapp", "dellemc")  # samples/<name>.toml, when present


@dataclass(frozen=True)
class Plant:
    """One digit changed: the cell (line, column), the cell's text before and after, the number
    changed (its text before and after, where it starts in the cell), the place value of the
    changed digit (10**place) and the number's guard."""

    line: int
    column: int
    before: str
    after: str
    place: int
    guard: float
    number: str = ""
    changed: str = ""
    start: int = 0


@dataclass
class Outcome:
    plant: Plant
    placed: bool
    at_line: bool = False
    named: bool = False  # at its line, or one of the two cells a new error names as the slip
    caught: bool = False
    new_errors: list[tuple[str, int | None]] = field(default_factory=list)


@dataclass
class Document:
    """A document reduced to its extracted lines, with its untouched audit."""

    name: str
    source: str
    kind: str
    lines: list[tuple[int, str, int | None]]  # (number, raw text, page)
    cells: dict[int, list[str]]  # line number -> its cells as read
    baseline: AuditResult
    rules: list[Rule]

    @classmethod
    def load(cls, path: Path, rules: list[Rule], name: str | None = None) -> Document:
        lines, kind = document_lines(path.read_bytes(), str(path))
        raw = [(line.no, line.raw, line.page) for line in lines]
        cells = {line.no: list(line.cells) for line in lines if line.cells}
        baseline = audit_lines(raw, str(path), kind, rules)
        return cls(name or path.name, str(path), kind, raw, cells, baseline, rules)

    def errors(self, result: AuditResult) -> set[tuple[str, int | None, str | None]]:
        return {(f.check, f.line, f.column) for f in result.findings if f.severity == ERROR}


def audit_lines(
    raw: Iterable[tuple[int, str, int | None]], source: str, kind: str, rules: list[Rule]
) -> AuditResult:
    """The audit of a document given as its extracted lines (each cleaned again here)."""
    lines = [clean_line(DocLine(no, text, page=page)) for no, text, page in raw]
    return audit(parse_lines(lines, source, kind), rules)


def candidates(doc: Document, *, vouched_only: bool = True) -> list[tuple[int, int, str, int, int, float]]:
    """Every (line, column, cell text, digit index in the cell, place, guard) the audit vouches for
    (or, with ``vouched_only`` false, every digit of every checked number). A cell may print two
    numbers ("223% [5.2 msec]"): each is planted in where it stands in the cell."""
    out = []
    for (line, column, number), guard in sorted(doc.baseline.guards.items()):
        cells = doc.cells.get(line)
        if not cells or column >= len(cells) or number not in cells[column]:
            continue
        text = cells[column]
        start = text.find(number)
        for index, place in digit_places(number):
            if not vouched_only or vouches(place, guard):
                out.append((line, column, text, start + index, place, guard))
    return out


def plants(doc: Document, sample: int | None, seed: int, *, vouched_only: bool = True) -> list[Plant]:
    """The plants of one document: a fixed-seed sample of ``sample`` (all when None)."""
    rng = random.Random(f"{doc.name}:{seed}")
    pool = candidates(doc, vouched_only=vouched_only)
    if sample is not None and len(pool) > sample:
        pool = rng.sample(pool, sample)
    out = []
    for line, column, text, index, place, guard in pool:
        leading = index == 0 or (not text[index - 1].isdigit() and text[index - 1] not in ".,")
        choices = [d for d in "0123456789" if d != text[index] and not (leading and d == "0" and place > 0)]
        after = text[:index] + rng.choice(choices) + text[index + 1 :]
        # The number the digit belongs to: the run of figures around it in the cell.
        start, end = index, index + 1
        while start > 0 and (text[start - 1].isdigit() or text[start - 1] in ".,"):
            start -= 1
        while end < len(text) and (text[end].isdigit() or text[end] in ".,"):
            end += 1
        out.append(Plant(line, column, text, after, place, guard, text[start:end], after[start:end], start))
    return out


def _edge(text: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w.,])" + re.escape(text) + r"(?![\w])")


def plant_line(doc: Document, plant: Plant) -> list[tuple[int, str, int | None]] | None:
    """The document's lines with the plant made in its raw line, or None when it cannot be placed."""
    cells = doc.cells[plant.line]
    edge = _edge(plant.number)
    # The number's place among its like in the line: earlier cells, then the cell before it.
    nth = len(edge.findall("\t".join([*cells[: plant.column], plant.before[: plant.start]])))
    for position, (no, raw, page) in enumerate(doc.lines):
        if no != plant.line:
            continue
        found = list(edge.finditer(raw))
        if len(found) <= nth:
            return None
        match = found[nth]
        changed = raw[: match.start()] + plant.changed + raw[match.end() :]
        cleaned = clean_line(DocLine(no, changed, page=page))
        if (
            not cleaned.cells
            or len(cleaned.cells) <= plant.column
            or cleaned.cells[plant.column] != plant.after
        ):
            return None
        out = list(doc.lines)
        out[position] = (no, changed, page)
        return out
    return None


def run_plant(doc: Document, plant: Plant) -> Outcome:
    """Audit the document with one plant; compare its errors with the untouched document's."""
    lines = plant_line(doc, plant)
    if lines is None:
        return Outcome(plant, placed=False)
    result = audit_lines(lines, doc.source, doc.kind, doc.rules)
    before = doc.errors(doc.baseline)
    new = [f for f in result.findings if f.severity == ERROR and (f.check, f.line, f.column) not in before]
    return Outcome(
        plant,
        placed=True,
        at_line=any(f.line == plant.line for f in new),
        named=any(f.line == plant.line or (plant.line in f.suspects and len(f.suspects) <= 2) for f in new),
        caught=any(f.line == plant.line or plant.line in f.lines for f in new),
        new_errors=[(f.check, f.line) for f in new],
    )


_WORKER: dict[str, Document] = {}  # the document a pool process plants in


def _init(doc: Document) -> None:
    _WORKER["doc"] = doc


def _work(plant: Plant) -> Outcome:
    return run_plant(_WORKER["doc"], plant)


def measure(doc: Document, chosen: list[Plant], jobs: int = 1) -> list[Outcome]:
    """Every plant's outcome, in a pool of ``jobs`` processes."""
    if jobs <= 1 or len(chosen) < 20:
        return [run_plant(doc, p) for p in chosen]
    context = multiprocessing.get_context("fork")
    with context.Pool(jobs, initializer=_init, initargs=(doc,)) as pool:
        return pool.map(_work, chosen, chunksize=8)


@dataclass
class Figures:
    """One document's planted-error figures (a row of docs/audit.md's table)."""

    document: str
    format: str
    errors_untouched: int
    relations: int
    numbers_read: int
    checked: int
    vouched_cells: int
    pairs: int
    plants: int
    placed: int
    at_line: int
    named: int
    caught: int
    seconds: float
    misses: list[dict[str, object]]

    @property
    def at_line_rate(self) -> float:
        return self.at_line / self.placed if self.placed else 0.0

    @property
    def named_rate(self) -> float:
        return self.named / self.placed if self.placed else 0.0

    @property
    def caught_rate(self) -> float:
        return self.caught / self.placed if self.placed else 0.0


def figures(doc: Document, sample: int | None, seed: int, jobs: int) -> Figures:
    start = time.perf_counter()
    chosen = plants(doc, sample, seed)
    outcomes = measure(doc, chosen, jobs)
    placed = [o for o in outcomes if o.placed]
    pool = candidates(doc)
    misses = [
        {**asdict(o.plant), "new_errors": o.new_errors, "named": o.named, "caught": o.caught}
        for o in placed
        if not o.at_line
    ]
    return Figures(
        document=doc.name,
        format=doc.kind,
        errors_untouched=doc.baseline.errors,
        relations=doc.baseline.checked,
        numbers_read=doc.baseline.coverage.numbers if doc.baseline.coverage else 0,
        checked=len(doc.baseline.guards),
        vouched_cells=len({(c[0], c[1]) for c in pool}),
        pairs=len(pool),
        plants=len(chosen),
        placed=len(placed),
        at_line=sum(o.at_line for o in placed),
        named=sum(o.named for o in placed),
        caught=sum(o.caught for o in placed),
        seconds=time.perf_counter() - start,
        misses=misses,
    )


def documents(names: Iterable[str], rules: list[Rule]) -> list[Document]:
    """The seeds and the built documents named (``seeds``, ``built``)."""
    out = []
    wanted = set(names)
    if "seeds" in wanted:
        out += [Document.load(PUBLISHED / name, rules) for name in SEEDS]
    if "built" in wanted:
        exe = str(Path(sys.executable).with_name("esrp-report"))
        for sample in SAMPLES:
            manifest = ROOT / "samples" / f"{sample}.toml"
            if not manifest.exists():
                continue
            if sample == "vmax":  # every server's reports, as the figures in docs/audit.md were measured
                manifest = vmax_with_every_server(ROOT / "samples", BUILT / "vmax-all")
            target = BUILT / sample
            subprocess.run(
                [exe, "build", str(manifest), "-o", str(target), "--allow-fail"],
                check=False,
                capture_output=True,
            )
            for built in sorted(target.glob("*.html")) + sorted(target.glob("*.pdf")):
                if built.stem.endswith(("-audit", "-diagnostics")):
                    continue
                out.append(Document.load(built, rules, name=f"{sample} ({built.suffix[1:].upper()})"))
    return out


def markdown(rows: list[Figures]) -> str:
    head = (
        "| document | format | errors untouched | relations | numbers read | checked | vouched cells "
        "| (cell, digit) pairs | plants | at the line | at the line or one of two named "
        "| caught | seconds |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    body = "".join(
        f"| {r.document} | {r.format} | {r.errors_untouched} | {r.relations:,} | {r.numbers_read:,} "
        f"| {r.checked:,} | {r.vouched_cells:,} | {r.pairs:,} | {r.placed:,} "
        f"| {r.at_line_rate:.1%} | {r.named_rate:.1%} | {r.caught_rate:.1%} | {r.seconds:.0f} |\n"
        for r in rows
    )
    return head + body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sample", type=int, default=500, help="plants per document (default 500)")
    parser.add_argument("--all", action="store_true", help="plant every vouched-for digit")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-j", "--jobs", type=int, default=multiprocessing.cpu_count())
    parser.add_argument("--documents", default="seeds,built", help="seeds, built, or both (comma-separated)")
    parser.add_argument("--json", type=Path, help="write every figure and miss here")
    args = parser.parse_args(argv)
    rules = load_rules(None)
    rows = []
    for doc in documents(args.documents.split(","), rules):
        row = figures(doc, None if args.all else args.sample, args.seed, args.jobs)
        rows.append(row)
        print(
            f"{row.document}: {row.at_line}/{row.placed} at the line ({row.at_line_rate:.1%}), "
            f"{row.named} named ({row.named_rate:.1%}), "
            f"{row.caught} caught, {row.plants - row.placed} not placed, {row.seconds:.0f} s",
            flush=True,
        )
        by_check = Counter(str(m["new_errors"][:1]) for m in row.misses)
        for what, count in by_check.most_common(5):
            print(f"    {count} miss(es) with first new error {what}")
    print()
    print(markdown(rows))
    if args.json:
        args.json.write_text(
            json.dumps([{**asdict(r), "at_line_rate": r.at_line_rate} for r in rows], indent=1, default=str),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
