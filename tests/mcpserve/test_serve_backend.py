"""One outside call over the session (``LocalBackend``): the same bounds, masking, privacy and audit as the
built-in assistant's calls, the client named in the audit and on the person's screen, and nothing changed."""

from __future__ import annotations

import threading
from typing import Any

import pandas as pd
import pytest

from pyaichat.capabilities import audit
from pyaichat.capabilities.catalog import CapabilityResult
from pyaichat.configuration.config import Config
from pyaichat.mcpserve.backend import TOO_MANY, LocalBackend, quiet_line
from pyaichat.mcpserve.clients import ClientRecord, safe_name
from pyaichat.mcpserve.gate import BUSY, SessionGate
from pyaichat.mcpserve.rate import RateBound
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session

SECRET = "sk-proj-Zq8vN3xL0pR7tY2wK5mB9cD4fG6hJ1sA"


def backend_over(source: str, lines: list[str] | None = None, **config: Any) -> LocalBackend:
    session = Session(config=Config(**config))
    result = session.run(source)
    assert result.ok, result.error and result.error.formatted
    gate = SessionGate()
    gate.attach()
    show = lines.append if lines is not None else None
    return LocalBackend(LocalRuntime(session), gate, show=show, where="test session")


def client(backend: LocalBackend, name: str = "claude-code", transport: str = "stdio") -> ClientRecord:
    return backend.clients.seen(f"k-{name}", name, transport)


DATA = (
    "import pandas as pd\n"
    "df = pd.DataFrame({'a': range(100), 'b': [f's{i}' for i in range(100)]})\n"
    f"openai_api_key = {SECRET!r}\n"
    f"notes = 'deploy with key {SECRET}'\n"
)


def test_a_call_returns_what_the_capability_returns_and_shows_one_quiet_line() -> None:
    lines: list[str] = []
    backend = backend_over(DATA, lines)
    result = backend.call("get_type", {"expr": "df"}, client(backend))
    assert result.ok and result.text.startswith("df: DataFrame")
    assert result.images == ()
    assert len(lines) == 1
    assert lines[0].startswith("⇄ claude-code get_type(df) ") and lines[0].endswith(" ms")


def test_secrets_are_masked_in_values_in_text_and_in_the_picture() -> None:
    backend = backend_over(DATA)
    me = client(backend)
    for name, args in [
        ("get_repr", {"expr": "openai_api_key"}),
        ("get_repr", {"expr": "notes"}),
        ("list_globals", {}),
        ("eval_expr", {"expr": "notes"}),
        ("eval_expr", {"expr": "openai_api_key[::-1]"}),
        ("run_python", {"code": "print(notes[::-1][::-1])\nnotes"}),
        ("get_session_picture", {}),
    ]:
        result = backend.call(name, args, me)
        text = result.model_dump_json()
        assert SECRET not in text and SECRET[::-1] not in text, name


def test_the_picture_masks_what_it_cuts_short_before_cutting_it() -> None:
    """The picture cuts long input lines (and outputs, and the last error); a secret the cut would halve is
    masked first: half of it no longer matches its pattern (here the person's own ``secret_patterns``)."""
    line = "x = 1; " * 10 + "y=0; acct = 'CUST-123456'"  # the number straddles the input line's cut
    backend = backend_over(line, secret_patterns=[r"CUST-\d{6}"])
    backend.runtime.session.run("raise ValueError('z' * 280 + acct)")  # and the error's
    text = backend.call("get_session_picture", {}, client(backend)).text
    assert "y=0; acct" in text and "Last error" in text
    assert "CUST-" not in text, text


def test_the_audit_names_the_client_and_the_transport() -> None:
    backend = backend_over(DATA)
    backend.call("get_repr", {"expr": "df"}, client(backend, "cursor", "http"))
    backend.call("get_session_picture", {}, client(backend, "claude-code", "stdio"))
    entries = audit.read_last(2)
    assert [(e["capability"], e["origin"]) for e in entries] == [
        ("get_repr", "mcp cursor via http"),
        ("get_session_picture", "mcp claude-code via stdio"),
    ]
    assert "[mcp cursor via http]" in audit.format_entry(entries[0])


def test_privacy_and_output_bounds_apply_as_for_the_assistant() -> None:
    backend = backend_over(DATA, privacy="names", max_output_chars=300)
    me = client(backend)
    shown = backend.call("get_repr", {"expr": "df"}, me)
    assert not shown.ok or "s42" not in shown.text  # no values at the names level
    wide = backend_over("x = list(range(100000))", max_output_chars=300)
    result = wide.call("get_repr", {"expr": "x"}, client(wide))
    assert len(result.text) < 400


