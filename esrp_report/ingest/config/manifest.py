"""The solution manifest (TOML): what the vendor states about a tested design.

Every key is checked: an unknown key, a wrong type or a path leaving the manifest's folder is an
error naming the file, the TOML table and the key. Numbers the document can compute (targets,
databases per host, mailboxes per database, capacity percentages) are not accepted here. A
``[sizing]`` table (docs/sizing.md) gives the profile's mailboxes, IOPS per mailbox, mailbox size
and copies; a stated profile value that disagrees with it is reported, never silently chosen.
See docs/manifest.md for an annotated example.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Literal, TypeVar

from esrp_report.files.safe import Tree, is_plain_name, kind_problem, read_regular_file, read_toml_file
from esrp_report.ingest.config.images import MAX_IMAGES_BYTES, ImageError, read_image
from esrp_report.ingest.config.sizing_spec import load_sizing_spec, spec_from_table
from esrp_report.model import (
    Branding,
    DocumentInfo,
    KeyValueTable,
    Manifest,
    ManifestServer,
    UserProfile,
    VendorFigure,
    VendorSection,
)
from esrp_report.model.errors import FileTooLargeError, InputError
from esrp_report.model.sections import PARTS_BY_KEY, SECTION_KEYS, SECTION_SLOTS, Form, form_for
from esrp_report.model.server_facts import fact_rows, fact_specs
from esrp_report.model.sizing import SIZED_PROFILE_KEYS, SizingSpec

T = TypeVar("T")
# The facts `build` checks against the evidence outside [[servers]] and [tables]: a `differs` key
# of [document] or [profile] may name these (analysis/stated.py compares them).
DIFFERS_KEYS = {
    "document": ("exchange_version", "esrp_version"),
    "profile": ("active_mailboxes_per_server", "tested_iops_per_mailbox", "target_iops"),
}
FACT_TYPES: dict[str, type] = {"count": int, "gb": float}
CONVENTION_KEYS = {
    "io_decimals": int,
    "latency_decimals": int,
    "backup_decimals": int,
    "replay_decimals": int,
    "servers_per_table": int,
    "summary": str,
    "thousands": bool,
    "first_row": str,
}
TABLE_TITLES = {
    "hardware": "Storage hardware",
    "software": "Storage software",
    "disks": "Storage disk configuration (database and log disks)",
}


class ManifestError(InputError):
    """A solution manifest that cannot be read, or a key of it that is unknown, missing, of the wrong
    type or out of range."""


class _Reader:
    def __init__(self, path: Path, *, links_allowed: bool = False) -> None:
        self.path = path
        self.tree = Tree(path.parent.resolve(), links_allowed)

    def fail(self, where: str, message: str, expected: str | None = None) -> ManifestError:
        return ManifestError(self.path, message, location=where, expected=expected)

    def table(self, data: dict[str, Any], name: str, required: bool = True) -> dict[str, Any]:
        value = data.get(name)
        if value is None:
            if required:
                raise self.fail(f"[{name}]", f"missing table [{name}]")
            return {}
        if not isinstance(value, dict):
            raise self.fail(f"[{name}]", f"{name} must be a table", expected=f"[{name}] with keys")
        return value

    def known(self, data: dict[str, Any], where: str, allowed: set[str] | tuple[str, ...]) -> None:
        for key in data:
            if key not in allowed:
                raise self.fail(
                    f"{where} {key}",
                    f"unknown key {key!r}",
                    expected="one of " + ", ".join(sorted(allowed)),
                )

    def get(
        self,
        data: dict[str, Any],
        where: str,
        key: str,
        kind: type[T],
        *,
        default: T | None = None,
        check: Callable[[T], bool] | None = None,
        expected: str = "",
    ) -> T:
        value = data.get(key, default)
        if value is None:
            raise self.fail(f"{where} {key}", f"missing key {key!r}", expected=expected or kind.__name__)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            try:
                value = float(value)
            except OverflowError:  # an integer past 1.8e308
                raise self.fail(
                    f"{where} {key}",
                    f"{key} out of range (a number past 1.8e308)",
                    expected=expected or kind.__name__,
                ) from None
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail(
                f"{where} {key}",
                f"{key} has the wrong type ({type(value).__name__})",
                expected=expected or kind.__name__,
            )
        if check is not None and not check(value):
            raise self.fail(f"{where} {key}", f"{key} out of range: {value!r}", expected=expected)
        return value

    def optional(self, data: dict[str, Any], where: str, key: str, kind: type[T], **kw: Any) -> T | None:
        if data.get(key) is None:
            return None
        return self.get(data, where, key, kind, **kw)

    def local_path(self, where: str, text: str, kind: Literal["file", "folder"] = "file") -> str:
        """A relative path that stays inside the manifest's folder (no absolute paths, no .., no link
        out) and names an existing regular file, or a folder with ``kind="folder"``. The kind is
        judged with ``os.stat`` before anything opens it: a FIFO would block the open forever."""
        for flavour in (PurePosixPath(text), PureWindowsPath(text)):
            if flavour.is_absolute() or flavour.anchor or ".." in flavour.parts:
                raise self.fail(
                    where,
                    f"path {text!r} leaves the manifest's folder",
                    expected="a path relative to the manifest, without '..'",
                )
        folder = self.path.parent.resolve()
        if not (folder / text).resolve().is_relative_to(folder):  # a symbolic link out of the folder
            raise self.fail(
                where,
                f"path {text!r} leaves the manifest's folder through a symbolic link",
                expected="a file or folder inside the manifest's folder",
            )
        problem = kind_problem(folder / text, folder=kind == "folder")
        if problem is not None:
            wanted = "a folder" if kind == "folder" else "a regular file"
            raise self.fail(
                where,
                f"cannot read {folder / text}: it {problem}",
                expected=f"{wanted} inside the manifest's folder",
            )
        return text

    def differs(
        self, data: dict[str, Any], where: str, allowed: set[str] | tuple[str, ...]
    ) -> dict[str, str]:
        """``differs = { key = "why" }``: why a stated fact differs from the evidence (keys: ``allowed``)."""
        value = data.get("differs")
        if value is None:
            return {}
        expected = 'differs = { key = "why the manifest differs from the evidence" }'
        if not isinstance(value, dict):
            raise self.fail(f"{where} differs", "differs must be a table", expected=expected)
        self.known(value, f"{where} differs", allowed)
        for key, reason in value.items():
            if not isinstance(reason, str) or not reason.strip():
                raise self.fail(f"{where} differs {key}", "the reason must be text", expected=expected)
        return {k: v.strip() for k, v in value.items()}

    def template_name(self, where: str, text: str) -> str:
        """A template folder's name under the project's templates/, nothing more: joined to that
        folder unchecked, ``/`` would make every file on the machine a template."""
        if not is_plain_name(text):
            raise self.fail(
                where,
                f"template name {text!r} is not a plain folder name",
                expected="a name such as 'esrp', without '/', '\\', '..' or a drive",
            )
        return text


def _fact(r: _Reader, item: dict[str, Any], where: str, key: str) -> str | int | float:
    """A fact a [[servers]] table states (model/server_facts.toml): a whole number, a size or text."""
    kind = FACT_TYPES.get(fact_specs()[key].kind, str)
    if kind is str:
        return r.get(
            item, where, key, str, check=lambda v: bool(v.strip()), expected="non-empty text"
        ).strip()
    number: int | float = r.get(
        item, where, key, kind, check=lambda v: v >= 0, expected=f"a {kind.__name__} >= 0"
    )
    return number


def _positive(value: float) -> bool:
    return value > 0


_TOP_LEVEL_KEYS = (
    "document",
    "profile",
    "servers",
    "tables",
    "sections",
    "convention",
    "branding",
    "template",
    "capacity",
    "rules",
    "sizing",
    "section",
    "figure",
    "appendix",
)


def read_manifest(path: Path, *, allow_linked_files: bool = False) -> Manifest:
    """Read a solution manifest (TOML). Raises ManifestError, naming the key and what was expected, for a file
    that is not UTF-8 TOML or a key that is missing, unknown or of the wrong type.

    ``allow_linked_files``: the files the manifest names may be hard links or on another device
    (``build --allow-linked-files``; see files/safe.py).

    Each table is read by a step of its own, in the order below: when a manifest has several
    mistakes, the first one met in that order is the one reported."""
    data = read_toml_file(path, what="manifest", error=ManifestError)
    r = _Reader(path, links_allowed=allow_linked_files)
    r.known(data, "top level", _TOP_LEVEL_KEYS)
    doc = r.table(data, "document")
    info, convention = _read_document(r, doc)
    sizing_spec = _read_sizing(r, data)
    prof = r.table(data, "profile")
    profile, stated = _read_profile(r, prof, sized=sizing_spec is not None)
    servers = _read_servers(r, data)
    tables = _read_tables(r, data)
    form = form_for(info.esrp_version, info.exchange_version)
    sections = _read_sections(r, data, form)
    overrides = _read_convention_overrides(r, data)
    branding = _read_branding(r, data)
    tpl = r.table(data, "template", required=False)
    r.known(tpl, "[template]", {"name", "override"})
    override = r.optional(tpl, "[template]", "override", str)
    capacity = r.table(data, "capacity", required=False)
    r.known(capacity, "[capacity]", {"database_formatted_gb"})
    rules = r.table(data, "rules", required=False)
    r.known(rules, "[rules]", {"file", "loosen"})
    rules_file = r.optional(rules, "[rules]", "file", str)
    rules_loosen = r.optional(rules, "[rules]", "loosen", str)
    vendor_sections, figures = _read_vendor_content(r, data, sections, form)
    appendix_servers = _read_appendix(r, data, servers)
    return Manifest(
        path=str(path),
        document=info,
        profile=profile,
        servers=servers,
        tables=tables,
        sections=sections,
        convention=convention,
        convention_overrides=overrides,
        branding=branding,
        template=r.template_name("[template] name", r.get(tpl, "[template]", "name", str, default="esrp")),
        template_override=r.local_path("[template] override", override, kind="folder") if override else None,
        database_capacity_gb=r.optional(
            capacity, "[capacity]", "database_formatted_gb", float, check=_positive
        ),
        rules_file=r.local_path("[rules] file", rules_file) if rules_file else None,
        rules_loosen=rules_loosen,
        sizing_spec=sizing_spec,
        stated_profile=stated,
        differs={
            name: r.differs(table, f"[{name}]", keys)
            for name, table, keys in (
                ("document", doc, DIFFERS_KEYS["document"]),
                ("profile", prof, DIFFERS_KEYS["profile"]),
            )
        },
        vendor_sections=vendor_sections,
        linked_files_allowed=allow_linked_files,
        figures=figures,
        appendix_servers=appendix_servers,
    )


def _read_document(r: _Reader, doc: dict[str, Any]) -> tuple[DocumentInfo, str]:
    """[document]: what the document says of itself, and the name of its convention."""
    r.known(doc, "[document]", set(DocumentInfo.__dataclass_fields__) | {"convention", "differs"})
    text = {
        k: r.get(doc, "[document]", k, str, default="")
        for k in DocumentInfo.__dataclass_fields__
        if k != "stamp"
    }
    for k in ("vendor", "product", "title"):
        if not text[k].strip():
            raise r.fail(f"[document] {k}", f"missing key {k!r}", expected="non-empty text")
    stamp = r.get(doc, "[document]", "stamp", bool) if "stamp" in doc else None
    info = DocumentInfo(**text, stamp=stamp)
    return info, r.get(doc, "[document]", "convention", str, default="esrp-" + info.esrp_version)


def _read_profile(r: _Reader, prof: dict[str, Any], *, sized: bool) -> tuple[UserProfile, dict[str, Any]]:
    """[profile], and the keys it states that a [sizing] works out (``sized``): those are
    returned as stated, and the profile holds them, or 0, until the sizing is worked out."""
    r.known(prof, "[profile]", set(UserProfile.__dataclass_fields__) | {"differs"})
    w = "[profile]"
    stated = _stated_sized_profile(r, prof) if sized else {}
    # With a [sizing], these keys come from it (analysis.sizing.sized_manifest); until then they
    # hold what is stated, or 0 where nothing is.
    from_sizing = {key: stated.get(key, 0) for key in SIZED_PROFILE_KEYS} if sized else {}
    profile = UserProfile(
        mailboxes=int(from_sizing["mailboxes"])
        if "mailboxes" in from_sizing
        else r.get(prof, w, "mailboxes", int, check=_positive, expected="a positive integer"),
        iops_per_mailbox=from_sizing["iops_per_mailbox"]
        if "iops_per_mailbox" in from_sizing
        else r.get(prof, w, "iops_per_mailbox", float, check=_positive, expected="IOPS > 0"),
        headroom_percent=r.get(
            prof,
            w,
            "headroom_percent",
            float,
            default=0.0,
            check=lambda v: 0 <= v <= 1000,
            expected="percent, 0-1000",
        ),
        tested_iops_per_mailbox=r.optional(prof, w, "tested_iops_per_mailbox", float, check=_positive),
        mailbox_size_gb=from_sizing["mailbox_size_gb"]
        if "mailbox_size_gb" in from_sizing
        else r.optional(prof, w, "mailbox_size_gb", float, check=_positive),
        dags=r.get(prof, w, "dags", int, default=1, check=lambda v: v >= 0),
        servers_per_dag=r.get(prof, w, "servers_per_dag", int, default=1, check=_positive),
        copies_per_database=int(from_sizing["copies_per_database"])
        if "copies_per_database" in from_sizing
        else r.get(prof, w, "copies_per_database", int, default=1, check=_positive),
        active_mailboxes_per_server=r.optional(prof, w, "active_mailboxes_per_server", int, check=_positive),
    )
    return profile, stated


def _read_servers(r: _Reader, data: dict[str, Any]) -> list[ManifestServer]:
    """[[servers]]: each server's label, results folders and the facts it states."""
    servers_raw = data.get("servers")
    if not isinstance(servers_raw, list) or not servers_raw:
        raise r.fail("[[servers]]", "no servers", expected="at least one [[servers]] table with results")
    servers: list[ManifestServer] = []
    for i, item in enumerate(servers_raw, start=1):
        where = f"[[servers]] #{i}"
        if not isinstance(item, dict):
            raise r.fail(where, "each server must be a table", expected="label and results")
        r.known(item, where, {"label", "results", "differs", *fact_specs()})
        results = item.get("results")
        if isinstance(results, str):
            results = [results]
        if not isinstance(results, list) or not results or not all(isinstance(x, str) for x in results):
            raise r.fail(f"{where} results", "results must name folders", expected="a folder or a list")
        label = r.get(item, where, "label", str, default=f"Server {i}")
        # Results folders are what the manifest names, so they may be anywhere; only files the
        # document embeds (logo, templates, rules) must stay in the manifest's folder.
        facts = {key: _fact(r, item, where, key) for key in fact_specs() if key in item}
        servers.append(ManifestServer(label, list(results), facts, r.differs(item, where, tuple(facts))))
    return servers


