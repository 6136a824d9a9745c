"""The assistant end to end through the real litellm HTTP path, against a scripted OpenAI-compatible server.

One server serves the whole module (litellm is imported once, ~4 s); each test queues its own replies.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fakes.sent import observed

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakes.openai_server import ScriptedServer
from fakes.recorder import Recorder
from fakes.sent import expand_sent
from pyaichat.agent.assistant import Assistant, Front
from pyaichat.agent.llm import LiteLLMClient
from pyaichat.assemble import assemble
from pyaichat.commands import dispatch
from pyaichat.configuration.config import Config
from pyaichat.controller import Controller, Mode
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session
from timeouts import HANG_GUARD

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
SECRET_KEY = "sk-proj-Zq9xV3bN7mK2pL5tR8wY1cD4fG6hJ0sA"
SECRET_PASSWORD = "s3cr3tPa55w0rd"


@pytest.fixture
def ctrl(srv: ScriptedServer) -> Controller:
    config = Config(model="openai/test", api_base=srv.base_url, audit=False, request_timeout=10, max_steps=4)
    session = Session(echo=lambda value: None)
    session.settings.replace(config)
    return assemble(
        LocalRuntime(session), Recorder(), llm_factory=lambda cfg: LiteLLMClient(cfg, backoff=0.01)
    )


def user_vars(ctrl: Controller) -> dict[str, Any]:
    return {k: v for k, v in ctrl.runtime.session.namespace.items() if not k.startswith("_")}


def test_two_step_answer_with_native_tools(ctrl, srv):
    ctrl.runtime.run("x = 41")
    srv.tool("get_repr", {"expr": "x"}).text("x is 41, so x + 1 is **42**.")
    ctrl.ask("what is x + 1?")
    front = ctrl.frontend
    assert front.of("answer")[-1].text == "x is 41, so x + 1 is **42**."
    assert [e.name for e in front.of("tool_end")] == ["get_repr"] and front.of("tool_end")[0].ok
    first, second = srv.bodies
    names = {t["function"]["name"] for t in first["tools"]}
    assert {"get_repr", "list_globals", "propose_code"} <= names
    assert first["stream"] is True
    tool_msg = second["messages"][-1]
    assert tool_msg["role"] == "tool" and "41" in tool_msg["content"]
    assert front.of("usage")[-1].prompt_tokens == 22
    # /sent shows exactly what the provider received.
    dispatch(ctrl, "/sent")
    shown = expand_sent([json.loads(s.code) for s in front.of("page")[-1].sections])
    assert [s["messages"] for s in shown] == [b["messages"] for b in srv.bodies]
    assert [s.get("tools") for s in shown] == [b.get("tools") for b in srv.bodies]


def test_text_protocol_when_configured(ctrl, srv):
    ctrl.settings.replace(ctrl.config.replace(tool_protocol="text"))
    ctrl.runtime.run("x = 41")
    srv.text('Checking.\n<tool name="get_repr">{"expr": "x"}</tool>').text("It is 41.")
    ctrl.ask("x?")
    assert ctrl.frontend.of("answer")[-1].text == "It is 41."
    first, second = srv.bodies
    assert "tools" not in first
    assert '<tool name="TOOL_NAME">' in first["messages"][0]["content"]
    assert second["messages"][-1]["content"].startswith('<observation tool="get_repr">')


def test_a_server_refusing_tools_falls_back_to_the_text_protocol(ctrl, srv):
    ctrl.runtime.run("x = 41")
    srv.fault("400-tools")
    srv.text('<tool name="get_repr">{"expr": "x"}</tool>').text("41 it is.")
    ctrl.ask("x?")
    assert ctrl.frontend.of("answer")[-1].text == "41 it is." and not ctrl.frontend.of("error")
    assert "tools" in srv.bodies[0] and "tools" not in srv.bodies[1] and "tools" not in srv.bodies[2]


@pytest.mark.parametrize(
    ("faults", "kind", "words"),
    [
        (["401"], "auth", "rejected the API key"),
        (["500", "500", "500"], "provider", "HTTP 500"),
        (["malformed"], "malformed", "not valid JSON"),
        (["cut"], "stream_cut", "broke off"),
        (["slow"], "timeout", "did not answer within"),
    ],
)
def test_each_fault_is_one_sentence_and_the_repl_stays_alive(ctrl, srv, faults, kind, words):
    ctrl.settings.replace(ctrl.config.replace(request_timeout=0.5))
    ctrl.runtime.run("data = [1, 2, 3]")
    before = user_vars(ctrl)
    for fault in faults:
        srv.fault(fault, delay=1.5)
    ctrl.ask("what is data?")
    errors = ctrl.frontend.of("error")
    assert len(errors) == 1 and errors[0].kind == kind and words in errors[0].message
    assert "Traceback" not in errors[0].message and "\n" not in errors[0].message
    assert user_vars(ctrl) == before
    if kind == "stream_cut":
        kept = ctrl.frontend.of("answer")[-1]
        assert kept.text == "part" and "incomplete" in kept.note  # the text that arrived before the cut
    srv.text("data is [1, 2, 3].")
    ctrl.settings.replace(ctrl.config.replace(request_timeout=10))
    ctrl.ask("again?")
    assert ctrl.frontend.of("answer")[-1].text == "data is [1, 2, 3]."
    assert ctrl.runtime.run("len(data)").value == 3


def test_a_cut_stream_shows_its_partial_text_once_in_every_renderer(ctrl, srv):
    import io

    from rich.console import Console

    from pyaichat.piped import PlainFrontEnd
    from pyaichat.repl.render import RichRenderer

    srv.fault("cut")
    ctrl.ask("what is data?")
    plain, rich_out = io.StringIO(), io.StringIO()
    piped = PlainFrontEnd(out=plain)
    rich = RichRenderer(Console(file=rich_out, width=80, force_terminal=False), color=False)
    for event in ctrl.frontend.events:
        piped.emit(event)
        rich.render(event)
    rich.close()
    for text in (plain.getvalue(), rich_out.getvalue()):
        assert text.count("part") == 1, text
        assert text.index("part") < text.index("incomplete") < text.index("Error: ")


def test_rate_limit_then_success_is_retried(ctrl, srv):
    srv.fault("429").text("fine")
    ctrl.ask("hi")
    assert ctrl.frontend.of("error") == [] and ctrl.frontend.of("answer")[-1].text == "fine"
    assert len(srv.requests) == 2


def test_a_model_that_calls_tools_forever_stops_at_max_steps(ctrl, srv):
    ctrl.settings.replace(ctrl.config.replace(max_steps=3))
    for _ in range(6):
        srv.tool("list_globals", {})
    ctrl.ask("loop forever")
    answer = ctrl.frontend.of("answer")[-1]
    assert answer.stopped_by == "max_steps" and "max_steps" in answer.note
    assert len(srv.requests) == 3


def test_secrets_in_the_namespace_appear_in_no_request(ctrl, srv):
    ctrl.runtime.run(
        f'OPENAI_API_KEY = "{SECRET_KEY}"\n'
        f'db_url = "postgresql://analyst:{SECRET_PASSWORD}@db.internal:5432/sales"\n'
        "rows = 3"
    )
    srv.tools(
        ("get_repr", {"expr": "db_url"}), ("get_repr", {"expr": "OPENAI_API_KEY"}), ("list_globals", {})
    )
    srv.tool("eval_expr", {"expr": "db_url + ' ' + OPENAI_API_KEY"})
    srv.text("Both are set.")
    ctrl.ask("are @db_url and @OPENAI_API_KEY set?")
    assert ctrl.frontend.of("answer")[-1].text == "Both are set."
    raw = srv.all_raw()
    assert len(srv.requests) == 3
    assert SECRET_KEY not in raw and SECRET_KEY[8:] not in raw
    assert SECRET_PASSWORD not in raw
    assert "db.internal" in raw  # the value is described, only the secret part is masked


@pytest.mark.parametrize("decision", ["run", "edit", "no"])
def test_approval_gate(ctrl, srv, decision):
    ctrl.runtime.run("x = 21")
    ctrl.frontend.decision = decision
    ctrl.set_mode(Mode.ASSISTANT)
    srv.tool("propose_code", {"code": "y = x * 2", "explanation": "Doubles x into y."})
    srv.text("Reported back.")
    ctrl.ask("make y")
    (proposal,) = [e.proposal for e in ctrl.frontend.of("approval_required")]
    assert proposal.code == "y = x * 2"
    if decision == "run":
        assert ctrl.runtime.session.namespace["y"] == 42 and ctrl.runtime.history[-1].source == "y = x * 2"
        assert "succeeded" in srv.bodies[1]["messages"][-1]["content"]
    elif decision == "edit":
        assert "y" not in ctrl.runtime.session.namespace and ctrl.frontend.next_input == "y = x * 2"
        assert ctrl.mode is Mode.PYTHON and len(srv.requests) == 1
    else:
        assert "y" not in ctrl.runtime.session.namespace
        assert "declined" in srv.bodies[1]["messages"][-1]["content"]
        assert ctrl.frontend.of("answer")[-1].text == "Reported back."


def test_ctrl_c_during_a_stream_keeps_the_partial_answer(ctrl, srv):
    srv.fault("hang", text="The answer is forty")
    sent_at: list[float] = []
    front = ctrl.frontend
    original_emit = front.emit

    def interrupt() -> None:
        if srv.hanging.wait(10):
            sent_at.append(time.perf_counter())
            os.kill(os.getpid(), signal.SIGINT)

    def emit(event: Any) -> None:  # press Ctrl-C once the first words are on screen
        original_emit(event)
        if event.type == "answer_chunk" and not sent_at:
            sent_at.append(0.0)
            threading.Thread(target=interrupt, daemon=True).start()

    front.emit = emit
    try:
        ctrl.ask("a long answer please")
        returned = time.perf_counter()
    finally:
        srv.release()
    answer = ctrl.frontend.of("answer")[-1]
    assert answer.stopped_by == "interrupt" and answer.text and "The answer is forty".startswith(answer.text)
    print(f"Ctrl-C to return: {(returned - sent_at[-1]) * 1000:.1f} ms")
    srv.text("Still here.")
    ctrl.ask("next?")
    assert ctrl.frontend.of("answer")[-1].text == "Still here."
    last = srv.bodies[-1]["messages"]
    assert [m["role"] for m in last[-3:]] == ["user", "assistant", "user"]


# -- as a user runs it: piped input to python -m pyaichat ----------------------------------------------------
def _run_piped(stdin: str, env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYAICHAT_", "OPENAI_"))}
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-m", "pyaichat"],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=HANG_GUARD,
    )


def test_piped_session_answers_reports_faults_and_never_runs_proposals(srv):
    """One process (litellm is imported once): a bad key, a grounded answer, a proposal, then Python again."""
    srv.fault("401")
    srv.tool("get_repr", {"expr": "x"}).text("x + 1 is 42.")
    srv.tool(
        "propose_code", {"code": "import shutil; shutil.rmtree('/tmp/nowhere')", "explanation": "Cleans."}
    )
    srv.text("Not run.")
    env = {"PYAICHAT_MODEL": "openai/test", "PYAICHAT_API_BASE": srv.base_url, "PYAICHAT_API_KEY": "sk-wrong"}
    stdin = "x = 41\n/ask hi\n/ask what is x + 1?\n/ask clean up\nprint(x * 2)\n"
    out = _run_piped(stdin, env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("Error: The provider rejected the API key for openai/test")
    assert "x + 1 is 42." in out.stdout
    assert "Proposed code (not run in piped mode):" in out.stdout and "shutil.rmtree" in out.stdout
    assert "Not run." in out.stdout and lines[-1] == "82"
    assert "Traceback" not in out.stderr and "Give Feedback" not in out.stdout + out.stderr
    assert observed(srv.bodies[2]["messages"][-1]["content"]).endswith("41")  # out of its data span
    told = srv.bodies[4]["messages"][-1]["content"]  # the truth: no one was asked, nothing was declined
    assert "could not be asked" in told and "reading piped input" in told and "did not run" in told
    assert "declined" not in told
    chats = [r for r in srv.requests if r.path.endswith("/chat/completions")]
    assert len(chats) == 5 and all(r.headers.get("Authorization") == "Bearer sk-wrong" for r in chats)


def _dying_server() -> tuple[int, threading.Thread]:
    """A model server on 127.0.0.1 that answers look-ups (404), takes the first chat request and dies with
    it, as a llama.cpp server killed by a signal does: the connection closes unanswered and the port then
    refuses."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve() -> None:
        while True:
            conn, _ = listener.accept()
            with conn:
                head = conn.recv(65536)
                if head.startswith(b"GET"):
                    conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    continue
            listener.close()  # took the request, answered nothing: gone
            return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return listener.getsockname()[1], thread


