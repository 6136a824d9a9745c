"""The name each server tool is offered under: ``SERVER__TOOL``, valid for every provider litellm speaks.

The strictest rules among them: at most 64 characters (OpenAI, Anthropic, Bedrock, Gemini), only letters,
digits, ``_`` and ``-``, and a letter or ``_`` first (Gemini). A name that had to be cut or changed, or that
would collide with another, ends in a short hash of the server and tool, so it stays unique and stable from
one session to the next. The offered name is only ever looked up, never parsed back: a server or tool whose
own name contains ``__`` is no problem.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

MAX_NAME = 64
SEPARATOR = "__"
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def offered_name(server: str, tool: str, taken: Iterable[str] = ()) -> str:
    """``server__tool`` made valid, unique among ``taken``."""
    plain = f"{server}{SEPARATOR}{tool}"
    name = _NOT_ALLOWED.sub("_", plain)
    if not (name[:1].isascii() and (name[:1].isalpha() or name[:1] == "_")):
        name = "_" + name
    taken = set(taken)
    if name == plain and len(name) <= MAX_NAME and name not in taken:
        return name
    digest = hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()
    for size in (6, 10, 40):
        tail = "_" + digest[:size]
        candidate = name[: MAX_NAME - len(tail)] + tail
        if candidate not in taken:
            return candidate
    raise ValueError(f"no free name for {plain!r}")  # 40 hex digits collide only for the same server and tool
