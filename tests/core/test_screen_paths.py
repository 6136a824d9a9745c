"""Every text from outside is printable wherever it is shown (issue 45, point 7).

Two nets. First, every way pyaichat writes to a terminal is enumerated from the source: a ``print`` or a
write to a standard stream anywhere in the package goes through ``printable.show``, or is on a short list
here with the reason it may write as it does (the person's own code's output, a protocol, a buffer). A new
path that forgets fails here. Second, control sequences are pushed through every path that exists: every
event type the front ends render (built from the event dataclasses themselves, so a new event or field is
covered the day it is added; a proposal both ways) with a payload in every text field, into the rich
renderer (REPL and terminal IPython), piped output and a notebook; an MCP server's question, its form's
defaults and the values typed back; a tool call's arguments edited at the terminal; an outside agent's line
on the terminal.
"""

from __future__ import annotations

import ast
import dataclasses
import io
import types
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output
from rich.console import Console

from pyaichat.agent import events
from pyaichat.ipython import frontend as ipython_frontend
from pyaichat.mcptools.approval import Question
from pyaichat.mcptools.form import fields_of
from pyaichat.piped import PlainFrontEnd
from pyaichat.proposal import Proposal
from pyaichat.repl.form import ask_answer
from pyaichat.repl.questions import ask_arguments
from pyaichat.repl.render import RichRenderer

SRC = Path(__file__).resolve().parents[2] / "src" / "pyaichat"

# An OSC 52 clipboard write, an OSC 0 title change, a one-byte CSI (C1) clearing the screen, a bidi override,
# a carriage return over the line, a CSI erasing it: what the review sent, and what none of them may do.
PAYLOAD = "A\x1b]52;c;UFdORUQ=\x07B\x1b]0;PWNED\x07C\x9b2JD\u202eE\rF\x1b[2KG"
RAW = ("\x1b]52;", "\x1b]0;PWNED", "\x9b2J", "\u202e", "\rF", "\x1b[2KG", "\x07")

# Where a write to a stream is not pyaichat's own text on the person's screen: module → why it may write.
WRITES_AS_THEY_ARE = {
    "session.py": "the person's own code: its value's repr, its traceback, as Python's REPL prints them",
    "runtime/execute.py": "the person's own code's output in a kernel, as the kernel sent it",
    "capabilities/sandbox/guards.py": "the sandboxed code's print, captured into the run's output",
    "capabilities/sandbox/preview.py": "the preview's buffer (its lines are rendered as an event)",
    "persist/signing.py": "copies a file",
    "mcpserve/link.py": "the MCP protocol on a pipe",
    "mcpserve/hosting.py": "pyaichat's own dim style around a line already made printable",
    "repl/app.py": "the early prompt: pyaichat's constant bytes",
    "printable.py": "show itself",
}


