"""Figures a sizing study's tables state as products of others printed beside them (004): IOPS
planned = users x IOPS per mailbox, a database cache = users x cache per user, raw capacity =
drives x drive size, and each RAID capacity a whole number of drives. Found by the labels these
tables print, not by their place; the relations are ``audit/relations/sizing.py``'s."""

from __future__ import annotations

import re

from esrp_report.model import DocLine, DocNumber, PublishedDocument, StatedProduct

_RATE_LABEL = re.compile(r"^IOPS per (?:mailbox|user)\b", re.IGNORECASE)
_USERS_HEAD = re.compile(r"^([\d,]+) users\b", re.IGNORECASE)
_PLANNED = re.compile(r"^IOPS planned$", re.IGNORECASE)
_TABLE_TITLE = re.compile(r"^(?:\*\*)?(Table \d+)\b")
_DRIVES = re.compile(r"\((\d+) disk drives\)", re.IGNORECASE)
_SIZE = re.compile(r"^\s*(?P<n>[\d,]*\.?\d+)\s*(?P<unit>[KMGT]B)\b", re.IGNORECASE)
# Decimal units, as the study states them ("1 TB = 10^3 GB" in 004's Table 25; 6 MB x 5,000
# users is printed 30 GB in its Tables 14 and 19).
_UNITS = {"KB": 1e-3, "MB": 1.0, "GB": 1e3, "TB": 1e6}


def products(doc: PublishedDocument) -> None:
    """Every stated product of ``doc``'s sizing tables, into ``doc.products``."""
    _iops_planned(doc)
    _cache_per_user(doc)
    _capacity(doc)


def _size(text: str, line: int, column: int) -> tuple[DocNumber, float] | None:
    """A printed size ("6MB", "14.4 TB", "600 GB, XV 3.5\"") and its unit in MB."""
    match = _SIZE.match(text)
    if match is None:
        return None
    figure = DocNumber.parse(match.group("n"))
    if figure is None:
        return None
    return figure.at(line, column), _UNITS[match.group("unit").upper()]


def _iops_planned(doc: PublishedDocument) -> None:
    """A trend table's "IOPS planned" under a column headed "N users": N x the IOPS per mailbox
    the nearest table above it states (one rate in its cell, not a list of them)."""
    rates: list[tuple[int, DocNumber]] = []
    heads: dict[int, DocLine] = {}
    for line in doc.lines:
        cells = line.cells
        if not cells or len(cells) < 2:
            continue
        if _RATE_LABEL.match(cells[0].strip()):
            column, text = next(((i, c) for i, c in enumerate(cells[1:], 1) if c.strip()), (0, ""))
            rate = DocNumber.leading(text)
            if rate is not None and text.upper().count("IOPS") == 1:
                rates.append((line.no, rate.at(line.no, column)))
        if all(_USERS_HEAD.match(c.strip()) for c in cells[1:]):
            heads[line.no] = line
    for table in doc.trend_tables:
        rate = next((r for no, r in reversed(rates) if no < table.first_line), None)
        for label, line_no, figures in table.rows:
            if rate is None or not _PLANNED.match(label.strip()):
                continue
            head = next(
                (heads[no] for no in range(line_no - 1, table.first_line - 4, -1) if no in heads), None
            )
            if head is None or head.cells is None:
                continue
            for column, cell in enumerate(figures, start=1):
                if column >= len(head.cells):
                    break
                users = DocNumber.leading(head.cells[column])
                if users is None:
                    continue
                doc.products.append(
                    StatedProduct(
                        "iops_per_user",
                        f"{table.title.split(' ', 2)[0]} {table.title.split(' ', 2)[1]}, IOPS planned for "
                        f"{users.text} users",
                        table.title,
                        cell.absolute,
                        (users.at(head.no, column),),
                        rate,
                        group=f"{table.title}|{table.first_line}",
                    )
                )


def _cache_per_user(doc: PublishedDocument) -> None:
    """Tables of users, cache per user and the database cache they need (004's Tables 14 and
    19): each row's cache = its users x the cache per user printed on it or on a row above."""
    title = ""
    columns: tuple[int, int, int] | None = None
    per_user: tuple[DocNumber, float] | None = None
    for line in doc.lines:
        if _TABLE_TITLE.match(line.text):
            title, columns, per_user = line.text.strip("*"), None, None
        cells = line.cells
        if not cells:
            if line.text:
                columns = None
            continue
        lowered = [c.strip().casefold() for c in cells]
        if any("cache per user" in c for c in lowered):
            users_col = next((i for i, c in enumerate(lowered) if "users" in c), None)
            rate_col = next(i for i, c in enumerate(lowered) if "cache per user" in c)
            cache_col = next((i for i, c in enumerate(lowered) if "cache" in c and i != rate_col), None)
            columns = None if users_col is None or cache_col is None else (users_col, rate_col, cache_col)
            per_user = None
            continue
        if columns is None or max(columns) >= len(cells):
            continue
        users_at, rate_at, cache_at = columns
        users = DocNumber.leading(cells[users_at])
        rate = _size(cells[rate_at], line.no, rate_at)
        per_user = rate or per_user
        cache = _size(cells[cache_at], line.no, cache_at)
        if users is None or per_user is None or cache is None:
            continue
        doc.products.append(
            StatedProduct(
                "cache_per_user",
                f"{title.split(' ', 2)[0]} {title.split(' ', 2)[1]}, database cache for {users.text} users",
                title,
                cache[0],
                (users.at(line.no, users_at),),
                per_user[0],
                scale=per_user[1] / cache[1],
                group=title,
            )
        )


def _capacity(doc: PublishedDocument) -> None:
    """A table of drive sizes and capacities (004's Table 25): raw = the family's drives x the
    drive size; each "Capacity RAID n" a whole number of drives, the same for every size of the
    family."""
    title = ""
    header: list[str] | None = None
    drives: DocNumber | None = None
    family = ""
    for line in doc.lines:
        if _TABLE_TITLE.match(line.text):
            title, header = line.text.strip("*"), None
        cells = line.cells
        if not cells:
            if line.text:
                header = None
            continue
        lowered = [c.strip().casefold() for c in cells]
        if "capacity raw" in lowered and any("drive size" in c for c in lowered):
            header, drives, family = lowered, None, ""
            continue
        if header is None or len(cells) != len(header):
            continue
        count = _DRIVES.search(cells[0])
        if count is not None:
            figure = DocNumber.parse(count.group(1))
            drives = figure.at(line.no, 0) if figure is not None else None
            family = cells[0][: count.start()].strip()
        size_at = next(i for i, c in enumerate(header) if "drive size" in c)
        size = _size(cells[size_at], line.no, size_at)
        if drives is None or size is None:
            continue
        name = f"{title.split(' ', 2)[0]} {title.split(' ', 2)[1]}, {family} {cells[size_at].strip()}"
        for column, head in enumerate(header):
            if not head.startswith("capacity "):
                continue
            capacity = _size(cells[column], line.no, column)
            if capacity is None:
                continue
            raw = head == "capacity raw"
            doc.products.append(
                StatedProduct(
                    "raw_capacity" if raw else "raid_capacity",
                    f"{name}: {cells_title(head)}",
                    title,
                    capacity[0],
                    (drives, size[0]) if raw else (size[0],),
                    scale=size[1] / capacity[1],
                    group="" if raw else f"{title}|{family}|{head}",
                    whole=not raw,
                )
            )


def cells_title(head: str) -> str:
    """A header as a finding names it: "capacity raid 10" -> "Capacity RAID 10"."""
    return head.capitalize().replace("raid", "RAID")
