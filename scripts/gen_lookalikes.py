"""Write ``src/pyaichat/lookalikes.py``: the characters a model may read as part of the ``<data>`` span's tag.

``untrusted.defang`` looks for the tag in text folded with this table, so that ``</data>`` written with
look-alike characters is found and disarmed like the plain one. Three sources, all offline:

- Unicode's ``confusables.txt`` (security/, as JSON in the ``confusable-homoglyphs`` package, a test
  dependency): every character confusable with ``<``, ``/``, ``>`` or a letter of ``data`` (either case);
- compatibility decomposition (NFKD, this Python's ``unicodedata``), less combining marks: full-width and
  mathematical letters, circled letters, ``ḍ``, ``≮``, ``㍲`` ("da") and the like;
- a written list of angle brackets a reader takes for ``<``/``>`` that neither lists as such (``〈``, ``⟨``,
  ``❬`` …, from the Unicode charts' "angle bracket" characters).

Characters that take no room — format characters (category Cf: zero-width space and joiners, word joiner,
soft hyphen, bidi controls, tags), combining marks (Mn, Me) and the invisible fillers — are dropped before
the tag is looked for.

    .venv/bin/python scripts/gen_lookalikes.py        # rewrite the module
    .venv/bin/python scripts/gen_lookalikes.py --check  # exit 1 when the module differs (the tests run it)
"""

from __future__ import annotations

import argparse
import json
import os
import string
import sys
import unicodedata
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "src" / "pyaichat" / "lookalikes.py"
TAG_CHARS = {"<": "<", "/": "/", ">": ">", "d": "d", "a": "a", "t": "t", "D": "d", "A": "a", "T": "t"}
# angle brackets not listed as confusables of < and > (the U+3008 and U+27E8 among them)
BRACKETS = {
    "<": "\u2329\u3008\u27e8\u276c\u2770\u29fc\u27ea\u300a\u2991\u2993\u29d8"
    "\u1438\u02c2\u2039\u276e\ufe64\uff1c",
    ">": "\u232a\u3009\u27e9\u276d\u2771\u29fd\u27eb\u300b\u2992\u2994\u29d9"
    "\u1433\u02c3\u203a\u276f\ufe65\uff1e",
}
INVISIBLE = "\u115f\u1160\u3164\uffa0\u2800"  # Hangul fillers (Lo), the Braille blank (So): they show nothing


def confusables() -> dict[str, list[str]]:
    """``confusables.txt`` as the package ships it: each character → the characters confusable with it."""
    import confusable_homoglyphs  # the test extra

    path = os.path.join(os.path.dirname(confusable_homoglyphs.__file__), "confusables.json")
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    return {char: [entry["c"] for entry in entries] for char, entries in data.items()}


def dropped() -> list[tuple[int, int]]:
    """The ranges of characters removed before the tag is looked for."""
    codes = [
        cp
        for cp in range(0x80, 0x110000)
        if unicodedata.category(chr(cp)) in ("Cf", "Mn", "Me") or chr(cp) in INVISIBLE
    ]
    ranges: list[tuple[int, int]] = []
    for cp in codes:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    return ranges


def folds() -> dict[str, str]:
    """Each non-ASCII character that reads as (part of) the tag → what it reads as (ASCII)."""
    gone = {chr(cp) for lo, hi in dropped() for cp in range(lo, hi + 1)}
    direct: dict[str, str] = {}
    table = confusables()
    for char, shown in TAG_CHARS.items():
        alike = set(table.get(char, ())) | {c for c, others in table.items() if char in others}
        for c in alike:
            if len(c) == 1 and not c.isascii():
                direct[c] = shown
    for shown, chars in BRACKETS.items():
        for c in chars:
            direct[c] = shown
    found = dict(direct)
    for cp in range(0x80, 0x110000):
        c = chr(cp)
        if c in found or c in gone:
            continue
        parts = unicodedata.normalize("NFKD", c)
        if parts == c:
            continue
        read = "".join(direct.get(p, p) for p in parts if p not in gone)
        if any(ch in TAG_CHARS for ch in read) and read.isascii():
            found[c] = read.lower()
    return found


def names() -> dict[str, str]:
    """Each non-ASCII character confusable with a letter, digit, ``_`` or ``-`` → that character (lower case):
    the skeleton a tool's name is matched on (``configuration.mcp_tool_rules``), so that ``dеlete`` with a
    Cyrillic ``е`` is ``delete`` to a deny rule. (Compatibility forms are decomposed at the time, with
    ``unicodedata``.)"""
    table = confusables()
    found: dict[str, str] = {}
    for char in sorted(set(string.ascii_letters + string.digits + "_-")):
        alike = set(table.get(char, ())) | {c for c, others in table.items() if char in others}
        for c in alike:
            if len(c) == 1 and not c.isascii():
                found[c] = char.lower()
    return found


def _pairs(table: dict[str, str]) -> str:
    return "".join(
        f"    {_literal(c)}: {_literal(r)},  # {unicodedata.name(c, hex(ord(c)))}\n"
        for c, r in sorted(table.items())
    )


def module() -> str:
    pairs = _pairs(folds())
    name_pairs = _pairs(names())
    ranges = "".join(f"    (0x{lo:04X}, 0x{hi:04X}),\n" for lo, hi in dropped())
    return f'''"""What a model may read as part of the ``<data>`` span's tag (``untrusted.defang``).

Generated by ``scripts/gen_lookalikes.py`` (do not edit by hand) from Unicode's confusables.txt (via
confusable-homoglyphs {_package_version()}), compatibility decompositions (NFKD, Unicode
{unicodedata.unidata_version}) and a written list of angle brackets.

``FOLD``: each character → the ASCII it reads as (``<``, ``/``, ``>``, letters of ``data``); ``DROPPED``: the
ranges of characters that take no room (format characters, combining marks, invisible fillers), removed
before the tag is looked for. ``NAMES``: each character → the ASCII letter, digit, ``_`` or ``-`` it is
confusable with, for matching the person's rules on tool names (``configuration.mcp_tool_rules``).
"""

FOLD = {{
{pairs}}}

NAMES = {{
{name_pairs}}}

DROPPED = (
{ranges})
'''


def _literal(text: str) -> str:
    return (
        '"'
        + "".join(ch if ch.isascii() and ch.isprintable() and ch not in '"\\' else _escape(ch) for ch in text)
        + '"'
    )


def _escape(ch: str) -> str:
    cp = ord(ch)
    if ch in '"\\':
        return "\\" + ch
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


def _package_version() -> str:
    from importlib.metadata import version

    return version("confusable-homoglyphs")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the module is not up to date")
    args = parser.parse_args()
    text = module()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is not what scripts/gen_lookalikes.py writes now", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET} ({len(folds())} look-alikes, {len(dropped())} ranges dropped)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