def test_the_picture_leaves_the_assistants_own_state_alone() -> None:
    backend = backend_over(DATA)
    runtime = backend.runtime
    runtime.session.run("1/0")
    runtime.picture()  # the assistant's question: it has now been told of this error
    runtime.session.run("[][1]")
    text = backend.call("get_session_picture", {}, client(backend)).text
    assert "IndexError" in text and "df: DataFrame" in text and "test session" in text
    assert "new since the previous question" in runtime.picture()  # still new to the assistant


def test_no_tool_changes_the_session() -> None:
    backend = backend_over(DATA + "items = [3, 1, 2]\nconfig = {'a': 1}\n")
    namespace = backend.runtime.session.namespace

    def snapshot() -> dict[str, Any]:
        df = namespace["df"]
        return {
            "names": sorted(namespace),
            "df": (pd.util.hash_pandas_object(df).sum(), tuple(df.columns), id(df)),
            "items": (list(namespace["items"]), id(namespace["items"])),
            "config": dict(namespace["config"]),
        }

    before = snapshot()
    me = client(backend)
    for name, args in [
        ("eval_expr", {"expr": "items.sort()"}),
        ("eval_expr", {"expr": "config.update(a=2)"}),
        ("eval_expr", {"expr": "df.drop(columns=['a'], inplace=True)"}),
        ("run_python", {"code": "items.append(4)\nconfig['b'] = 2\ndf['c'] = 1\nnew_name = 1"}),
        ("run_python", {"code": "global items\nitems = None"}),
        ("get_dir", {"expr": "df"}),
        ("get_doc", {"expr": "df.drop"}),
        ("list_globals", {"pattern": "*"}),
    ]:
        backend.call(name, args, me)
    assert snapshot() == before


def test_while_the_persons_input_runs_a_call_is_told_busy_and_leaves_one_quiet_refusal_line() -> None:
    lines: list[str] = []
    backend = backend_over("x = 1", lines)
    backend._busy_wait = lambda: 0.05
    backend.gate.enter()
    try:
        result = backend.call("get_repr", {"expr": "x"}, client(backend))
    finally:
        backend.gate.leave()
    assert not result.ok and result.error == BUSY
    assert lines == [f"⇄ claude-code get_repr refused · {BUSY[:79]}" + ("…" if len(BUSY) > 80 else "")]
    assert backend.call("get_repr", {"expr": "x"}, client(backend)).ok


def test_a_flood_is_refused_past_the_bound_and_each_call_stays_whole() -> None:
    backend = backend_over("x = 1")
    backend.rate = RateBound(burst=30, per_second=0.0)
    results: list[CapabilityResult] = []
    lock = threading.Lock()

    def flood(n: int) -> None:
        me = client(backend, f"agent{n}", "http")
        for _ in range(20):
            r = backend.call("eval_expr", {"expr": "x + 1"}, me)
            with lock:
                results.append(r)

    threads = [threading.Thread(target=flood, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    ok = [r for r in results if r.ok]
    refused = [r for r in results if not r.ok]
    assert len(ok) == 30 and len(refused) == 50
    assert {r.text for r in ok} == {"2"} or all("2" in r.text for r in ok)
    assert {r.error for r in refused} == {TOO_MANY}
    assert sum(c.calls for c in backend.clients.records()) == 80


def test_unknown_tools_and_bad_arguments_are_one_sentence() -> None:
    backend = backend_over("x = 1")
    me = client(backend)
    assert "no tool named 'exec'" in backend.call("exec", {"code": "x"}, me).error
    assert "must be a JSON object" in backend.call("get_repr", ["x"], me).error
    assert backend.call("get_repr", {"expr": "x", "extra": 1}, me).error.startswith("Invalid arguments")
    assert backend.call("propose_code", {"code": "x = 2"}, me).ok is False  # not offered here


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("claude-code", "claude-code"),
        ("evil\x1b[2J\x1b[31mred", "evil??2J??31mred"),
        ("two\nlines\r", "two?lines?"),
        ("", "client"),
        ("x" * 100, "x" * 40),
    ],
)
def test_client_names_cannot_draw_on_the_persons_screen(name: str, shown: str) -> None:
    assert safe_name(name) == shown


def test_the_quiet_line_folds_and_masks_what_the_agent_sent() -> None:
    me = ClientRecord("claude-code", "stdio")
    sent = {"code": f"print(1)\n\x1b[2Jk = {SECRET!r}"}
    line = quiet_line(me, "run_python", sent, CapabilityResult(name="run_python", ok=True, duration_ms=3.4))
    assert "\x1b" not in line and "\n" not in line and SECRET[: len("sk-proj-") + 2] not in line
    assert line.startswith("⇄ claude-code run_python(print(1)")
    result = CapabilityResult(name="get_repr", ok=False, error="NameError: y", duration_ms=0.2)
    failed = quiet_line(me, "get_repr", {"expr": "y"}, result)
    assert failed == "⇄ claude-code get_repr(y) 0.2 ms · NameError: y"


