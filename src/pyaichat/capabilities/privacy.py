"""Privacy levels: how much of a value any capability, summary or adapter may reveal.

``names`` (the type only) < ``schema`` (lengths, shapes, columns, dtypes — no value of any element) <
``sample`` (a few values; the default) < ``full`` (larger bounded reprs). Compared as numbers.
"""

from __future__ import annotations

PRIVACY_LEVELS = ("names", "schema", "sample", "full")
NAMES, SCHEMA, SAMPLE, FULL = range(4)


def level(privacy: str) -> int:
    """Numeric privacy level; unknown values are treated as the strictest."""
    try:
        return PRIVACY_LEVELS.index(privacy)
    except ValueError:
        return 0