def _read_tables(r: _Reader, data: dict[str, Any]) -> list[KeyValueTable]:
    """[tables.*]: the two-column tables of the tested deployment, in manifest order."""
    tables: list[KeyValueTable] = []
    for key, table in r.table(data, "tables", required=False).items():
        where = f"[tables.{key}]"
        if not isinstance(table, dict):
            raise r.fail(where, "must be a table", expected="title and rows")
        r.known(table, where, {"title", "rows", "differs"})
        rows = table.get("rows", [])
        if not isinstance(rows, list) or not all(
            isinstance(row, list) and len(row) == 2 and all(isinstance(c, str) for c in row) for row in rows
        ):
            raise r.fail(
                f"{where} rows",
                "rows must be [item, description] pairs of text",
                expected='[["Item", "Description"], ...]',
            )
        title = r.get(
            table, where, "title", str, default=TABLE_TITLES.get(key, key.replace("_", " ").title())
        )
        checked_rows = tuple(a for a, _ in rows if a in fact_rows())
        tables.append(
            KeyValueTable(key, title, [(a, b) for a, b in rows], r.differs(table, where, checked_rows))
        )
    return tables


def _read_sections(r: _Reader, data: dict[str, Any], form: Form) -> dict[str, str]:
    """[sections]: the Markdown of the document's parts the vendor writes (model/sections.toml),
    those the manifest's form prints."""
    sections_raw = r.table(data, "sections", required=False)
    for key in sections_raw:
        if key in SECTION_KEYS and key not in form.section_keys:
            printed_in = ", ".join(PARTS_BY_KEY[key].forms)
            raise r.fail(
                f"[sections] {key}",
                f"the ESRP {form.esrp_version} form has no {key!r} section (the ESRP {printed_in} form has)",
                expected="one of " + ", ".join(form.section_keys),
            )
    r.known(sections_raw, "[sections]", form.section_keys)
    return {k: r.get(sections_raw, "[sections]", k, str) for k in sections_raw}


