"""The rich renderer shows every event type, plainly readable without colour."""

from __future__ import annotations

import dataclasses
import io
import typing

import pytest
from rich.console import Console

from pyaichat.agent import events as ev
from pyaichat.proposal import Proposal
from pyaichat.repl.render import RichRenderer, call_label, format_usage


def make(
    width: int = 100, *, terminal: bool = False, color: bool = False
) -> tuple[RichRenderer, io.StringIO]:
    out = io.StringIO()
    console = Console(
        file=out, width=width, height=20, force_terminal=terminal, no_color=not color, highlight=False
    )
    return RichRenderer(console), out


def render(*events) -> str:
    renderer, out = make()
    for event in events:
        renderer.render(event)
    renderer.close()
    return out.getvalue()


def lines(text: str) -> list[str]:
    """Non-empty lines without the padding rich adds to Markdown."""
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def every_event() -> list[ev.Event]:
    """One event of each type of the ``Event`` union, its required fields filled in."""
    filled = {"str": "x", "bool": True, "Proposal": Proposal.of_code("x = 1"), "list[PageSection]": []}
    out = []
    for cls in typing.get_args(ev.Event):
        fields = dataclasses.fields(cls)
        required = [f for f in fields if f.default is f.default_factory is dataclasses.MISSING]
        out.append(cls(**{f.name: filled[str(f.type)] for f in required}))
    return out


def test_every_event_type_has_a_handler():
    """Each renderer's ``match`` has an arm for every event (a missed one would reach ``assert_never``)."""
    from pyaichat.ipython.frontend import DisplayRenderer
    from pyaichat.piped import PlainFrontEnd

    events = every_event()
    assert len(events) >= 11 and len({e.type for e in events}) == len(events)
    render(*events)
    for event in events:
        PlainFrontEnd(io.StringIO()).emit(event)
        DisplayRenderer().render(event)
    with pytest.raises(AssertionError, match="an event no renderer knows"):
        render(ev.PageSection(title="not an event"))


def test_notice_text_is_not_parsed_as_markup():
    assert render(ev.NoticeEvent(text="[1] x = [bold]1[/bold]")).strip() == "[1] x = [bold]1[/bold]"


def test_error_is_one_plain_line():
    out = render(ev.ErrorEvent(message="No model is configured; set PYAICHAT_MODEL."))
    assert out == "Error: No model is configured; set PYAICHAT_MODEL.\n"
    assert "Traceback" not in out


def test_code_event_shows_title_and_code():
    out = render(ev.CodeEvent(code="def f():\n    return 1\n", title="source of f"))
    assert "source of f" in out
    assert "def f():" in out and "return 1" in out


def test_thinking_is_shown():
    assert "Let me look at df" in render(ev.ThinkingEvent(text="Let me look at df"))


def test_finished_tools_leave_one_line_each():
    out = render(
        ev.StateEvent(state="calling", step=2, max_steps=8),
        ev.ToolStartEvent(call_id="a", name="get_repr", args={"expr": "df"}, step=2),
        ev.ToolEndEvent(call_id="a", name="get_repr", ok=True, text="...", duration_ms=3.2),
        ev.ToolStartEvent(call_id="b", name="eval_expr", args={"expr": "1/0"}, step=3),
        ev.ToolEndEvent(call_id="b", name="eval_expr", ok=False, error="ZeroDivisionError", duration_ms=1),
    )
    assert out.splitlines() == ["✓ get_repr(df) 3 ms", "✗ eval_expr(1/0) 1 ms: ZeroDivisionError"]


def test_streamed_answer_is_printed_once_as_markdown():
    out = render(
        ev.AnswerChunkEvent(text="# Why\n`merged` is empty because "),
        ev.AnswerChunkEvent(text="the keys differ.\n\n```python\nmerged = a.merge(b, on='id')\n```\n"),
        ev.AnswerEvent(
            text="# Why\n`merged` is empty because the keys differ.\n\n"
            "```python\nmerged = a.merge(b, on='id')\n```\n"
        ),
    )
    assert out.count("the keys differ") == 1
    assert "# Why" not in out and "Why" in out  # rendered as a heading, not raw Markdown
    assert "```" not in out
    assert "merged = a.merge(b, on='id')" in out


