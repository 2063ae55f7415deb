r"""The text encoding of a perfmon CSV/TSV: the code page PDH wrote it in, found from its bytes.

PDH writes CSV/TSV in the machine's ANSI code page (relog can also write UTF-16). Only the header
line carries text that is not ASCII (the counter paths); the rows are time stamps and numbers.
So the encoding is decided on the header line, in this order:

1. a byte-order mark (UTF-8, UTF-16 LE/BE), or UTF-16 recognised by its NUL bytes;
2. a header that is ASCII (every code page reads it alike) or strict UTF-8;
3. otherwise each Windows ANSI code page PDH can write (:data:`ANSI_CODE_PAGES`) that decodes
   the line strictly is judged as perfmon text: the line must still be a PDH header of counter
   paths, and its non-ASCII words must look like words of one script and one alphabet (no
   symbol or control character inside a name, no word mixing scripts or letters of alphabets
   no language shares, no capital inside a lower-case word). Code pages that give the same
   text are one answer. Ties are broken by charset-normalizer's mess and coherence measures;
   a tie that remains is :class:`UndecidableEncoding`, never a silent guess.
"""

from __future__ import annotations

import codecs
import csv
import itertools
import re
import unicodedata
from dataclasses import dataclass

from esrp_report.ingest.perfmon.counter_path import parse_counter_path
from esrp_report.ingest.text import sniff_encoding

# Windows ANSI code pages (what CP_ACP can be on a Windows that writes perfmon logs).
ANSI_CODE_PAGES: dict[str, str] = {
    "cp1250": "Central European",
    "cp1251": "Cyrillic",
    "cp1252": "Western European",
    "cp1253": "Greek",
    "cp1254": "Turkish",
    "cp1255": "Hebrew",
    "cp1256": "Arabic",
    "cp1257": "Baltic",
    "cp1258": "Vietnamese",
    "cp874": "Thai",
    "cp932": "Japanese (Shift JIS)",
    "cp936": "Simplified Chinese (GBK)",
    "cp949": "Korean",
    "cp950": "Traditional Chinese (Big5)",
}
_MULTI_BYTE = {"cp932", "cp936", "cp949", "cp950"}

# Non-ASCII letters of the languages written in Latin code pages (lower case). A word whose
# accented letters no single alphabet holds is what a wrong code page makes of a right one
# (Polish "Pamięć" read as Windows-1252 is "Pamiêæ": ê is French, æ Danish).
_ALPHABETS = (
    "ąćęłńóśźż",  # Polish
    "áčďéěíňóřšťúůýž",  # Czech
    "áäčďéíĺľňóôŕšťúýž",  # Slovak
    "áéíóöőúüű",  # Hungarian
    "čćđšž",  # Croatian, Bosnian, Serbian (Latin), Slovene
    "ăâîșțşţ",  # Romanian
    "äöüß",  # German
    "àâæçéèêëîïôœùûüÿ",  # French
    "áéíñóúü",  # Spanish
    "áâãàçéêíóôõú",  # Portuguese
    "àèéìíîòóùú",  # Italian
    "àçèéíïòóúü",  # Catalan
    "éèëïöüĳ",  # Dutch
    "åäöé",  # Swedish
    "æøåé",  # Danish, Norwegian
    "äöåšž",  # Finnish
    "áðéíóúýþæö",  # Icelandic
    "çğıöşüâîû",  # Turkish
    "ąčęėįšųūž",  # Lithuanian
    "āčēģīķļņšūž",  # Latvian
    "äõöüšž",  # Estonian
    "çë",  # Albanian
    "ăâđêôơư",  # Vietnamese (tones as combining marks in Windows-1258)
)
# A word: a run of ASCII letters and of anything outside ASCII (marks included, so that a Thai
# vowel sign read after a Latin letter makes one word of two scripts).
_WORD = re.compile(r"[A-Za-z\u0080-\U0010ffff]+")
_SIGNATURE = re.compile(r'^\ufeff?\s*"?\s*\(PDH-(CSV|TSV)\b', re.IGNORECASE)
_MARGIN = 0.05  # charset-normalizer scores closer than this do not decide between two readings


@dataclass(frozen=True)
class TextEncoding:
    """How a perfmon CSV/TSV's bytes are decoded: ``codec`` (a Python codec name), ``name``
    (what ``inspect`` prints) and ``basis`` (why this one)."""

    codec: str
    name: str
    basis: str

    @property
    def utf8(self) -> bool:
        """Bytes that parse as they are (UTF-8, or ASCII)."""
        return self.codec in ("utf-8", "utf-8-sig")

    @property
    def ascii_rows(self) -> bool:
        """Is every ASCII byte itself in this encoding (so rows of digits read as they are)?"""
        return not self.codec.startswith("utf-16")


class UndecidableEncoding(ValueError):
    """No code page, or more than one, reads the header as perfmon text."""

    def __init__(self, message: str, candidates: list[str]) -> None:
        super().__init__(message)
        self.candidates = candidates