def _read_convention_overrides(r: _Reader, data: dict[str, Any]) -> dict[str, Any]:
    """[convention]: the keys of the document's convention the manifest sets itself."""
    overrides = r.table(data, "convention", required=False)
    r.known(overrides, "[convention]", set(CONVENTION_KEYS))
    return {k: r.get(overrides, "[convention]", k, CONVENTION_KEYS[k]) for k in overrides}


def _read_branding(r: _Reader, data: dict[str, Any]) -> Branding:
    """[branding]: the logo (a checked image in the manifest's folder), colours and page size."""
    brand = r.table(data, "branding", required=False)
    r.known(brand, "[branding]", set(Branding.__dataclass_fields__))
    logo = r.optional(brand, "[branding]", "logo", str)
    if logo:
        _check_logo(r, r.local_path("[branding] logo", logo))
    return Branding(
        logo=logo,
        primary_colour=r.get(
            brand,
            "[branding]",
            "primary_colour",
            str,
            default="#1f4e79",
            check=_is_colour,
            expected="#rrggbb",
        ),
        accent_colour=r.get(
            brand, "[branding]", "accent_colour", str, default="#c00000", check=_is_colour, expected="#rrggbb"
        ),
        page_size=r.get(
            brand,
            "[branding]",
            "page_size",
            str,
            default="A4",
            check=lambda v: v in ("A4", "Letter"),
            expected="A4 or Letter",
        ),
    )