def test_answer_note_names_the_bound():
    out = render(ev.AnswerEvent(text="Best so far.", stopped_by="max_steps", note="Stopped after 8 steps."))
    assert "Best so far." in out and "Stopped after 8 steps." in out
    out = render(ev.AnswerEvent(text="Partial.", stopped_by="deadline"))
    assert "deadline" in out


def test_usage_line():
    out = render(
        ev.UsageEvent(prompt_tokens=1234, completion_tokens=56, cost_usd=0.0012, model="gpt-4o-mini")
    )
    assert out.strip() == "tokens: 1,234 in · 56 out · $0.0012 · gpt-4o-mini"


def test_approval_required_shows_explanation_and_code():
    out = render(
        ev.ApprovalRequiredEvent(
            proposal=Proposal.of_code("df = df.dropna()", "Drop empty rows.", call_id="p1")
        )
    )
    assert "Proposed code" in out
    assert "Drop empty rows." in out and "df = df.dropna()" in out


def test_close_keeps_a_partial_answer_and_says_interrupted():
    renderer, out = make()
    renderer.render(ev.AnswerChunkEvent(text="The answer so f"))
    renderer.close(interrupted=True)
    assert lines(out.getvalue()) == ["The answer so f", "Interrupted."]
    renderer.close()  # nothing left to print twice
    assert out.getvalue().count("The answer so f") == 1


def test_error_mid_stream_keeps_the_partial_text_before_the_error():
    out = render(ev.AnswerChunkEvent(text="Half an answer"), ev.ErrorEvent(message="The stream was cut."))
    assert lines(out) == ["Half an answer", "Error: The stream was cut."]


def test_live_streaming_on_a_terminal_ends_with_the_full_answer():
    renderer, out = make(width=60, terminal=True)
    renderer.render(ev.StateEvent(state="thinking", step=1, max_steps=8))
    renderer.render(ev.ToolStartEvent(call_id="a", name="get_type", args={"expr": "df"}, step=1))
    renderer.render(ev.ToolEndEvent(call_id="a", name="get_type", ok=True, duration_ms=2))
    for word in ["Many ", "words ", "arrive ", "one ", "by ", "one."]:
        renderer.render(ev.AnswerChunkEvent(text=word))
    renderer.render(ev.AnswerEvent(text="Many words arrive one by one."))
    renderer.close()
    text = out.getvalue()
    assert "✓ get_type(df) 2 ms" in text
    assert text.rstrip().endswith("Many words arrive one by one.")


def test_loading_the_model_library_shows_a_status_on_a_terminal():
    renderer, out = make(width=80, terminal=True)
    renderer.render(ev.StateEvent(state="starting", detail="loading the model library"))
    renderer.render(ev.StateEvent(state="idle"))
    renderer.render(ev.AnswerEvent(text="Ready."))
    renderer.close()
    text = out.getvalue()
    assert "loading the model library" in text  # the first question waits seconds for litellm: say so
    assert text.rstrip().endswith("Ready.")


def test_colour_codes_only_when_colour_is_on():
    for color in (False, True):
        renderer, out = make(terminal=True, color=color)
        renderer.render(ev.ErrorEvent(message="bad"))
        assert ("\x1b[31m" in out.getvalue() or "\x1b[1;31m" in out.getvalue()) is color


@pytest.mark.parametrize(
    ("name", "args", "label"),
    [
        ("list_globals", {}, "list_globals()"),
        ("get_repr", {"expr": "df"}, "get_repr(df)"),
        ("get_dir", {"expr": "df", "include_private": True}, "get_dir(expr=df, include_private=True)"),
        ("run_python", {"code": "a = 1\nb = 2"}, "run_python(a = 1…)"),
    ],
)
def test_call_label(name, args, label):
    assert call_label(name, args) == label


def test_format_usage_without_cost():
    assert format_usage(10, 2, None, None) == "tokens: 10 in · 2 out"


def test_pause_keeps_the_pending_tool_label_for_its_end_line():
    renderer, out = make()
    renderer.render(ev.ToolStartEvent(call_id="p", name="propose_code", args={"code": "x = 1"}))
    renderer.render(ev.ApprovalRequiredEvent(proposal=Proposal.of_code("x = 1", call_id="p")))
    renderer.pause()  # the approval prompt takes the screen
    renderer.render(ev.ToolEndEvent(call_id="p", name="propose_code", ok=True, duration_ms=4))
    assert "✓ propose_code(x = 1) 4 ms" in out.getvalue()


