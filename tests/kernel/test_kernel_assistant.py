"""The assistant over a kernel's namespace: capabilities run inside the kernel, same promises as locally."""

from __future__ import annotations

import json
import threading
import time

from kernel_process import attach, kernel_eval

from fakes.openai_server import Reply
from fakes.recorder import Recorder
from pyaichat.agent.llm import LiteLLMClient
from pyaichat.assemble import assemble
from pyaichat.commands import dispatch
from pyaichat.configuration.config import Config
from pyaichat.controller import Controller
from pyaichat.runtime.kernel_connection import DEAD
from pyaichat.runtime.kernel_link import settings_of

SECRET_KEY = "sk-proj-Zq9xV3bN7mK2pL5tR8wY1cD4fG6hJ0sA"
ROWS = 10_000_000


def controller(runtime, srv, decision: str = "no") -> Controller:
    config = Config(model="openai/test", api_base=srv.base_url, audit=False, request_timeout=10, max_steps=4)
    runtime.settings.replace(config)
    return assemble(runtime, Recorder(decision), llm_factory=lambda cfg: LiteLLMClient(cfg, backoff=0.01))


def fingerprint(runtime, name: str) -> str:
    """A content hash of a kernel variable, computed in the kernel."""
    return kernel_eval(
        runtime, f"__import__('pandas').util.hash_pandas_object({name}, index=True).sum().item()"
    )


def test_question_answered_over_the_kernels_dataframe(runtime, srv):
    runtime.run(
        "import pandas as pd\nsales = pd.DataFrame({'region': ['n', 's', 'e'], 'amount': [10, 20, 35]})"
    )
    ctrl = controller(runtime, srv)
    srv.tool("get_repr", {"expr": "sales"}).text("The largest amount is 35, in region e.")
    ctrl.ask("what is the largest amount in @sales?")
    front = ctrl.frontend
    assert front.of("answer")[-1].text == "The largest amount is 35, in region e."
    assert [(e.name, e.ok) for e in front.of("tool_end")] == [("get_repr", True)]
    first, second = srv.bodies
    # the session picture travels with the question (after the cached system prefix)
    picture = [m for m in first["messages"] if m["role"] == "user"][-1]["content"]
    assert (
        "in a Jupyter kernel" in picture and "sales: DataFrame 3×2" in picture
    )  # the picture, in the kernel
    assert "### sales" in picture and "amount" in picture  # the @pin, described in the kernel
    tool_result = second["messages"][-1]["content"]
    assert "35" in tool_result and "region" in tool_result
    # the data exists only in the kernel: this process never held the DataFrame
    assert "sales" not in globals() and not hasattr(runtime, "namespace")


def test_last_exception_and_commands_from_the_kernel(runtime, srv):
    runtime.run("def ratio(a, b):\n    return a / b")
    runtime.run("values = [1, 0]\nratio(*values)")
    result = runtime.call("get_last_exception", {})
    assert result.ok
    assert "ZeroDivisionError" in result.text and "a / b" in result.text and "ratio(*values)" in result.text
    ctrl = controller(runtime, srv)
    dispatch(ctrl, "/last_error")
    dispatch(ctrl, "/inspect values")
    dispatch(ctrl, "/history 2")
    notices = [e.text for e in ctrl.frontend.of("notice")]
    assert "ZeroDivisionError" in notices[0]
    assert notices[1].startswith("values: list")
    (history,) = [page.plain_text() for page in ctrl.frontend.of("page")]
    assert "[3] values = [1, 0]" in history and "ZeroDivisionError" in history
    picture = runtime.picture()
    assert "Last error" in picture and "ZeroDivisionError" in picture


