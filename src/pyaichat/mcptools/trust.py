"""Which calls run at once and which need the person.

A tool runs without asking only when both hold:

1. the user marked its server read-only in their own configuration (``trust = "read-only"``), and
2. the tool itself says ``readOnlyHint: true`` (and does not also claim to be destructive).

A server's annotations are its own claims (the MCP specification calls them hints, "not guaranteed"), so they
can only narrow what the user allowed, never widen it: a server the user did not mark gets nothing without
the person, whatever it says about itself. The annotations are read once, from the listing taken when the
server started; a server cannot change a tool's claims later in the session.
"""

from __future__ import annotations

from typing import Any

ASKS = "asks you first"


def runs_without_asking(server_read_only: bool, annotations: Any) -> bool:
    """True for a call that needs no approval (see the module docstring)."""
    if not server_read_only or annotations is None:
        return False
    read_only = getattr(annotations, "read_only_hint", None)
    destructive = getattr(annotations, "destructive_hint", None)
    return read_only is True and destructive is not True


def why_it_asks(server: str, server_read_only: bool, annotations: Any) -> str:
    """One sentence on why a call needs the person (for the panel and for piped mode's refusal)."""
    if not server_read_only:
        return f'the server {server!r} is not marked trust = "read-only" in your configuration'
    if annotations is None or getattr(annotations, "read_only_hint", None) is not True:
        return "the tool does not declare itself read-only (readOnlyHint)"
    return "the tool declares itself destructive as well as read-only"
