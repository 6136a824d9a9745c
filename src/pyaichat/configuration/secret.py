"""``Secret``: a string that never shows itself, for the API key and the values MCP servers are given.

Its own module so that the settings checks and the MCP server entries (``configuration.mcp_server_spec``)
share one class without importing each other.
"""

from __future__ import annotations


class Secret:
    """A string that never shows itself in a ``repr`` or ``str`` (the API key)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('**********')"

    def __str__(self) -> str:
        return "**********"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)