def test_capabilities_in_the_kernel_are_read_only_and_masked(runtime):
    runtime.run(
        "import pandas as pd\n"
        f"api_key = {SECRET_KEY!r}\n"
        "frame = pd.DataFrame({'a': range(5), 'b': list('vwxyz')})\n"
        "conf = {'token': 'abc', 'url': 'postgres://bob:hunter22@db/x'}"
    )
    before = fingerprint(runtime, "frame"), kernel_eval(runtime, "repr(conf)")
    calls = [
        ("get_repr", {"expr": "api_key"}),
        ("eval_expr", {"expr": "api_key"}),
        ("get_repr", {"expr": "conf"}),
        ("eval_expr", {"expr": "frame.a.sum()"}),
        ("eval_expr", {"expr": "frame.drop(columns=['a'], inplace=True)"}),
        ("run_python", {"code": "frame.loc[0, 'a'] = 99\nconf['url'] = 'x'\nprint(frame.a.sum(), api_key)"}),
    ]
    raw = []
    for name, args in calls:  # the replies as they cross the wire, before this process touches them
        request = {
            "op": "call",
            "args": {"name": name, "args": args},
            "settings": settings_of(runtime.config),
        }
        raw.append(json.dumps(runtime.kernel.request(request)))
    assert all(SECRET_KEY not in r and "hunter22" not in r for r in raw)  # masked before leaving the kernel
    results = [json.loads(r)["value"] for r in raw]
    assert results[3]["ok"] and "10" in results[3]["text"]
    # results[4] (an inplace=True drop) may run, but on the sandbox's own copy: the fingerprints below tell
    assert results[5]["ok"] and "109" in results[5]["text"]  # the fork saw its own copy-on-write change
    assert (fingerprint(runtime, "frame"), kernel_eval(runtime, "repr(conf)")) == before
    assert kernel_eval(runtime, "api_key") == repr(SECRET_KEY)


def test_ten_million_rows_summarised_without_transferring_them(runtime):
    runtime.run(f"import numpy as np, pandas as pd\nbig = pd.DataFrame({{'a': np.arange({ROWS}), 'b': 0.5}})")
    assert kernel_eval(runtime, "big.memory_usage(deep=True).sum().item()") == str(ROWS * 16 + 132)
    limit = runtime.config.max_output_chars
    sizes = {}
    for name, args in [
        ("get_type", {"expr": "big"}),
        ("get_repr", {"expr": "big"}),
        ("list_globals", {}),
        ("eval_expr", {"expr": "big"}),
        ("eval_expr", {"expr": "big.b.sum()"}),
        ("run_python", {"code": "print(big.describe())"}),
    ]:
        result = runtime.call(name, args)
        assert result.ok, (name, result.error)
        sizes[name] = runtime.kernel.wire.total[-1]
        # a call's bytes on the wire are bounded by the output limit (plus the protocol's fixed overhead),
        # not by the 160 MB of data
        assert sizes[name] < 2 * limit + 2000, (name, sizes[name])
    assert "10,000,000" in runtime.call("get_type", {"expr": "big"}).text
    assert "5000000.0" in runtime.call("eval_expr", {"expr": "big.b.sum()"}).text
    picture = runtime.picture()
    assert "big: DataFrame 10,000,000×2" in picture and len(picture) < 4000
    runtime.settings.replace(Config(audit=False, max_output_chars=300))
    result = runtime.call("get_dir", {"expr": "big"})
    assert result.ok and result.truncated and runtime.kernel.wire.total[-1] < 2 * 300 + 2000


def test_approved_proposal_runs_in_the_kernel(runtime, srv):
    runtime.run("counter = 1")
    ctrl = controller(runtime, srv, decision="run")
    srv.tool("propose_code", {"code": "counter += 41", "explanation": "add 41"}).text("Done: counter is 42.")
    ctrl.ask("make counter 42")
    assert kernel_eval(runtime, "counter") == "42"
    tool_msg = srv.bodies[-1]["messages"][-1]["content"]
    assert "ran the proposed code" in tool_msg and "succeeded" in tool_msg


