"""An MCP server's entry made ready to start (``launch``, a ``ServerSpec`` with every field decided): its
``${…}`` references filled in from the user's environment, and the values worth masking wherever they appear.

``${env:NAME}`` / ``${NAME}`` / ``${NAME:-default}`` (the user's environment), ``${userHome}`` and
``${workspaceFolder}`` (the current directory) are filled in when a server starts (``launch``): only what the
entry lists reaches the server, on top of the few variables a program needs to run at all.

A stdio server without a ``cwd`` starts in the person's home directory, never in the directory the session was
started in: that may be a cloned repository, and ``python -m pkg``, ``npx``, ``uv run`` or a relative script
would then run the repository's code under the pins and trust the person gave the server they configured.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from ..capabilities.redact import is_existing_path, is_secret_name
from ..configuration.mcp_server_spec import TRUSTS, ServerSpec
from ..configuration.mcp_servers import EntryError
from ..configuration.secret import Secret

_REFERENCE = re.compile(r"\$\{(?P<body>[^}]*)\}")


def worth_masking(key: str, value: str) -> list[str]:
    """The parts of an ``env``/``headers`` value to mask wherever they appear: the whole value when it could
    be a credential (a secret-looking name, or eight characters or more mixing letters and digits), and the
    token of an ``Authorization: Bearer …`` header on its own. Short words (``debug``) and paths that exist
    are left alone, or every mention of them in a result would be masked too."""
    value = value.strip()
    if len(value) < 8 or is_existing_path(value):
        return []
    mixed = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    if not (mixed or is_secret_name(key) or key.lower() in ("authorization", "cookie")):
        return []
    found = [value]
    scheme, _, token = value.partition(" ")
    if token and scheme.lower() in ("bearer", "basic", "token") and len(token) >= 8:
        found.append(token.strip())
    return found


def launch(
    spec: ServerSpec,
    *,
    start_timeout: float,
    call_timeout: float,
    environ: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> ServerSpec:
    """``spec`` with its references filled in from ``environ`` (default: this process's) and the default
    timeouts applied; ``EntryError`` when it cannot start as written (a variable that is not set, a VS Code
    ``${input:…}`` prompt pyaichat cannot show)."""
    environ = os.environ if environ is None else environ
    here = cwd or os.getcwd()

    def fill(text: str) -> str:
        return _expand(spec.name, text, environ, here)

    if spec.overlay:
        raise EntryError(
            f"The MCP server {spec.name!r} in the config file has no command or url, and no server of that "
            "name is in the MCP config file to apply it to"
        )
    command = os.path.expanduser(fill(spec.command)) if spec.command is not None else None
    env = tuple((k, Secret(fill(v.get_secret_value()))) for k, v in spec.env)
    headers = tuple((k, Secret(fill(v.get_secret_value()))) for k, v in spec.headers)
    transport = spec.transport or ("stdio" if command else "http")
    found = {text for key, value in (*env, *headers) for text in worth_masking(key, value.get_secret_value())}
    return ServerSpec(
        spec.name,
        transport=transport,
        command=command,
        args=tuple(fill(a) for a in spec.args),
        env=env,
        cwd=None
        if transport != "stdio"
        else _directory(fill(spec.cwd), here)
        if spec.cwd
        else _home(environ),
        url=fill(spec.url) if spec.url is not None else None,
        headers=headers,
        trust=spec.trust or TRUSTS[0],
        start_timeout=spec.start_timeout or start_timeout,
        call_timeout=spec.call_timeout or call_timeout,
        roots=tuple(os.path.abspath(os.path.expanduser(fill(r))) for r in spec.roots or ()),
        sampling=bool(spec.sampling),
        elicitation=bool(spec.elicitation),
        enabled=spec.enabled,
        origin=spec.origin,
        own_timeouts=tuple(
            kind for kind, own in (("start", spec.start_timeout), ("call", spec.call_timeout)) if own
        ),
        secrets=tuple(sorted(found, key=len, reverse=True)),
    )


def _home(environ: Mapping[str, str]) -> str:
    """Where a stdio server without its own ``cwd`` starts: the person's home, whatever the session's."""
    return os.path.abspath(environ.get("HOME") or os.path.expanduser("~"))


def _directory(cwd: str, here: str) -> str:
    """An entry's own ``cwd``, absolute (a relative one is the person's choice: from the current one)."""
    return os.path.normpath(os.path.join(here, os.path.expanduser(cwd)))


def _expand(server: str, text: str, environ: Mapping[str, str], here: str) -> str:
    def one(m: re.Match[str]) -> str:
        body = m["body"].strip()
        if body.startswith("input:"):
            raise EntryError(
                f"The MCP server {server!r} asks for the VS Code input {body[6:]!r}, which pyaichat cannot "
                "prompt for; put the value in the entry's env, or as ${env:NAME} from your environment"
            )
        if body == "userHome":
            return _home(environ)
        if body in ("workspaceFolder", "cwd"):
            return here
        name, default = body.removeprefix("env:"), None
        if ":-" in name:
            name, default = name.split(":-", 1)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise EntryError(
            f"The MCP server {server!r} uses ${{{body}}}, but {name} is not set in your environment"
        )

    return _REFERENCE.sub(one, text)