def given(name: str) -> TextEncoding:
    """The encoding the user named (``--encoding``): any codec Python knows, by any of its names
    ("cp1251", "windows-1251", "1251"); raises ValueError for an unknown one."""
    text = name.strip()
    if text.isdigit():
        text = f"cp{text}"
    try:
        info = codecs.lookup(text)
    except LookupError:
        raise ValueError(
            f"unknown encoding {name!r}: expected a code page such as cp1250, windows-1251, 932 or utf-8"
        ) from None
    # Python calls cp936 "gbk": a Windows code page keeps its Windows number, as detection names it.
    windows = {codecs.lookup(cp).name: cp for cp in ANSI_CODE_PAGES}
    codec = "utf-8-sig" if info.name == "utf-8" else windows.get(info.name, info.name)
    return TextEncoding(codec, _display(codec), "given with --encoding")


def detect(head: bytes, first_line: bytes) -> TextEncoding:
    """The encoding of a perfmon CSV/TSV from its first bytes (``head``) and its whole first
    line (``first_line``, without its line end); raises :class:`UndecidableEncoding`."""
    sniffed = sniff_encoding(head)
    if head.startswith(codecs.BOM_UTF8):
        return TextEncoding("utf-8-sig", "utf-8", "byte-order mark")
    if sniffed.startswith("utf-16"):
        basis = "byte-order mark" if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) else "NUL bytes"
        return TextEncoding(sniffed, sniffed, basis)
    if first_line.isascii():
        try:
            # The first 4 KiB, as for any text input (ingest.text); a later bad byte is found by
            # the reader, which decodes again leniently.
            codecs.getincrementaldecoder("utf-8")().decode(head[:4096], final=False)
        except UnicodeDecodeError:
            # Rows hold only stamps and numbers: a byte outside ASCII there is damage, not text of
            # any code page. Latin-1 shows it as the byte it is, and the cell is reported.
            return TextEncoding(
                "latin-1",
                "ascii",
                "the header is ASCII (every code page reads it alike); bytes outside ASCII in the "
                "rows are damage, shown byte for byte",
            )
        return TextEncoding("utf-8", "ascii", "the header is ASCII (every code page reads it alike)")
    try:
        first_line.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return TextEncoding("utf-8", "utf-8", "the header is valid UTF-8")
    return _detect_code_page(first_line)


def _display(codec: str) -> str:
    match = re.fullmatch(r"cp(12\d\d)", codec)
    if match:
        return f"windows-{match.group(1)}"
    return "utf-8" if codec == "utf-8-sig" else codec.replace("_", "-")


@dataclass
class _Reading:
    text: str
    code_pages: list[str]
    faults: float = 0.0
    mess: float = 0.0
    coherence: float = 0.0


def _detect_code_page(line: bytes) -> TextEncoding:
    readings: dict[str, _Reading] = {}
    for code_page in ANSI_CODE_PAGES:
        try:
            text = line.decode(code_page)
        except UnicodeDecodeError:
            continue
        readings.setdefault(text, _Reading(text, [])).code_pages.append(code_page)
    plausible = [r for r in readings.values() if _is_perfmon_header(r.text)]
    if not plausible:
        raise UndecidableEncoding(
            "the header is neither UTF-8 nor perfmon text in any Windows code page "
            f"({', '.join(ANSI_CODE_PAGES)})",
            [],
        )
    for reading in plausible:
        reading.faults = _faults(reading.text)
    least = min(r.faults for r in plausible)
    best = [r for r in plausible if r.faults == least]
    if len(best) > 1:
        best = _by_detector(best)
    if len(best) > 1:
        shown = "; ".join(f"{'/'.join(r.code_pages)} reads {_sample(r.text)!r}" for r in best)
        raise UndecidableEncoding(
            f"the header's code page cannot be told apart: {shown}",
            [c for r in best for c in r.code_pages],
        )
    chosen = best[0]
    code_page = _preferred(chosen.code_pages)
    others = [c for c in chosen.code_pages if c != code_page]
    described = ANSI_CODE_PAGES[code_page]
    basis = f"detected: the only code page that reads the header as perfmon text ({described})"
    if len(plausible) > 1:
        decoding = sum(len(r.code_pages) for r in plausible)
        basis = (
            f"detected: of {decoding} code pages that decode the header, "
            f"the one that reads it as words ({described})"
        )
    if others:
        basis += f"; {', '.join(others)} read it the same"
    return TextEncoding(code_page, _display(code_page), basis)


def _preferred(code_pages: list[str]) -> str:
    # Identical readings: name the code page most machines writing them use.
    for common in ("cp1252", "cp1250", "cp1251"):
        if common in code_pages:
            return common
    return code_pages[0]