def test_kernel_dying_mid_turn_is_one_sentence_and_the_session_stays_up(kernel, srv, capsys):
    runtime = attach(kernel)
    try:
        runtime.run("import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})")
        ctrl = controller(runtime, srv)
        # the model "thinks" for a moment; the kernel dies meanwhile, then the model asks for a capability
        srv.enqueue(
            Reply(fault="slow", delay=1.5, tool_calls=[{"name": "get_repr", "arguments": {"expr": "df"}}])
        )
        srv.text("I could not look at df: the kernel is gone.")

        def kill_on_first_request() -> None:
            deadline = time.monotonic() + 30
            while not srv.requests and time.monotonic() < deadline:
                time.sleep(0.01)
            kernel.kill()

        killer = threading.Thread(target=kill_on_first_request)
        killer.start()
        ctrl.ask("what is in df?")
        killer.join()
        front = ctrl.frontend
        ends = front.of("tool_end")
        assert [(e.name, e.ok) for e in ends] == [("get_repr", False)]
        tool_msg = srv.bodies[-1]["messages"][-1]["content"]
        assert DEAD in tool_msg
        assert front.of("answer")[-1].text == "I could not look at df: the kernel is gone."
        # Python mode: one sentence, no traceback, and the controller is still usable
        ctrl.handle("1 + 1")
        errors = [e.message for e in front.of("error")]
        assert errors == [DEAD]
        dispatch(ctrl, "/inspect df")
        assert front.of("notice")[-1].text == DEAD
        assert "Traceback" not in capsys.readouterr().err
    finally:
        runtime.close()


def test_calls_into_the_kernel_are_audited_once_where_they_run_with_their_origin(runtime, srv):
    from pyaichat.capabilities import audit

    runtime.run("audited_value = 3")
    runtime.settings.replace(Config(audit=True))
    runtime.call("get_type", {"expr": "audited_value"}, origin="user")
    runtime.call("get_repr", {"expr": "no_such_name_here"})
    path, (first, second) = runtime.audit_log(2)
    assert (first["capability"], first["ok"], first["origin"]) == ("get_type", True, "user")
    assert (second["capability"], second["ok"], second["origin"]) == ("get_repr", False, "assistant")
    assert first["args"] == {"expr": "audited_value"}
    # recorded in the kernel's own state directory, and only there
    assert "kernel-state" in path and path != str(audit.log_path()) and audit.read_last(2) == []
    ctrl = controller(runtime, srv)
    dispatch(ctrl, "/audit 2")
    shown = ctrl.frontend.of("notice")[-1].text
    assert path in shown and "get_type(expr='audited_value')" in shown and "[user]" in shown


def test_an_error_raised_before_pyaichat_attached_is_the_last_error(kernel):
    from jupyter_client import BlockingKernelClient

    other = BlockingKernelClient(connection_file=str(kernel.connection_file))
    other.load_connection_file()
    other.start_channels()
    try:
        other.wait_for_ready(timeout=60)
        reply = other.execute_interactive(
            "totals = {'a': 1}\ntotals['b']", timeout=60, output_hook=lambda m: None
        )
        assert reply["content"]["status"] == "error"
    finally:
        other.stop_channels()
    runtime = attach(kernel)
    try:
        result = runtime.call("get_last_exception", {})
        assert result.ok and "KeyError: 'b'" in result.text and "totals['b']" in result.text
        assert "totals['b']" in runtime.picture()  # backfilled history
    finally:
        runtime.close()


