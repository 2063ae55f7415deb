"""Trend tables and test series of a sizing study (004)."""

from __future__ import annotations

from esrp_report import model as m
from esrp_report.analysis.intervals import Iv
from esrp_report.audit.context import Context, Term
from esrp_report.model.findings import ERROR


def percentages(ctx: Context) -> None:
    """trend.percentage: each percentage against its bracketed value / the baseline column's."""
    for table in ctx.doc.trend_tables:
        base = (
            next(
                (
                    i
                    for i in range(len(table.rows[0][2]))
                    if all(len(c) > i and c[i].percent.value == 100 for _l, _n, c in table.rows)
                ),
                0,
            )
            if table.rows
            else 0
        )
        baseline = table.columns[base] if base < len(table.columns) else "baseline"
        for label, line, cells in table.rows:
            if len(cells) <= base:
                continue
            reference = cells[base].absolute
            for index, cell in enumerate(cells):
                ratio = _percentage(cell.absolute, reference)
                # The bracketed figures it is worked out from, each with its coefficient (the
                # percentage's change per unit of it); the baseline's own is 100 % whatever it is.
                terms: list[Term] = (
                    [
                        (cell.absolute, 100 / reference.value),
                        (reference, -100 * cell.absolute.value / reference.value**2),
                    ]
                    if index != base and reference.value
                    else []
                )
                column = table.columns[index] if index < len(table.columns) else f"column {index + 1}"
                ctx.relation(
                    "trend.percentage",
                    cell.percent,
                    ratio,
                    what=f"{table.title.split(' Test results')[0]}, {label}, {column}",
                    derivation=(
                        f"{cell.absolute.text} / {reference.text} (the {baseline} column), "
                        "with both bracketed values taken as rounded"
                    ),
                    table=table.title,
                    row=label,
                    column=column,
                    line=line,
                    terms=terms,
                )


# The top of a percentage over a baseline printed as zero: beyond any printed figure, but finite, so
# that the relation's slack and the changes that would mend it stay numbers.
_UNBOUNDED_PERCENT = 1e9


def _percentage(absolute: m.DocNumber, reference: m.DocNumber) -> Iv:
    """What 100 x absolute / reference may be, both taken as rounded. A baseline printed as zero
    (0.0 ms) allows no finite ratio: the figures here (latencies, rates, users) are not negative, so
    the percentage is at least absolute / the largest the baseline may be, or anything when the
    figure may be zero too."""
    ref = Iv.of(reference)
    if ref.lo > 0:
        return (Iv.of(absolute) / ref).scale(100)
    lowest = 100 * max(Iv.of(absolute).lo, 0.0) / ref.hi if ref.hi > 0 else 0.0
    return Iv(lowest, max(lowest, 1.0) * _UNBOUNDED_PERCENT)


def series(ctx: Context) -> None:
    """series.users: a test series ("#1") has the same user counts in every table of its section."""
    groups: dict[tuple[str, str], list[m.SeriesUsers]] = {}
    for entry in ctx.doc.series:
        groups.setdefault((entry.section, entry.label), []).append(entry)
    for (section, label), entries in groups.items():
        if len(entries) < 3:
            continue
        ctx.cover(None, None)
        votes: dict[tuple[int, ...], int] = {}
        for entry in entries:
            votes[entry.users] = votes.get(entry.users, 0) + 1
        majority, count = max(votes.items(), key=lambda kv: kv[1])
        if count * 2 <= len(entries):
            continue
        for entry in entries:
            if entry.users == majority:
                continue
            swapped = next(
                (
                    other
                    for (sec, other), others in groups.items()
                    if sec == section and other != label and any(o.users == entry.users for o in others)
                ),
                None,
            )
            users = " / ".join(f"{u:,}" for u in entry.users)
            hint = f"; those are series {swapped}'s" if swapped else ""
            ctx.add(
                ERROR,
                "series.users",
                f"{entry.table.split(' ', 2)[0]} {entry.table.split(' ', 2)[1]} gives series {label} "
                f"{users} users, but {count} other tables of section {section} give "
                f"{' / '.join(f'{u:,}' for u in majority)}{hint}",
                section=f"Section {section}",
                table=entry.table,
                row=label,
                line=entry.line,
                printed=users,
                expected=" / ".join(f"{u:,}" for u in majority),
                derivation="the same series in the other tables of the section",
            )
