"""Keep the ``?`` of ``%ai why is it empty?``.

IPython's token transformer ``HelpEnd`` turns any logical line whose last token is ``?`` into a help
request: ``%ai why is it empty?`` becomes ``get_ipython().run_line_magic('pinfo', 'empty')``, so the magic
never runs (``HelpEnd`` wins over ``EscapedCommand``: priority 5 < 10). Cleanup transformers run before any
token transformer (and also inside ``check_complete``), so this one rewrites such a line into the magic call
itself; once the question is inside a string literal no later transformer touches it. Lines without a trailing
``?`` are left to IPython.
"""

from __future__ import annotations

import re

# ``%ai`` + whitespace + a question. ``%ai?`` / ``%ai??`` (help on the magic itself) do not match.
_AI_LINE = re.compile(r"^(?P<indent>[ \t]*)%ai[ \t]+(?P<question>\S.*?)[ \t]*$")


def keep_question_mark(lines: list[str]) -> list[str]:
    """Cleanup transformer: rewrite ``%ai …?`` lines into ``run_line_magic('ai', '…?')``."""
    out: list[str] = []
    continued = False  # the previous physical line ended with a backslash: this one is not a line start
    for line in lines:
        body = line.rstrip("\r\n")
        match = None if continued else _AI_LINE.match(body)
        if match and match["question"].endswith("?"):
            ending = line[len(body) :] or "\n"
            line = f"{match['indent']}get_ipython().run_line_magic('ai', {match['question']!r}){ending}"
        continued = body.endswith("\\")
        out.append(line)
    return out