def test_preview_undo_and_snapshot_run_in_the_kernel(runtime, srv, tmp_path):
    from pyaichat.capabilities.sandbox.confine import probe

    runtime.run("import pandas as pd\norders = pd.DataFrame({'id': ['1', '2']})\nkept = [1]")
    original = kernel_eval(runtime, "id(orders)")
    ctrl = controller(runtime, srv, decision="run")
    code = "orders = orders.assign(id=orders['id'].astype(int))\nextra = 1"
    srv.tool("propose_code", {"code": code}).text("Converted.")
    ctrl.ask("convert the ids")
    (preview,) = ctrl.frontend.of("preview")
    text = "\n".join(line for _, line in preview.lines)
    if probe().complete:  # the preview forked where the data is: in the kernel
        assert preview.status == "previewed" and "rebinds orders" in text and "id int64" in text, text
    assert "rebinds orders" not in json.dumps(srv.bodies)
    assert kernel_eval(runtime, "orders['id'].dtype.name") == "'int64'"
    dispatch(ctrl, "/undo")
    assert "restored orders" in ctrl.frontend.of("notice")[-1].text
    assert kernel_eval(runtime, "id(orders)") == original
    assert kernel_eval(runtime, "'extra' in dir()") == "False"

    path = tmp_path / "kernel.snap"
    dispatch(ctrl, f"/snapshot {path}")
    saved = ctrl.frontend.of("notice")[-1].text
    assert saved.startswith("Saved ") and str(path) in saved  # written by the kernel, where the data is
    runtime.run("del kept")
    dispatch(ctrl, f"/resume {path}")
    assert ctrl.frontend.of("notice")[-1].text.startswith("Loaded ")
    assert kernel_eval(runtime, "kept") == "[1]"


def test_the_reviews_breaks_are_refused_from_the_kernels_process(runtime, tmp_path):
    """The writes and roads to secrets of ``tests/readonly_breaks.py``, through the kernel runtime's own door:
    the tools run inside the kernel, so the refusals and the masking happen there."""
    from pyaichat.capabilities.redact import masker_for
    from readonly_breaks import (
        EXPR_TOOLS,
        FAILING_INPUT,
        ISSUE_44_CALLS,
        SECRET_ROADS,
        WRITES,
        issue_44_refusals,
        leaked,
        one_sentence,
        setup_source,
        state_source,
    )

    watch = tmp_path / "watched"
    watch.mkdir()
    runtime.run(setup_source(str(watch)))
    before = kernel_eval(runtime, state_source())
    for expr in WRITES:
        for tool in EXPR_TOOLS[:2]:
            result = runtime.call(tool, {"expr": expr})
            assert not result.ok and one_sentence(result.error), (tool, expr, result.error)
            assert "would change the session's" in result.error or "cannot write to a file" in result.error
    for name, args in SECRET_ROADS:
        result = runtime.call(name, args)
        assert leaked((result.text or "") + (result.error or "")) is None, (name, args, result)
    said = []
    for name, args in ISSUE_44_CALLS:  # issue 44: none of the kernel's session code runs in its process
        started = time.perf_counter()
        result = runtime.call(name, args)
        assert time.perf_counter() - started <= runtime.config.tool_timeout + 2.0, (name, args)
        said.append((result.text or "") + (result.error or ""))
        assert leaked(said[-1]) is None, (name, args, result)
    assert issue_44_refusals(said), said
    kernel_eval(runtime, "__import__('gc').collect()")  # a copy made in the kernel would be finalised now
    runtime.run(FAILING_INPUT)
    exception = runtime.call("get_last_exception", {}).text
    assert "invalid literal for int()" in exception and leaked(exception) is None
    picture = runtime.picture()  # masked by the session's values in the kernel, by every rule on its way out
    assert "invalid literal for int()" in picture
    assert leaked(masker_for(runtime.config).mask_text(picture)) is None
    assert kernel_eval(runtime, state_source()) == before
    assert list(watch.iterdir()) == []


def test_the_walled_child_of_the_kernel_holds_no_secret(runtime, tmp_path):
    """The roads of ``tests/readonly_breaks.py`` that the walled child computes, through the kernel runtime:
    the child forks from the kernel's process and replaces every secret there before it evaluates."""
    from readonly_breaks import (
        CHILD_ORACLES,
        CHILD_ROADS,
        CHILD_SETUP,
        answered_false,
        leaked_transformed,
        setup_source,
    )

    runtime.run(setup_source(str(tmp_path)) + CHILD_SETUP)
    for name, args in CHILD_ROADS:
        result = runtime.call(name, args)
        said = (result.text or "") + (result.error or "")
        assert leaked_transformed(said) is None, (name, args, said)
    for name, args in CHILD_ORACLES:
        result = runtime.call(name, args)
        assert result.ok and answered_false(result.text), (name, args, result)
    assert kernel_eval(runtime, "reveal()[:10]") == "'closure-pw'"


