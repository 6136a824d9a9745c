"""What the in-process tier treats as a secret: a secret name (a variable, attribute, key or label), and a
secret value of any type — a string that holds a credential or one of the session's known secret values
(``secret_values``), bytes whose text does, an integer or float whose digits are one.

The reader refuses to compute anything from a secret value (``Reader._through``): ``blob[::-1]`` for
``blob = api_key.encode()``, ``code + 1`` for an integer password, a slice of a note that holds a key; nor
from a container that holds one at any depth, dict keys included (``SecretChecks.bears``): ``tokens <
['ghp_R9']`` answered one character of a token per few calls. A container that holds an entry under a secret
name goes to the walled child, which hides it. A string too long to be checked within the GIL budget cannot
be told apart, so it is not computed with here either: the walled child computes with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..redact import is_known_value
from ..structural import all_scalars

MAX_CHECKED = 20_000  # characters of a string the masker is asked about (a few ms of its patterns)
MAX_LOOKED = 1_000_000  # characters of a container's strings the masker is asked about, piece by piece


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

    def bears(self, value: Any) -> str | None:
        """What a plain container holds: ``"value"`` — a secret value at any depth, dict keys included: one
        of the session's known secret values (a string, bytes, an integer of six digits or more) or a string
        the masker would mask (``ghp_…``, ``sk-…``, ``AKIA…``: what the display shows as ``<redacted …>``);
        ``"name"`` — an entry under a secret name (``settings.values()``), which the walled child hides;
        ``"unknown"`` — more text than can be checked within the GIL budget; ``None`` — none of those.
        Nothing is computed here with a container that holds anything but ``None``: a comparison with it
        (``tokens < ['ghp_R9']``), ``sum(by_code, 1)`` or ``'%.5s' % by_code`` is an oracle on the secret."""
        kind = type(value)
        if not (kind is dict or kind is list or kind is tuple or kind is set or kind is frozenset):
            return "value" if _known(value) else None
        named = False
        strings: list[str] = []
        numbers: list[Any] = []
        stack: list[tuple[Any, int]] = [(value, 0)]
        while stack:
            item, depth = stack.pop()
            t = type(item)
            if t is dict:
                if any(map(self.name, item)):  # the walled child hides what is under a secret name
                    named = True
                    parts: Any = [*item, *(v for k, v in item.items() if not self.name(k))]
                else:
                    parts = [*item, *item.values()]  # the keys are values too: ``{secret_code: 1}``
            elif t is list or t is tuple or t is set or t is frozenset:
                parts = item
            elif t is str:
                strings.append(item)
                continue
            elif t is bytes or t is bytearray or t is int or t is float:
                numbers.append(item)
                continue
            else:
                continue
            if depth >= 32:
                return "unknown"
            if all_scalars(parts):  # numbers and strings only: sorted in a few C loops
                strings.extend(part for part in parts if type(part) is str)
                numbers.extend(part for part in parts if type(part) is not str)
            else:
                stack.extend((part, depth + 1) for part in parts)
        if any(map(is_known_value, strings)) or any(map(_known, numbers)):
            return "value"
        verdict = self._looks(strings, numbers)
        return verdict if verdict is not None else "name" if named else None

    def _looks(self, strings: list[str], numbers: list[Any]) -> str | None:
        """Whether the masker would mask any of these strings (or bytes' text): asked of them joined into
        pieces of at most ``MAX_CHECKED`` characters, each a few milliseconds of its patterns, up to
        ``MAX_LOOKED`` in all (``"unknown"`` past it). A line break between two strings cannot make a
        pattern miss what it finds in either alone (none is anchored): it can only find more."""
        decoded = [_text(raw) or "" for raw in numbers if type(raw) is bytes or type(raw) is bytearray]
        texts = [text for text in (*strings, *decoded) if len(text) >= 6]
        if sum(map(len, texts)) > MAX_LOOKED:
            return "unknown"
        piece: list[str] = []
        size = 0
        for text in texts:
            if len(text) > MAX_CHECKED:
                return "unknown"
            if size + len(text) > MAX_CHECKED:
                if self.looks_secret("\n".join(piece)):
                    return "value"
                piece, size = [], 0
            piece.append(text)
            size += len(text) + 1
        return "value" if piece and self.looks_secret("\n".join(piece)) else None


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
