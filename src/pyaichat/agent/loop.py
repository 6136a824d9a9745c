"""The bounded agent loop: ask the model, run the tools it asks for, feed the results back, stream the answer.

One turn, top to bottom (``_Turn.run``):

1. ``_begin``: load the model library (announced, outside the turn's clock), choose the tool protocol, size
   the turn (``Budget.start``).
2. ``Budget.next_request``: the next request, fitted to the window, or a ``Stop`` naming the bound
   (``max_steps``, ``turn_timeout``, ``context_tokens``, ``budget_usd``).
3. ``_ask``: stream it; the user sees what cannot be a tool call (``ReplyView``). A reply that loops or runs
   past the deadline is cut on purpose and comes back as a reply with ``cut`` set; a failure as an
   ``LLMError``. A provider that refuses tool schemas, or a server that never showed them to the model,
   switches the turn (and the session) to the text protocol.
4. ``ToolProtocol.read``: the reply's tool calls and prose. No calls: it is the answer (``_answer``).
5. ``_run_calls``: each call runs (a capability, or the approval gate for ``propose_code``) and its result
   goes back into the conversation (``Conversation``); then step 2 again.

States announced with ``StateEvent``: starting → idle → thinking → calling → observing → … → answering →
done / failed. Tool trouble of any kind (unknown tool, broken JSON, invalid arguments, a failing capability)
becomes a result the model reads, never an exception. Ctrl-C keeps the partial answer and closes every open
tool call. The loop knows nothing about sessions or terminals: ``TurnEnv`` hands it what it uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import LLMError, LLMToolsRefused, LLMTransportError
from .budget import Budget, Stop
from .calls import ParsedCall, arg_summary
from .conversation import Conversation
from .events import (
    AnswerEvent,
    ApprovalRequiredEvent,
    ErrorEvent,
    Event,
    StateEvent,
    ToolEndEvent,
    ToolStartEvent,
    UsageEvent,
)
from .llm import LLM, Cut, LLMReply, Request, Usage
from .protocol import NATIVE, PROTOCOLS, TEXT, Step, ToolProtocol, ToolResult, images_as_sizes
from .repetition import LOOP_NOTE, RepetitionGuard
from .side import SideRequests
from .trace import StepRecord, TurnResult
from .view import ReplyView

PROPOSE = "propose_code"
EMPTY_ANSWER = "(The model returned an empty reply; ask again or rephrase the question.)"
EDIT_ANSWER = "The proposed code is waiting in your next input: edit it if you like, then run it yourself."
CAP_NOTE = "The answer reached the reply length cap (max_tokens) and is cut short; ask for less or raise it."
# Notes the model is not told about its own cut reply: small models copy such notes into later answers,
# where the user would take them for pyaichat's.
_UNREMEMBERED_NOTES = ("repetition", "max_tokens")


class ToolOutcome(Protocol):
    """What running a tool gives back (a ``CapabilityResult``; ``images``, ``data:`` URLs, may be absent)."""

    ok: bool
    text: str
    error: str | None
    truncated: bool


class RunTool(Protocol):
    def __call__(self, name: str, args: dict[str, Any], *, images: bool) -> ToolOutcome: ...


@dataclass
class Approval:
    """The user's decision on a proposal and what the model is told about it."""

    decision: str  # "run" | "edit" | "no"
    observation: str
    input_number: int | None = None  # the input the approved code ran as


@dataclass
class TurnEnv:
    """Everything one turn needs, injected (the loop imports no session, capability or front-end code)."""

    llm: LLM
    budget: Budget
    emit: Callable[[Event], None]
    run_tool: RunTool
    approve: Callable[[ApprovalRequiredEvent], Approval]
    mask: Callable[[str], str] = lambda text: text
    side: SideRequests | None = None  # model requests a tool call makes for someone else (MCP sampling)


@dataclass
class _Outcome:
    ok: bool
    text: str = ""
    error: str | None = None
    truncated: bool = False
    images: tuple[str, ...] = ()
    decision: str | None = None  # of the user, for a proposal


def run_turn(env: TurnEnv, question: str, content: str | None = None) -> TurnResult:
    """Answer one question. ``content`` is the user message sent (defaults to the question)."""
    return _Turn(env, question, content or question).run()


