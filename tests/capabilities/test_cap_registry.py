"""The registry contract: validation, time and size limits, masking, schemas, nothing escaping ``call``."""

from __future__ import annotations

import pytest
from cap_helpers import make_session, tool
from pydantic import BaseModel

from pyaichat.capabilities import all_capabilities, call, catalog, get, tool_schemas
from pyaichat.capabilities.catalog import Capability, cap_text
from pyaichat.configuration.config import Config

STUCK = (
    "class Stuck:\n"
    "    @property\n"
    "    def forever(self):\n"
    "        while True:\n"
    "            pass\n"
    "\n"
    "s = Stuck()\n"
)
BUILTIN = {"list_globals", "get_type", "get_repr", "get_dir", "get_doc", "get_last_exception"}


@pytest.fixture
def temp_capability():
    """Register throw-away capabilities for one test and remove them afterwards."""
    added: list[str] = []

    def add(name: str, func, args_model: type[BaseModel] = catalog.NoArgs) -> None:
        catalog.register(Capability(name, f"Test capability {name}.", args_model, func))
        added.append(name)

    all_capabilities()  # load built-ins first so the test ones do not shadow anything
    yield add
    for name in added:
        catalog._REGISTRY.pop(name, None)


def test_the_six_introspection_capabilities_are_registered_with_llm_descriptions():
    names = {c.name for c in all_capabilities()}
    assert names >= BUILTIN
    for name in BUILTIN:
        cap = get(name)
        assert cap is not None and len(cap.description) > 60, name
        assert "Use" in cap.description or "use" in cap.description, f"{name} says when to use it"


def test_tool_schemas_are_openai_function_schemas_with_the_documented_arguments():
    schemas = {s["function"]["name"]: s["function"] for s in tool_schemas()}
    assert schemas["list_globals"]["parameters"]["properties"].keys() == {"pattern"}
    assert schemas["get_dir"]["parameters"]["properties"].keys() == {"expr", "include_private"}
    assert schemas["get_dir"]["parameters"]["required"] == ["expr"]
    for name in ("get_type", "get_repr", "get_doc"):
        assert schemas[name]["parameters"]["required"] == ["expr"]
    assert schemas["get_last_exception"]["parameters"]["properties"] == {}


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("get_repr", {}, "expr: Field required"),
        ("get_repr", {"expr": 5}, "expr: Input should be a valid string"),
        ("get_repr", {"expr": "x", "colour": "red"}, "colour: Extra inputs are not permitted"),
        ("get_dir", {"expr": "x", "include_private": "maybe"}, "include_private"),
    ],
)
def test_bad_arguments_are_an_ok_false_result_saying_what_is_wrong(name, args, expected):
    result = call(make_session("x = 1"), name, args)
    assert not result.ok
    assert result.error.startswith(f"Invalid arguments for {name}:")
    assert expected in result.error


def test_unknown_capability_and_non_object_arguments_are_denied_plainly():
    session = make_session()
    unknown = call(session, "delete_everything", {})
    assert not unknown.ok and "no capability named 'delete_everything'" in unknown.error
    assert "list_globals" in unknown.error
    bad = call(session, "get_repr", ["x"])  # type: ignore[arg-type]
    assert not bad.ok and "JSON object" in bad.error


def test_a_property_that_loops_forever_is_stopped_at_the_deadline():
    session = make_session(
        STUCK,
        tool_timeout=0.3,
    )
    result = tool(session, "get_repr", expr="s.forever")
    assert not result.ok
    # The session's property is read in the walled child, killed at the deadline (or, the machine busy, the
    # call's own deadline comes first); in-process, the guards refuse to run it at all.
    said = result.error
    assert (
        "was stopped (its process was killed)" in said or "Stopped after 0.3 s" in said or "property" in said
    )


def test_a_repr_sleeping_in_c_is_abandoned_at_the_deadline():
    session = make_session(
        "import time\nclass Slow:\n    def __repr__(self):\n        time.sleep(30)\n        return 'x'\n\n"
        "s = Slow()\n",
        tool_timeout=0.2,
    )
    result = tool(session, "get_repr", expr="s")
    # Its own __repr__ runs in the walled child, killed at the deadline; without fork, abandoned in-process.
    assert not result.ok
    assert "was stopped (its process was killed)" in result.error or "Stopped after 0.2 s" in result.error


def test_workers_are_reused_but_an_abandoned_one_never_gets_another_job(temp_capability):
    import threading

    release = threading.Event()
    threads: list[threading.Thread] = []

    def where(ctx, args):
        threads.append(threading.current_thread())
        return "ok"

    def block(ctx, args):
        threads.append(threading.current_thread())
        return str(release.wait(10))

    temp_capability("test_where", where)
    temp_capability("test_block", block)
    session = make_session(tool_timeout=0.2)
    call(session, "test_where", {})
    call(session, "test_where", {})
    assert threads[0] is threads[1]  # the idle worker took the second job: no thread start per call
    blocked = call(session, "test_block", {})
    assert not blocked.ok and "Stopped after 0.2 s" in blocked.error
    assert call(session, "test_where", {}).ok  # answered at once, not queued behind the stuck job
    stuck, after = threads[2], threads[3]
    assert after is not stuck
    release.set()
    stuck.join(5)
    assert not stuck.is_alive()  # once its job ends, the abandoned worker ends too