def test_the_quiet_line_masks_with_the_sessions_own_rules_before_it_cuts() -> None:
    """The person's own ``secret_patterns`` apply to the line too, and a secret the cut would halve is
    masked whole first (half of it would not match its pattern)."""
    lines: list[str] = []
    backend = backend_over("x = 1", lines, secret_patterns=[r"CUST-\d{6}"])
    expr = "'" + "x" * 30 + " CUST-123456'"  # the number straddles the line's 40 characters
    assert backend.call("eval_expr", {"expr": expr}, client(backend)).ok
    assert lines[0].startswith("⇄ claude-code eval_expr('xxxxxxxxxx") and "CUST-" not in lines[0], lines


# -- issue 36: clients told apart, lines kept few ------------------------------------------------------------
def test_clients_of_one_name_are_told_apart_and_idle_http_clients_are_gone() -> None:
    import time

    from pyaichat.mcpserve.clients import IDLE_GONE

    backend = backend_over("x = 1")
    first = backend.clients.seen("http/s1", "mcp", "http")
    second = backend.clients.seen("http/s2", "mcp", "http")
    again = backend.clients.seen("http/s1", "mcp", "http")
    claude = backend.clients.seen("link/claude-code", "claude-code", "stdio")
    assert (first.name, second.name, again.name, claude.name) == ("mcp", "mcp#2", "mcp", "claude-code")
    assert not first.gone() and not claude.gone()
    assert first.gone(time.time() + IDLE_GONE + 1)  # quiet past the idle bound
    backend.clients.gone("link")
    assert claude.gone()
    back = backend.clients.seen("link2/claude-code", "claude-code", "stdio")
    assert back.name == "claude-code"  # the gone connection's label is free again
    assert backend.clients.seen("link3/claude-code", "claude-code", "stdio").name == "claude-code#2"


def test_repeated_calls_coalesce_into_one_line_and_refusals_stay_their_own() -> None:
    from pyaichat.mcpserve.lines import QuietLines

    shown: list[str] = []
    refused: list[str] = []
    lines = QuietLines(shown.append, refused.append, window=0.3)
    backend = backend_over("x = 1")
    backend.show = lines
    me = client(backend)
    for _ in range(12):
        assert backend.call("get_repr", {"expr": "x"}, me).ok
    assert len(shown) == 1 and shown[0].startswith("⇄ claude-code get_repr(x) ")
    backend.call("get_type", {"expr": "x"}, me)  # another tool: the burst's sum comes first
    assert shown[1] == "⇄ claude-code get_repr ×12 in under 1 s"
    assert shown[2].startswith("⇄ claude-code get_type(x) ")
    backend.call("get_type", {"expr": "y"}, me)
    import time

    time.sleep(0.8)  # the burst ended by itself: one line sums it up
    assert shown[3] == "⇄ claude-code get_type ×2 in under 1 s"
    backend.rate = RateBound(burst=0, per_second=0.0)
    assert not backend.call("get_repr", {"expr": "x"}, me).ok
    assert refused == [f"⇄ claude-code get_repr refused · {TOO_MANY[:79]}…"]
    assert len(shown) == 4


def test_mcp_serve_quiet_keeps_the_lines_to_refusals() -> None:
    from pyaichat.mcpserve.service import McpService

    shown: list[str] = []
    quiet = Config(mcp_serve_quiet=True)
    session = Session(config=quiet)
    service = McpService(
        LocalRuntime(session), SessionGate(), where="test", show=shown.append, settings=lambda: quiet
    )
    service._lines.call("claude-code", "get_repr", "⇄ claude-code get_repr(x) 1 ms")
    service._lines.refusal("⇄ claude-code get_repr refused · busy")
    assert shown == ["⇄ claude-code get_repr refused · busy"]
    loud = Config()
    service.settings = lambda: loud
    service._lines.call("claude-code", "get_type", "⇄ claude-code get_type(x) 1 ms")
    assert shown[-1] == "⇄ claude-code get_type(x) 1 ms"


def test_propose_code_passes_the_same_rate_bound_as_every_call() -> None:
    """A flood of proposals is refused at the rate bound, before anything reaches the person's queue."""

    class Proposer:
        def __init__(self) -> None:
            self.proposed: list[dict[str, Any]] = []

        def propose(self, args: dict[str, Any], client: ClientRecord, left: Any = None) -> CapabilityResult:
            self.proposed.append(args)
            return CapabilityResult(name="propose_code", ok=True, text="The person declined it.")

    session = Session(config=Config())
    gate = SessionGate()
    gate.attach()
    proposer = Proposer()
    backend = LocalBackend(LocalRuntime(session), gate, where="test session", proposer=proposer)
    backend.rate = RateBound(burst=3, per_second=0.0)
    me = client(backend)
    results = [backend.call("propose_code", {"code": f"x = {i}"}, me) for i in range(5)]
    assert [r.ok for r in results] == [True, True, True, False, False]
    assert {r.error for r in results[3:]} == {TOO_MANY} and len(proposer.proposed) == 3