def test_live_answer_keeps_clear_of_the_last_columns_and_shows_only_the_tail():
    from rich.markdown import Markdown
    from rich.segment import Segment

    from pyaichat.repl.render import _Tail

    console = Console(file=io.StringIO(), width=40, force_terminal=True)
    text = "\n\n".join(f"paragraph {i} " + "x" * 30 for i in range(10))
    lines = console.render_lines(_Tail(Markdown(text), 4), console.options, pad=False)
    # Room for the "^C" a terminal echoes on Ctrl-C, so it cannot wrap to a line the live region forgets.
    assert max(Segment.get_line_length(line) for line in lines) <= 38
    rendered = "".join(seg.text for line in lines for seg in line)
    assert "paragraph 9" in rendered and "paragraph 0" not in rendered


def test_a_long_wait_shows_what_it_waits_for_and_for_how_long():
    now = [100.0]
    renderer = RichRenderer(Console(file=io.StringIO(), width=100), clock=lambda: now[0])
    renderer.render(
        ev.StateEvent(state="thinking", step=1, max_steps=8, activity="waiting for the first token")
    )
    assert renderer.status_text() == "thinking · step 1/8"  # a short wait says nothing more
    now[0] += 4
    assert renderer.status_text() == "thinking · step 1/8 · waiting for the first token · 4 s"
    # what the wait is made of changes; it is still the same wait
    renderer.render(ev.StateEvent(state="thinking", step=1, max_steps=8, activity="receiving the reply"))
    now[0] += 70
    assert renderer.status_text() == "thinking · step 1/8 · receiving the reply · 1 min 14 s"
    renderer.render(ev.ToolStartEvent(call_id="a", name="get_type", args={"expr": "df"}, step=1))
    assert renderer.status_text() == "step 1 → get_type(df)"  # a new wait starts counting afresh
    now[0] += 3
    assert renderer.status_text() == "step 1 → get_type(df) · 3 s"


def test_the_live_status_counts_the_seconds_without_new_events():
    now = [0.0]
    renderer, out = make(width=80, terminal=True)
    renderer._clock = lambda: now[0]
    renderer.render(
        ev.StateEvent(state="thinking", step=1, max_steps=8, activity="waiting for the first token")
    )
    now[0] = 12.0
    renderer.console.print(renderer._live_view())  # what the live region draws at its next refresh
    renderer.close()
    assert "thinking · step 1/8 · waiting for the first token · 12 s" in out.getvalue()


def test_format_usage_marks_counts_pyaichat_made():
    assert format_usage(1200, 40, None, "m", estimated=True) == "tokens: ≈1,200 in · ≈40 out · m"


def test_an_answer_with_html_like_tags_is_shown_not_swallowed():
    """A small model copies the prompt's ``<data>`` spans: rich's Markdown took them for HTML and showed
    nothing up to the next blank line. Streamed (the live region) and final, the text is there."""
    reply = "<data>\nmerged has 0 rows: the keys differ.\n</data>\nSo <b>fix</b> the keys."
    out = " ".join(render(ev.AnswerEvent(text=reply)).split())
    assert "<data> merged has 0 rows: the keys differ. </data>" in out and "So <b>fix</b> the keys." in out
    renderer, stream = make(terminal=True)
    renderer.render(ev.AnswerChunkEvent(text=reply))
    live = " ".join(stream.getvalue().split())
    renderer.close()
    assert "merged has 0 rows" in live


def test_terminal_ipython_names_commands_as_typed_there():
    from pyaichat.commands import all_commands

    all_commands()  # IPython's front end loads them before its renderer words a sentence
    out = io.StringIO()
    console = Console(file=out, width=120, no_color=True, highlight=False)
    renderer = RichRenderer(console, place="ipython")
    renderer.render(ev.ReceiptsEvent(summary="receipts: 1 of 1 number found", warnings=[]))
    renderer.render(ev.NoticeEvent(text="Nothing to undo: /undo takes back an approved proposal."))
    shown = out.getvalue()
    assert "(%ai /receipts)" in shown and "%ai /undo takes back" in shown
