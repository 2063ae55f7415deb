"""A sizing study's stated products (``ingest/documents/products.py``): IOPS planned = users x
IOPS per mailbox, a database cache = users x cache per user, raw capacity = drives x drive size,
a RAID capacity = a whole number of data drives x drive size, the same number for every drive
size of a family.

Evidence, 004: IOPS planned holds in 18 of 18 columns headed with users (Tables 15, 16, 20, 23,
0.18 IOPS per mailbox); the cache in 10 of 10 rows (Tables 14 and 19, 6 MB per user, decimal
units); raw capacity in 11 of 11 rows and the RAID capacities in 44 of 44 cells of Table 25
(PS6100: 11, 18, 21 and 19 data drives for RAID 10, 50, 5 and 6; PS4100: 5, 8, 10, 9). 000, 001
and 002 state none of these.

Users, drives and a drive's size are exact (counts, nominal sizes); the shared rate is printed
rounded ("0.18"), and so is every result. A result is held to what its rate can be, narrowed by
the other results of its group when at least two of them agree on it (a careful reader's check:
1350 IOPS for 7,500 users and 900 for 5,000 say the rate, to more digits than its "0.18"), so a
slip is found at the one result that alone disagrees, never at the ones it would move.
"""

from __future__ import annotations

import math
from collections import defaultdict

from esrp_report.analysis.intervals import Iv
from esrp_report.audit.context import Context, Term
from esrp_report.audit.result import cell_key
from esrp_report.model import StatedProduct

_DERIVATIONS = {
    "iops_per_user": "users x IOPS per mailbox",
    "cache_per_user": "users x cache per user",
    "raw_capacity": "drives x drive size",
    "raid_capacity": "data drives x drive size, as many data drives as the family's other sizes have",
}


def products(ctx: Context) -> None:
    """sizing.<kind>: each stated product against its factors and its group."""
    groups: dict[tuple[object, ...], list[StatedProduct]] = defaultdict(list)
    for product in ctx.doc.products:
        rate = cell_key(product.rate) if product.rate is not None else None
        groups[(product.kind, product.group, rate)].append(product)
    for members in groups.values():
        for product in members:
            others = [q for q in members if q is not product] if product.group else []
            shared = _shared(product, others)
            if shared is None:
                continue
            exact = math.prod(c.value for c in product.counts) * product.scale
            expected = shared.scale(exact)
            terms: list[Term] = []
            if product.rate is not None:
                terms.append((product.rate, exact))
                terms += [(c, shared.mid * exact / c.value) for c in product.counts if c.value]
            ctx.relation(
                f"sizing.{product.kind}",
                product.result,
                expected,
                what=product.what,
                derivation=_derivation(product, shared, others),
                section="Sizing",
                table=product.table,
                terms=terms,
            )


def _implied(product: StatedProduct) -> Iv | None:
    """The shared factor one result implies: its printed interval over its exact factors."""
    exact = math.prod(c.value for c in product.counts) * product.scale
    return None if exact <= 0 else Iv.of(product.result).scale(1 / exact)


def _shared(product: StatedProduct, others: list[StatedProduct]) -> Iv | None:
    """What the shared factor can be for ``product``: its printed rate (1 when there is none and
    the product is whole, as raw capacity is), narrowed by the others of its group when at least
    two of them agree; None when nothing bounds it."""
    if product.rate is not None:
        own: Iv | None = Iv.of(product.rate)
    elif product.whole:
        own = None
    else:
        own = Iv(1.0, 1.0)
    implied = [iv for iv in (_implied(q) for q in others) if iv is not None]
    narrowed = own
    if len(implied) >= 2:
        lo = max([iv.lo for iv in implied] + ([own.lo] if own else []))
        hi = min([iv.hi for iv in implied] + ([own.hi] if own else []))
        if lo <= hi:
            narrowed = Iv(lo, hi)
    if narrowed is None:
        return None
    if product.whole:
        lo, hi = math.ceil(narrowed.lo - 1e-9), math.floor(narrowed.hi + 1e-9)
        if lo > hi:
            return None  # the others agree on no whole number: nothing to hold this one to
        narrowed = Iv(float(lo), float(hi))
    return narrowed


def _derivation(product: StatedProduct, shared: Iv, others: list[StatedProduct]) -> str:
    counts = " x ".join(c.text for c in product.counts)
    how = _DERIVATIONS[product.kind]
    if product.rate is not None:
        return f"{how}: {counts} x {product.rate.text} (line {product.rate.line})"
    if product.whole:
        return f"{how}: {shared.lo:g} x {counts}, as {len(others)} other sizes of the family have"
    return f"{how}: {counts}"
