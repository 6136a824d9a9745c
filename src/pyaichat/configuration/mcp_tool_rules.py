"""The user's rules for MCP tools (``mcp_tool_rules``): glob patterns, each ``allow``, ``ask`` or ``deny``.

A pattern with ``__`` is matched against ``SERVER__TOOL`` (``"git__git_*"``, ``"*__delete*"``); one without
is a per-server rule, matched against the server's name (``"git" = "ask"``). Of all the rules that match a
tool, ``deny`` wins over ``ask`` and ``ask`` over ``allow`` — whatever order they are written in, and whatever
the server's trust says. Plain data and ``fnmatch``: read with the configuration, at start-up.

Pattern and name are both matched on their folded form (``folded``): case, compatibility forms, accents,
characters that take no room and look-alikes (Unicode's confusables: a Cyrillic ``е`` is an ``e``) do not
count, or a server could dodge ``"*__delete*" = "deny"`` with ``Delete``, ``ＤＥＬＥＴＥ`` or ``dеlete``.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

ALLOW, ASK, DENY = "allow", "ask", "deny"
VERDICTS = (ALLOW, ASK, DENY)
_STRENGTH = {ALLOW: 0, ASK: 1, DENY: 2}

Rules = tuple[tuple[str, str], ...]
"""(pattern, verdict) pairs, in the order written."""


def rules_from(value: Any) -> Rules:
    """The rules of a ``[mcp_tool_rules]`` table (pattern = verdict), or of ``PYAICHAT_MCP_TOOL_RULES``
    (``pattern=verdict`` pairs, comma-separated); ``ValueError`` says what is wrong with the first bad one."""
    if isinstance(value, str):
        pairs: list[tuple[Any, Any]] = []
        for part in value.split(","):
            if part.strip():
                pattern, eq, verdict = part.partition("=")
                if not eq:
                    raise ValueError(f"should be pattern=verdict pairs; {part.strip()!r} has no '='")
                pairs.append((pattern.strip().strip("\"'"), verdict.strip().strip("\"'")))
    elif isinstance(value, dict):
        pairs = list(value.items())
    elif isinstance(value, (list, tuple)) and all(
        isinstance(p, (list, tuple)) and len(p) == 2 for p in value
    ):
        pairs = [tuple(p) for p in value]
    else:
        raise ValueError('should be a table of patterns, e.g. "*__delete*" = "deny"')
    rules = []
    for pattern, verdict in pairs:
        if not isinstance(pattern, str) or not pattern.strip():
            raise ValueError("has an empty pattern")
        if verdict not in VERDICTS:
            raise ValueError(f'gives {pattern!r} {verdict!r}; a rule is "allow", "ask" or "deny"')
        rules.append((pattern.strip(), verdict))
    return tuple(rules)


def folded(text: str) -> str:
    """``text`` as a reader tells names apart: lower case (``casefold``), compatibility forms decomposed and
    accents dropped, characters that take no room dropped, look-alikes as the ASCII they are confusable with
    (``lookalikes.NAMES``, the data ``untrusted``'s spans use). Plain ASCII is only lowered."""
    if text.isascii():
        return text.lower()
    import unicodedata  # only for a name that is not plain ASCII

    from ..lookalikes import DROPPED, NAMES

    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    out = []
    for ch in text:
        code = ord(ch)
        if unicodedata.combining(ch) or any(lo <= code <= hi for lo, hi in DROPPED):
            continue
        out.append(NAMES.get(ch, ch))
    return "".join(out).lower()


def matching(rules: Rules, server: str, tool: str) -> tuple[str, str] | None:
    """The rule that applies to ``server``'s ``tool``: the strongest that matches (deny > ask > allow), the
    first written among equals; ``None`` when none matches. Matched on folded forms (``folded``)."""
    server = folded(server)
    full = f"{server}__{folded(tool)}"
    best: tuple[str, str] | None = None
    for pattern, verdict in rules:
        form = folded(pattern)
        hit = fnmatchcase(full, form) if "__" in form else fnmatchcase(server, form)
        if hit and (best is None or _STRENGTH[verdict] > _STRENGTH[best[1]]):
            best = (pattern, verdict)
    return best
