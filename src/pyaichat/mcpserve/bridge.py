"""What ``pyaichat mcp`` serves: the person's running session, found through the discovery records.

An agent starts ``pyaichat mcp`` when it starts (``claude mcp add pyaichat -- pyaichat mcp``), often before
any session serves, and keeps it for hours while sessions come and go. So the switchboard connects lazily, on
each call that needs a session, and again after a session stops serving:

- one session serving: that one;
- several: the one started in the agent's working directory (the project it works on), else the newest; the
  ``pyaichat_sessions`` tool lists them all and picks another (``use=<pid>``);
- none: every call answers with one sentence saying how to start one.

A record proves nothing by itself: the switchboard connects only to the session's own socket in the private
records directory, and only when the process listening there is the record's pid, of this user
(``discovery.endpoint_of``, ``link.prove``). A record that fails is refused with one sentence, which the
agent is given (and the bridge's error output, which the agent's client keeps in its log).

Standard library only (the SDK lives in ``face``); the tool table before any session answers is this
installation's own, which is what a session of it serves.
"""

from __future__ import annotations

import os
import sys
import threading
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..ipc import ChannelClosed
from ..printable import show
from . import discovery
from .link import SessionLink, Unproven, failure
from .tools import tool_table

if TYPE_CHECKING:
    from .backend import LocalBackend

SESSIONS = "pyaichat_sessions"
NO_SESSION = (
    "No pyaichat session is serving to agents. Ask the person to start one with `pyaichat` and type "
    "/mcp on (or to start it with `pyaichat --mcp`), then call this tool again."
)


def no_session(directory: str | None = None) -> str:
    """``NO_SESSION``, and where ``pyaichat mcp`` looked: an agent often starts it with an environment of its
    own (another ``XDG_RUNTIME_DIR`` or ``HOME``, a sandbox), and then finds nothing the person's terminal
    would."""
    where = directory or discovery.records_dir()
    runtime = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    source = (
        f"XDG_RUNTIME_DIR={runtime}"
        if directory is None and runtime and os.path.isdir(runtime)
        else "no usable XDG_RUNTIME_DIR, so the state directory"
    )
    return (
        f"{NO_SESSION} (pyaichat mcp looked in {where}, from {source}. An agent may start this command "
        "with another environment than the person's terminal — a different XDG_RUNTIME_DIR, HOME or "
        "sandbox — and then finds nothing: give it the same XDG_RUNTIME_DIR in its MCP server entry's env.)"
    )


SESSIONS_TOOL: dict[str, Any] = {
    "name": SESSIONS,
    "description": "List the person's pyaichat sessions serving agents; use=<pid> switches to another.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "use": {"type": "integer", "description": "the pid of the session to use from now on"}
        },
        "additionalProperties": False,
    },
    "annotations": {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    },
}