def _writes(tree: ast.AST) -> list[ast.Call]:
    """``print(...)`` calls and ``….write(...)`` on a standard stream or an ``out``/``err`` stream."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "print":
            found.append(node)
        elif isinstance(func, ast.Attribute) and func.attr == "write":
            target = ast.unparse(func.value)
            if target.split(".")[-1] in ("stdout", "stderr", "out", "err", "__stdout__", "__stderr__"):
                found.append(node)
        elif isinstance(func, ast.Attribute) and func.attr == "write" and ast.unparse(func.value) == "os":
            found.append(node)
    return found


def test_every_write_to_the_screen_goes_through_show():
    unlisted = []
    for path in sorted(SRC.rglob("*.py")):
        name = path.relative_to(SRC).as_posix()
        if name in WRITES_AS_THEY_ARE:
            continue
        for call in _writes(ast.parse(path.read_text(encoding="utf-8"))):
            unlisted.append(f"{name}:{call.lineno}: {ast.unparse(call)[:80]}")
    assert not unlisted, "write through printable.show:\n" + "\n".join(unlisted)


def test_the_list_of_writers_is_not_stale():
    for name in WRITES_AS_THEY_ARE:
        assert (SRC / name).exists(), name
    assert _writes(ast.parse((SRC / "session.py").read_text(encoding="utf-8")))


# -- every event, every front end ----------------------------------------------------------------------------
def _value(annotation: Any, flag: bool) -> Any:
    """A value of ``annotation`` with the payload in every text it holds."""
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation is str or annotation is Any:
        return PAYLOAD
    if origin is Literal:
        return args[0]
    if origin in (typing.Union, types.UnionType):
        return _value(next(a for a in args if a is not type(None)), flag)
    if annotation is bool:
        return flag
    if annotation is int:
        return 3
    if annotation is float:
        return 1.5
    if origin is list:
        return [_value(args[0], flag)]
    if origin is tuple:
        return tuple(_value(a, flag) for a in args if a is not Ellipsis)
    if origin is dict:
        return {PAYLOAD: PAYLOAD, "n": [PAYLOAD]}
    if annotation is Proposal:
        return _proposal(flag)
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        return _instance(annotation, flag)
    raise AssertionError(f"no payload for {annotation!r}: teach _value this type")


def _instance(cls: type, flag: bool) -> Any:
    hints = typing.get_type_hints(cls, localns={"Proposal": Proposal})
    return cls(**{f.name: _value(hints[f.name], flag) for f in dataclasses.fields(cls)})


def _proposal(flag: bool) -> Proposal:
    """A tool call (``flag``) or code, the payload in every text of it (the preview's note too)."""
    hints = typing.get_type_hints(Proposal.__init__)
    texts = {name: PAYLOAD for name, hint in hints.items() if hint is str and name != "return"}
    if flag:
        proposal = Proposal("tool", **texts, arguments={PAYLOAD: PAYLOAD}, call=lambda _arguments: "")
    else:
        proposal = Proposal("code", **texts)
    proposal.unseen = PAYLOAD
    return proposal


def every_event() -> list[Any]:
    """One of each event type (both ways for its flags), the payload in every text of it."""
    kinds = get_args(events.Event)
    assert len(kinds) >= 15 and all(dataclasses.is_dataclass(k) for k in kinds), kinds
    return [_instance(kind, flag) for kind in kinds for flag in (True, False)]


def _clean(output: str, where: str) -> None:
    leaked = [raw for raw in RAW if raw in output]
    assert not leaked, f"{where}: {leaked} reached the output raw"


@pytest.mark.parametrize("terminal", [True, False])
def test_every_event_through_the_rich_renderer(terminal):
    out = io.StringIO()
    console = Console(file=out, force_terminal=terminal, width=100, color_system="truecolor")
    renderer = RichRenderer(console)
    for event in every_event():
        renderer.render(event)
        _clean(out.getvalue(), f"rich, {event.type}")
    renderer.close(interrupted=True)
    _clean(out.getvalue(), "rich, closed")
    assert "PWNED" in out.getvalue()  # the text itself is shown, its controls made visible


MARKUP = "[link=https://evil.example/steal]https://github.com/login[/link] [bold red]pyaichat[/bold red]"


def test_no_outside_text_is_read_as_rich_markup(monkeypatch):
    """A server's name (or any text from outside) in a panel's title, a label or a row is shown as written:
    a ``str`` given to rich is markup, and ``[link=…]`` would make a real hyperlink on the person's screen."""
    monkeypatch.setitem(globals(), "PAYLOAD", MARKUP)
    out = io.StringIO()
    renderer = RichRenderer(Console(file=out, force_terminal=True, width=200, color_system="truecolor"))
    for event in every_event():
        renderer.render(event)
        assert "\x1b]8;" not in out.getvalue(), f"{event.type}: outside text made a hyperlink"
    renderer.close(interrupted=True)
    assert "[link=https://evil.example/steal]" in out.getvalue()


def test_every_event_through_piped_output():
    out = io.StringIO()
    front = PlainFrontEnd(out)
    for event in every_event():
        front.emit(event)
    _clean(out.getvalue(), "piped")
    assert "␛]0;PWNED␇" in out.getvalue()


def test_every_event_through_a_notebook(monkeypatch, capsys):
    shown: list[str] = []

    def text_of(content: Any) -> str:  # a display bundle (both its forms) or a display object
        return "\n".join(content.values()) if isinstance(content, dict) else content.data

    class Handle:
        def update(self, content: Any, raw: bool = False) -> None:
            shown.append(text_of(content))

    def display(content: Any, display_id: bool = False, raw: bool = False) -> Handle:
        shown.append(text_of(content))
        return Handle()

    monkeypatch.setattr(ipython_frontend, "display", display)
    renderer = ipython_frontend.DisplayRenderer()
    for event in every_event():
        renderer.render(event)
    renderer.close(interrupted=True)
    printed = capsys.readouterr()
    _clean(printed.out + printed.err, "notebook text")
    _clean("\n".join(shown), "notebook Markdown")
    assert shown and "PWNED" in printed.out


# -- the terminal's own questions ----------------------------------------------------------------------------
def _terminal() -> tuple[Vt100_Output, io.StringIO]:
    screen = io.StringIO()
    return Vt100_Output(screen, lambda: Size(rows=24, columns=100), term="xterm"), screen


def test_a_servers_form_its_defaults_and_the_values_typed_back(capsys):
    schema = {
        "type": "object",
        "properties": {
            f"name{PAYLOAD}": {"type": "string", "default": PAYLOAD},
            "city": {
                "type": "string",
                "title": PAYLOAD,
                "description": PAYLOAD,
                "default": f"Leeds{PAYLOAD}",
            },
            "pick": {"type": "string", "enum": ["a", "b"], "enumNames": [PAYLOAD, "B"], "default": "a"},
        },
    }
    question = Question("q-1", f"srv{PAYLOAD}", PAYLOAD, fields_of(schema))
    output, screen = _terminal()
    with create_pipe_input() as pipe:
        pipe.send_text("a" + "\r" + "\r" + "\r" + "s")  # answer, accept every default, send
        answer = ask_answer(question, input=pipe, output=output, color=True)
    assert answer.action == "accept"
    printed = capsys.readouterr()
    _clean(printed.out + printed.err, "the answers shown back")
    _clean(screen.getvalue(), "the form's prompts")
    assert "PWNED" in printed.out
    sent = " ".join(str(v) for v in answer.content.values())
    _clean(sent, "the values sent back")  # what was shown is what is sent


def test_a_tool_calls_arguments_edited_at_the_terminal(capsys):
    output, screen = _terminal()
    with create_pipe_input() as pipe:
        pipe.send_text("\r")
        edited = ask_arguments(
            f"srv__tool{PAYLOAD}", {"path": PAYLOAD, PAYLOAD: 1}, input=pipe, output=output
        )
    assert edited is not None
    _clean(screen.getvalue(), "the arguments' prompt")
    _clean(capsys.readouterr().out, "the arguments' prompt (printed)")


def test_an_outside_agents_line_on_the_terminal(capsys):
    from pyaichat.mcpserve.hosting import terminal_show

    terminal_show(lambda: True)(f"claude-code called get_type({PAYLOAD})")
    printed = capsys.readouterr().out
    _clean(printed, "an outside agent's line")
    assert printed.startswith("\x1b[2m")  # pyaichat's own style stays