def test_a_local_server_that_dies_during_a_request_is_named_not_called_unreachable():
    port, server = _dying_server()
    base = f"http://127.0.0.1:{port}/v1"
    env = {"PYAICHAT_MODEL": "openai/local", "PYAICHAT_API_BASE": base, "OPENAI_API_KEY": "sk-test"}
    out = _run_piped("x = 1\n/ask what is x?\nprint(x + 1)\n", env)
    server.join(5)
    assert out.returncode == 0, out.stderr
    assert f"The model server at {base} closed the connection without answering" in out.stdout
    assert "it runs on this machine, so it may have crashed" in out.stdout
    assert "Cannot reach" not in out.stdout and "Traceback" not in out.stderr
    assert out.stdout.strip().endswith("2")  # the session went on


def test_piped_without_a_model_says_how_to_set_one():
    out = _run_piped("x = 1\n/ask hi\nprint(x + 1)\n", {})
    assert out.returncode == 0
    assert "No model is configured" in out.stdout and "PYAICHAT_MODEL" in out.stdout
    assert out.stdout.strip().endswith("2") and "Traceback" not in out.stderr


def test_the_turn_deadline_ends_a_slow_answer_with_a_note(ctrl, srv):
    ctrl.settings.replace(ctrl.config.replace(turn_timeout=0.5))
    srv.fault("slow", delay=1.5)
    ctrl.ask("slow one")
    answer = ctrl.frontend.of("answer")[-1]
    assert answer.stopped_by == "turn_timeout" and "turn_timeout" in answer.note
    assert ctrl.frontend.of("error") == []


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    ("model", "base", "kind", "words"),
    [
        ("openai/test", "scripted", "auth", "No API key was found"),
        ("openai/test", "closed", "connection", "Cannot reach the provider"),
        ("no-such-provider-model", None, "model", "cannot tell which provider"),
    ],
)
def test_client_side_failures_are_named_plainly(srv, monkeypatch, model, base, kind, words):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    api_base = {"scripted": srv.base_url, "closed": f"http://127.0.0.1:{_closed_port()}/v1"}.get(base or "")
    config = Config(
        model=model, api_base=api_base, api_key="sk-test" if base == "closed" else None, audit=False
    )
    session = Session(echo=lambda value: None)
    session.settings.replace(config)
    assistant = Assistant(config, session, llm_factory=lambda cfg: LiteLLMClient(cfg, backoff=0.01))
    front = Recorder()
    assistant.ask("hi", Front(front.emit, lambda e: None))
    (error,) = front.of("error")
    assert error.kind == kind and words in error.message
    assert srv.requests == []


