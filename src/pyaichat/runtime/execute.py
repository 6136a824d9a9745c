"""One ``execute_request`` in a Jupyter kernel, as ``jupyter console`` runs it.

``CellRun`` multiplexes the three channels a cell uses until the kernel is idle again: IOPub (stdout/stderr,
results, display data, tracebacks — written out as they arrive), stdin (``input()`` in the kernel is answered
from this terminal) and the shell reply. Ctrl-C here interrupts the kernel; a kernel that dies or restarts
meanwhile ends the wait with one sentence.
"""

from __future__ import annotations

import getpass
import sys
import time
from typing import Any, TextIO

import zmq

from . import KernelUnavailable
from .kernel_connection import NEW_PROCESS, POLL_S, KernelConnection

OUTPUT_KEEP = 2000  # characters of a run's output kept for the history summary and the assistant


class CellRun:
    """One ``execute_request``: multiplexes IOPub, stdin and the shell reply until the kernel is idle."""

    def __init__(self, kernel: KernelConnection, msg_id: str) -> None:
        self.kernel = kernel
        self.msg_id = msg_id
        self.reply: dict[str, Any] | None = None
        self.idle = False
        self.heard = False  # a message of this input's came on IOPub (its output can reach us)
        self.ok = True
        self.ename = ""
        self.evalue = ""
        self.traceback: list[str] = []
        self.kept: list[str] = []
        self._kept_size = 0
        self.exit_requested = False
        self._interrupts = 0
        self.restarted_at: float | None = None
        self.replied_at = 0.0

    def wait(self) -> None:
        client = self.kernel.client
        poller = zmq.Poller()
        sockets = {
            client.iopub_channel.socket: self._on_iopub,
            client.stdin_channel.socket: self._on_stdin,
            client.shell_channel.socket: self._on_shell,
        }
        channels = {
            client.iopub_channel.socket: client.iopub_channel,
            client.stdin_channel.socket: client.stdin_channel,
            client.shell_channel.socket: client.shell_channel,
        }
        for sock in sockets:
            poller.register(sock, zmq.POLLIN)
        last_check = time.monotonic()
        # done when the reply is in and IOPub went idle (all output shown); a lost idle (IOPub drops messages
        # past its high-water mark) does not hang the REPL: two seconds after the reply is enough
        while not (self.reply is not None and (self.idle or time.monotonic() - self.replied_at > 2)):
            try:
                ready = dict(poller.poll(int(POLL_S * 1000)))
                for sock, handler in sockets.items():
                    if sock in ready:
                        handler(channels[sock].get_msg(timeout=0))
                if self.restarted_at and self.reply is None and time.monotonic() - self.restarted_at > 5:
                    self.kernel.reset_after_restart()
                    raise KernelUnavailable(
                        self.kernel.restart_sentence(
                            "The kernel restarted while running this input; its variables are gone."
                        )
                    )
                if time.monotonic() - last_check > POLL_S * 2 or not ready:
                    last_check = time.monotonic()
                    if not self.kernel.alive():
                        self.kernel.out.flush()
                        raise self.kernel.dead(while_running=True)
            except KeyboardInterrupt:
                self._interrupts += 1
                if self._interrupts > 2:  # the kernel ignores interrupts: stop waiting, keep the REPL
                    raise KernelUnavailable(
                        "The kernel did not stop after three interrupts; it is still busy "
                        "(pyaichat stopped waiting for it)."
                    )
                self.kernel.interrupt()
        self.kernel.out.flush()

    def _mine(self, msg: dict[str, Any]) -> bool:
        return msg.get("parent_header", {}).get("msg_id") == self.msg_id

    def _on_iopub(self, msg: dict[str, Any]) -> None:
        kind = msg["header"]["msg_type"]
        content = msg["content"]
        if kind == "status" and content.get("execution_state") in NEW_PROCESS:
            # a new kernel process: our request may still reach it (queued by the socket), or be lost with
            # the old one; wait() gives it a few seconds
            self.kernel.restarted = True
            self.restarted_at = self.restarted_at or time.monotonic()
            return
        if not self._mine(msg):
            return
        self.heard = True
        s = self.kernel
        if kind == "stream":
            target = s.err if content.get("name") == "stderr" else s.out
            self._write(target, content.get("text", ""))
        elif kind in ("execute_result", "display_data"):
            self._write(s.out, _display_text(content.get("data") or {}) + "\n")
        elif kind == "error":
            self.ok = False
            self.ename, self.evalue = content.get("ename", ""), content.get("evalue", "")
            self.traceback = list(content.get("traceback") or [])
            text = "\n".join(self.traceback) or f"{self.ename}: {self.evalue}"
            self._write(s.err, s.plain(text) + "\n")
        elif kind == "status" and content.get("execution_state") == "idle":
            self.idle = True

    def _on_shell(self, msg: dict[str, Any]) -> None:
        if not self._mine(msg):
            return
        self.reply = msg["content"]
        self.replied_at = time.monotonic()
        if self.reply.get("status") == "error":
            self.ok = False
            self.ename = self.ename or self.reply.get("ename", "")
            self.evalue = self.evalue or self.reply.get("evalue", "")
        elif self.reply.get("status") == "aborted":
            self.ok = False
        for payload in self.reply.get("payload") or []:
            if payload.get("source") == "ask_exit":
                self.exit_requested = True
            elif payload.get("source") == "page":
                self._write(self.kernel.out, _display_text(payload.get("data") or {}) + "\n")

    def _on_stdin(self, msg: dict[str, Any]) -> None:
        if msg["header"]["msg_type"] != "input_request":
            return
        content = msg["content"]
        s = self.kernel
        s.out.flush()
        try:
            if content.get("password"):
                text = getpass.getpass(content.get("prompt", ""))
            else:
                s.out.write(content.get("prompt", ""))
                s.out.flush()
                line = sys.stdin.readline()
                if not line:  # end of input: the kernel's input() sees EOF as an empty answer
                    line = ""
                text = line.rstrip("\n")
        except KeyboardInterrupt:
            self._interrupts += 1
            s.interrupt()
            text = ""
        s.client.input(text)

    def _write(self, target: TextIO, text: str) -> None:
        text = self.kernel.plain(text)
        target.write(text)
        target.flush()
        if self._kept_size < OUTPUT_KEEP:
            piece = text[: OUTPUT_KEEP - self._kept_size]
            self.kept.append(piece)
            self._kept_size += len(piece)


def _display_text(data: dict[str, Any]) -> str:
    if "text/plain" in data:
        return str(data["text/plain"])
    kinds = ", ".join(sorted(data)) or "nothing"
    return f"[{kinds} output: not shown in the terminal]"
