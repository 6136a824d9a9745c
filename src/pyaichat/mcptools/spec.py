"""One MCP server's entry (``ServerSpec``), and the same entry ready to start (``Launch``).

Plain classes with ``__slots__``, not dataclasses: a config file that lists servers is read at start-up, and
``dataclasses`` would cost the start-up the import and the code it generates.

Values of ``env`` and ``headers`` are ``Secret``s from the moment they are read: no ``repr``, ``/tools`` line,
audit entry or error sentence shows them. ``Launch.secrets`` lists the ones worth masking in any text that
reaches the model (a token a server echoes in an error, say).
"""

from __future__ import annotations

import os
from typing import Any

from ..secret import Secret

TRUST_ASK = "ask"
TRUST_READ_ONLY = "read-only"
TRUSTS = (TRUST_ASK, TRUST_READ_ONLY)
TRANSPORTS = ("stdio", "http", "sse")

Pairs = tuple[tuple[str, Secret], ...]


class ServerSpec:
    """A server as the user configured it; ``overlay`` entries (no command, no url) only change settings of
    a server of the same name from the ``mcpServers`` JSON (its trust, say)."""

    __slots__ = (
        "args",
        "call_timeout",
        "command",
        "cwd",
        "elicitation",
        "enabled",
        "env",
        "headers",
        "name",
        "origin",
        "roots",
        "sampling",
        "start_timeout",
        "transport",
        "trust",
        "url",
    )

    def __init__(
        self,
        name: str,
        *,
        command: str | None = None,
        args: tuple[str, ...] = (),
        env: Pairs = (),
        cwd: str | None = None,
        url: str | None = None,
        headers: Pairs = (),
        transport: str | None = None,
        trust: str | None = None,
        start_timeout: float | None = None,
        call_timeout: float | None = None,
        roots: tuple[str, ...] | None = None,
        sampling: bool | None = None,
        elicitation: bool | None = None,
        enabled: bool | None = None,
        origin: str = "",
    ) -> None:
        self.name, self.command, self.args, self.env, self.cwd = name, command, args, env, cwd
        self.url, self.headers, self.transport, self.trust = url, headers, transport, trust
        self.start_timeout, self.call_timeout, self.roots, self.enabled = (
            start_timeout,
            call_timeout,
            roots,
            enabled,
        )
        self.sampling, self.elicitation = sampling, elicitation
        self.origin = origin

    @property
    def overlay(self) -> bool:
        return self.command is None and self.url is None

    @property
    def read_only(self) -> bool:
        """The user marked this server read-only: its tools that say ``readOnlyHint`` run without asking."""
        return self.trust == TRUST_READ_ONLY

    def over(self, base: ServerSpec) -> ServerSpec:
        """``base`` with every setting this entry gives replacing its own (``None``: not given)."""
        values = {slot: getattr(base, slot) for slot in self.__slots__}
        for slot in self.__slots__:
            mine = getattr(self, slot)
            if mine is not None and mine != () and slot not in ("name", "origin"):
                values[slot] = mine
        values["origin"] = f"{base.origin} and {self.origin}"
        name = values.pop("name")
        return ServerSpec(name, **values)

    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, slot) for slot in self.__slots__ if slot != "origin")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ServerSpec) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        where = self.url if self.command is None else " ".join((self.command, *self.args))
        env = f", env: {', '.join(k for k, _ in self.env)}" if self.env else ""
        headers = f", headers: {', '.join(k for k, _ in self.headers)}" if self.headers else ""
        return f"ServerSpec({self.name!r}: {where}{env}{headers}, trust={self.trust or TRUST_ASK})"


class Launch:
    """A server ready to start: every ``${…}`` filled in, the timeouts decided. Values stay ``Secret``s."""

    __slots__ = (
        "args",
        "call_timeout",
        "command",
        "cwd",
        "elicitation",
        "env",
        "headers",
        "name",
        "roots",
        "sampling",
        "secrets",
        "start_timeout",
        "transport",
        "trust",
        "url",
    )

    def __init__(
        self,
        name: str,
        *,
        transport: str,
        command: str | None,
        args: tuple[str, ...],
        env: dict[str, Secret],
        cwd: str | None,
        url: str | None,
        headers: dict[str, Secret],
        trust: str,
        start_timeout: float,
        call_timeout: float,
        roots: tuple[str, ...],
        sampling: bool = False,
        elicitation: bool = False,
    ) -> None:
        self.name, self.transport, self.command, self.args, self.env = name, transport, command, args, env
        self.cwd, self.url, self.headers, self.trust = cwd, url, headers, trust
        self.start_timeout, self.call_timeout, self.roots = start_timeout, call_timeout, roots
        self.sampling, self.elicitation = sampling, elicitation  # requests back the user turned on
        self.secrets = tuple(
            sorted(
                {
                    text
                    for key, value in (*env.items(), *headers.items())
                    for text in worth_masking(key, value.get_secret_value())
                },
                key=len,
                reverse=True,
            )
        )

    @property
    def read_only(self) -> bool:
        return self.trust == TRUST_READ_ONLY

    def where(self) -> str:
        """Where the server is, for ``/tools`` (no secret: arguments and the url are the user's own text,
        but a password in a url is cut out)."""
        if self.url is not None:
            return _without_password(self.url)
        return " ".join((self.command or "", *self.args))

    def __repr__(self) -> str:
        return f"Launch({self.name!r}: {self.where()}, trust={self.trust})"


def worth_masking(key: str, value: str) -> list[str]:
    """The parts of an ``env``/``headers`` value to mask wherever they appear: the whole value when it could
    be a credential (a secret-looking name, or eight characters or more mixing letters and digits), and the
    token of an ``Authorization: Bearer …`` header on its own. Short words (``debug``) and paths that exist
    are left alone, or every mention of them in a result would be masked too."""
    from ..capabilities.redact import is_secret_name  # only when a server starts

    value = value.strip()
    if len(value) < 8 or _is_existing_path(value):
        return []
    mixed = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    if not (mixed or is_secret_name(key) or key.lower() in ("authorization", "cookie")):
        return []
    found = [value]
    scheme, _, token = value.partition(" ")
    if token and scheme.lower() in ("bearer", "basic", "token") and len(token) >= 8:
        found.append(token.strip())
    return found


def _is_existing_path(value: str) -> bool:
    try:
        return os.sep in value and os.path.exists(value)
    except (OSError, ValueError):
        return False


def _without_password(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        user = authority.rpartition("@")[0].partition(":")[0]
        authority = f"{user}:****@{authority.rpartition('@')[2]}" if user else authority.rpartition("@")[2]
    return f"{scheme}://{authority}{slash}{path}"
