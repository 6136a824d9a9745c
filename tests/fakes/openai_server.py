"""A scripted OpenAI-compatible chat server for tests: stdlib only, 127.0.0.1, one thread per request.

Replies are taken from a queue strictly in order (the fake never looks at the conversation to decide what to
say), every request body is recorded, and faults are queued like replies: ``401``, ``404``, ``429``,
``500``, ``503`` (a server still loading its model, as llama.cpp answers), ``slow`` (answers after ``delay``
seconds), ``malformed`` (a 200 whose body is not JSON), ``cut`` (a stream that stops in the middle), ``hang``
(streams its first text, then waits until ``release()``; for Ctrl-C tests) and ``held`` (sends nothing until
``release()``, then the reply: a model still reading the prompt).

``POST /v1/completions`` (text completion, ``prompt`` and ``suffix``: fill-in-the-middle) answers from the
same queue, and so does ``POST /v1/messages``, Anthropic's Messages API (streamed text and ``tool_use``
blocks; point litellm's ``anthropic/…`` models at the server's root, without ``/v1``). A client that hangs
up while a ``slow`` reply waits is noticed: its request is marked ``aborted`` and ``aborted`` (an event) is
set.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS = (
    "401",
    "404",
    "429",
    "500",
    "503",
    "400-tools",
    "400-context",
    "slow",
    "malformed",
    "cut",
    "hang",
    "held",
)


@dataclass
class Reply:
    """One scripted answer: text, tool calls (``{"name":…, "arguments": dict|str, "id"?:…}``) or a fault."""

    text: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    fault: str | None = None
    delay: float = 0.0
    prompt_tokens: int = 11
    completion_tokens: int = 7
    cached_tokens: int = 0  # prompt tokens the provider says it read from its prompt cache


@dataclass
class Recorded:
    path: str
    raw: str
    body: dict[str, Any] | None
    headers: Mapping[str, str]  # the request's own ``HTTPMessage``: names match in any case, as in HTTP
    server_ms: float = 0.0  # time the server spent answering (benchmarks subtract it)
    aborted: bool = False  # the client hung up before the (slow) answer was written


class ScriptedServer:
    """Use as ``with ScriptedServer() as srv:`` (or ``start()``/``stop()``); point clients at ``base_url``."""

    def __init__(self) -> None:
        self._queue: list[Reply] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._release = threading.Event()
        self.hanging = threading.Event()  # set once a "hang" reply has sent its first text
        self.aborted = threading.Event()  # set once a client hung up on a slow reply
        self.holding = threading.Event()  # set once a "held" reply is holding back its answer
        self.requests: list[Recorded] = []
        self._httpd: ThreadingHTTPServer | None = None
        # what GET /props answers, like a llama.cpp server (None: 404, like most other servers)
        self.props: dict[str, Any] | None = None
        self.gets: list[str] = []

    # -- scripting -------------------------------------------------------------------------------------------
    def enqueue(self, *replies: Reply) -> ScriptedServer:
        with self._lock:
            self._queue.extend(replies)
        return self

    def text(self, text: str, **kw: Any) -> ScriptedServer:
        return self.enqueue(Reply(text=text, **kw))

    def tool(
        self,
        name: str,
        arguments: dict[str, Any] | str | None = None,
        *,
        text: str | None = None,
        call_id: str | None = None,
    ) -> ScriptedServer:
        call = {"name": name, "arguments": arguments if arguments is not None else {}}
        if call_id:
            call["id"] = call_id
        return self.enqueue(Reply(text=text, tool_calls=[call]))

    def tools(self, *calls: tuple[str, dict[str, Any]]) -> ScriptedServer:
        return self.enqueue(Reply(tool_calls=[{"name": n, "arguments": a} for n, a in calls]))

    def fault(self, kind: str, *, delay: float = 0.0, text: str = "partial answer") -> ScriptedServer:
        assert kind in FAULTS, kind
        return self.enqueue(Reply(fault=kind, delay=delay, text=text))

    def release(self) -> None:
        self._release.set()

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if r.body is not None]

    def all_raw(self) -> str:
        return "\n".join(r.raw for r in self.requests)

    def _next(self) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.pop(0)
        return Reply(text="(the scripted server has no reply left)")

    # -- lifecycle -------------------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._httpd is not None
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, name="scripted-openai", daemon=True).start()
        return self

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
        self.requests.clear()
        self._release.clear()
        self.hanging.clear()
        self.aborted.clear()
        self.holding.clear()
        self.props = None
        self.gets.clear()

    def stop(self) -> None:
        self._stop.set()
        self._release.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (timeout, Ctrl-C) is expected here; say nothing."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        srv = self.owner
        srv.gets.append(self.path)
        if self.path.rstrip("/") == "/props" and srv.props is not None:
            return self._json(200, srv.props)
        return self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode("utf-8", "replace")
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        srv = self.owner
        record = Recorded(self.path, raw, body, self.headers)
        srv.requests.append(record)
        started = time.perf_counter()
        try:
            self._answer(srv, body, record)
        finally:
            record.server_ms = (time.perf_counter() - started) * 1000

    def _answer(self, srv: ScriptedServer, body: dict[str, Any] | None, record: Recorded) -> None:
        path = self.path.rstrip("/")
        text_completion = path.endswith("/completions") and not path.endswith("/chat/completions")
        if path == "/v1/messages":
            return self._anthropic(srv._next(), (body or {}).get("model", "claude"))
        if not path.endswith("/chat/completions") and not text_completion:
            return self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
        reply = srv._next()
        stream = bool(body and body.get("stream"))
        model = (body or {}).get("model", "test")
        kind = reply.fault
        if kind == "401":
            return self._json(401, _error("Incorrect API key provided: sk-te**st.", "invalid_api_key"))
        if kind == "404":
            return self._json(404, _error(f"The model {model!r} does not exist.", "model_not_found"))
        if kind == "429":
            return self._json(429, _error("Rate limit reached for requests.", "rate_limit_exceeded"))
        if kind == "500":
            return self._json(
                500, _error("The server had an error while processing your request.", "server_error")
            )
        if kind == "503":
            return self._json(503, _error("Loading model", "unavailable_error"))
        if kind == "400-context":
            return self._json(
                400,
                _error("Requested tokens (3000) exceed context window of 2048", "invalid_request_error"),
            )
        if kind == "400-tools":
            return self._json(400, _error("This model does not support tools.", "invalid_request_error"))
        if kind == "slow" and self._client_left(reply.delay):
            record.aborted = True
            srv.aborted.set()
            self.close_connection = True
            return None
        if kind == "held":
            srv.holding.set()
            srv._release.wait(60)
        if kind == "malformed":
            data = b"this is {not json"
            if stream:
                return self._chunked([b"data: {not json at all\n\n"], complete=True)
            return self._raw(200, data, "application/json")
        if text_completion:
            return self._json(200, _text_completion(reply, model))
        if stream:
            return self._stream(reply, model, body or {})
        return self._json(200, _completion(reply, model))

    def _client_left(self, delay: float) -> bool:
        """Wait ``delay`` seconds (or until the server stops); True as soon as the client hangs up."""
        deadline = time.monotonic() + delay
        while (left := deadline - time.monotonic()) > 0 and not self.owner._stop.is_set():
            readable, _, _ = select.select([self.connection], [], [], min(left, 0.02))
            if readable:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        return True
                except OSError:
                    return True
        return False

    # -- responses -------------------------------------------------------------------------------------------
    def _json(self, status: int, payload: dict[str, Any]) -> None:
        self._raw(status, json.dumps(payload).encode(), "application/json")

    def _raw(self, status: int, data: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _stream(self, reply: Reply, model: str, body: dict[str, Any]) -> None:
        events = [json.dumps(c).encode() for c in _chunks(reply, model, body)]
        frames = [b"data: " + e + b"\n\n" for e in events] + [b"data: [DONE]\n\n"]
        if reply.fault == "cut":
            return self._chunked(frames[:2], complete=False)
        if reply.fault == "hang":
            return self._chunked(frames[:2], complete=False, hang=True)
        return self._chunked(frames, complete=True)

    def _anthropic(self, reply: Reply, model: str) -> None:
        """One streamed answer of Anthropic's Messages API (faults are not scripted here)."""
        events = _anthropic_events(reply, model)
        frames = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]
        return self._chunked(frames, complete=True)

    def _chunked(self, frames: list[bytes], *, complete: bool, hang: bool = False) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        if not complete:
            self.send_header("Connection", "close")
        self.end_headers()
        for frame in frames:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
            self.wfile.flush()
        if hang:
            self.owner.hanging.set()
            self.owner._release.wait(30)
        if complete:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        else:  # stop in the middle of the chunked body: the client sees an incomplete read
            self.close_connection = True
            time.sleep(0.01)


