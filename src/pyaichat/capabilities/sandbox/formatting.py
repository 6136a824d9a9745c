"""Format strings: ``str.format``/``format_map`` may not walk attributes or items through their fields
(``'{0.__class__}'.format(x)``), the RestrictedPython advisory class; f-strings are compiled and guarded."""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from typing import Any

from ...errors import SandboxViolation

_formatter = string.Formatter()


def check_format(fmt: str) -> None:
    for _literal, field_name, spec, _conv in _formatter.parse(fmt):
        if field_name is not None and any(c in field_name for c in ".["):
            raise SandboxViolation(
                "format fields cannot read attributes or items in the sandbox; use an f-string instead"
            )
        if spec:
            check_format(spec)


def safe_format(s: str) -> Callable[..., str]:
    def format(*args: Any, **kwargs: Any) -> str:
        check_format(s)
        return s.format(*args, **kwargs)

    return format


def safe_format_map(s: str) -> Callable[[Mapping[str, Any]], str]:
    def format_map(mapping: Mapping[str, Any]) -> str:
        check_format(s)
        return s.format_map(mapping)

    return format_map


def unbound_format(s: str, *args: Any, **kwargs: Any) -> str:
    if not isinstance(s, str):
        raise TypeError("descriptor 'format' requires a 'str' object")
    return safe_format(s)(*args, **kwargs)


def unbound_format_map(s: str, mapping: Mapping[str, Any]) -> str:
    if not isinstance(s, str):
        raise TypeError("descriptor 'format_map' requires a 'str' object")
    return safe_format_map(s)(mapping)