class _Turn:
    """One question being answered: the conversation so far, the protocol in use, the step, and the record."""

    def __init__(self, env: TurnEnv, question: str, content: str) -> None:
        self.env = env
        self.budget = env.budget
        self.clock = env.budget.clock
        self.started = self.clock()
        self.result = TurnResult(question=question)
        self.talk = Conversation(content)
        self.protocol: ToolProtocol = NATIVE
        self.sees_images = False
        self.step = 0
        self.view: ReplyView | None = None  # the reply being streamed
        self.best = ""  # the latest prose the model wrote: the best answer so far
        self.findings: list[str] = []  # one line per tool call, for an answer cut short by a bound
        if env.side is not None:
            env.side.bind(self.result)

    def run(self) -> TurnResult:
        try:
            failure = self._begin()
            if failure is not None:
                return self._fail(failure)
            while True:
                request = self.budget.next_request(
                    self.protocol,
                    self.talk.messages,
                    step=self.step,
                    spent=self.result.usage,
                    requests=self.result.requests_made,
                )
                if isinstance(request, Stop):
                    return self._stop(request)
                self.step += 1
                self._state("thinking")
                reader = self.protocol
                reply = self._ask(request)
                if isinstance(reply, LLMToolsRefused):  # the same step again, tools described in text
                    self._switch(TEXT)
                    self.step -= 1
                    continue
                if isinstance(reply, LLMError):
                    return self._fail(reply)
                if reply.tools_unseen:  # the model never saw the schemas: the next steps describe them
                    self._switch(TEXT)
                if reply.cut == "deadline":
                    self.best = (self.view.text if self.view else "") or self.best
                    return self._stop(self.budget.time_up())
                if reply.cut == "repetition":
                    return self._finish(
                        reader.prose(reply.text).strip() or self.best, "repetition", LOOP_NOTE
                    )
                step = reader.read(reply, self.step, self.budget.offered, self.talk.call_ids)
                if not step.calls:
                    return self._answer(reader, reply)
                if self._run_calls(reply, step) == "edit":
                    return self._finish(EDIT_ANSWER)
        except KeyboardInterrupt:
            return self._interrupted()
        finally:
            self.result.messages = self.talk.messages
            self.result.duration_ms = round((self.clock() - self.started) * 1000, 3)

    # -- 1. before the first request ---------------------------------------------------------------------
    def _begin(self) -> LLMError | None:
        """Load the model library, choose the protocol, size the turn; an ``LLMError`` if the model is
        unusable. Loading is a one-off cost of the session (seconds, once), announced on its own and not
        bounded by the turn's deadline, which starts when it is done."""
        llm = self.env.llm
        self._state("starting", detail="loading the model library")
        try:
            llm.prepare()
            self._switch(PROTOCOLS[llm.tool_protocol()])
            self.sees_images = llm.supports_images()
            self.budget.start()
        except LLMError as exc:
            return exc
        self.started = self.clock()
        self._state("idle")
        return None

    def _switch(self, protocol: ToolProtocol) -> None:
        self.protocol = protocol
        self.result.protocol = protocol.name

    # -- 3. one model request ----------------------------------------------------------------------------
    def _ask(self, request: Request) -> LLMReply | LLMError:
        """Stream one request; the reply (maybe cut on purpose), or the error that ended it."""
        llm = self.env.llm
        body = llm.request_kwargs(request)
        self.result.requests.append({**body, "messages": images_as_sizes(body["messages"])})
        view = self.view = ReplyView(
            self.protocol.gate(self.budget.offered), self.env.emit, lambda: self._state("answering")
        )
        guard = RepetitionGuard()

        def on_text(piece: str) -> Cut | None:
            if guard.feed(piece):
                return "repetition"  # more of the same helps nobody
            view.feed(piece)
            if self.budget.out_of_time():
                return "deadline"  # a stream that trickles on past the turn's deadline
            return None

        started = self.clock()
        try:
            reply = llm.complete(request, on_text=on_text, timeout=self.budget.request_timeout())
        except KeyboardInterrupt:
            self._record(
                "llm", llm.model, started, size=len(view.text), ok=False, detail="interrupted by Ctrl-C"
            )
            raise
        except LLMError as exc:
            # At the deadline a request is cut short on purpose, however the cut surfaces (a timeout, or a
            # stream "broken off" when the read timeout fires between chunks): the bound stopped it.
            if isinstance(exc, LLMTransportError) and self.budget.out_of_time(margin=0.05):
                self._record("llm", llm.model, started, ok=False, detail="cut at the turn's deadline")
                return LLMReply(text=view.text, cut="deadline")
            self._record("llm", llm.model, started, ok=False, detail=str(exc))
            return exc
        if reply.cut == "repetition":
            reply.text = guard.kept()
        detail = _reply_detail(reply)
        if reply.cut is not None:
            detail += {"repetition": ", cut: repeating itself", "deadline": ", cut at the turn's deadline"}[
                reply.cut
            ]
        self._record("llm", llm.model, started, size=len(reply.text), detail=detail, usage=reply.usage)
        return reply

    # -- 4. an answer ------------------------------------------------------------------------------------
    def _answer(self, reader: ToolProtocol, reply: LLMReply) -> TurnResult:
        if self.view is not None:
            self.view.end_as_answer()
        text = reader.prose(reply.text) or reply.text
        text = text if text.strip() else EMPTY_ANSWER
        if reply.finish_reason == "length":
            return self._finish(text, "max_tokens", CAP_NOTE)
        return self._finish(text)

    # -- 5. tool calls -----------------------------------------------------------------------------------
    def _run_calls(self, reply: LLMReply, step: Step) -> str | None:
        """Run a reply's tool calls and record them in the conversation; "edit" when the user chose to edit
        a proposal (the turn ends there)."""
        if step.prose.strip():
            self.best = step.prose.strip()
        if self.view is not None:
            self.view.end_with_calls(step.prose)
        self.talk.calls_made(step.writer, step.writer.assistant_message(reply.text, step), step.calls)
        edit = None
        for cid, call in step.calls:
            result, decision = self._run_one(cid, call)
            self.talk.result(result)
            edit = edit or (decision if decision == "edit" else None)
        self.talk.close_calls(see_images=self.sees_images)
        self._state("observing")
        return edit

    def _run_one(self, cid: str, call: ParsedCall) -> tuple[ToolResult, str | None]:
        env = self.env
        args = call.args or {}
        summary = arg_summary(args)
        self._state("calling", detail=f"→ {call.name}({summary})")
        masked = {k: env.mask(v) if isinstance(v, str) else v for k, v in args.items()}
        env.emit(ToolStartEvent(call_id=cid, name=call.name, args=masked, step=self.step))
        started = self.clock()
        out = self._outcome(cid, call)
        error = out.error or ""
        observation = out.text if out.ok else (error if error.startswith("Error") else f"Error: {error}")
        env.emit(
            ToolEndEvent(
                call_id=cid,
                name=call.name,
                ok=out.ok,
                text=env.mask(out.text),
                error=None if out.ok else env.mask(observation),
                truncated=out.truncated,
                duration_ms=round((self.clock() - started) * 1000, 3),
            )
        )
        self._record("tool", call.name, started, size=len(observation), ok=out.ok, detail=summary)
        first = (observation.strip().splitlines() or [""])[0]
        self.findings.append(f"{call.name}({summary}) → {first[:120]}")
        return ToolResult(cid, call.name, observation, out.images), out.decision

    def _outcome(self, cid: str, call: ParsedCall) -> _Outcome:
        if call.error or call.args is None:
            return _Outcome(False, error=f"Error: {call.error}.")
        if call.name == PROPOSE:
            return self._propose(cid, call.args)
        got = self.env.run_tool(call.name, call.args, images=self.sees_images)
        images = tuple(getattr(got, "images", ()) or ())
        return _Outcome(got.ok, got.text, got.error, got.truncated, images)

    def _propose(self, cid: str, args: dict[str, Any]) -> _Outcome:
        code = args.get("code")
        if not isinstance(code, str) or not code.strip():
            return _Outcome(False, error="Error: propose_code needs a non-empty string argument 'code'.")
        event = ApprovalRequiredEvent(call_id=cid, code=code, explanation=str(args.get("explanation") or ""))
        self.env.emit(event)
        approval = self.env.approve(event)
        return _Outcome(True, approval.observation, decision=approval.decision)

    # -- endings -----------------------------------------------------------------------------------------
    def _finish(self, text: str, stopped_by: str | None = None, note: str | None = None) -> TurnResult:
        remembered = note if note and stopped_by not in _UNREMEMBERED_NOTES else None
        self.talk.end(text + (f"\n\n({remembered})" if remembered else ""))
        self.result.answer, self.result.stopped_by, self.result.note = text, stopped_by, note
        self.env.emit(AnswerEvent(text=text, stopped_by=stopped_by, note=note))
        self._usage_event()
        self._state("done", detail=stopped_by or "")
        return self.result

    def _stop(self, stop: Stop) -> TurnResult:
        """A bound ended the turn: the best answer so far, and the bound's sentence."""
        if self.best:
            text = self.best
        elif self.findings:
            found = "\n".join(f"- {f}" for f in self.findings[-6:])
            text = f"I had not reached an answer yet. What I found so far:\n{found}"
        else:
            text = "I had not reached an answer yet."
        return self._finish(text, stop.bound, stop.note)

    def _fail(self, exc: LLMError) -> TurnResult:
        partial = self.view.text if self.view is not None else ""
        self.result.error = str(exc)
        # The streamed text is completed as the answer before the error, so no front end shows it twice.
        if partial.strip():
            self.talk.end(partial + "\n\n(cut off by an error)")
            self.result.answer = partial
            self.env.emit(
                AnswerEvent(text=partial, note="The answer above is incomplete (see the error below).")
            )
        else:
            self.talk.end_without_answer()
        self.env.emit(ErrorEvent(message=str(exc), kind=exc.kind))
        self._usage_event()
        self._state("failed", detail=exc.kind)
        return self.result

    def _interrupted(self) -> TurnResult:
        self.result.interrupted = True
        self.talk.cancel_calls()
        partial = self.view.text if self.view is not None else ""
        note = (
            "Stopped by Ctrl-C; the partial answer is kept."
            if partial.strip()
            else "Stopped by Ctrl-C before an answer arrived."
        )
        self.talk.end((partial or "(no answer yet)") + "\n\n(interrupted)")
        self.result.answer, self.result.stopped_by, self.result.note = partial, "interrupt", note
        try:
            self.env.emit(AnswerEvent(text=partial, stopped_by="interrupt", note=note))
            self._usage_event()
            self._state("failed", detail="cancelled")
        except KeyboardInterrupt:  # a second Ctrl-C while rendering: the record above is already consistent
            pass
        return self.result

    # -- bookkeeping -------------------------------------------------------------------------------------
    def _state(self, state: str, detail: str = "") -> None:
        max_steps = self.budget.limits.max_steps
        self.env.emit(StateEvent(state=state, step=self.step, max_steps=max_steps, detail=detail))

    def _record(
        self,
        kind: str,
        name: str,
        started: float,
        *,
        size: int = 0,
        ok: bool = True,
        detail: str = "",
        usage: Usage | None = None,
    ) -> None:
        duration = round((self.clock() - started) * 1000, 3)
        self.result.steps.append(StepRecord(kind, name, duration, size, ok, detail, usage))

    def _usage_event(self) -> None:
        u = self.result.usage
        if not (u.prompt_tokens or u.completion_tokens or u.cost_usd):
            return  # nothing reached the model (stopped while loading, refused up front): no "0 tokens" line
        self.env.emit(
            UsageEvent(
                prompt_tokens=u.prompt_tokens,
                completion_tokens=u.completion_tokens,
                cost_usd=u.cost_usd,
                model=self.env.llm.model,
            )
        )


def _reply_detail(reply: LLMReply) -> str:
    u = reply.usage
    calls = f", {len(reply.tool_calls)} tool call(s)" if reply.tool_calls else ""
    return f"{u.prompt_tokens} in / {u.completion_tokens} out tokens{calls}"
