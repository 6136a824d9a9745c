"""One example of each runtime operation that travels to a kernel (``runtime.kernel_link.OPERATIONS``), in an
order that makes sense on one session. ``tests/core/test_runtime_link.py`` runs them through a loopback link
and ``tests/kernel/test_kernel_link.py`` through a real kernel; both fail while an operation has no example
here.

A step is ``("code", source)`` (run as the user's input) or ``(operation, arguments)``; a property's
arguments are ``None``.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from pyaichat.runtime.kernel_link import is_attribute

SETUP = "x = 41\nitems = [1, 2, 3]\napi_token = 'link-example-Zq8vN3xL0pR7'\n"


def steps(directory: Path) -> list[tuple[str, Any]]:
    snapshot = str(directory / "link-test.snapshot")
    return [
        ("code", SETUP),
        ("call", {"name": "get_type", "args": {"expr": "items"}}),
        ("call", {"name": "get_repr", "args": {"expr": "x"}, "origin": "user"}),
        ("tools", {}),
        ("sandbox_walls", {}),
        ("picture", {}),
        ("history", None),
        ("user_names", {}),
        ("audit_log", {"count": 2}),
        ("know_secrets", {}),
        ("suggestion_facts", {"before": "total = sum(items) + x", "after": ""}),
        ("preview", {"source": "x = x + 1"}),
        ("begin_proposal", {"source": "x = 42"}),
        ("code", "x = 42"),
        ("end_proposal", {}),
        ("undo", {}),
        ("save_variables", {"path": snapshot}),
        ("load_variables", {"path": snapshot}),
    ]


def invoke(runtime: Any, name: str, arguments: dict[str, Any] | None) -> Any:
    """Operation ``name`` on ``runtime``: read the property, or call the method with ``arguments``."""
    if is_attribute(name):
        return getattr(runtime, name)
    return getattr(runtime, name)(**(arguments or {}))


def with_defaults(function: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` as the local runtime's method receives them, defaults filled in."""
    bound = inspect.signature(function).bind(None, **arguments)
    bound.apply_defaults()
    received = dict(bound.arguments)
    received.pop(next(iter(received)))
    return received
