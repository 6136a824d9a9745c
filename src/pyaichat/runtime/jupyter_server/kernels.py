"""A kernel on a Jupyter Server or JupyterHub (``pyaichat --server URL``), as a ``KernelRuntime``.

The kernel runtime is the one ``--existing`` uses: ``KernelConnection`` with its helper, ``CellRun`` for
inputs, ``kernel_link.OPERATIONS`` for everything the assistant asks. Only the transport differs: a
``kernel_socket.SocketKernelClient`` (the kernel websocket) instead of ``jupyter_client``'s ZMQ client, and a
``ServerKernel`` (the REST API) in the place of the kernel manager: interrupts, liveness and the shutdown of a
kernel pyaichat started. ``ServerKernelConnection`` says which kernel this is and why it is gone in the words
of a server, not of a connection file.

Which kernel: ``running(api)`` lists them with their notebooks (the server's sessions), ``pick`` finds one by
id (or a prefix of it) or by notebook path, ``attach`` connects to it, ``start`` starts a new one of a
kernelspec (shut down when pyaichat exits, unless kept).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TextIO

from ...printable import show
from .. import KernelUnavailable
from ..kernel import KernelRuntime
from ..kernel_connection import KernelConnection
from .kernel_socket import SocketKernelClient
from .rest import ServerAPI, ServerError

if TYPE_CHECKING:
    from ...configuration.config import Config

SLOW = 0.25  # seconds a round trip: a link this slow is named when attaching
CONNECT_TIMEOUT = 30.0


# -- which kernels run there ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class KernelEntry:
    """A running kernel as the server lists it, with the notebooks (sessions) that use it."""

    id: str
    name: str
    state: str
    last_activity: str  # ISO 8601, as the server says it ("" when it does not)
    connections: int = 0
    paths: tuple[str, ...] = field(default=())

    @property
    def short(self) -> str:
        return self.id[:8]

    @property
    def notebook(self) -> str:
        return ", ".join(self.paths) or "(no notebook)"

    def idle_for(self, now: datetime | None = None) -> str:
        """How long ago the kernel last did something, in a few words."""
        try:
            then = datetime.fromisoformat(self.last_activity.replace("Z", "+00:00"))
        except ValueError:
            return "unknown"
        seconds = ((now or datetime.now(timezone.utc)) - then).total_seconds()
        if seconds < 60:
            return "just now"
        if seconds < 3600:
            return f"{int(seconds // 60)} min ago"
        if seconds < 86400:
            return f"{int(seconds // 3600)} h ago"
        return f"{int(seconds // 86400)} d ago"


def running(api: ServerAPI) -> list[KernelEntry]:
    """The server's running kernels, the most recently active first."""
    paths: dict[str, list[str]] = {}
    for session in api.sessions():
        kernel = session.get("kernel") or {}
        if kernel.get("id"):
            paths.setdefault(kernel["id"], []).append(str(session.get("path") or session.get("name") or ""))
    entries = [
        KernelEntry(
            id=str(k["id"]),
            name=str(k.get("name", "")),
            state=str(k.get("execution_state", "unknown")),
            last_activity=str(k.get("last_activity") or ""),
            connections=int(k.get("connections") or 0),
            paths=tuple(p for p in paths.get(k["id"], []) if p),
        )
        for k in api.kernels()
    ]
    return sorted(entries, key=lambda e: e.last_activity, reverse=True)


def table(entries: list[KernelEntry], numbered: bool = False) -> list[str]:
    """The kernels as aligned lines (``--list`` and the menu)."""
    rows = [("#" if numbered else "", "kernel", "name", "notebook", "state", "last activity")]
    rows += [
        (f"{n}" if numbered else "", e.short, e.name, e.notebook, e.state, e.idle_for())
        for n, e in enumerate(entries, 1)
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    start = 0 if numbered else 1
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row[start:], widths[start:], strict=True)).rstrip()
        for row in rows
    ]


