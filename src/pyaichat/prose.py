"""Whether a line typed at the Python prompt was meant for the assistant: a question in plain words.

A newcomer types ``why did that fail?`` at ``>>>`` and gets a bare ``SyntaxError``. The two-mode prompts (the
REPL's, terminal IPython's) then say once how to reach the assistant. The test must never fire on Python
with a typo (``x = = 2``, ``for i in range(3) print(i)``, ``import pandas as pd numpy``), so it asks for
the marks of prose, not merely for code that failed: the line does not parse, it is mostly plain words, and
either it ends with a question mark (Python never does) or it holds words of everyday English that no Python
statement strings together. Standard library only, and only imported after an input failed.
"""

from __future__ import annotations

import ast
import keyword
import re

__all__ = ["QUESTION_HINT", "looks_like_question"]

QUESTION_HINT = (
    "Asking the assistant? TAB on an empty line switches to it; ↑ then Shift-TAB takes this line along."
)

# A chunk of prose: letters, maybe an apostrophe inside (what's), maybe closing punctuation (fail?, df,).
_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?[?.!,;:]*")
# A name or an attribute path the question may mention (df, df.price, orders.id.dtype), with punctuation.
_NAME = re.compile(r"[A-Za-z_][\w.]*[?.!,;:]*")
# Words that start a Python statement: a line that starts with one is code with a typo, not a question.
_STATEMENT_STARTS = frozenset(
    {
        "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else", "except",
        "finally", "for", "from", "global", "import", "lambda", "nonlocal", "pass", "print", "raise",
        "return", "try", "while", "with", "yield",
    }
)  # fmt: skip
# Everyday English that is not a Python keyword (is, in, not, and, or, if are: a question may use them, but
# they prove nothing) and that code rarely names a variable.
_ENGLISH = frozenset(
    {
        "about", "an", "any", "are", "be", "been", "but", "can", "could", "did", "do", "does", "doesn't",
        "don't", "explain", "fail", "failed", "fails", "has", "have", "help", "how", "isn't", "it",
        "it's", "its", "me", "my", "of", "please", "should", "show", "tell", "than", "that", "that's",
        "the", "there", "these", "this", "those", "to", "wrong", "was", "were", "what", "what's", "when",
        "where", "which", "who", "why", "will", "would", "you", "your",
    }
)  # fmt: skip


def looks_like_question(source: str) -> bool:
    """True when ``source`` (an input that ran as Python) is a plain-language question or request, not code:
    one line that Python cannot parse, made mostly of words, with a closing ``?`` or everyday English."""
    text = source.strip()
    if not text or "\n" in text or len(text) > 500 or text.startswith(("%", "!")):
        return False  # nothing, several lines, or IPython's own syntax (a magic, a shell command)
    try:
        ast.parse(text)
    except SyntaxError:
        pass
    else:
        return False  # Python: whatever it did, it was not a question that failed
    chunks = text.split()
    words = [c for c in chunks if _WORD.fullmatch(c)]
    if len(words) < 3:
        return False
    # words, and the names a question may mention (df, df.price); the rest is code or symbols
    wordlike = sum(1 for c in chunks if _WORD.fullmatch(c) or _NAME.fullmatch(c))
    if text.endswith("?"):  # Python never ends so: a question, also one that quotes code
        return wordlike * 2 >= len(chunks)
    if wordlike * 4 < len(chunks) * 3 or "=" in text or _bare(chunks[0]) in _STATEMENT_STARTS:
        return False  # code with a typo (an assignment, a statement), not a sentence
    return any(_bare(w) in _ENGLISH and not keyword.iskeyword(_bare(w)) for w in words)


def _bare(chunk: str) -> str:
    """A chunk without its closing punctuation, in lower case, with a typographic apostrophe made plain."""
    return chunk.rstrip("?.!,;:").lower().replace("’", "'")
