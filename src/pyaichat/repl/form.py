"""An MCP server's question to the person, asked in the terminal (its panel is already on screen).

One key first: answer, decline or cancel (Esc and Ctrl-C cancel). Answering fills in the form one field at a
time: each prompt starts with the field's default, says under it what the field takes, and checks the
answer on Enter (a wrong one is said there and kept for editing); an optional field may be left empty.
Then the answers are shown once more and go only on ``s`` (``e`` fills them in again, starting from these).
Ctrl-C anywhere cancels: nothing is sent. An address to open (URL mode) is accepted, declined or cancelled
with one key; pyaichat never opens or fetches it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prompt_toolkit.completion import WordCompleter
from prompt_toolkit.validation import ValidationError, Validator

from ..mcptools.approval import Answer
from ..mcptools.form import SKIP, FieldError
from ..printable import show
from .questions import ask_line, key_app

if TYPE_CHECKING:
    from prompt_toolkit.document import Document
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output

    from ..mcptools.approval import Question
    from ..mcptools.form import Field

_CANCEL = (("c", "cancel"), ("c-c", "cancel"), ("c-d", "cancel"))
ANSWER_KEYS = (("a", "accept"), ("y", "accept"), ("d", "decline"), ("n", "decline"), *_CANCEL)
SEND_KEYS = (("s", "send"), ("y", "send"), ("e", "edit"), ("n", "cancel"), *_CANCEL)


class _Checks(Validator):
    """The field's own check on Enter: its sentence shows under the input, which stays for editing."""

    def __init__(self, field: Field) -> None:
        self.field = field

    def validate(self, document: Document) -> None:
        try:
            self.field.parse(document.text)
        except FieldError as exc:
            raise ValidationError(message=str(exc), cursor_position=len(document.text)) from None


def ask_answer(
    question: Question, *, input: Input | None = None, output: Output | None = None, color: bool = True
) -> Answer:
    """The person's answer to ``question``."""

    def one_key(text: str, choices: str, keys: tuple[tuple[str, str], ...]) -> str:
        return key_app(text, choices, keys, "cancel", input=input, output=output, color=color).run()

    if question.url is not None:
        return Answer(one_key("Open it? ", "[a]ccept (you open it) / [d]ecline / [c]ancel: ", ANSWER_KEYS))
    action = one_key("Answer it? ", "[a]nswer / [d]ecline / [c]ancel: ", ANSWER_KEYS)
    if action != "accept":
        return Answer(action)
    typed: dict[str, str] = {}
    while True:
        content = _fill(question.fields, typed, server=question.server, input=input, output=output)
        if content is None:
            return Answer("cancel")
        if question.fields:
            show(f"Your answers to {question.server!r}:")
            for field in question.fields:
                shown = "(hidden)" if field.asks_for_secret and typed[field.name] else typed[field.name]
                show(f"  {field.label}: {shown or '(left empty)'}")
        send = (
            one_key("Send them? ", "[s]end / [e]dit / [c]ancel: ", SEND_KEYS) if question.fields else "send"
        )
        if send == "send":
            return Answer("accept", content)
        if send == "cancel":
            return Answer("cancel")


def _fill(
    fields: tuple[Field, ...],
    typed: dict[str, str],
    *,
    server: str = "",
    input: Input | None,
    output: Output | None,
) -> dict[str, Any] | None:
    """Every field asked in turn (``typed``: what was typed, kept for the next round); ``None`` on Ctrl-C.
    Each prompt names the server that asks; a field that looks like a credential is typed unseen."""

    content: dict[str, Any] = {}
    for field in fields:
        completer = None
        if field.kind in ("choice", "boolean"):
            words = [c.label for c in field.choices] if field.kind == "choice" else ["yes", "no"]
            completer = WordCompleter(words, ignore_case=True, sentence=True)
        mark = "" if field.required else " (optional)"
        try:
            text = ask_line(
                f"{server} ▌ {field.label}{mark}: " if server else f"{field.label}{mark}: ",
                default=typed.get(field.name, field.default_text()),
                is_password=field.asks_for_secret,
                validator=_Checks(field),
                validate_while_typing=False,
                completer=completer,
                bottom_toolbar=field.hint(),
                input=input,
                output=output,
            )
        except (KeyboardInterrupt, EOFError):
            return None
        typed[field.name] = text.strip()
        value = field.parse(text)
        if value is not SKIP:
            content[field.name] = value
    return content
