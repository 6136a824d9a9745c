"""A model's answer cut to what fits the cursor: code only, one line or the rest of the block, never prose.

Chat models wrap code in fences, repeat the line they were given, and explain; completion models run on past
the block. What is left must read as Python together with the code before the cursor (``codeop`` tells
complete, incomplete and invalid apart); anything else is dropped, so a confused model shows nothing.
"""

from __future__ import annotations

import codeop
import re
import warnings

MAX_BLOCK_LINES = 8
_FENCE = re.compile(r"```[ \t]*[\w+-]*[ \t]*\n(.*?)(?:\n[ \t]*```|\Z)", re.DOTALL)
_WORD = re.compile(r"[A-Za-z_]\w*$")
_OPENS = re.compile(
    r"\s*(?:async\s+)?(?:if|elif|else|for|while|def|class|with|try|except|finally|match|case)\b.*:$"
)
CURSOR = "<CURSOR>"


def wants_block(before: str) -> bool:
    """The rest of the block fits here: the line opens one (``for c in df:``) or is empty inside one."""
    line = before.rpartition("\n")[2]
    code = line.split("#", 1)[0].rstrip()
    return bool(_OPENS.match(code)) or ("\n" in before and not line.strip())


def fit(reply: str, before: str, after: str = "", *, block: bool, echoes: bool) -> str:
    """The part of ``reply`` to show after ``before``: one line (``block`` false) or up to the end of the
    block; ``echoes``: a chat model, which tends to repeat what it was given. ``""`` when nothing fits."""
    text = _unfenced(reply.replace("\r\n", "\n")).replace(CURSOR, "")
    if echoes:
        text = _without_echo(text, before)
    text = _block(text, before) if block else text.split("\n", 1)[0]
    text = _before_suffix(text, after).rstrip()
    if not text.strip() or not _reads_as_python(before, text):
        return ""
    return text


def _unfenced(text: str) -> str:
    """The code in the first Markdown fence, when the answer has one."""
    if "```" not in text:
        return text
    match = _FENCE.search(text)
    return match.group(1) if match else text.replace("```", "")


def _without_echo(text: str, before: str) -> str:
    """Drop what the model repeated of the code before the cursor: all of it, its current line, or the
    word being typed."""
    if before and text.startswith(before):
        return text[len(before) :]
    line = before.rpartition("\n")[2]
    stripped = line.strip()
    lead = text.lstrip()
    if stripped and lead.startswith(stripped):
        return lead[len(stripped) :]
    word = _WORD.search(line)
    if word and lead.startswith(word.group(0)):
        return lead[len(word.group(0)) :]
    return text


def _block(text: str, before: str) -> str:
    """The first line, then the lines indented deeper than the block's own level, up to a blank line."""
    line = before.rpartition("\n")[2]
    level = len(line) - len(line.lstrip())
    opens = bool(_OPENS.match(line.split("#", 1)[0].rstrip()))
    first, *rest = text.split("\n")
    kept = [first]
    for piece in rest[: MAX_BLOCK_LINES - 1]:
        indent = len(piece) - len(piece.lstrip())
        if not piece.strip() or indent < level or (opens and indent <= level):
            break
        kept.append(piece.rstrip())
    return "\n".join(kept)


def _before_suffix(text: str, after: str) -> str:
    """Stop where the answer starts repeating the code already after the cursor."""
    following = next((line.strip() for line in after.split("\n")[1:] if line.strip()), "")
    if not following:
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines[1:], 1):
        if line.strip() == following:
            return "\n".join(lines[:i])
    return text


def _reads_as_python(before: str, text: str) -> bool:
    """``before + text`` is Python, complete or still open, or its first syntax error lies in the code before
    the cursor (a typo there says nothing of the answer); prose is a syntax error inside the answer."""
    code = before + text
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            codeop.compile_command(code, "<suggestion>", "exec")
            return True
        except SyntaxError as exc:
            where = _offset(code, exc.lineno, exc.offset)
            return where is not None and where < len(before)
        except (ValueError, OverflowError):
            return False


def _offset(code: str, lineno: int | None, column: int | None) -> int | None:
    """The index in ``code`` of a syntax error's line and column (both 1-based)."""
    if not lineno:
        return None
    lines = code.split("\n")
    if lineno > len(lines):
        return len(code)
    return sum(len(line) + 1 for line in lines[: lineno - 1]) + max((column or 1) - 1, 0)