def _error(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": code, "param": None, "code": code}}


def _tool_call_json(i: int, call: dict[str, Any]) -> dict[str, Any]:
    args = call.get("arguments", {})
    return {
        "id": call.get("id") or f"call_{i}_{call['name']}",
        "type": "function",
        "function": {"name": call["name"], "arguments": args if isinstance(args, str) else json.dumps(args)},
    }


def _usage(reply: Reply) -> dict[str, int]:
    return {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
    }


def _completion(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [_tool_call_json(i, c) for i, c in enumerate(reply.tool_calls)]
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}
        ],
        "usage": _usage(reply),
    }


def _text_completion(reply: Reply, model: str) -> dict[str, Any]:
    return {
        "id": "cmpl-scripted",
        "object": "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "text": reply.text or "", "logprobs": None, "finish_reason": "stop"}],
        "usage": _usage(reply),
    }


def _chunks(reply: Reply, model: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """SSE chunks: the text in a few pieces, then each tool call (name first, arguments in two halves)."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    out = [chunk({"role": "assistant", "content": ""})]
    text = reply.text or ""
    if reply.fault in ("cut", "hang") and not text:
        text = "partial answer"
    step = max(1, len(text) // 3)
    for start in range(0, len(text), step):
        out.append(chunk({"content": text[start : start + step]}))
    for i, call in enumerate(reply.tool_calls):
        full = _tool_call_json(i, call)
        args = full["function"]["arguments"]
        half = len(args) // 2
        first = {
            "index": i,
            "id": full["id"],
            "type": "function",
            "function": {"name": call["name"], "arguments": args[:half]},
        }
        out.append(chunk({"tool_calls": [first]}))
        out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": args[half:]}}]}))
    out.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
    if (body.get("stream_options") or {}).get("include_usage"):
        out.append({**chunk({}), "choices": [], "usage": _usage(reply)})
    return out


def _anthropic_events(reply: Reply, model: str) -> list[dict[str, Any]]:
    """The server-sent events of one streamed Messages API answer: text, then each tool call."""
    usage = {
        "input_tokens": reply.prompt_tokens - reply.cached_tokens,
        "output_tokens": 1,
        "cache_read_input_tokens": reply.cached_tokens,
        "cache_creation_input_tokens": 0,
    }
    message = {"id": "msg_scripted", "type": "message", "role": "assistant", "model": model, "content": []}
    out: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**message, "stop_reason": None, "usage": usage}}
    ]
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if reply.text:
        deltas = [{"type": "text_delta", "text": reply.text}]
        blocks.append(({"type": "text", "text": ""}, deltas))
    for i, call in enumerate(reply.tool_calls):
        args = call.get("arguments", {})
        args = args if isinstance(args, str) else json.dumps(args)
        start = {"type": "tool_use", "id": call.get("id") or f"toolu_{i}", "name": call["name"], "input": {}}
        blocks.append((start, [{"type": "input_json_delta", "partial_json": args}]))
    for index, (start, deltas) in enumerate(blocks):
        out.append({"type": "content_block_start", "index": index, "content_block": start})
        out += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        out.append({"type": "content_block_stop", "index": index})
    stop = "tool_use" if reply.tool_calls else "end_turn"
    out.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": reply.completion_tokens},
        }
    )
    out.append({"type": "message_stop"})
    return out