def test_each_job_starts_with_a_fresh_decimal_context(temp_capability):
    import decimal

    def set_precision(ctx, args):
        before = decimal.getcontext().prec
        decimal.getcontext().prec = 3
        return str(before)

    temp_capability("test_prec", set_precision)
    session = make_session()
    assert call(session, "test_prec", {}).text == "28"
    assert call(session, "test_prec", {}).text == "28"  # the reused worker did not keep precision 3


def test_a_dir_that_loops_forever_does_not_hang_get_dir():
    session = make_session(
        "class Spin:\n    def __dir__(self):\n        while True:\n            pass\n\ns = Spin()\n",
        tool_timeout=5,
    )
    result = tool(session, "get_dir", expr="s")
    assert not result.ok
    assert "dir(s) failed" in result.error  # stopped by the in-thread guard well before the 5 s deadline


def test_output_is_capped_with_a_marker_saying_what_was_cut(temp_capability):
    temp_capability("test_big", lambda ctx, args: "\n".join(f"line {i}" for i in range(10_000)))
    result = call(make_session(max_output_chars=500), "test_big", {})
    assert result.ok and result.truncated
    assert len(result.text) < 600
    assert result.text.rstrip().endswith("more characters cut")
    full = "\n".join(f"line {i}" for i in range(10_000))
    shown = result.text.rsplit("\n… ", 1)[0]
    assert full.startswith(shown)
    assert result.text.splitlines()[-1] == f"… {len(full) - len(shown):,} more characters cut"


def test_cap_text_marker_counts_the_cut_characters():
    text, cut = cap_text("a" * 1000, 400)
    assert cut and text.endswith("… 600 more characters cut")
    assert cap_text("short", 400) == ("short", False)


def test_nothing_raised_inside_a_capability_escapes_call(temp_capability):
    def boom(ctx, args):
        raise RuntimeError("kaput")

    def leave(ctx, args):
        raise SystemExit(3)

    temp_capability("test_boom", boom)
    temp_capability("test_exit", leave)
    session = make_session()
    failed = call(session, "test_boom", {})
    assert not failed.ok and failed.error == "test_boom failed: RuntimeError: kaput."[:-1]
    exited = call(session, "test_exit", {})
    assert not exited.ok and "SystemExit" in exited.error


def test_results_and_errors_are_masked(temp_capability):
    key = "sk-proj-" + "A1b2C3d4" * 5
    temp_capability("test_leak", lambda ctx, args: f"the key is {key}")
    temp_capability("test_leak_error", lambda ctx, args: (_ for _ in ()).throw(ValueError(key)))
    session = make_session()
    ok = call(session, "test_leak", {})
    assert key not in ok.text and "<redacted openai key>" in ok.text
    err = call(session, "test_leak_error", {})
    assert key not in err.error and "<redacted openai key>" in err.error


def test_extra_secret_patterns_and_names_from_the_config_apply(temp_capability):
    temp_capability("test_custom", lambda ctx, args: "ticket INTERNAL-12345 for acme_thing='xyzzy'")
    session = make_session(secret_patterns=[r"INTERNAL-\d+"], secret_names=["acme_*"])
    text = call(session, "test_custom", {}).text
    assert "INTERNAL-12345" not in text and "<redacted custom pattern>" in text
    assert "xyzzy" not in text


def test_config_argument_overrides_the_session_config():
    session = make_session("items = ['alpha', 'beta']", privacy="full")
    result = call(session, "get_repr", {"expr": "items"}, config=Config(privacy="schema"))
    assert "alpha" not in result.text and "2 items" in result.text


def test_session_without_config_uses_defaults():
    from pyaichat.session import Session

    session = Session({"x": [1, 2, 3]})
    result = call(session, "get_repr", {"expr": "x"})
    assert result.ok and "[1, 2, 3]" in result.text
    assert result.duration_ms >= 0 and result.name == "get_repr"


def test_an_overdue_worker_thread_is_stopped_not_left_spinning():
    import threading

    session = make_session(
        STUCK,
        tool_timeout=0.2,
    )
    before = set(threading.enumerate())
    assert not tool(session, "get_type", expr="s.forever").ok
    workers = [t for t in threading.enumerate() if t not in before and t.name == "pyaichat-capability"]
    for worker in workers:
        worker.join(5)  # the in-thread guard ends the loop at the deadline: the join returns at once
        assert not worker.is_alive()
