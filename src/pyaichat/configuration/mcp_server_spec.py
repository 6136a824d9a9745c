"""One MCP server's entry (``ServerSpec``): as the user configured it, and — the same class, every field
decided — ready to start (``mcptools.launch.launch``).

Plain classes with ``__slots__``, not dataclasses: a config file that lists servers is read at start-up, and
``dataclasses`` would cost the start-up the import and the code it generates.

Values of ``env`` and ``headers`` are ``Secret``s from the moment they are read: no ``repr``, ``/tools`` line,
audit entry or error sentence shows them. A started entry's ``secrets`` lists the ones worth masking in any
text that reaches the model (a token a server echoes in an error, say).
"""

from __future__ import annotations

from typing import Any

from .secret import Secret

TRUST_ASK = "ask"
TRUST_READ_ONLY = "read-only"
TRUSTS = (TRUST_ASK, TRUST_READ_ONLY)
TRANSPORTS = ("stdio", "http", "sse")

Pairs = tuple[tuple[str, Secret], ...]


class ServerSpec:
    """A server as the user configured it; ``overlay`` entries (no command, no url) only change settings of
    a server of the same name from the ``mcpServers`` JSON (its trust, say). Ready to start (``launch``),
    every ``${…}`` is filled in, the timeouts decided, ``own_timeouts`` names the ones its own entry set
    (``"start"``, ``"call"``) and ``secrets`` the values worth masking."""

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
        "own_timeouts",
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
        own_timeouts: tuple[str, ...] = (),
        secrets: tuple[str, ...] = (),
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
        self.origin, self.own_timeouts, self.secrets = origin, own_timeouts, secrets

    @property
    def overlay(self) -> bool:
        return self.command is None and self.url is None

    @property
    def read_only(self) -> bool:
        """The user marked this server read-only: its tools that say ``readOnlyHint`` run without asking."""
        return self.trust == TRUST_READ_ONLY

    def setting(self, kind: str) -> str:
        """The setting that decided the ``start`` or ``call`` timeout, as the user would look for it: the
        server's own ``start_timeout``, or the global ``mcp_start_timeout``."""
        if kind in self.own_timeouts:
            return f"{kind}_timeout in the server's own entry"
        return f"mcp_{kind}_timeout"

    def how_to_set(self, key: str, value: Any) -> str:
        """How the person sets ``key`` to ``value`` for this server, written the way the file that defines
        it writes it: ``"trust": "read-only" in its entry in mcp.json`` for a server from ``--mcp-config``
        JSON, ``trust = "read-only" in its [mcp_servers.NAME] table`` for the config file's. ``sampling`` and
        ``elicitation`` exist in the config file only (a file written for another client must not turn them
        on), so for a JSON server they go in a table of its name there."""
        import json  # with /tools only

        shown = json.dumps(value, ensure_ascii=False)
        json_file = next((part for part in self.origin.split(" and ") if part.endswith(".json")), None)
        if json_file is not None and key not in ("sampling", "elicitation"):
            return f'"{key}": {shown} in its entry in {json_file}'
        table = f"[mcp_servers.{self.name}]"
        where = f"a {table} table in the config file" if json_file is not None else f"its {table} table"
        return f"{key} = {shown} in {where}"

    def where(self) -> str:
        """Where the server is, for ``/tools`` (no secret: arguments and the url are the user's own text,
        but a password in a url is cut out)."""
        if self.url is not None:
            return _without_password(self.url)
        return " ".join((self.command or "", *self.args))

    def what_runs(self) -> str:
        """Everything of a started entry that decides what code runs and what it is given, for the pins' key
        (``mcptools.review.server_key``), as a JSON list so that no two entries read alike: the transport,
        the command and the program it resolves to (``PATH``, the directory), each argument apart, the
        directory, the environment and headers (values too: a ``PYTHONPATH`` or ``NODE_OPTIONS`` changes what
        runs), the url."""
        import json  # only when a server has listed its tools
        import os
        import shutil

        program = None
        if self.command:
            if os.sep in self.command:
                program = os.path.realpath(os.path.join(self.cwd or "", self.command))
            else:
                path = dict((k, v.get_secret_value()) for k, v in self.env).get(
                    "PATH", os.environ.get("PATH")
                )
                found = shutil.which(self.command, path=path)
                program = os.path.realpath(found) if found else None
        return json.dumps(
            [
                self.transport,
                self.command,
                program,
                list(self.args),
                self.cwd,
                sorted([k, v.get_secret_value()] for k, v in self.env),
                self.url,
                sorted([k, v.get_secret_value()] for k, v in self.headers),
            ],
            ensure_ascii=False,
        )

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


def _without_password(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        user = authority.rpartition("@")[0].partition(":")[0]
        authority = f"{user}:****@{authority.rpartition('@')[2]}" if user else authority.rpartition("@")[2]
    return f"{scheme}://{authority}{slash}{path}"
