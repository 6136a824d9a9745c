"""Text from outside made safe to print: no character of it can drive the terminal.

An MCP server's tool description or question, an outside agent's explanation, a value from the data, a
model's reply: any of them may carry ``ESC[2K`` (erase the line), a carriage return, cursor moves, OSC 0 (the
window title), OSC 8 (a link that shows one address and opens another), or bidi overrides that reorder what
is read. ``printable`` makes every such character **visible** rather than removing it, so the person sees
that something was there and what it was, and nothing is silently lost:

- C0 controls except newline and tab → the Unicode Control Pictures (``ESC`` → ``␛``, CR → ``␍``, BEL →
  ``␇``), DEL → ``␡``; a Windows line end (CR LF) is read as a newline;
- C1 controls (U+0080–U+009F, e.g. the one-byte CSI U+009B) and the invisible format characters that disguise
  text — bidi embeddings, overrides and isolates, zero-width space, word joiner, BOM, the Unicode "tag"
  characters that smuggle ASCII — and line/paragraph separators → ``⟨U+202E⟩``. Zero-width (non-)joiners stay:
  emoji sequences and several scripts need them, and they reorder nothing.

An escape sequence is therefore printed as text (``␛[2K``, ``␛]8;;https://…␛\\``), never acted on. Our own
styling is added by the renderers after this, so our Markdown and panels are unchanged. Standard library
only, usable by every front end (rich, IPython, piped output).

It is applied where text leaves for the screen, so no new path can forget it: ``show`` is the one way a plain
line of pyaichat's is written (piped output, notebooks, the terminal's questions and forms, the command
line's errors), and the rich renderer passes every piece of text it draws through it (``repl.render``).
Only the person's own code's output is written as Python writes it (``tests/core/test_screen_paths.py``
holds the list).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from typing import Any, TextIO

_FORMAT = (  # Unicode category Cf (format), less ZWNJ/ZWJ, plus the separators Zl/Zp
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200e\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_FORMAT}]")


def _visible(m: re.Match[str]) -> str:
    ch = m.group(0)
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"⟨U+{code:04X}⟩"


def printable(text: str) -> str:
    """``text`` with every character that could drive a terminal or disguise text made visible."""
    if not isinstance(text, str) or not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(_visible, text.replace("\r\n", "\n"))


def show(text: str = "", *, file: TextIO | None = None, end: str = "\n", flush: bool = False) -> None:
    """Write ``text``, made printable, then ``end`` to ``file`` (default: standard output, as it is now)."""
    stream = file if file is not None else sys.stdout
    stream.write(printable(text) + end)
    if flush:
        stream.flush()


def printable_data(value: Any) -> Any:
    """``printable`` applied to every string inside ``value``: lists, tuples, dicts, dataclasses (an event)
    and plain objects with slots (a ``Proposal``): a copy with their string fields cleaned; the same object
    when nothing needed it."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, (list, tuple)):
        cleaned = [printable_data(v) for v in value]
        if all(a is b for a, b in zip(cleaned, value, strict=True)):
            return value
        return type(value)(cleaned) if isinstance(value, list) else tuple(cleaned)
    if isinstance(value, Mapping):
        items = {k: printable_data(v) for k, v in value.items()}
        return value if all(items[k] is v for k, v in value.items()) else items
    if value is None or isinstance(value, (int, float, type)):
        return value
    fields = getattr(type(value), "__dataclass_fields__", None)
    if isinstance(fields, Mapping):  # a dataclass: cleaned through its constructor (it may be frozen)
        update = _cleaned(value, [name for name, f in fields.items() if f.init])
        if not update:
            return value
        from dataclasses import replace  # only with an event to clean (inspect: not at start-up)

        return replace(value, **update)
    slots = getattr(type(value), "__slots__", None)
    if isinstance(slots, tuple) and slots:  # a plain object with slots: a shallow copy, cleaned
        update = _cleaned(value, [name for name in slots if hasattr(value, name)])
        if not update:
            return value
        from copy import copy  # only with such an object to clean

        clean = copy(value)
        for name, cleaned_value in update.items():
            setattr(clean, name, cleaned_value)
        return clean
    return value


def _cleaned(value: Any, names: list[str]) -> dict[str, Any]:
    """The fields of ``value`` among ``names`` that ``printable_data`` changed, cleaned."""
    update = {}
    for name in names:
        current = getattr(value, name, None)
        cleaned = printable_data(current)
        if cleaned is not current:
            update[name] = cleaned
    return update