def pick(
    entries: list[KernelEntry], *, kernel_id: str | None = None, notebook: str | None = None
) -> KernelEntry:
    """The one kernel ``kernel_id`` (or a unique prefix of it) or ``notebook`` (a path, its end, or its file
    name) names; ``ServerError`` (one sentence) when none or several do."""
    if kernel_id:
        found = [e for e in entries if e.id == kernel_id] or [
            e for e in entries if e.id.startswith(kernel_id)
        ]
        what = f"kernel {kernel_id}"
    else:
        wanted = (notebook or "").strip("/")
        found = [e for e in entries if wanted in e.paths]
        found = found or [e for e in entries if any(p.endswith("/" + wanted) for p in e.paths)]
        found = found or [e for e in entries if any(wanted in p for p in e.paths)]
        what = f"a notebook {notebook!r}"
    if len(found) == 1:
        return found[0]
    if not found:
        running_now = f"{len(entries)} kernel{'s' if len(entries) != 1 else ''} running"
        raise ServerError(f"The server runs no {what} ({running_now}; --list shows them).")
    names = ", ".join(e.short for e in found)
    raise ServerError(f"Several kernels match {what} ({names}): give more of the kernel id.")


# -- the kernel, reached through the server ------------------------------------------------------------------
class ServerKernel:
    """What ``KernelConnection`` asks of a kernel manager, answered by the server's REST API: liveness,
    interrupts, and the shutdown — only of a kernel pyaichat started, and not with ``--keep``."""

    def __init__(
        self, api: ServerAPI, client: SocketKernelClient, entry: KernelEntry, *, owned: bool, keep: bool
    ) -> None:
        self.api = api
        self.client = client
        self.entry = entry
        self.kernel_name = entry.name
        self.owned = owned
        self.keep = keep

    def is_alive(self) -> bool:
        return self.client.is_alive()

    def interrupt_kernel(self) -> None:
        """The server interrupts the kernel its own way (a signal or a message, as its kernelspec says)."""
        try:
            self.api.interrupt(self.entry.id)
        except ServerError:  # the REST side is down: ask the kernel itself over the websocket
            self.client.control_channel.send(self.client.session.msg("interrupt_request", {}))

    def shutdown_kernel(self, now: bool = False) -> None:
        if self.owned and not self.keep:
            try:
                self.api.shutdown(self.entry.id)
            except ServerError:
                pass  # the server is gone: so is the kernel, or it cannot be reached to shut down


