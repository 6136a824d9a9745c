"""The bounded agent loop: ask the model, run the tools it asks for, feed the results back, stream the answer.

One turn, top to bottom (``Turn.run``; ``agent.turn`` puts its ``TurnEnv`` together):

1. ``_begin``: load the model library (announced, outside the turn's clock), choose the tool protocol, size
   the turn (``Budget.start``).
2. ``Budget.next_request``: the next request (its messages written by the tool protocol), fitted to the
   window, or a ``Stop`` naming the bound (``max_steps``, ``turn_timeout``, ``context_tokens``,
   ``budget_usd``).
3. ``_request``: read its stream (``for item in stream``); the user sees what cannot be a tool call
   (``ReplyView``), and the status says what the stream is doing (waiting for the first token, receiving,
   retrying). A reply that loops or runs past the deadline is cut on purpose: the loop stops reading and
   keeps what came (``Cut``); a failure comes back as an ``LLMError``. Every request that was sent is
   counted, cut or not. A provider that refuses tool schemas, or a server that never showed them to the
   model, switches the turn (and the session) to the text protocol.
4. ``ToolProtocol.read``: the reply's tool calls and prose. No calls: it is the answer (``_answer``).
5. ``_run_calls``: each call runs (a capability, or the approval gate for ``propose_code``) and its result
   goes back into the conversation (``Conversation``); then step 2 again. A call that already failed in
   this turn, with the very same arguments, is not run again: the model is told it failed and why; asked
   for once more after that, the turn ends with what was found.

States announced with ``StateEvent``: starting → idle → thinking → calling → observing → … → answering →
done / failed. Tool trouble of any kind (unknown tool, broken JSON, invalid arguments, a failing capability)
becomes a result the model reads, never an exception. Ctrl-C keeps the partial answer and closes every open
tool call. The loop knows nothing about sessions or terminals: ``TurnEnv`` hands it what it uses.

One module of ~500 lines on purpose: a turn is one state machine (``Turn``) that reads top to bottom in the
order above; every piece it steps through (the budget, the conversation, the reply's view, the tool
protocols, the repetition guard) is a module of its own already.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..capabilities.catalog import CapabilityResult
from ..errors import LLMError, LLMToolsRefused, LLMTransportError
from ..proposal import Decide, Proposal
from ..untrusted import Reads, span
from .budget import Budget, Stop
from .calls import ToolCall, arg_summary
from .conversation import Conversation
from .events import (
    AnswerEvent,
    ErrorEvent,
    Event,
    NoticeEvent,
    ReceiptsEvent,
    StateEvent,
    ToolEndEvent,
    ToolStartEvent,
    UsageEvent,
)
from .llm import LLM, LLMReply, Receiving, Request, Retrying, Stream, Usage
from .protocol import NATIVE, PROTOCOLS, TEXT, Step, ToolProtocol, images_as_sizes
from .receipts import Evidence, Seen, check
from .repetition import LOOP_NOTE, RepetitionGuard
from .side import SideRequests
from .trace import StepRecord, TurnResult
from .view import ReplyView

PROPOSE = "propose_code"
EMPTY_ANSWER = "(The model returned an empty reply; ask again or rephrase the question.)"
EDIT_ANSWER = "The proposed code is waiting in your next input: edit it if you like, then run it yourself."
CAP_NOTE = "The answer reached the reply length cap (max_tokens) and is cut short; ask for less or raise it."
REPEATED_CALL = (
    "Error: this exact call ({call}) already failed earlier in this answer, so it was not run again. It "
    "failed with: {error} Do something different: change the arguments, call another tool, or answer with "
    "what you know."
)
REFUSED_SHOWN = "not run again: the same call failed above"  # what the user sees of such a call
STUCK_NOTE = "Stopped: the model kept asking for a call that had already failed."
WAITING = "waiting for the first token"
RECEIVING = "receiving the reply"
# Notes the model is not told about its own cut reply: small models copy such notes into later answers,
# where the user would take them for pyaichat's.
_UNREMEMBERED_NOTES = ("repetition", "max_tokens")
# Why the loop stopped reading a reply: it repeats itself, or the turn is out of time.
Cut = Literal["repetition", "deadline"]


class RunTool(Protocol):
    """One call of a tool (a capability where the data lives, or an MCP server's): never raises but Ctrl-C."""

    def __call__(self, name: str, args: dict[str, Any], *, images: bool) -> CapabilityResult: ...


@dataclass
class TurnEnv:
    """Everything one turn needs, injected (the loop imports no session, capability or front-end code)."""

    llm: LLM
    budget: Budget
    emit: Callable[[Event], None]
    run_tool: RunTool
    decide: Decide  # a proposal (``propose_code``) goes to the person through it
    mask: Callable[[str], str] = lambda text: text
    side: SideRequests | None = None  # model requests a tool call makes for someone else (MCP sampling)
    receipts: bool = False  # check the answer's numbers against the turn's results (``receipts``)
    reads: Reads | None = None  # what the turn read that looked like an instruction (for proposals' panels)
    picture: str = ""  # what the model was told of the session, for the receipts


class Turn:
    """One question being answered: the conversation so far, the protocol in use, the step, and the record.
    ``run()`` answers it."""

    def __init__(self, env: TurnEnv, question: str) -> None:
        self.env = env
        self.budget = env.budget
        self.clock = env.budget.clock
        self.started = self.clock()
        self.result = TurnResult(question=question)
        self.talk = Conversation(question)
        self.protocol: ToolProtocol = NATIVE
        self.sees_images = False
        self.step = 0
        self.view: ReplyView | None = None  # the reply being streamed
        self.best = ""  # the latest prose the model wrote: the best answer so far
        self.findings: list[str] = []  # one line per distinct tool call, for an answer cut short by a bound
        # every result the model read, indexed as it comes, for the answer's receipts
        self.evidence = Evidence(env.picture) if env.receipts else None
        self.failed: dict[str, str] = {}  # call (name and arguments) -> its error, for calls that failed
        self.refused: dict[str, int] = {}  # call -> how often it was asked for again after it failed
        self.declined_by_interrupt = False  # Ctrl-C answered a proposal's question: no, and stop
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
                self._state("thinking", activity=WAITING)
                reader = self.protocol
                asked = self._request(request)
                if isinstance(asked, LLMToolsRefused):  # the same step again, tools described in text
                    self._switch(TEXT)
                    self.step -= 1
                    continue
                if isinstance(asked, LLMError):
                    return self._fail(asked)
                reply, cut = asked
                if reply.tools_unseen:  # the model never saw the schemas: the next steps describe them
                    self._switch(TEXT)
                if cut == "deadline":
                    self.best = (self.view.text if self.view else "") or self.best
                    return self._stop(self.budget.time_up())
                if cut == "repetition":
                    return self._finish(
                        reader.prose(reply.text).strip() or self.best, "repetition", LOOP_NOTE
                    )
                step = reader.read(reply, self.step, self.budget.offered, self.talk.call_ids)
                if not step.calls:
                    return self._answer(reader, reply)
                ran = self._run_calls(reply, step)
                if ran == "edit":
                    return self._finish(EDIT_ANSWER)
                if ran == "stuck":
                    return self._stop(Stop("repetition", STUCK_NOTE))
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
    def _request(self, request: Request) -> tuple[LLMReply, Cut | None] | LLMError:
        """Read one request's stream; the reply and why it was cut short on purpose (if it was), or the
        error that ended it."""
        llm = self.env.llm
        body = llm.request_kwargs(request)
        self.result.requests.append({**body, "messages": images_as_sizes(body["messages"])})
        view = self.view = ReplyView(
            self.protocol.gate(self.budget.offered), self.env.emit, lambda: self._state("answering")
        )
        guard = RepetitionGuard()
        cut: Cut | None = None
        started = self.clock()
        stream = llm.stream(request, timeout=self.budget.request_timeout())
        try:
            with stream:
                for item in stream:
                    if not isinstance(item, str):
                        self._stream_note(item)
                        continue
                    if guard.feed(item):
                        cut = "repetition"  # more of the same helps nobody
                        break
                    view.feed(item)
                    if self.budget.out_of_time():
                        cut = "deadline"  # a stream that trickles on past the turn's deadline
                        break
            reply = stream.reply()
        except KeyboardInterrupt:
            self._record(
                "llm",
                llm.model,
                started,
                size=len(view.text),
                ok=False,
                detail="interrupted by Ctrl-C",
                usage=_spent(stream),
            )
            raise
        except LLMError as exc:
            usage = _spent(stream)
            # At the deadline a request is cut short on purpose, however the cut surfaces (a timeout, or a
            # stream "broken off" when the read timeout fires between chunks): the bound stopped it.
            if isinstance(exc, LLMTransportError) and self.budget.out_of_time(margin=0.05):
                self._record(
                    "llm", llm.model, started, ok=False, detail="cut at the turn's deadline", usage=usage
                )
                return LLMReply(text=view.text, usage=usage or Usage()), "deadline"
            self._record("llm", llm.model, started, ok=False, detail=str(exc), usage=usage)
            return exc
        if cut == "repetition":
            reply.text = guard.kept()
        detail = _reply_detail(reply)
        if cut is not None:
            detail += {"repetition": ", cut: repeating itself", "deadline": ", cut at the turn's deadline"}[
                cut
            ]
        self._record("llm", llm.model, started, size=len(reply.text), detail=detail, usage=reply.usage)
        return reply, cut

    def _stream_note(self, note: Receiving | Retrying) -> None:
        """Say what the stream is doing: the status line shows it once a wait grows long; a retry is also
        told in a line of its own, since the user would otherwise see nothing but a longer wait."""
        if isinstance(note, Receiving):
            self._state("thinking", activity=RECEIVING)
            return
        self.env.emit(
            NoticeEvent(
                text=f"The model request failed ({note.reason}); trying again in {note.wait:g} s "
                f"(attempt {note.attempt} of {note.attempts}).",
                level="warning",
            )
        )
        # the wait before the next attempt is a second or two: what the status soon shows is that attempt
        self._state(
            "thinking", activity=f"{WAITING}, attempt {note.attempt} of {note.attempts} (after {note.reason})"
        )

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
        a proposal, "stuck" when the model asked again for a call it was already told had failed (the turn
        ends there)."""
        if step.prose.strip():
            self.best = step.prose.strip()
        if self.view is not None:
            self.view.end_with_calls(step.prose)
        self.talk.calls_made(step.writer, step.writer.assistant_message(reply.text, step), step.calls)
        edit = None
        for call in step.calls:
            result = self._run_one(call)
            self.talk.result(call, result)
            edit = edit or (result.decision if result.decision == "edit" else None)
        self.talk.close_calls(see_images=self.sees_images)
        self._state("observing")
        if edit is None and any(n > 1 for n in self.refused.values()):
            return "stuck"
        return edit

    def _run_one(self, call: ToolCall) -> CapabilityResult:
        """Run ``call``; its result as the model reads it (``text``: the observation, a tool's words inside
        a span), carrying the person's decision when it was a proposal."""
        env = self.env
        args = call.args or {}
        summary = arg_summary(args)
        self._state("calling", detail=f"→ {call.name}({summary})")
        masked = {k: env.mask(v) if isinstance(v, str) else v for k, v in args.items()}
        env.emit(ToolStartEvent(call_id=call.id, name=call.name, args=masked, step=self.step))
        started = self.clock()
        key = _call_key(call)
        earlier = self.failed.get(key)
        if earlier is not None:  # the very same call failed already: running it again gives the same error
            self.refused[key] = self.refused.get(key, 0) + 1
            error = REPEATED_CALL.format(call=f"{call.name}({summary})", error=earlier)
            out = CapabilityResult(name=call.name, ok=False, error=error)
        else:
            out = self._result(call)
        # what a tool returned (data), not pyaichat's own words
        from_tool = earlier is None and call.args is not None and call.name != PROPOSE
        error = out.error or ""
        observation = out.text if out.ok else (error if error.startswith("Error") else f"Error: {error}")
        # what a tool returned is data: the model reads it inside a span it cannot close (``untrusted``)
        if from_tool:  # a failure stays one the model sees at once; only its words are data
            words = observation if out.ok else observation.removeprefix("Error:").strip()
            sent = span(words) if out.ok else "Error: " + span(words)
        else:
            sent = observation
        if not out.ok and earlier is None:
            reason = _first_line(observation.removeprefix("Error:").strip(), 300)
            self.failed[key] = reason if reason.endswith((".", "!", "?", "…")) else reason + "."
        if out.decision == "run":  # the user ran code: the session changed, a call that failed may work now
            self.failed.clear()
            self.refused.clear()
        env.emit(
            ToolEndEvent(
                call_id=call.id,
                name=call.name,
                ok=out.ok,
                text=env.mask(out.text),
                error=None if out.ok else (REFUSED_SHOWN if earlier is not None else env.mask(observation)),
                truncated=out.truncated,
                duration_ms=round((self.clock() - started) * 1000, 3),
            )
        )
        if earlier is not None:
            self._record(
                "tool", call.name, started, ok=False, detail=summary, note="not run again: it had failed"
            )
        else:
            self._record("tool", call.name, started, size=len(observation), ok=out.ok, detail=summary)
            if from_tool and env.reads is not None:
                env.reads.saw(f"{call.name}({summary})", observation)
            if out.ok and self.evidence is not None:
                self.evidence.add(Seen.of(call.name, args, f"{call.name}({summary})", observation))
            finding = f"{call.name}({summary}) → {_first_line(observation, 120)}"
            if finding not in self.findings:  # what a bound's summary lists: each distinct result once
                self.findings.append(finding)
        return out.model_copy(update={"text": sent})

    def _result(self, call: ToolCall) -> CapabilityResult:
        if call.error or call.args is None:
            return CapabilityResult(name=call.name, ok=False, error=f"Error: {call.error}.")
        if call.name == PROPOSE:
            return self._propose(call)
        return self.env.run_tool(call.name, call.args, images=self.sees_images)

    def _propose(self, call: ToolCall) -> CapabilityResult:
        args = call.args or {}
        code = args.get("code")
        if not isinstance(code, str) or not code.strip():
            error = "Error: propose_code needs a non-empty string argument 'code'."
            return CapabilityResult(name=PROPOSE, ok=False, error=error)
        provenance = self.env.reads.line() if self.env.reads is not None else ""
        proposal = Proposal.of_code(
            code, str(args.get("explanation") or ""), call_id=call.id, provenance=provenance
        )
        try:
            outcome = self.env.decide(proposal)  # its panel, the preview, the person's answer, the run
        except KeyboardInterrupt:  # Ctrl-C at the question: declined, and the turn ends without asking again
            self.declined_by_interrupt = True
            raise
        return CapabilityResult(name=PROPOSE, ok=True, text=outcome.observation, decision=outcome.decision)

    # -- endings -----------------------------------------------------------------------------------------
    def _finish(self, text: str, stopped_by: str | None = None, note: str | None = None) -> TurnResult:
        remembered = note if note and stopped_by not in _UNREMEMBERED_NOTES else None
        self.talk.end(text + (f"\n\n({remembered})" if remembered else ""))
        self.result.answer, self.result.stopped_by, self.result.note = text, stopped_by, note
        self.env.emit(AnswerEvent(text=text, stopped_by=stopped_by, note=note))
        self._receipts(text)
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
        if self.declined_by_interrupt:
            note = "Declined with Ctrl-C; the model was not asked again."
        elif partial.strip():
            note = "Stopped by Ctrl-C; the partial answer is kept."
        else:
            note = "Stopped by Ctrl-C before an answer arrived."
        self.talk.end((partial or "(no answer yet)") + "\n\n(interrupted)")
        self.result.answer, self.result.stopped_by, self.result.note = partial, "interrupt", note
        try:
            # a proposal's panel printed the text before it: not again
            shown = "" if self.declined_by_interrupt else partial
            self.env.emit(AnswerEvent(text=shown, stopped_by="interrupt", note=note))
            self._usage_event()
            self._state("failed", detail="cancelled")
        except KeyboardInterrupt:  # a second Ctrl-C while rendering: the record above is already consistent
            pass
        return self.result

    # -- bookkeeping -------------------------------------------------------------------------------------
    def _state(self, state: str, detail: str = "", activity: str = "") -> None:
        max_steps = self.budget.limits.max_steps
        self.env.emit(
            StateEvent(state=state, step=self.step, max_steps=max_steps, detail=detail, activity=activity)
        )

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
        note: str = "",
    ) -> None:
        duration = round((self.clock() - started) * 1000, 3)
        self.result.steps.append(StepRecord(kind, name, duration, size, ok, detail, usage, note))

    def _receipts(self, answer: str) -> None:
        """Check the answer's numbers against what this turn's tools showed; the front ends say it."""
        if self.evidence is None or answer == EMPTY_ANSWER:
            return
        found = check(answer, self.evidence, question=self.result.question)
        self.result.receipts = found
        if found.receipts:
            self.env.emit(
                ReceiptsEvent(summary=found.summary(), warnings=found.warnings(), numbers=found.lines())
            )

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
                estimated=u.estimated,
            )
        )


def _spent(stream: Stream) -> Usage | None:
    """What a stream that ended in an error or Ctrl-C cost (``None``: nothing, the server refused it)."""
    try:
        usage = stream.reply().usage
    except (LLMError, KeyboardInterrupt):
        return None
    return usage if usage.prompt_tokens or usage.completion_tokens else None


def _reply_detail(reply: LLMReply) -> str:
    u = reply.usage
    calls = f", {len(reply.tool_calls)} tool call(s)" if reply.tool_calls else ""
    about = "about " if u.estimated else ""
    return f"{about}{u.prompt_tokens} in / {u.completion_tokens} out tokens{calls}"


def _call_key(call: ToolCall) -> str:
    """The same tool with the same arguments is the same call, whatever the arguments' order."""
    args = json.dumps(call.args, sort_keys=True, default=str) if call.args is not None else call.error
    return f"{call.name}\0{args}"


def _first_line(text: str, limit: int) -> str:
    first = (text.strip().splitlines() or [""])[0]
    return first if len(first) <= limit else first[: limit - 1] + "…"