# An id of a vendor section or figure: the document's anchors are made from it.
_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
MAX_SECTION_FILE_BYTES = 1024 * 1024
# Sections a figure may be placed in besides the vendor's own and the filled [sections] keys.
FIGURE_HOSTS = ("tested_deployment", "results")


def _slug(title: str) -> str:
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "-".join(words)[:64].strip("-")


def _read_vendor_content(
    r: _Reader, data: dict[str, Any], filled: dict[str, str], form: Form
) -> tuple[list[VendorSection], list[VendorFigure]]:
    """[[section]] (the vendor's own sections, in any order) and [[figure]] (images placed in a
    section), with each section's own ``figures``. Every section id, ``after`` and figure
    ``section`` is checked against what the document has: an unknown one is an error naming it."""
    raw_sections = data.get("section", [])
    if not isinstance(raw_sections, list) or not all(isinstance(x, dict) for x in raw_sections):
        raise r.fail("[[section]]", "section must be an array of tables", expected="[[section]] tables")
    raw_figures = data.get("figure", [])
    if not isinstance(raw_figures, list) or not all(isinstance(x, dict) for x in raw_figures):
        raise r.fail("[[figure]]", "figure must be an array of tables", expected="[[figure]] tables")

    sections: list[VendorSection] = []
    pending: list[tuple[str, dict[str, Any], str]] = []  # (where, figure table, section id)
    ids: set[str] = set()
    # The first vendor section goes before "Tested deployment": after the part ahead of it.
    parts = list(form.parts)
    previous = parts[parts.index(PARTS_BY_KEY["tested_deployment"]) - 1].key
    for i, item in enumerate(raw_sections, start=1):
        where = f"[[section]] #{i}"
        r.known(item, where, {"id", "title", "body", "file", "after", "figures"})
        title = r.get(item, where, "title", str, check=lambda v: bool(v.strip()), expected="non-empty text")
        key = _section_id(r, where, item, title, ids)
        body = r.optional(item, where, "body", str)
        file = r.optional(item, where, "file", str)
        if (body is None) == (file is None):
            raise r.fail(
                where,
                "a section needs its text in exactly one of 'body' and 'file'",
                expected='body = "Markdown" or file = "text.md"',
            )
        if file is not None:
            body = _markdown_file(r, f"{where} file", file)
        after = r.get(item, where, "after", str, default=previous)
        sections.append(VendorSection(key, title.strip(), body or "", after))
        previous = key
        own = item.get("figures", [])
        if not isinstance(own, list) or not all(isinstance(x, dict) for x in own):
            raise r.fail(
                f"{where} figures", "figures must be a list of tables", expected="[{ file, caption }]"
            )
        pending += [(f"{where} figures #{j}", fig, key) for j, fig in enumerate(own, start=1)]
    for i, item in enumerate(raw_figures, start=1):
        where = f"[[figure]] #{i}"
        section = r.get(item, where, "section", str, expected="the section the figure goes in")
        pending.append((where, item, section))

    for i, placed in enumerate(sections, start=1):
        if placed.after not in form.slots and placed.after not in ids:
            raise r.fail(
                f"[[section]] #{i} after",
                f"no section {placed.after!r} to place {placed.key!r} after",
                expected="one of " + ", ".join((*form.slots, *sorted(ids))),
            )
    _refuse_cycles(r, sections)

    hosts = {*FIGURE_HOSTS, *filled, *ids}
    figures: list[VendorFigure] = []
    total = 0
    folder = r.path.parent.resolve()
    for where, item, section in pending:
        r.known(
            item,
            where,
            {"id", "file", "caption", "section"}
            if where.startswith("[[figure]]")
            else {"id", "file", "caption"},
        )
        if section not in hosts:
            raise r.fail(
                f"{where} section",
                f"no section {section!r} in the document to place the figure in",
                expected="one of " + ", ".join(sorted(hosts)) + " (a [sections] key must be filled)",
            )
        file = r.get(item, where, "file", str, expected="an image file inside the manifest's folder")
        caption = r.get(
            item, where, "caption", str, check=lambda v: bool(v.strip()), expected="non-empty text"
        )
        image_id = _figure_id(r, where, item, file, {f.anchor for f in figures})
        relative = r.local_path(f"{where} file", file)
        try:
            image = read_image(
                folder / relative, within=folder, what=f"{where} file", links_allowed=r.tree.links_allowed
            )
        except ImageError as exc:
            raise ManifestError(exc.path, exc.detail, location=exc.location, expected=exc.expected) from None
        total += len(image.data)
        if total > MAX_IMAGES_BYTES:
            raise r.fail(
                f"{where} file",
                f"the document's images pass {MAX_IMAGES_BYTES:,} bytes in all",
                expected="fewer or smaller images",
            )
        figures.append(
            VendorFigure(
                relative,
                caption.strip(),
                section,
                image.media_type,
                image.data,
                anchor=image_id,
                width_px=image.width_px,
                height_px=image.height_px,
            )
        )
    return sections, figures