def _is_perfmon_header(text: str) -> bool:
    if not _SIGNATURE.match(text):
        return False
    separator = "\t" if text.lstrip('\ufeff"').upper().startswith("(PDH-TSV") else ","
    try:
        cells = next(csv.reader([text], delimiter=separator, quotechar='"'))
    except csv.Error:
        return False
    for cell in cells[1:]:
        if any(unicodedata.category(ch) in ("Cc", "Co", "Cn", "Cs") for ch in cell):
            return False
        try:
            parse_counter_path(cell)
        except ValueError:
            return False
    return True


_SCRIPTS = {"LATIN", "CYRILLIC", "GREEK", "HEBREW", "ARABIC", "THAI", "ARMENIAN", "GEORGIAN"}
_CJK = {"CJK", "HIRAGANA", "KATAKANA", "HANGUL", "HALFWIDTH", "FULLWIDTH", "BOPOMOFO"}


def _script(ch: str) -> str | None:
    """The script of a letter or mark; None for one any script uses (combining accents, the
    micro sign)."""
    if ch.isascii():
        return "LATIN"
    first = unicodedata.name(ch, "").split(" ", 1)[0]
    if first in _CJK:
        return "CJK"  # Japanese mixes kana and kanji in a word; Korean may mix hangul and hanja
    return first if first in _SCRIPTS else None


def _faults(text: str) -> float:
    """Signs of a wrong code page in the header's non-ASCII words, per such word."""
    words = {w for w in _WORD.findall(text) if not w.isascii()}
    faults = 0.0
    for ch in {c for c in text if not c.isascii()}:
        category = unicodedata.category(ch)
        if category[0] in "SP" or category in ("Zl", "Zp", "Cf"):
            # A symbol or punctuation mark outside ASCII inside counter names: mojibake's mark
            # (Windows-1252 reads Polish "ą" as "¹", Big5 in Windows-1251 gives "Ў", "Ґ")
            faults += 1 + text.count(ch)
    for word in words:
        scripts = {_script(c) for c in word if unicodedata.category(c)[0] in "LM"} - {None}
        if len(scripts) > 1:
            faults += 2
            continue
        if scripts == {"LATIN"} and not _one_alphabet(word):
            faults += 1
        if _capital_inside(word):
            faults += 1
        faults += _structure_faults(word)
    return faults / max(1, len(words))


def _one_alphabet(word: str) -> bool:
    letters = {c for c in word.casefold() if not c.isascii() and unicodedata.name(c, "").startswith("LATIN")}
    return any(letters <= set(alphabet) for alphabet in _ALPHABETS)


def _capital_inside(word: str) -> bool:
    # "ЕреоесгбуфЮт" (Greek read as Cyrillic): a capital after small letters, in a word with a
    # letter outside ASCII. Names such as "MBytes" are ASCII and never judged.
    return any(a.islower() and b.isupper() for a, b in itertools.pairwise(word))


_THAI_CONSONANTS = {chr(c) for c in range(0x0E01, 0x0E2F)}
_THAI_LEADING = set("\u0e40\u0e41\u0e42\u0e43\u0e44")
_HEBREW_FINALS = set("ךםןףץ")


def _structure_faults(word: str) -> int:
    """Spelling no word of its script can have: a Thai leading vowel at a word's end or a mark
    after no consonant, a Greek final sigma inside a word, a Hebrew final letter inside one."""
    faults = 0
    for index, ch in enumerate(word):
        last = index == len(word) - 1
        misplaced = (ch in _THAI_LEADING) if last else (ch == "ς" or ch in _HEBREW_FINALS)
        faults += misplaced
    for index, ch in enumerate(word):
        if unicodedata.category(ch) == "Mn" and "\u0e00" <= ch <= "\u0e7f":
            before = word[index - 1] if index else ""
            if before not in _THAI_CONSONANTS and not ("\u0e00" <= before <= "\u0e7f"):
                faults += 1
    return faults


def _by_detector(readings: list[_Reading]) -> list[_Reading]:
    """Readings equally free of faults, ranked by charset-normalizer: the one clearly less messy,
    else the one clearly more coherent with a language; several when none is clearly ahead."""
    from charset_normalizer.cd import coherence_ratio  # noqa: PLC0415 - only a non-UTF-8 header needs it
    from charset_normalizer.md import mess_ratio  # noqa: PLC0415 - as above

    for reading in readings:
        words = " ".join(dict.fromkeys(w for w in _WORD.findall(reading.text) if not w.isascii()))
        reading.mess = mess_ratio(words, 1.0)
        languages = coherence_ratio(words, 0.1)
        reading.coherence = languages[0][1] if languages else 0.0
    least = min(r.mess for r in readings)
    readings = [r for r in readings if r.mess < least + _MARGIN]
    if len(readings) == 1:
        return readings
    most = max(r.coherence for r in readings)
    if most == 0.0:
        return readings
    return [r for r in readings if r.coherence > most - _MARGIN]


def _sample(text: str) -> str:
    """The first word where readings differ is what a person can judge: the first non-ASCII word."""
    for word in _WORD.findall(text):
        if not word.isascii():
            return str(word)
    return text[:40]