class ServerKernelConnection(KernelConnection):
    """A ``KernelConnection`` whose kernel runs behind a Jupyter Server."""

    def __init__(self, server: ServerKernel, *, color: bool = True, err: TextIO | None = None) -> None:
        super().__init__(server.client, server, color=color, err=err)
        self.server = server
        self._output_lost = False
        server.client.notice = self.say

    def alive(self) -> bool:
        if self.server.client.lost_replies():
            self._output_lost = True
            return False
        return self.server.client.is_alive()

    def say(self, text: str) -> None:
        """One line for the person (from the websocket's thread: printed above the prompt while it is up)."""
        show(f"pyaichat: {text}", file=self.err, flush=True)  # a server's words among them

    def dead(self, *, while_running: bool = False) -> KernelUnavailable:
        client = self.server.client
        if self._output_lost:
            self._output_lost = False
            return KernelUnavailable(
                "The link to the server dropped while this input ran, and the server kept none of its output "
                "for pyaichat (another client is attached to the kernel); the kernel ran it: its results are "
                "there."
            )
        if client.gone:
            return KernelUnavailable(client.gone)
        kernel = self.server.entry.short
        if while_running:
            return KernelUnavailable(
                f"Kernel {kernel} died while running this input and the server could not restart it; its "
                "variables are gone."
            )
        return KernelUnavailable(
            f"Kernel {kernel} on the server died and could not be restarted; its variables are gone "
            "(start pyaichat --server again to pick or start another)."
        )

    def describe(self) -> str:
        info = self.kernel_info.get("language_info") or {}
        what = f"{info.get('name', '')} {info.get('version', '')}".strip()
        entry, server = self.server.entry, self.server
        details = ", ".join(x for x in (entry.name, what, *(f"notebook {p}" for p in entry.paths)) if x)
        where = server.api.address.shown
        slow = self.round_trip()
        link = f" over a slow link ({slow * 1000:.0f} ms a round trip)" if slow and slow > SLOW else ""
        if server.owned:
            end = "Ctrl-D leaves it running (--keep)" if server.keep else "Ctrl-D exits and shuts it down"
            return f"started kernel {entry.short} ({details}) on {where}{link}; {end}"
        end = "Ctrl-D detaches and leaves it running"
        return f"attached to kernel {entry.short} ({details}) on {where}{link}; {end}"

    def close(self) -> None:
        super().close()
        server = self.server
        if server.owned and server.keep and server.client.is_alive():
            shown = server.api.address.shown
            self.say(
                f"kernel {server.entry.short} keeps running on {shown} (--keep): "
                f"pyaichat --server {shown} --kernel-id {server.entry.short} attaches to it again."
            )

    def round_trip(self) -> float | None:
        """The median round trip to the server, in seconds (pings), or ``None`` before the first."""
        trips = sorted(self.server.client.round_trips)
        return trips[len(trips) // 2] if trips else None

    def status_lines(self) -> list[str]:
        """What ``/status`` shows about the kernel and the link (measured now)."""
        server, client = self.server, self.server.client
        lines = [self.describe()]
        model = _quietly(lambda: server.api.kernel(server.entry.id))
        if model:
            entry = KernelEntry(server.entry.id, server.entry.name, "", str(model.get("last_activity") or ""))
            lines.append(
                f"Kernel: {model.get('execution_state', 'unknown')}, last activity {entry.idle_for()}, "
                f"{model.get('connections', '?')} connection(s) on the server."
            )
        fresh = client.measure()
        trip = f"{fresh * 1000:.0f} ms" if fresh is not None else "no answer within 2 s"
        framing = "v1.kernel.websocket.jupyter.org" if client.subprotocol else "legacy JSON"
        drops = f"; reconnected {client.drops} time(s)" if client.drops else ""
        lines.append(
            f"Link: websocket ({framing}), {trip} a round trip to the server; {self.helper_latency()}{drops}."
        )
        return lines

    @property
    def connection_path(self) -> str | None:
        return None  # a server's kernel is reached by its address, not a connection file

    def reopen(self) -> KernelConnection:
        """A second connection to the same kernel (its own websocket and session), never shutting it down:
        for ``/mcp on``, whose calls come from another thread."""
        return _connected(self.server.api, self.server.entry, color=self.color)


def _quietly(call: Any) -> Any:
    try:
        return call()
    except ServerError:
        return None


def attach(
    api: ServerAPI,
    entry: KernelEntry,
    config: Config,
    *,
    owned: bool = False,
    keep: bool = False,
    timeout: float = CONNECT_TIMEOUT,
) -> KernelRuntime:
    """Connect to kernel ``entry`` over its websocket and load pyaichat's helper into it."""
    return KernelRuntime(
        _connected(api, entry, color=config.color, owned=owned, keep=keep, timeout=timeout), config
    )


def _connected(
    api: ServerAPI,
    entry: KernelEntry,
    *,
    color: bool,
    owned: bool = False,
    keep: bool = False,
    timeout: float = CONNECT_TIMEOUT,
) -> ServerKernelConnection:
    client = SocketKernelClient(api, entry.id)
    server = ServerKernel(api, client, entry, owned=owned, keep=keep)
    try:
        client.start_channels()
    except BaseException:
        client.stop_channels()
        server.shutdown_kernel()
        raise
    kernel = ServerKernelConnection(server, color=color)
    try:
        kernel.connect(timeout)
        client.measure(1.0)  # the first round trip, for the line that says where this runs
    except BaseException:
        kernel.close()
        raise
    return kernel


def start(api: ServerAPI, name: str | None, config: Config, *, keep: bool = False) -> KernelRuntime:
    """Start a kernel of kernelspec ``name`` (the server's default when ``None``) and attach to it; it is
    shut down when pyaichat exits unless ``keep``."""
    if name:
        specs = api.kernelspecs().get("kernelspecs") or {}
        if specs and name not in specs:
            known = ", ".join(sorted(specs))
            raise ServerError(f"The server has no kernelspec {name!r} (it has: {known}).")
    model = api.start_kernel(name)
    entry = KernelEntry(
        id=str(model["id"]),
        name=str(model.get("name") or name or ""),
        state=str(model.get("execution_state", "starting")),
        last_activity=str(model.get("last_activity") or ""),
    )
    return attach(api, entry, config, owned=True, keep=keep)
