"""The small questions a front end asks in a terminal, each on its own short-lived prompt: one key
(``key_app``: run / edit / no — ``ask_decision`` —, answer / decline / cancel) and one line (``ask_line``: a
tool call's arguments — ``ask_arguments`` —, a field of a server's form)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.shortcuts import PromptSession
from prompt_toolkit.styles import Style

from ..printable import printable, show

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output

    from ..proposal import Decision

QUESTION_STYLE = Style.from_dict({"question": "ansiyellow bold"})
PLAIN_QUESTION_STYLE = Style.from_dict({"question": "bold"})


def key_app(
    question: str,
    choices: str,
    keys: tuple[tuple[str, str], ...],
    escape: str,
    *,
    input: Input | None = None,
    output: Output | None = None,
    style: Style | None = None,
    color: bool = True,
    interrupt: bool = False,
) -> Application[str]:
    """A one-key question: each of ``keys`` (a key, the value it chooses) ends it, Esc chooses ``escape``,
    other keys are ignored; the choice stays on screen after the question. With ``interrupt``, Ctrl-C also
    chooses ``escape`` and then raises ``KeyboardInterrupt``: it stops whatever asked, as Ctrl-C does."""
    chosen: list[str] = []
    kb = KeyBindings()
    if interrupt:

        @kb.add("c-c")
        def stop(event: KeyPressEvent) -> None:
            chosen.append(escape)
            event.app.exit(exception=KeyboardInterrupt())

    for key, value in keys:

        def choose(event: KeyPressEvent, value: str = value) -> None:
            chosen.append(value)
            event.app.exit(result=value)

        kb.add(key)(choose)

    def leave(event: KeyPressEvent) -> None:
        chosen.append(escape)
        event.app.exit(result=escape)

    kb.add("escape", eager=True)(leave)
    kb.add("<any>")(lambda event: None)

    def message() -> FormattedText:
        return FormattedText(
            [
                ("class:question", question),
                ("", choices),
                ("bold", chosen[0] if chosen else ""),
                ("[SetCursorPosition]", ""),  # the cursor waits after the question, not at its start
            ]
        )

    app: Application[str] = Application(
        layout=Layout(
            Window(FormattedTextControl(message, show_cursor=True), height=1, dont_extend_height=True)
        ),
        key_bindings=kb,
        style=style or (QUESTION_STYLE if color else PLAIN_QUESTION_STYLE),
        color_depth=None if color else ColorDepth.DEPTH_1_BIT,
        input=input,
        output=output,
        erase_when_done=False,
    )
    return app


def ask_line(
    message: str,
    *,
    default: str = "",
    input: Input | None = None,
    output: Output | None = None,
    **options: Any,
) -> str:
    """One line of input on its own prompt (prompt_toolkit's ``prompt()`` shortcut takes no input or output:
    a session does), with ``options`` for its ``prompt`` (a validator, a completer, a toolbar). The message,
    the text it starts with and a toolbar's text may come from outside (a server's field, its default, a
    model's arguments): made printable, what the person sees there is what they edit and send."""
    session: PromptSession[str] = PromptSession(input=input, output=output)
    if isinstance(options.get("bottom_toolbar"), str):
        options["bottom_toolbar"] = printable(options["bottom_toolbar"])
    return session.prompt(printable(message), default=printable(default), **options)


def ask_decision(
    *, input: Input | None = None, output: Output | None = None, color: bool = True, choices: str = ""
) -> Decision:
    """One key: ``r``/``y`` run, ``e`` edit, ``n``/Esc/Ctrl-D no; Ctrl-C is no and raises
    ``KeyboardInterrupt`` (the turn that asked stops there). Other keys are ignored. ``choices``
    (``proposal.Choices``): ``scopes`` adds ``s`` (this session) and ``p`` (always, this project);
    ``accept`` asks ``a`` accept / ``n`` no instead."""
    return run_decision(decision_app(input=input, output=output, color=color, choices=choices))


def run_decision(app: Application[str]) -> Decision:
    result = app.run()
    known = ("run", "edit", "no", "session", "project")
    return result if result in known else "no"  # type: ignore[return-value]  # checked against the known decisions just before


_NO = (("n", "no"), ("c-d", "no"))
_QUESTIONS: dict[str, tuple[tuple[str, str], tuple[tuple[str, str], ...]]] = {
    "": (("Run it? ", "[r]un / [e]dit / [n]o: "), (("r", "run"), ("y", "run"), ("e", "edit"), *_NO)),
    "scopes": (
        ("Run it? ", "[r]un once / [s]ession: allow it / [p]roject: always allow / [e]dit / [n]o: "),
        (("r", "run"), ("y", "run"), ("s", "session"), ("p", "project"), ("e", "edit"), *_NO),
    ),
    "accept": (("Accept them? ", "[a]ccept / [n]o: "), (("a", "run"), ("y", "run"), *_NO)),
}


def decision_app(
    *, input: Input | None = None, output: Output | None = None, color: bool = True, choices: str = ""
) -> Application[str]:
    """The one-key question of ``ask_decision``, not yet running (``withdraw`` can end it from outside)."""
    question, keys = _QUESTIONS.get(choices, _QUESTIONS[""])
    return key_app(*question, keys, "no", input=input, output=output, color=color, interrupt=True)


def ask_arguments(
    tool: str, arguments: dict[str, Any], *, input: Input | None = None, output: Output | None = None
) -> dict[str, Any] | None:
    """New arguments for a tool call, edited as one line of JSON (Enter accepts, Ctrl-C gives up: ``None``).
    Text that is not a JSON object is said and asked again."""
    import json  # with the first tool call to edit

    text = json.dumps(arguments, ensure_ascii=False)
    while True:
        try:
            text = ask_line(f"{tool} arguments (JSON)> ", default=text, input=input, output=output)
        except (KeyboardInterrupt, EOFError):
            return None
        try:
            value = json.loads(text)
        except ValueError as exc:
            show(f"That is not JSON ({exc}); edit it again, or Ctrl-C to give up.")
            continue
        if isinstance(value, dict):
            return value
        show("The arguments are one JSON object ({...}); edit them again, or Ctrl-C to give up.")
