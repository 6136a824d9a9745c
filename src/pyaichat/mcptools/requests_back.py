"""A server's requests back to us, and how a turn answers them.

While one of its tools runs, a server may ask its client for three things: ``roots`` (answered by the
connection itself from the entry's ``roots``), **sampling** (a completion from the client's model) and
**elicitation** (a question to the person). The last two are off unless the user turned them on for that
server (``sampling = true``, ``elicitation = true`` in its ``[mcp_servers.NAME]`` table); a server that asks
anyway is refused with a sentence that says so, and ``/tools`` counts the refusals.

When they are on, a request arrives on the manager's loop as a ``RequestBack`` and is handed to the thread
waiting for the tool call it belongs to (the front end's, during a turn), which answers it with that turn's
``Answerer`` and sends the answer back to the loop:

- sampling: the messages the server wants completed are shown in the approval panel (which server asks, the
  messages as they would be sent, the model that would answer, the most tokens it may write); only after
  the person says run (or edits them) do they go, masked, to the assistant's own model, bounded by the
  turn's ``max_tokens`` and ``request_timeout`` and counted in ``/cost``; tools the server offers the model
  are refused (pyaichat does not declare ``sampling.tools``), its model preferences are ignored;
- elicitation: the question is put to the person (a form of fields, or an address to open themselves), and
  their ``accept`` (with the values), ``decline`` or ``cancel`` goes back, as the specification words it.

Where no one can be asked (piped input, a notebook), both are refused with a sentence. The time a request
back takes is not counted against the call's deadline (``mcp_call_timeout``): the person may read slowly.
Every answer is recorded in the audit log, with the server and what the person decided.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .approval import Answer, AnswerQuestion, Question, Sample, SampledReply, tool_proposal

if TYPE_CHECKING:
    import asyncio

    from ..capabilities.catalog import CapabilityResult
    from ..proposal import Decide

SAMPLING = "sampling"
ELICITATION = "elicitation"
ROOTS = "roots"
USER_REJECTED = -1  # the code the specification's examples give a request the user rejected
NOBODY = "no one can be asked here (piped input or a notebook)"


class Refused:
    """A request back answered with an error: ``message`` for the server (and the audit log)."""

    __slots__ = ("code", "message")

    def __init__(self, message: str, code: int | None = None) -> None:
        self.message, self.code = message, code

    def __repr__(self) -> str:
        return f"Refused({self.message!r})"


Reply = Refused | SampledReply | Answer
"""A request back's answer as plain data (the connection words it in the SDK's types): refused, the model's
completion (sampling) or the person's answer (elicitation)."""