def _plain_id(r: _Reader, where: str, key: str) -> None:
    """An id becomes an HTML id and a link target: plain lower-case names only."""
    if not _ID.fullmatch(key):
        raise r.fail(
            f"{where} id",
            f"id {key!r} is not a plain name",
            expected="lower-case letters, digits, '-' and '_'",
        )


def _section_id(r: _Reader, where: str, item: dict[str, Any], title: str, taken: set[str]) -> str:
    key = r.get(item, where, "id", str, default=_slug(title) or "section")
    _plain_id(r, where, key)
    if key in SECTION_SLOTS or key in SECTION_KEYS:
        raise r.fail(
            f"{where} id", f"id {key!r} is the name of a section of the document", expected="another id"
        )
    if key in taken:
        raise r.fail(
            f"{where} id", f"id {key!r} is another section's", expected="an id of its own (set 'id')"
        )
    taken.add(key)
    return key


def _figure_id(r: _Reader, where: str, item: dict[str, Any], file: str, taken: set[str]) -> str:
    stem = file.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
    key = r.get(item, where, "id", str, default=_slug(stem) or "figure")
    _plain_id(r, where, key)
    if key in taken:
        raise r.fail(f"{where} id", f"id {key!r} is another figure's", expected="an id of its own (set 'id')")
    return key


