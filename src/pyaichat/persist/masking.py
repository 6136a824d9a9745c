"""The masking of a file that lasts (a saved notebook or script, the resume file): the one masking function
of ``capabilities.redact``, as for everything sent to a model, plus the secret values the saved texts reveal
themselves.

An input ``db_password = "…"`` is masked by its secret name; the same value in an error message that quotes
it (``invalid literal for int() with base 10: '…'``) or in a print has no name beside it. So every value the
document's own texts bind to a secret name (``Masker.revealed_values``) is masked wherever it appears in the
document. Values the session holds without the document showing them (read from a file, the environment)
are the masker's own business (secret environment values; the session's known secret values, which the
writers bring up to date just before they take a document: ``Runtime.know_secrets``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..capabilities.redact import masker_for

VALUE = "<redacted secret value>"
_last: tuple[Any, Callable[[str], str]] | None = None


def document_mask(config: Any, texts: Iterable[Any]) -> Callable[[str], str]:
    """``mask(text)`` for every text of one document, ``texts`` being all of them (non-strings skipped)."""
    masker = masker_for(config)
    values: set[str] = set()
    for text in texts:
        if isinstance(text, str) and text:
            values |= masker.revealed_values(text)
    if not values:
        return masker.mask_text
    ordered = tuple(sorted(values, key=len, reverse=True))  # a value that holds another goes whole
    global _last
    if _last is not None and _last[0] == (masker, ordered):
        return _last[1]  # the same function: the resume file's memory of masked texts stays valid

    def mask(text: str) -> str:
        if not text:
            return text
        for value in ordered:
            if value in text:
                text = text.replace(value, VALUE)
        return masker.mask_text(text)

    _last = ((masker, ordered), mask)
    return mask


def texts_of(*items: Any) -> Iterable[str]:
    """Every string inside ``items`` (dicts, lists, tuples, dataclass-like objects with ``__dict__``)."""
    stack = list(items)
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif hasattr(item, "__dict__") and not isinstance(item, type):
            stack.extend(vars(item).values())