class RequestBack:
    """One request from a server, waiting on the manager's loop for its answer (``reply``, from any
    thread)."""

    def __init__(self, server: str, kind: str, params: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.server, self.kind, self.params, self.loop = server, kind, params, loop
        self.answer: asyncio.Future[Any] = loop.create_future()

    def reply(self, result: Reply) -> None:
        """Send ``result`` to the server; the first reply counts."""

        def settle() -> None:
            if not self.answer.done():
                self.answer.set_result(result)

        with contextlib.suppress(RuntimeError):  # the loop is closed: the server is gone anyway
            self.loop.call_soon_threadsafe(settle)

    def refuse(self, message: str, code: int | None = None) -> None:
        self.reply(Refused(message, code))

    @property
    def withdrawn(self) -> bool:
        """The server stopped waiting (its call ended, it exited): an answer would go nowhere."""
        return self.answer.cancelled()


def turned_off(server: str, kind: str) -> str:
    """What a server is told when it asks for something the user did not turn on."""
    if kind == ROOTS:
        return (
            f"pyaichat gives the MCP server {server!r} no roots: the user listed none "
            f"(roots = [...] in its [mcp_servers.{server}] table)."
        )
    return (
        f"pyaichat does not answer {kind} requests from the MCP server {server!r}: the user has not turned "
        f"them on ({kind} = true in its [mcp_servers.{server}] table)."
    )


# -- a turn's answers ----------------------------------------------------------------------------------------
class Answerer:
    """How one turn answers its servers' requests back (called on the thread that waits for the call)."""

    def __init__(
        self,
        *,
        model: str,
        config: Any,
        mask: Callable[[Any], Any],
        audit: Callable[..., None],
        approve: Decide | None,
        answer_question: AnswerQuestion | None,
        sample: Sample | None,
        tell: Callable[[str], None] = lambda sentence: None,
        call_id: str = "",
    ) -> None:
        self.model = model
        self.config = config
        self.mask = mask  # masks a JSON-like value: strings, lists and dicts
        self.audit = audit
        self.approve = approve
        self.answer_question = answer_question
        self.sample = sample
        self.tell = tell  # a refusal the person should know of (no one could be asked)
        self.call_id = call_id
        self._count = 0

    def __call__(self, back: RequestBack) -> Reply:
        """The answer for ``back``; raises only for Ctrl-C."""
        if back.kind == SAMPLING:
            return self._sampling(back.server, back.params, lambda: back.withdrawn)
        if back.kind == ELICITATION:
            return self._elicitation(back.server, back.params)
        return Refused(turned_off(back.server, back.kind))

    # -- sampling ----------------------------------------------------------------------------------------
    def _sampling(self, server: str, params: Any, withdrawn: Callable[[], bool] = lambda: False) -> Reply:
        started = time.perf_counter()
        what = f"The MCP server {server!r} asked your model for a completion (sampling)"
        if getattr(params, "tools", None):
            return self._refused(
                server,
                SAMPLING,
                started,
                "pyaichat does not give a server's sampling request tools to call (no sampling.tools).",
            )
        if self.approve is None or self.sample is None:
            reason = NOBODY if self.approve is None else "no model is set"
            sentence = f"{what}; {reason}, so it was refused."
            self.tell(sentence)
            return self._refused(server, SAMPLING, started, sentence)
        cap = max(1, min(int(params.max_tokens), int(self.config.max_tokens)))
        shown = self.mask(sampling_view(params, cap))
        done: list[SampledReply | str] = []

        def run_it(arguments: dict[str, Any]) -> CapabilityResult:
            from ..capabilities.catalog import CapabilityResult  # with the first approved request

            began = time.perf_counter()
            try:
                messages, max_tokens = checked_view(arguments, cap)
                if withdrawn():  # the server gave up (or died) while the person read: nothing is sent
                    raise RuntimeError(f"the MCP server {server!r} no longer waits for the reply")
                completion = self.sample(self.mask(messages), max_tokens, server)  # type: ignore[misc]  # checked for None above
            except Exception as exc:  # a provider error, an edit that is not messages: one sentence
                done.append(f"{exc}")
                return CapabilityResult(
                    name=SAMPLING, ok=False, error=str(exc), duration_ms=_ms(began), truncated=False
                )
            done.append(completion)
            return CapabilityResult(name=SAMPLING, ok=True, text=completion.text, duration_ms=_ms(began))

        self._count += 1
        proposal = tool_proposal(
            call_id=f"{self.call_id or 'mcp'}-sampling-{self._count}",
            server=server,
            name=f"{server}: sampling",
            arguments=shown,
            description=(
                f"Your model ({self.model}) would answer, in at most {cap:,} tokens, and the server gets its "
                f"reply (sampling = true in [mcp_servers.{server}]). Below is what the model would be sent, "
                "masked; e edits it."
            ),
            reason="",  # the title says it all: the server asks, sampling is on for it
            run=run_it,
            title=f"The MCP server {server!r} asks your model {self.model} to write a reply (not sent yet)",
        )
        outcome = self.approve(proposal)
        if outcome.ran and not done:  # the decider left the call to us
            run_it(outcome.arguments if outcome.arguments is not None else shown)
        if not outcome.ran or not done:
            declined = Refused("The user declined the sampling request.", USER_REJECTED)
            return self._answered(server, SAMPLING, started, shown, declined)
        last = done[-1]
        decision = "edited" if outcome.status == "edited" else "run"
        if isinstance(last, str):
            failed = Refused(f"The sampling request failed: {last}")
            return self._answered(server, SAMPLING, started, shown, failed, decision=decision)
        return self._answered(
            server,
            SAMPLING,
            started,
            shown,
            last,
            decision=decision,
            output_chars=len(last.text),
            tokens=last.tokens,
        )

    # -- elicitation -------------------------------------------------------------------------------------
    def _elicitation(self, server: str, params: Any) -> Reply:
        from .form import FormError, fields_of  # the form: with the first elicitation

        started = time.perf_counter()
        if self.answer_question is None:
            sentence = (
                f"The MCP server {server!r} asked you a question (elicitation); {NOBODY}, so it was refused."
            )
            self.tell(sentence)
            return self._refused(server, ELICITATION, started, sentence)
        url = getattr(params, "url", None) if getattr(params, "mode", "form") == "url" else None
        try:
            fields = () if url is not None else fields_of(params.requested_schema)
        except FormError as exc:
            sentence = f"pyaichat cannot ask the user this question: {exc}."
            return self._refused(server, ELICITATION, started, sentence)
        self._count += 1
        question = Question(
            call_id=f"{self.call_id or 'mcp'}-question-{self._count}",
            server=server,
            message=str(params.message),
            fields=fields,
            url=url,
        )
        answer = self.answer_question(question)
        if answer.action not in ("accept", "decline", "cancel"):
            answer = Answer("cancel")
        content = None
        if answer.action == "accept" and url is None:
            content = checked_answer(fields, answer.content or {})
        result = Answer(answer.action, content)
        asked = {"message": question.message, "url": url, "fields": [f.name for f in fields]}
        answered = sorted(content) if content else []
        return self._answered(
            server, ELICITATION, started, asked, result, decision=answer.action, answered=answered
        )

    # -- the record ----------------------------------------------------------------------------------------
    def _refused(self, server: str, kind: str, started: float, sentence: str) -> Reply:
        return self._answered(server, kind, started, {}, Refused(sentence), decision="refused")

    def _answered(
        self,
        server: str,
        kind: str,
        started: float,
        args: Any,
        result: Reply,
        *,
        decision: str = "no",
        **extra: Any,
    ) -> Reply:
        failed = result.message if isinstance(result, Refused) else None
        self.audit(
            f"mcp_{kind}",
            args,
            ok=failed is None,
            error=failed,
            duration_ms=_ms(started),
            output_chars=int(extra.pop("output_chars", 0)),
            server=server,
            decision=decision,
            **extra,
        )
        return result


def sampling_view(params: Any, cap: int) -> dict[str, Any]:
    """A sampling request as the person sees it and the model would get it: chat messages of text (other
    content is described, never sent), the server's system prompt first, and the answer's token cap."""
    messages: list[dict[str, Any]] = []
    if getattr(params, "system_prompt", None):
        messages.append({"role": "system", "content": str(params.system_prompt)})
    for message in params.messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        parts = []
        for block in blocks:
            kind = getattr(block, "type", "?")
            if kind == "text":
                parts.append(block.text)
            else:
                parts.append(f"[{kind} content left out: pyaichat sends a server's sampling request as text]")
        messages.append({"role": str(message.role), "content": "\n".join(parts)})
    return {"messages": messages, "max_tokens": cap}


def checked_view(arguments: Any, cap: int) -> tuple[list[dict[str, Any]], int]:
    """The messages and token cap from the panel's arguments (the person may have edited them); a
    ``ValueError`` with a sentence when they are not chat messages."""
    messages = arguments.get("messages") if isinstance(arguments, dict) else None
    if not isinstance(messages, list) or not messages:
        raise ValueError('the request needs "messages": a list of {"role": ..., "content": ...}')
    for message in messages:
        if (
            not isinstance(message, dict)
            or message.get("role") not in ("system", "user", "assistant")
            or not isinstance(message.get("content"), str)
        ):
            raise ValueError('each message is {"role": "user" | "assistant" | "system", "content": "text"}')
    tokens = arguments.get("max_tokens", cap)
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
        raise ValueError('"max_tokens" should be a positive whole number')
    clean = [{"role": m["role"], "content": m["content"]} for m in messages]
    return clean, min(tokens, cap)


def checked_answer(fields: Any, content: dict[str, Any]) -> dict[str, Any]:
    """The form's values once more against its fields (a front end that let a wrong value through must not
    send it): each value parsed from its text form, unknown names dropped."""
    from .form import SKIP  # the form: with the first elicitation

    out: dict[str, Any] = {}
    for field in fields:
        if field.name not in content:
            continue
        value = content[field.name]
        text = ", ".join(map(str, value)) if isinstance(value, list) else _as_text(value)
        parsed = field.parse(text)
        if parsed is not SKIP:
            out[field.name] = parsed
    return out


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "" if value is None else str(value)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