def _refuse_cycles(r: _Reader, sections: list[VendorSection]) -> None:
    """Sections placed after each other in a ring would be placed nowhere."""
    after = {s.key: s.after for s in sections}
    for i, section in enumerate(sections, start=1):
        seen = {section.key}
        at = section.after
        while at in after:
            if at in seen:
                raise r.fail(
                    f"[[section]] #{i} after",
                    f"sections placed after each other in a ring ({' -> '.join(sorted(seen))})",
                    expected="an 'after' chain that ends at a section of the document",
                )
            seen.add(at)
            at = after[at]


def _check_logo(r: _Reader, relative: str) -> None:
    """The logo is judged like a figure, now, before the evidence is read (the renderer judges it
    again when it embeds it: the file may have changed since)."""
    try:
        root, allowed = r.tree.root, r.tree.links_allowed
        read_image(root / relative, within=root, what="[branding] logo", links_allowed=allowed)
    except ImageError as exc:
        raise ManifestError(exc.path, exc.detail, location=exc.location, expected=exc.expected) from None


def _markdown_file(r: _Reader, where: str, file: str) -> str:
    """A section's Markdown from a .md file inside the manifest's folder."""
    if not file.lower().endswith((".md", ".markdown", ".txt")):
        raise r.fail(where, f"{file!r} is not a Markdown file", expected="a .md file")
    relative = r.local_path(where, file)
    folder = r.path.parent.resolve()
    path = folder / relative
    try:
        raw = read_regular_file(
            path, within=[folder], what=where, tree=r.tree, max_bytes=MAX_SECTION_FILE_BYTES
        )
    except FileTooLargeError:
        raise r.fail(
            where, f"{file!r} is beyond {MAX_SECTION_FILE_BYTES:,} bytes", expected="a shorter text"
        ) from None
    except InputError as exc:
        raise ManifestError(exc.path, exc.detail, expected=exc.expected) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ManifestError(path, "not UTF-8 text", location=f"byte {exc.start}", expected="UTF-8") from None


