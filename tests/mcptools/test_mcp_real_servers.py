"""Servers nobody here wrote, started for real as a user would configure them: ``mcp-server-time`` and
``mcp-server-git`` from PyPI, and the reference ``server-everything`` and ``server-filesystem`` from npm
(over stdio, Streamable HTTP and SSE). Questions go through ``python -m pyaichat`` piped, to the scripted
OpenAI-compatible server over the real litellm HTTP path."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import fault, real, run_piped

from fakes.fake_llm import FakeLLM
from fakes.recorder import Recorder, never_approve
from fakes.sent import observed
from pyaichat.agent.assistant import Front

pytestmark = pytest.mark.e2e


def tools_sent(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["function"]["name"]: t["function"] for t in body.get("tools") or []}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


# -- mcp-server-time, pasted as Claude Desktop JSON ----------------------------------------------------------
def test_a_question_the_session_cannot_answer_is_answered_with_the_time_server(srv, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    mcp_json = tmp_path / "claude_desktop_config.json"
    mcp_json.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "time": real("mcp-server-time"),
                    "fault": fault(env={"FAULT_PID_FILE": str(pids)}),
                }
            }
        )
    )
    srv.tool("time__get_current_time", {"timezone": "Asia/Tokyo"})
    srv.text("In Tokyo it is the time the time server gave.")
    proc = run_piped(
        tmp_path,
        srv,
        "x = 41\n/ask What time is it in Tokyo right now?\n/sent\n/tools\n",
        "--mcp-config",
        str(mcp_json),
        config='[mcp_servers.time]\ntrust = "read-only"\n',
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "In Tokyo it is the time the time server gave." in out
    first, second = srv.bodies
    offered = tools_sent(first)
    # two small tools: in full, with their parameters; the untrusted fault server's tools are withheld (piped)
    assert offered["time__get_current_time"]["parameters"]["required"] == ["timezone"]
    assert "time__convert_time" in offered and not any(n.startswith("fault__") for n in offered)
    assert "describe_tool" not in offered
    assert "## Tools from MCP servers" in first["messages"][0]["content"]
    (result,) = [m for m in second["messages"] if m["role"] == "tool"]
    got = json.loads(observed(result["content"]))
    assert got["timezone"] == "Asia/Tokyo" and got["datetime"].endswith("+09:00")
    # /sent shows exactly that result, and /tools the servers
    assert '\\"timezone\\": \\"Asia/Tokyo\\"' in out and '"role": "tool"' in out
    assert "MCP servers (2; they run here, on your side):" in out
    assert "  time: ready, trust read-only, 2 tools, 1 call" in out
    assert '    run at once: get_current_time, convert_time  (trust = "read-only" and readOnlyHint)' in out
    assert "  fault: ready, trust ask, 16 tools, 0 calls" in out
    assert "    ask you first: echo, time_now," in out and 'server is not trust = "read-only")' in out
    # closing pyaichat closed the servers
    (pid,) = map(int, pids.read_text().split())
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def test_servers_never_start_with_pyaichat_and_nothing_of_the_sdk_is_imported(srv, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    heavy = ("mcp", "anyio", "mcp_types", "pyaichat.mcptools.manager")
    probe = f"import sys; print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
    config = (
        f"[mcp_servers.fault]\ncommand = {json.dumps(sys.executable)}\nargs = {json.dumps(fault()['args'])}\n"
    )
    config += f"env = {{ FAULT_PID_FILE = {json.dumps(str(pids))} }}\n"
    proc = run_piped(tmp_path, srv, f"x = 1\n{probe}/model\n", config=config)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "[]"
    assert not pids.exists() and srv.bodies == []


# -- mcp-server-git on a repository the test made ------------------------------------------------------------
def test_the_git_server_answers_from_the_repository_and_its_write_tools_wait_for_a_person(
    srv, tmp_path: Path, git_repo: Path
) -> None:
    config = (
        "mcp_tool_tokens = 300\n"  # its read-only tools are over this in full: names and first lines
        "[mcp_servers.git]\n"
        f"command = {json.dumps(real('mcp-server-git')['command'])}\n"
        f'args = ["--repository", {json.dumps(str(git_repo))}]\n'
        'trust = "read-only"\n'
    )
    srv.tool("describe_tool", {"name": "git__git_log"})
    srv.tool("git__git_log", {"repo_path": str(git_repo), "max_count": 5})
    srv.tool("git__git_commit", {"repo_path": str(git_repo), "message": "sneaky"})
    srv.text("The last commit fixed the join key.")
    proc = run_piped(tmp_path, srv, "/ask Why did the join change last time?\n", config=config)
    assert proc.returncode == 0, proc.stderr
    assert "The last commit fixed the join key." in proc.stdout
    offered = tools_sent(srv.bodies[0])
    assert offered["git__git_log"] == {
        "name": "git__git_log",
        "description": "<data>Shows the commit logs</data>",  # an outside server's words: data, in a span
        "parameters": {"type": "object", "properties": {}},
    }
    assert "describe_tool" in offered and "git__git_commit" not in offered  # writes: not offered when piped
    results = [observed(m["content"]) for m in srv.bodies[-1]["messages"] if m["role"] == "tool"]
    described, log, commit = results
    assert "repo_path" in json.loads(described)["parameters"]["properties"]
    assert "Fix the join key: ids are integers" in log and "Load the raw data" in log
    assert commit.startswith("Error: git__git_commit needs the user's approval") and "did not run" in commit
    history = subprocess.run(["git", "log", "--oneline"], cwd=git_repo, capture_output=True, text=True)
    assert len(history.stdout.splitlines()) == 2


# -- the reference servers from npm ------------------------------------------------------------------------
def test_server_everything_over_stdio(npm_servers: Path, make_assistant) -> None:
    entry = {"command": "node", "args": [str(npm_servers / "server-everything" / "dist" / "index.js")]}
    assistant, fake, _ = make_assistant(
        {"everything": {**entry, "trust": "read-only"}}, llm=FakeLLM(images=True)
    )
    fake.tools(
        ("everything__get-sum", {"a": 2, "b": 3}),
        ("everything__get-tiny-image", {}),
        ("everything__get-structured-content", {"location": "New York"}),
        ("everything__toggle-simulated-logging", {}),
    ).text("done")
    rec = Recorder()
    assistant.ask("q", Front(rec.emit, never_approve))
    messages = fake.requests[-1]["messages"]
    total, image, structured, toggle = [observed(m["content"]) for m in messages if m["role"] == "tool"]
    assert "5" in total
    assert "[image 1: image/png]" in image
    urls = [
        p["image_url"]["url"]
        for m in messages
        if isinstance(m.get("content"), list)
        for p in m["content"]
        if p.get("type") == "image_url"
    ]
    assert len(urls) == 1 and urls[0].startswith("data:image/png;base64,")
    assert '"temperature"' in structured
    assert toggle.startswith("Error: everything__toggle-simulated-logging needs the user's approval")


def test_server_everything_asks_for_sampling_and_a_form_only_once_they_are_turned_on(
    npm_servers: Path, make_assistant
) -> None:
    """The reference server offers its sampling and elicitation tools only to a client that declares them:
    pyaichat declares them only for a server the user turned them on for, and answers through the person."""
    from pyaichat.mcptools.approval import Answer
    from pyaichat.proposal import Outcome

    entry = {"command": "node", "args": [str(npm_servers / "server-everything" / "dist" / "index.js")]}
    plain, fake, _ = make_assistant({"everything": entry})
    fake.text("nothing to call")
    plain.ask("q", Front(Recorder().emit, lambda request: Outcome(request, "declined"), interactive=True))
    offered = {t["function"]["name"] for t in fake.requests[0]["tools"]}
    assert "everything__trigger-sampling-request" not in offered
    assert "everything__trigger-elicitation-request" not in offered

    assistant, fake, _ = make_assistant({"everything": {**entry, "sampling": True, "elicitation": True}})
    fake.tool("everything__trigger-sampling-request", {"prompt": "Say hello", "maxTokens": 40})
    fake.text("Hello from pyaichat's model.")  # the server's sampling request
    fake.tool("everything__trigger-elicitation-request", {}).text("done")
    panels: list[str] = []

    def run(request) -> Outcome:
        panels.append(request.tool)
        return Outcome(request, "ran")

    form = {"name": "Ann Example", "check": True, "integer": 7, "untitledMultipleSelectEnum": ["Piano"]}
    asked = []

    def person(question) -> Answer:
        asked.append(question)
        return Answer("accept", form)

    assistant.ask("q", Front(Recorder().emit, run, interactive=True, answer_question=person))
    assert panels == [
        "review everything",  # turning sampling on changed what runs under the name: its tools are reviewed
        "everything__trigger-sampling-request",  # the tool itself is not read-only: it asks first
        "everything: sampling",
        "everything__trigger-elicitation-request",
    ]
    sampled = fake.requests[1]
    assert (
        sampled["max_tokens"] == 40 and sampled["messages"][0]["content"] == "You are a helpful test server."
    )
    assert "Say hello" in sampled["messages"][1]["content"]
    sampling, elicitation = [
        observed(m["content"]) for m in fake.requests[-1]["messages"] if m["role"] == "tool"
    ]
    assert "LLM sampling result" in sampling and "Hello from pyaichat's model." in sampling
    (question,) = asked
    assert len(question.fields) == 13 and question.fields[0].required
    assert "User provided the requested information" in elicitation and "Ann Example" in elicitation


def test_server_filesystem_reads_what_it_may_and_asks_before_writing(
    npm_servers: Path, make_assistant, tmp_path
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.md").write_text("The join key is customer_id.\n")
    entry = {
        "command": "node",
        "args": [str(npm_servers / "server-filesystem" / "dist" / "index.js"), str(root)],
    }
    assistant, fake, _ = make_assistant({"fs": {**entry, "trust": "read-only"}})
    fake.tool("fs__read_text_file", {"path": str(root / "notes.md")})
    fake.tool("fs__write_file", {"path": str(root / "evil.md"), "content": "x"})
    fake.text("customer_id")
    rec = Recorder()
    assistant.ask("q", Front(rec.emit, never_approve))
    read, write = [observed(m["content"]) for m in fake.requests[-1]["messages"] if m["role"] == "tool"]
    assert read == "The join key is customer_id.\n" or "The join key is customer_id." in read
    assert (
        write.startswith("Error: fs__write_file needs the user's approval")
        and not (root / "evil.md").exists()
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("transport", ["streamableHttp", "sse"])
def test_server_everything_over_http(npm_servers: Path, make_assistant, transport: str) -> None:
    port = free_port()
    server = subprocess.Popen(
        ["node", str(npm_servers / "server-everything" / "dist" / "index.js"), transport],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        for line in server.stderr:  # it says when it listens
            if str(port) in line:
                break
        else:
            pytest.fail("server-everything ended without listening")
        path = "mcp" if transport == "streamableHttp" else "sse"
        entry = {
            "url": f"http://127.0.0.1:{port}/{path}",
            "type": "http" if transport == "streamableHttp" else "sse",
            "headers": {"Authorization": "Bearer tok_abcdef0123456789"},
            "trust": "read-only",
        }
        assistant, fake, _ = make_assistant({"remote": entry})
        fake.tool("remote__echo", {"message": "over the wire, tok_abcdef0123456789"}).text("done")
        rec = Recorder()
        assistant.ask("q", Front(rec.emit, never_approve))
        (echo,) = [observed(m["content"]) for m in fake.requests[-1]["messages"] if m["role"] == "tool"]
        assert echo == "Echo: over the wire, <redacted MCP server secret>"
        status = "\n".join(assistant.servers.status_lines())
        assert "remote: ready, trust read-only" in status and "tok_abcdef" not in status
    finally:
        server.terminate()
        server.wait(10)
