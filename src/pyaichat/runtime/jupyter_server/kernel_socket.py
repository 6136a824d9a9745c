"""A kernel client over a Jupyter Server's kernel websocket (``/api/kernels/ID/channels``).

``KernelConnection`` and ``CellRun`` talk to a kernel through ``jupyter_client``'s client surface: a
``session`` that makes messages, and shell, IOPub, stdin and control channels with ``send``, ``get_msg``,
``msg_ready`` and a pollable ``socket``. ``SocketKernelClient`` is that surface with the five channels
multiplexed on one websocket, so the kernel runtime above runs unchanged on a kernel behind a server.

- The message layer is ``jupyter_client``'s: the request methods (``execute``, ``complete``, ``input``, …) are
  ``KernelClient``'s own, messages are made and read by its ``Session`` (unsigned: the server signs what it
  forwards to the kernel with the kernel's key, which never leaves the server).
- The framing is the server's: the ``v1.kernel.websocket.jupyter.org`` subprotocol when the server offers it
  (binary frames, the message parts as the kernel sent them), else the legacy JSON form (older servers,
  Enterprise Gateway), both as ``jupyter_server.services.kernels.connection`` writes them.
- The websocket is ``websocket-client``'s (synchronous, threads: the REPL is synchronous too). One thread
  reads frames into the channels' queues; each queue has a readiness pipe for its ``socket``, so
  ``zmq.Poller`` waits on these channels exactly as it waits on ZMQ sockets. A ping every few seconds keeps
  proxies from closing an idle link and measures its round trip (``/status``).
- A dropped websocket is opened again with the same session id, so the server replays what the kernel sent
  meanwhile; one line says so. A kernel the server no longer has, a token it no longer takes, or a link down
  for longer than ``RECONNECT_FOR`` ends the client (``gone`` says why in one sentence).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import websocket
from jupyter_client.client import KernelClient
from jupyter_client.jsonutil import json_default
from jupyter_client.session import Session

from .rest import ServerAPI, ServerError
from .socket_channels import KernelSocketChannel, decode_legacy, decode_v1, encode_v1

V1 = "v1.kernel.websocket.jupyter.org"
CHANNELS = ("shell", "iopub", "stdin", "control")
PING_EVERY = 5.0  # seconds between pings (keeps proxies from closing an idle link; measures the round trip)
PING_TIMEOUT = 30.0  # no pong for this long: the link is down (a cut that sent no FIN)
RECONNECT_FOR = 60.0  # seconds to keep trying after a drop before giving up
QUIET = 3.0  # seconds without a word from the kernel before the server is asked whether it still runs it
IOPUB_KEPT = 10_000  # unread IOPub messages kept (other clients' output between our inputs): the oldest go


class SocketKernelClient(KernelClient):
    """``jupyter_client``'s kernel client, its channels on a Jupyter Server's kernel websocket."""

    def __init__(self, api: ServerAPI, kernel_id: str) -> None:
        super().__init__(session=Session(key=b"-"))
        # Unsigned: the server signs what it forwards to the kernel with the kernel's key, which never leaves
        # it. (Emptied after creation: jupyter_client warns at creation about a session that does not sign.)
        self.session.key = b""
        self.api = api
        self.kernel_id = kernel_id
        self.notice: Callable[[str], None] = lambda text: None  # one line for the person (a reconnection)
        self._channels = {
            name: KernelSocketChannel(name, self, IOPUB_KEPT if name == "iopub" else None)
            for name in CHANNELS
        }
        self._ws: websocket.WebSocket | None = None
        self._connected = threading.Event()
        self._closing = False
        self._stopped = threading.Event()  # wakes the pinger at once when the client stops
        self._threads: list[threading.Thread] = []
        self.subprotocol: str | None = None
        self._offer = [V1]  # the subprotocols offered (none once the server turned v1 down)
        self.gone: str | None = None  # why the link ended for good (one sentence), or None while it serves
        self.dead = False  # the server said the kernel is dead (its restarts failed)
        self.drops = 0  # websocket drops survived
        self.round_trips: deque[float] = deque(maxlen=20)  # ping round trips, seconds
        self._pending: dict[str, float] = {}  # execute requests awaiting their reply: msg_id → when sent
        self._reconnected_at: float | None = None
        self._lost_checked = 0.0
        self._ping_sent: dict[bytes, float] = {}
        self._pongs = 0
        self._last_pong = time.monotonic()
        self._last_heard = self._listed_at = time.monotonic()

    # -- jupyter_client's client surface ---------------------------------------------------------------------
    @property
    def shell_channel(self) -> KernelSocketChannel:
        return self._channels["shell"]

    @property
    def iopub_channel(self) -> KernelSocketChannel:
        return self._channels["iopub"]

    @property
    def stdin_channel(self) -> KernelSocketChannel:
        return self._channels["stdin"]

    @property
    def control_channel(self) -> KernelSocketChannel:
        return self._channels["control"]

    def is_alive(self) -> bool:
        """Whether the kernel can still be reached (also while a dropped link is being made again)."""
        if self.gone is None and not self.dead:
            self._check_listed()
        return self.gone is None and not self.dead

    def _check_listed(self) -> None:
        """A kernel shut down through the server (a notebook's Kernel menu) leaves its websocket open and
        silent: when the kernel has said nothing for a few seconds, ask the server whether it still runs it
        (at most every few seconds)."""
        now = time.monotonic()
        if now - self._last_heard < QUIET or now - self._listed_at < QUIET:
            return
        self._listed_at = now
        try:
            model = self.api.kernel(self.kernel_id)
        except ServerError:
            return  # the server cannot be asked now: the link's own reconnection decides
        if model is None:
            self.gone = f"The server no longer runs kernel {self.kernel_id[:8]} (it was shut down)."
        elif model.get("execution_state") == "dead":
            self.dead = True

    def start_channels(self, *args: Any, **kwargs: Any) -> None:
        """Open the websocket (raises ``ServerError`` with the sentence) and start reading it."""
        self._ws = self._open()
        self._connected.set()
        for target in (self._read, self._ping):
            thread = threading.Thread(target=target, name=f"pyaichat-kernel-{target.__name__}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop_channels(self) -> None:
        self._closing = True
        self._stopped.set()
        ws = self._ws
        if ws is not None:
            try:
                ws.send_close()  # politely; the reader thread is the one reading, so no wait for the answer
            except Exception:
                pass
            ws.shutdown()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(2)
        for channel in self._channels.values():
            channel.close()

    # -- sending ---------------------------------------------------------------------------------------------
    def send(self, channel: str, msg: dict[str, Any]) -> None:
        """Send ``msg`` on ``channel``; while a dropped link is being made again, wait for it (bounded)."""
        if self.gone or not self._connected.wait(RECONNECT_FOR + 5) or self.gone or self._ws is None:
            raise ServerError(self.gone or "The link to the server is down.")
        frame = self._encode(channel, msg)
        if channel == "shell" and msg["header"].get("msg_type") == "execute_request":
            if len(self._pending) > 100:  # replies a kernel never sent (it was killed) are not kept for ever
                self._pending.pop(next(iter(self._pending)))
            self._pending[msg["header"]["msg_id"]] = time.monotonic()
        try:
            if isinstance(frame, bytes):
                self._ws.send_bytes(frame)
            else:
                self._ws.send_text(frame)
        except (websocket.WebSocketException, OSError):
            # the reader sees the drop too and makes the link again; this message is lost with it
            self._connected.clear()

    def _encode(self, channel: str, msg: dict[str, Any]) -> bytes | str:
        pack = self.session.pack
        if self.subprotocol == V1:
            parts = [
                pack(msg["header"]),
                pack(msg["parent_header"]),
                pack(msg["metadata"]),
                pack(msg["content"]),
            ]
            return encode_v1(channel, parts)
        legacy = {key: msg[key] for key in ("header", "parent_header", "metadata", "content")}
        legacy["channel"] = channel
        return json.dumps(legacy, default=json_default)

    # -- reading ---------------------------------------------------------------------------------------------
    def _read(self) -> None:
        while not self._closing:
            ws = self._ws
            try:
                while ws is not None:
                    _ack_at_once(ws)
                    opcode, frame = ws.recv_data_frame(True)
                    if opcode == websocket.ABNF.OPCODE_TEXT:
                        self._dispatch(frame.data.decode("utf-8", "replace"))
                    elif opcode == websocket.ABNF.OPCODE_BINARY:
                        self._dispatch(frame.data)
                    elif opcode == websocket.ABNF.OPCODE_PONG:
                        self._pong(frame.data)
                    elif opcode == websocket.ABNF.OPCODE_CLOSE:
                        break
            except Exception:
                pass  # the link dropped: made again below
            self._connected.clear()
            if self._closing or not self._reconnect():
                self._connected.set()  # senders wake up and read ``gone``
                return

    def _dispatch(self, data: bytes | str) -> None:
        try:
            channel, msg = self._decode(data)
        except Exception:
            return  # not a kernel message: nothing reads it
        self._last_heard = time.monotonic()
        kind, content = msg["header"].get("msg_type"), msg["content"]
        if channel == "shell":
            self._pending.pop(str((msg.get("parent_header") or {}).get("msg_id")), None)
        if channel == "iopub" and kind == "status" and content.get("execution_state") == "dead":
            self.dead = True  # the server's restarts of the kernel failed
        target = self._channels.get(channel)
        if target is not None:
            target.put(msg)

    def _decode(self, data: bytes | str) -> tuple[str, dict[str, Any]]:
        if self.subprotocol == V1 and isinstance(data, bytes):
            channel, parts = decode_v1(data)
            return channel, self.session.deserialize([b"", *parts])
        msg = decode_legacy(data)
        channel = msg.pop("channel", None) or "shell"
        return channel, msg

    # -- keeping the link ------------------------------------------------------------------------------------
    def _open(self) -> websocket.WebSocket:
        """One websocket to the kernel (the same session id every time: the server replays to it what the
        kernel sent while the link was down)."""
        url = self.api.address.ws_url(
            f"api/kernels/{self.kernel_id}/channels?session_id={self.session.session}"
        )
        header = [f"{key}: {value}" for key, value in self.api.headers().items()]
        try:
            ws = websocket.create_connection(
                url,
                header=header,
                subprotocols=self._offer or None,
                timeout=self.api.timeout,
                sslopt={"context": _ssl_context(self.api)},
                enable_multithread=True,
            )
        except websocket.WebSocketBadStatusException as exc:
            raise self._handshake_refused(exc.status_code)
        except websocket.WebSocketException as exc:
            # websocket-client refuses a handshake that picked none of the offered subprotocols: a server
            # that speaks only the legacy form (an older one, a gateway) is asked again without the offer
            if self._offer and "Header" in str(exc):
                self._offer = []
                return self._open()
            raise self.api.unreachable(exc)
        except OSError as exc:
            raise self.api.unreachable(exc)
        ws.settimeout(None)  # the reader blocks; the pinger notices a silent link
        self.subprotocol = ws.getsubprotocol() if ws.getsubprotocol() == V1 else None
        self._last_pong = time.monotonic()
        return ws

    def _handshake_refused(self, status: int) -> ServerError:
        if status == 404:
            return ServerError(f"The server no longer runs kernel {self.kernel_id[:8]} (it was shut down).")
        if status in (401, 403):
            return ServerError(
                f"{self.api.address.shown} refused the token for the kernel's websocket (expired?)."
            )
        if status in (301, 302, 303, 307):
            return ServerError(
                f"{self.api.address.shown} answered the kernel's websocket with its login page."
            )
        return ServerError(f"{self.api.address.shown} refused the kernel's websocket (HTTP {status}).")

    def _reconnect(self) -> bool:
        """Open the websocket again after a drop; ``False`` (and ``gone`` set) when it cannot be done."""
        started = time.monotonic()
        pause = 0.1
        while not self._closing:
            try:
                ws = self._open()
            except ServerError as exc:
                if "no longer runs" in str(exc) or "token" in str(exc) or "login" in str(exc):
                    self.gone = str(exc)
                    return False
                if time.monotonic() - started > RECONNECT_FOR:
                    self.gone = (
                        "The link to the server dropped and could not be made again within "
                        f"{RECONNECT_FOR:g} s: {exc}"
                    )
                    return False
                self._stopped.wait(pause)
                pause = min(pause * 2, 2.0)
                continue
            self._ws = ws
            self.drops += 1
            self._reconnected_at = time.monotonic()
            self._connected.set()
            took = time.monotonic() - started
            self.notice(
                f"The link to the server dropped; reconnected after {took:.1f} s (the kernel and its "
                "variables are as they were)."
            )
            return True
        return False

    def lost_replies(self) -> bool:
        """Whether inputs sent before the last reconnection will never get their reply: the server replays
        what the kernel sent while the link was down only when no other client was attached (a notebook open
        in a browser keeps it from buffering). True once the kernel is idle again a few seconds after the
        reconnection while such a reply is still missing; those inputs are then forgotten."""
        now = time.monotonic()
        since = self._reconnected_at
        if since is None or now - since < 3 or now - self._lost_checked < 1:
            return False
        stale = [msg_id for msg_id, sent in self._pending.items() if sent < since]
        if not stale:
            return False
        self._lost_checked = now
        try:
            model = self.api.kernel(self.kernel_id)
        except ServerError:
            return False
        if not model or model.get("execution_state") != "idle":
            return False
        for msg_id in stale:
            self._pending.pop(msg_id, None)
        return True

    def _ping(self) -> None:
        while not self._stopped.wait(PING_EVERY):
            self.ping()
            if self._connected.is_set() and time.monotonic() - self._last_pong > PING_TIMEOUT:
                ws = self._ws
                if ws is not None:
                    ws.shutdown()  # the reader's recv fails and it reconnects

    def ping(self) -> None:
        """Send one ping (its pong measures the round trip to the server)."""
        ws = self._ws
        if ws is None or not self._connected.is_set():
            return
        payload = os.urandom(4).hex().encode()
        self._ping_sent = {payload: time.perf_counter()}
        try:
            ws.ping(payload)
        except (websocket.WebSocketException, OSError):
            pass

    def _pong(self, payload: bytes) -> None:
        self._last_pong = time.monotonic()
        sent = self._ping_sent.pop(payload, None)
        if sent is not None:
            self.round_trips.append(time.perf_counter() - sent)
            self._pongs += 1

    def measure(self, timeout: float = 2.0) -> float | None:
        """A fresh round trip to the server in seconds (``None`` when no pong came within ``timeout``)."""
        seen = self._pongs
        self.ping()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._pongs != seen:
                return self.round_trips[-1]
            time.sleep(0.002)
        return None


def _ack_at_once(ws: websocket.WebSocket) -> None:
    """Acknowledge what arrives at once (Linux's TCP_QUICKACK, which the kernel clears now and then, so it is
    set before every read). A Jupyter Server writes a reply's messages as separate small frames without
    TCP_NODELAY: Nagle's algorithm holds the second until the first is acknowledged, and a delayed ACK here
    would hold it ~40 ms — every request's round trip."""
    quickack = getattr(socket, "TCP_QUICKACK", None)
    sock = ws.sock
    if quickack is not None and sock is not None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, quickack, 1)
        except OSError:
            pass


def _ssl_context(api: ServerAPI) -> Any:
    from .rest import ssl_context  # TLS: only for an https server

    return ssl_context(api.address.insecure)