def _read_appendix(r: _Reader, data: dict[str, Any], servers: list[ManifestServer]) -> list[str] | None:
    """[appendix] servers: the labels of the servers whose test reports the appendix shows (None:
    every server). A label no [[servers]] table has is an error naming it."""
    table = r.table(data, "appendix", required=False)
    r.known(table, "[appendix]", {"servers"})
    if "servers" not in table:
        return None
    chosen = table["servers"]
    if chosen == "all":
        return None
    if not isinstance(chosen, list) or not chosen or not all(isinstance(x, str) for x in chosen):
        raise r.fail(
            "[appendix] servers",
            'servers must be "all" or a list of server labels',
            expected='"all" or ["Server 1", ...]',
        )
    labels = [s.label for s in servers]
    for name in chosen:
        if name not in labels:
            raise r.fail(
                "[appendix] servers",
                f"no server labelled {name!r}",
                expected="labels of [[servers]]: " + ", ".join(repr(x) for x in labels),
            )
    if len(set(chosen)) != len(chosen):
        raise r.fail("[appendix] servers", "a server is named twice", expected="each label once")
    # The appendix keeps the document's server order whatever order they are named in.
    return [label for label in labels if label in chosen]


def _read_sizing(r: _Reader, data: dict[str, Any]) -> SizingSpec | None:
    """[sizing]: inline keys, or ``spec`` (a sizing spec file beside the manifest) with inline
    keys overriding it."""
    if "sizing" not in data:
        return None
    table = r.table(data, "sizing")
    spec_file = r.optional(table, "[sizing]", "spec", str)
    base = (
        load_sizing_spec(r.path.parent / r.local_path("[sizing] spec", spec_file), tree=r.tree)
        if spec_file
        else None
    )
    return spec_from_table(table, source=r.path, where="[sizing]", base=base, other_keys={"spec"})


def _stated_sized_profile(r: _Reader, prof: dict[str, Any]) -> dict[str, float]:
    """The [profile] keys the sizing gives, as far as they are stated (each is optional then)."""
    stated: dict[str, float] = {}
    for key, kind in SIZED_PROFILE_KEYS.items():
        value = r.optional(prof, "[profile]", key, kind, check=_positive)
        if value is not None:
            stated[key] = value
    return stated


def _is_colour(text: str) -> bool:
    return len(text) == 7 and text[0] == "#" and all(c in "0123456789abcdefABCDEF" for c in text[1:])
