"""Ghost text end to end: ``python -m pyaichat`` in a pseudo-terminal, suggestions from the scripted server
through the real litellm HTTP path (``/v1/completions``, fill-in-the-middle).

Nothing here depends on timing: keys typed "fast" are one write (read by the prompt together), and every wait
is for something to appear — on the screen or at the server — with a timeout only as the failure bound."""

from __future__ import annotations

import sys
import time

import pytest

pexpect = pytest.importorskip("pexpect")

from fakes.openai_server import ScriptedServer  # noqa: E402
from pty_terminal import NEW_PY, leave, output, spawn_suggesting  # noqa: E402

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
]

RIGHT, ALT_RIGHT = "\x1b[C", "\x1b[1;3C"
BOUND = 60.0  # seconds: the first suggestion pays litellm's import in the child


def run_line(child, text: str) -> None:
    child.send(text + "\r")
    child.expect(NEW_PY)


def wait_for_requests(server: ScriptedServer, n: int) -> None:
    deadline = time.monotonic() + BOUND
    while len(server.requests) < n:
        assert time.monotonic() < deadline, f"the server got {len(server.requests)} of {n} requests"
        time.sleep(0.02)


def make_frame(child) -> None:
    """A frame whose revenue column's name is never typed whole: only the live object has it."""
    run_line(child, "import pandas as pd")
    run_line(child, "sales = pd.DataFrame({'region_code': ['N', 'S', 'N']})")
    run_line(child, "sales['net_revenue' + '_eur_q3'] = [1.0, 2.5, 4.0]")


def test_a_pause_brings_a_suggestion_only_the_live_frame_could_make(tmp_path):
    with ScriptedServer() as server:
        child = spawn_suggesting(tmp_path, server.base_url, BOUND)
        try:
            make_frame(child)
            server.text('"net_revenue_eur_q3"].sum()')
            child.send('sales.groupby("region_code")[')
            child.expect_exact('"net_revenue_eur_q3"].sum()')  # the ghost text, after the pause
            prompt = server.bodies[0]["prompt"]
            assert "# sales: DataFrame 3×2: region_code str, net_revenue_eur_q3 float64" in prompt
            assert server.requests[0].path == "/v1/completions"
            # Alt-→ takes one word, → the rest; Enter runs it
            child.send(ALT_RIGHT)
            child.send(RIGHT + "\r")
            child.expect(r"N\s+5\.0\r\n")
            child.expect(NEW_PY)
            assert len(server.requests) == 1
            run_line(child, "/suggest")
            assert "1 answered, 1 shown" in child.before
            leave(child)
        finally:
            child.close()
        assert "Unclosed" not in (child.before or "")


def test_fast_typing_sends_one_request_per_pause_and_aborts_the_stale_one(tmp_path):
    with ScriptedServer() as server:
        child = spawn_suggesting(tmp_path, server.base_url, BOUND)
        try:
            make_frame(child)
            server.fault("slow", delay=BOUND)  # the first answer never comes in time
            server.text(")  # two decimals")
            child.send("total = round(sales.net_revenue_eur_q3.sum(), ")  # one write: no pause inside
            wait_for_requests(server, 1)
            child.send("2")  # the next key aborts the request in flight
            assert server.aborted.wait(BOUND)
            child.expect_exact("# two decimals")
            assert len(server.requests) == 2
            assert server.requests[0].aborted and not server.requests[1].aborted
            assert server.bodies[1]["prompt"].endswith("total = round(sales.net_revenue_eur_q3.sum(), 2")
        finally:
            child.close()


def test_a_failing_or_hanging_provider_shows_nothing_and_the_prompt_keeps_working(tmp_path):
    with ScriptedServer() as server:
        child = spawn_suggesting(tmp_path, server.base_url, BOUND)
        try:
            server.fault("slow", delay=BOUND)  # hangs
            server.fault("500")
            child.send("x = 6 * ")
            wait_for_requests(server, 1)
            child.send("7\r")  # typed and run while the suggestion hangs
            child.send("print(x)\r")
            child.expect(output("42"))
            child.send("y = x + ")
            wait_for_requests(server, 2)  # fails at once: nothing on the screen
            child.send("0\r")
            child.send("print(y)\r")
            child.expect(output("42"))
            assert "Error" not in child.before and "HTTP" not in child.before
        finally:
            child.close()


def test_a_secret_in_the_session_never_reaches_the_suggestion_request(tmp_path):
    with ScriptedServer() as server:
        child = spawn_suggesting(tmp_path, server.base_url, BOUND)
        try:
            run_line(child, 'api_key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"')
            run_line(child, "vault = {'db_password': 'hunter2hunter2', 'host': 'db.internal'}")
            server.text(")")
            child.send('client = dict(key=api_key, password=vault["db_password"], host=vault[')
            wait_for_requests(server, 1)
            raw = server.all_raw()
            assert "vault" in raw  # the facts and inputs went along…
            assert "sk-proj-abcdefghijklmnop" not in raw  # …without the secrets
            assert "hunter2hunter2" not in raw
        finally:
            child.close()
