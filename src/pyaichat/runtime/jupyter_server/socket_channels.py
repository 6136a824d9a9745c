"""What crosses a Jupyter Server's kernel websocket and where it lands: the channels' queues (pollable like
ZMQ sockets) and the two framings, as ``jupyter_server`` writes and reads them
(``services/kernels/connection/base.py``): ``v1.kernel.websocket.jupyter.org`` and the legacy JSON form."""

from __future__ import annotations

import json
import os
import struct
import threading
from collections import deque
from queue import Empty
from typing import Any, Protocol

from jupyter_client.jsonutil import extract_dates


class Carrier(Protocol):
    """What a channel sends through (the websocket client of ``kernel_socket``), named here so that this
    module does not import the one that imports it."""

    def send(self, channel: str, msg: dict[str, Any]) -> None: ...

    def is_alive(self) -> bool: ...


class KernelSocketChannel:
    """One Jupyter channel on the websocket: the messages the reader queued for it, and a pipe that is
    readable while any wait (its ``socket`` for ``zmq.Poller``; at most one byte is ever in it)."""

    def __init__(self, name: str, client: Carrier, kept: int | None = None) -> None:
        self.name = name
        self._client = client
        self._queue: deque[dict[str, Any]] = deque(maxlen=kept)
        self._cond = threading.Condition()
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        self.socket = self._read_fd  # zmq.Poller polls a file descriptor as it polls a ZMQ socket

    def put(self, msg: dict[str, Any]) -> None:
        with self._cond:
            if not self._queue:
                os.write(self._write_fd, b"!")
            self._queue.append(msg)
            self._cond.notify()

    def get_msg(self, timeout: float | None = None) -> dict[str, Any]:
        """The next message (``queue.Empty`` when none came within ``timeout``), as ZMQ channels do."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._queue, timeout):
                raise Empty
            msg = self._queue.popleft()
            if not self._queue:
                os.read(self._read_fd, 1)
            return msg

    def msg_ready(self) -> bool:
        return bool(self._queue)

    def send(self, msg: dict[str, Any]) -> None:
        self._client.send(self.name, msg)

    def is_alive(self) -> bool:
        return self._client.is_alive()

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def close(self) -> None:
        for fd in (self._read_fd, self._write_fd):
            try:
                os.close(fd)
            except OSError:
                pass


def encode_v1(channel: str, parts: list[bytes]) -> bytes:
    """``v1.kernel.websocket.jupyter.org``: the count of offsets, the offsets (64-bit little-endian), the
    channel name, then the message parts."""
    name = channel.encode()
    offsets = [8 * (2 + len(parts) + 1)]
    offsets.append(offsets[-1] + len(name))
    for part in parts:
        offsets.append(offsets[-1] + len(part))
    head = struct.pack(f"<{len(offsets) + 1}Q", len(offsets), *offsets)
    return b"".join([head, name, *parts])


def decode_v1(data: bytes) -> tuple[str, list[bytes]]:
    count = struct.unpack_from("<Q", data)[0]
    offsets = struct.unpack_from(f"<{count}Q", data, 8)
    channel = data[offsets[0] : offsets[1]].decode()
    return channel, [data[offsets[i] : offsets[i + 1]] for i in range(1, count - 1)]


def decode_legacy(data: bytes | str) -> dict[str, Any]:
    """The legacy form: a JSON text frame, or (a message with buffers) a binary frame of big-endian 32-bit
    offsets, the JSON message and the buffers."""
    if isinstance(data, str):
        msg = json.loads(data)
        buffers: list[bytes] = []
    else:
        count = struct.unpack_from("!I", data)[0]
        offsets = [*struct.unpack_from(f"!{count}I", data, 4), len(data)]
        msg = json.loads(data[offsets[0] : offsets[1]].decode())
        buffers = [data[offsets[i] : offsets[i + 1]] for i in range(1, count)]
    msg["header"] = extract_dates(msg.get("header") or {})
    msg["parent_header"] = extract_dates(msg.get("parent_header") or {})
    msg.setdefault("metadata", {})
    msg.setdefault("content", {})
    msg["buffers"] = buffers
    msg["msg_id"] = msg["header"].get("msg_id")
    msg["msg_type"] = msg["header"].get("msg_type")
    return dict(msg)