def test_cost_is_reported_for_a_model_litellm_knows(ctrl, srv):
    ctrl.settings.replace(ctrl.config.replace(model="openai/gpt-4o-mini"))
    srv.text("hello")
    ctrl.ask("hi")
    usage = ctrl.frontend.of("usage")[-1]
    assert usage.model == "openai/gpt-4o-mini" and usage.cost_usd is not None and usage.cost_usd > 0
    dispatch(ctrl, "/cost")
    assert (
        f"cost ${usage.cost_usd:.6f}" in ctrl.frontend.of("notice")[-1].text
    )  # a fraction of a cent, visible


def test_piped_sent_shows_each_tool_list_once_and_the_messages_after_it(srv):
    """A two-step question sends the same tool list twice; /sent shows it once and names it the second time
    (it was 645 lines for one question)."""
    srv.tool("get_repr", {"expr": "x"}).text("x is 41.")
    env = {"PYAICHAT_MODEL": "openai/test", "PYAICHAT_API_BASE": srv.base_url, "OPENAI_API_KEY": "sk-test"}
    out = _run_piped("x = 41\n/ask what is x?\n/sent\n", env)
    assert out.returncode == 0, out.stderr
    first, second = srv.bodies
    assert first["tools"] == second["tools"]
    shown = out.stdout.split("Request 1 of 2\n", 1)[1]
    schema = next(t for t in first["tools"] if t["function"]["name"] == "get_repr")["function"]["description"]
    assert shown.count(json.dumps(schema, ensure_ascii=False)) == 1
    assert f'"tools": "(the same {len(first["tools"])} tools as request 1)"' in shown
    assert f'"(messages 1–{len(first["messages"])}: as in request 1)"' in shown
    assert len(shown.splitlines()) < 2 * len(json.dumps(first, indent=2).splitlines())