class Switchboard:
    """The face backend of ``pyaichat mcp``: the chosen live session, (re)connected on demand."""

    def __init__(self, directory: str | None = None, cwd: str | None = None) -> None:
        self.directory = directory
        self.cwd = os.path.realpath(cwd or os.getcwd())
        self._link: SessionLink | None = None
        self._record: dict[str, Any] | None = None
        self._wanted: int | None = None  # the pid the agent picked
        self._lock = threading.Lock()
        self._local_tools: list[dict[str, Any]] | None = None
        self.refused: dict[str, str] = {}  # record path → why it was refused (said once on stderr)

    # -- the face's backend ----------------------------------------------------------------------------------
    def tools(self) -> list[dict[str, Any]]:
        link = self.link()
        if link is not None:
            return [*link.tools, SESSIONS_TOOL]
        if self._local_tools is None:  # this installation's own tools: what a session of it serves
            from ..runtime.local import LocalRuntime
            from ..session import Session

            self._local_tools = tool_table(LocalRuntime(Session()), proposals=True)
        return [*self._local_tools, SESSIONS_TOOL]

    async def call(self, key: str, client: str, transport: str, name: str, args: Any) -> dict[str, Any]:
        import anyio  # the face's event loop

        if name == SESSIONS:
            return await anyio.to_thread.run_sync(self._sessions, args if isinstance(args, dict) else {})
        for _attempt in (1, 2):  # the session may have stopped serving since the last call: look again once
            link = self._link if self._link is not None and not self._link.closed else None
            if link is None:  # finding and connecting reads files and waits on sockets: not on the loop
                link = await anyio.to_thread.run_sync(self.link)
            if link is None:
                return failure(self._none())
            try:
                return await link.acall(key, client, transport, name, args)
            except ChannelClosed:
                self._drop(link)
        return failure(self._none())

    def _none(self) -> str:
        """Why no session answers: the records refused, or that none serves."""
        refused = list(self.refused.values())
        return " ".join(refused) if refused else no_session(self.directory)

    # -- choosing and connecting -----------------------------------------------------------------------------
    def link(self) -> SessionLink | None:
        with self._lock:
            if self._link is not None and not self._link.closed:
                return self._link
            self._link = self._record = None
            refused: dict[str, str] = {}
            for record in self._candidates():
                try:
                    address = discovery.endpoint_of(record, self.directory)
                    link = SessionLink.connect(address, record["token"], face="stdio", pid=record["pid"])
                except Unproven as exc:
                    refused[record["path"]] = (
                        f"pyaichat mcp refused the session record of pid {record['pid']}: {exc}."
                    )
                    continue
                except discovery.Refused as exc:
                    refused[record["path"]] = str(exc)
                    continue
                except (ChannelClosed, KeyError, TypeError):
                    continue
                self._link, self._record = link, record
                break
            for path, sentence in refused.items():
                if self.refused.get(path) != sentence:
                    show(sentence, file=sys.stderr, flush=True)
            self.refused = refused
            return self._link

    def _candidates(self) -> list[dict[str, Any]]:
        records = discovery.read_records(self.directory)
        if self._wanted is not None:
            records = [r for r in records if r.get("pid") == self._wanted] or records
        here = [r for r in records if _same_dir(r.get("cwd"), self.cwd)]
        return here + [r for r in records if r not in here]

    def _drop(self, link: SessionLink) -> None:
        with self._lock:
            if self._link is link:
                self._link = self._record = None
        link.close()

    def _sessions(self, args: dict[str, Any]) -> dict[str, Any]:
        wanted = args.get("use")
        records = discovery.read_records(self.directory)
        if wanted is not None:
            if not any(r.get("pid") == wanted for r in records):
                return failure(f"No serving session has pid {wanted!r}; call {SESSIONS} to list them.")
            with self._lock:
                self._wanted = wanted
                if self._link is not None and (self._record or {}).get("pid") != wanted:
                    self._link.close()
                    self._link = self._record = None
        if not records:
            return failure(no_session(self.directory))
        current = self.link()
        chosen = (self._record or {}).get("pid") if current is not None else None
        lines = []
        for record in records:
            mark = "→ " if record.get("pid") == chosen else "  "
            lines.append(
                f"{mark}pid {record.get('pid')} · {record.get('where', 'pyaichat')} · {record.get('cwd')}"
                f" · since {_clock(record.get('started_ts'))}"
            )
        note = f"Using pid {chosen}." if chosen else "None of them answers right now."
        count = "1 session is" if len(records) == 1 else f"{len(records)} sessions are"
        text = "\n".join([f"{count} serving agents:", *lines, note, *self.refused.values()])
        return {"ok": True, "text": text, "error": None, "truncated": False, "duration_ms": 0.0, "images": []}


class HeadlessBackend:
    """The face backend of ``pyaichat mcp --existing/--kernel``: a kernel's namespace through the kernel
    runtime, read-only tools only (nobody is at a terminal to approve anything)."""

    def __init__(self, local: LocalBackend) -> None:
        self.local = local

    def tools(self) -> list[dict[str, Any]]:
        return self.local.tools()

    async def call(self, key: str, client: str, transport: str, name: str, args: Any) -> dict[str, Any]:
        import anyio  # the face's event loop; the kernel runtime blocks, so a worker thread runs the call

        from .backend import to_wire

        record = self.local.clients.seen(key, client, transport)
        return to_wire(await anyio.to_thread.run_sync(self.local.call, name, args, record))


def _same_dir(a: Any, b: str) -> bool:
    try:
        return isinstance(a, str) and os.path.realpath(a) == b
    except (OSError, ValueError):
        return False


def _clock(stamp: Any) -> str:
    try:
        return datetime.fromtimestamp(float(stamp)).strftime("%Y-%m-%d %H:%M")
    except (TypeError, ValueError, OSError):
        return "?"
