"""What the in-process tier treats as a secret: a secret name (a variable, attribute, key or label), and a
secret value of any type — a string that holds a credential or one of the session's known secret values
(``secret_values``), bytes whose text does, an integer or float whose digits are one.

The reader refuses to compute anything from a secret value (``Reader._through``), and leaves a container
that holds one (``SecretChecks.bears``) to the walled child, which hides it: ``blob[::-1]`` for
``blob = api_key.encode()``, ``code + 1`` for an integer password, a slice of a note that holds a key. A
string too long to be checked within the GIL budget cannot be told apart, so it is not computed with here
either: the walled child computes with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..redact import is_known_value
from ..structural import all_scalars

MAX_CHECKED = 20_000  # characters of a string the masker is asked about (a few ms of its patterns)


class SecretChecks:
    """The session's notion of a secret, passed in: a secret name (``redact.Masker.is_secret_name``) and a
    text that holds a credential or a known secret value (the masker would change it)."""

    def __init__(self, is_secret_name: Callable[[str], bool], looks_secret: Callable[[str], bool]) -> None:
        self.is_secret_name = is_secret_name
        self.looks_secret = looks_secret
        self.seen: dict[Any, Any] = {}  # the reader's verdicts on attribute names, under these settings

    def name(self, label: Any) -> bool:
        """A label (a variable, column, key or attribute name) that is a secret name; a tuple label (a
        MultiIndex column) is one when any part is."""
        if type(label) is str:
            return len(label) < 200 and self.is_secret_name(label)
        if type(label) is tuple:
            return any(self.name(part) for part in label[:8])
        return False

    def value(self, value: Any) -> bool | None:
        """``value`` is, or holds, a secret; ``None`` when it is a string too long to tell within the GIL
        budget (the reader leaves it to the walled child)."""
        text = _text(value)
        if text is None:
            return False
        if len(text) > MAX_CHECKED:
            return None
        return len(text) >= 6 and self.looks_secret(text)

    def bears(self, value: Any, depth: int = 0) -> bool:
        """A plain container holds a secret: an entry under a secret name at any depth, or an item that is
        exactly one of the session's known secret values (``settings.values()``, ``list(vault.items())``).
        Computed with in the walled child, which hides those entries, never here."""
        t = type(value)
        if t is dict:
            if any(map(self.name, value)):
                return True
            items: Any = value.values()
        elif t is list or t is tuple or t is set or t is frozenset:
            items = value
        else:
            return _known(value)
        if all_scalars(items):  # numbers and strings only: look each up, in C where it can be
            strings = [item for item in items if type(item) is str]
            if any(map(is_known_value, strings)):
                return True
            return any(_known(item) for item in items if type(item) is not str and type(item) is not float)
        return depth < 32 and any(self.bears(item, depth + 1) for item in items)


def _known(value: Any) -> bool:
    """A scalar that is exactly one of the session's known secret values (an integer from six digits)."""
    t = type(value)
    if t is int:
        return abs(value) >= 100_000 and value.bit_length() <= 256 and is_known_value(str(value))
    text = _text(value)
    return text is not None and len(text) <= MAX_CHECKED and is_known_value(text)


def _text(value: Any) -> str | None:
    """The text a secret value would show as: a string itself, bytes decoded, a number's digits."""
    t = type(value)
    if t is str:
        return value
    if t is bytes or t is bytearray:
        if len(value) > MAX_CHECKED:
            return "\0" * (MAX_CHECKED + 1)
        return bytes(value).decode("utf-8", "replace")
    if t is int:
        return str(value) if value.bit_length() <= 256 else None
    if t is float:
        return repr(value)
    return None