def test_what_a_proposal_does_to_the_kernels_process_comes_back(runtime, srv):
    """The preview forks the kernel's process: the review's six proposals each get their line there, sent
    back over the wire to the panel and to the model (httpx loaded in the kernel, not held by the session)."""
    import pytest

    from pyaichat.capabilities.sandbox.confine import probe
    from readonly_breaks import PROCESS_PROPOSALS, told_piece

    if not probe().complete:
        pytest.skip("the preview needs the kernel walls")
    runtime.run("import httpx as _loaded\ndel _loaded\nitems = [1]\nglobals().pop('kept', None)")  # shared
    ctrl = controller(runtime, srv, decision="no")
    srv.tools(*[("propose_code", {"code": code}) for code, _ in PROCESS_PROPOSALS]).text("Declined.")
    ctrl.ask("change the process")
    previews = ctrl.frontend.of("preview")
    assert len(previews) == len(PROCESS_PROPOSALS)
    for (code, said), preview in zip(PROCESS_PROPOSALS, previews, strict=True):
        shown = "\n".join(line for _, line in preview.lines)
        assert said in shown, (code, shown)
    told = [m["content"] for m in srv.bodies[-1]["messages"] if m.get("role") == "tool"]
    assert all(told_piece(said) in answer for (_, said), answer in zip(PROCESS_PROPOSALS, told, strict=True))
    assert kernel_eval(runtime, "items") == "[1]" and kernel_eval(runtime, "'kept' in dir()") == "False"


def test_what_the_preview_cannot_see_comes_back_from_the_kernel(runtime, srv):
    """The preview forks the kernel's process; what it could not see there comes back over the wire, to the
    panel and to the model — an asyncio task too (a kernel runs its cells inside its event loop)."""
    import pytest

    from pyaichat.capabilities.sandbox.confine import probe

    if not probe().complete:
        pytest.skip("the preview needs the kernel walls")
    runtime.run("import json\nimport asyncio\nimport pandas as pd\nbasket = [1, 2]")
    ctrl = controller(runtime, srv, decision="no")
    code = (
        "import os\n"
        "os.environ['KERNEL_MODE'] = 'fast'\n"
        "async def empty_later():\n"
        "    basket.clear()\n"
        "task = asyncio.ensure_future(empty_later())\n"
        "json.dumps = lambda *a, **k: '{}'\n"
        "basket.append(3)"
    )
    srv.tool("propose_code", {"code": code}).text("Declined.")
    ctrl.ask("do it")
    (preview,) = ctrl.frontend.of("preview")
    lines = [line for _, line in preview.lines]
    assert preview.status == "incomplete" and lines[0].startswith("Incomplete preview"), lines
    tamper = (
        "This code replaces json.dumps, part of Python itself; its effects cannot be previewed — read it "
        "before you run it."
    )
    assert lines[1] == f"  {tamper}"
    assert "  sets the environment variable KERNEL_MODE: what that changes is not previewed" in lines
    assert (
        "  schedules an asyncio task (empty_later) on the running event loop: what that does is not previewed"
        in lines
    ), lines
    grew = "  changes basket in place: list of 2 items → list of 3 items"
    assert any(line.startswith(grew) for line in lines), lines
    told = next(m["content"] for m in srv.bodies[-1]["messages"] if m.get("role") == "tool")
    assert "sets the environment variable KERNEL_MODE" in told and told.endswith(f"- {tamper}"), told
    assert kernel_eval(runtime, "basket") == "[1, 2]"
    assert kernel_eval(runtime, "__import__('json').dumps([1])") == "'[1]'"
