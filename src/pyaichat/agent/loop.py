"""The bounded agent loop: ask the model, run the tools it asks for, feed the results back, stream the answer.

States: idle → thinking → calling → observing → … → answering → done / failed, each announced with a
``StateEvent``. Bounds (``max_steps``, the turn deadline, the context budget, the money budget) end the turn
with the best answer so far plus one sentence naming the bound. Tool trouble of any kind (unknown tool, broken
JSON, invalid arguments, a failing capability) becomes an observation for the model, never an exception.
Ctrl-C (``KeyboardInterrupt`` in the main thread) keeps the partial answer and closes every open tool call, so
the conversation stays valid for the next question.

The loop knows nothing about sessions or terminals: ``TurnEnv`` hands it callables for the model, the tools,
the approval gate and request building.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..agent.events import (
    AnswerChunkEvent,
    AnswerEvent,
    ApprovalRequiredEvent,
    ErrorEvent,
    Event,
    StateEvent,
    ThinkingEvent,
    ToolEndEvent,
    ToolStartEvent,
    UsageEvent,
)
from ..errors import LLMError
from .llm import LLM, LLMReply, Usage
from .repetition import LOOP_NOTE, RepetitionGuard
from .textcalls import recover_calls, tool_params
from .textproto import ParsedCall, StreamGate, parse_blocks

PROPOSE = "propose_code"
MAX_CALLS_PER_REPLY = 8
_UNREMEMBERED_NOTES = ("repetition", "max_tokens")
EMPTY_ANSWER = "(The model returned an empty reply; ask again or rephrase the question.)"
EDIT_ANSWER = "The proposed code is waiting in your next input: edit it if you like, then run it yourself."
# The tools kept when the window cannot hold all of them: one fact at a time, least power first.
LEAN_TOOLS = ("list_globals", "get_repr", "eval_expr", "get_last_exception")


class ToolOutcome(Protocol):
    ok: bool
    text: str
    error: str | None
    truncated: bool
    duration_ms: float


@dataclass
class Approval:
    """The user's decision on a proposal and what the model is told about it."""

    decision: str  # "run" | "edit" | "no"
    observation: str


@dataclass
class StepRecord:
    """One line of ``/trace``: an LLM request or a tool call."""

    kind: str  # "llm" | "tool" | "approval"
    name: str
    duration_ms: float
    size: int = 0
    ok: bool = True
    detail: str = ""


@dataclass
class TurnResult:
    question: str
    answer: str = ""
    stopped_by: str | None = None
    note: str | None = None
    error: str | None = None
    interrupted: bool = False
    steps: list[StepRecord] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    native: bool = True
    duration_ms: float = 0.0


@dataclass
class TurnEnv:
    """Everything one turn needs, injected (the loop imports no session, capability or front-end code)."""

    llm: LLM
    emit: Callable[[Event], None]
    run_tool: Callable[[str, dict[str, Any]], ToolOutcome]
    approve: Callable[[ApprovalRequiredEvent], Approval]
    # (this turn's messages, native?) -> (masked full request messages, estimated tokens)
    build_request: Callable[[list[dict[str, Any]], bool], tuple[list[dict[str, Any]], int]]
    tool_schemas: list[dict[str, Any]]
    max_steps: int = 8
    turn_timeout: float = 120.0
    request_timeout: float = 60.0
    context_tokens: int = 8000
    # the model's window, when known: a request must leave room in it for the answer
    context_window: int | None = None
    # (messages, tools) -> prompt tokens with the model's tokenizer; None: build_request's estimate
    count_tokens: Callable[[list[dict[str, Any]], list[dict[str, Any]] | None], int] | None = None
    # () -> (most prompt tokens per request, the window): asked once the model library is loaded
    limits: Callable[[], tuple[int, int | None]] | None = None
    budget_left: Callable[[], float | None] = lambda: None
    mask: Callable[[str], str] = lambda text: text
    clock: Callable[[], float] = time.monotonic

    @property
    def tool_names(self) -> list[str]:
        return [s.get("function", {}).get("name", "") for s in self.tool_schemas]


def run_turn(env: TurnEnv, question: str, content: str | None = None) -> TurnResult:
    """Answer one question. ``content`` is the user message sent (defaults to the question)."""
    return _Turn(env, question, content or question).run()


class _Turn:
    def __init__(self, env: TurnEnv, question: str, content: str) -> None:
        self.env = env
        self.result = TurnResult(question=question)
        self.current: list[dict[str, Any]] = [{"role": "user", "content": content}]
        self.started = env.clock()
        self.deadline = self.started + env.turn_timeout
        self.step = 0
        self.best = ""  # the latest prose the model wrote: the best answer so far
        self.findings: list[str] = []
        self.streamed: list[str] = []  # text shown to the user in the current reply
        self.answering = False
        self.open_calls: list[tuple[str, str]] = []  # (id, name) of tool calls without a result yet
        self._gate: StreamGate | None = None
        self.tools = env.tool_schemas  # may shrink to LEAN_TOOLS when the window is small
        self.params = tool_params(env.tool_schemas)
        self.prompt_tokens = 0  # of the latest request
        self.call_ids: set[str] = set()
        self.open_native = True  # the open calls are native ones (answered with "tool" messages)
        self.llm_calls = 0

    # -- the loop --------------------------------------------------------------------------------------------
    def run(self) -> TurnResult:
        env = self.env
        try:
            prepare = getattr(env.llm, "prepare", None)
            if callable(prepare):  # e.g. finish importing litellm, outside the timed model step
                self._state("starting", detail="loading the model library")
                prepare()
                # Loading the library is a one-off cost of the session (seconds, once), announced on its own
                # and not interruptible by a deadline: the turn's clock starts when it is done.
                self.started = env.clock()
                self.deadline = self.started + env.turn_timeout
            try:
                native = env.llm.native_tools()
            except LLMError as exc:
                return self._fail(exc)
            self.result.native = native
            if env.limits is not None:
                env.context_tokens, env.context_window = env.limits()
            self._state("idle")
            while True:
                bound = self._bound_hit()
                if bound:
                    return self._stop(bound)
                self.step += 1
                self._state("thinking")
                messages, tokens = env.build_request(self.current, native)
                tokens = self._fit(messages, tokens, native)
                if tokens > env.context_tokens:
                    return self._stop("context_tokens")
                reply = self._ask(messages, native)
                if reply is None:  # the provider refused tool schemas: same step again, text protocol
                    native = self.result.native = False
                    self.step -= 1
                    continue
                if isinstance(reply, LLMError):
                    return self._fail(reply)
                if native and getattr(env.llm, "tools_ignored", False):
                    # the server never showed the model its tools: the next steps describe them in text
                    native = self.result.native = False
                if reply.finish_reason == "repetition":
                    return self._finish(reply.text.strip() or self.best, "repetition", LOOP_NOTE)
                calls, prose = self._calls(reply, native)
                if not calls:
                    text = reply.text if native else parse_blocks(reply.text)[1] or reply.text
                    note = self._cap_note(reply)
                    if note:
                        return self._answer(text if text.strip() else EMPTY_ANSWER, "max_tokens", note)
                    return self._answer(text if text.strip() else EMPTY_ANSWER)
                if self._run_calls(reply, calls, prose, native):
                    return self._finish(EDIT_ANSWER)
        except KeyboardInterrupt:
            return self._interrupted()
        finally:
            self.result.messages = self.current
            self.result.duration_ms = round((env.clock() - self.started) * 1000, 3)

    def _fit(self, messages: list[dict[str, Any]], estimate: int, native: bool) -> int:
        """Prompt tokens of this request (the model's tokenizer where possible); when they do not fit, fall
        back to the lean tool set before giving up, so a small window still gets an answer."""
        count = self.env.count_tokens
        tools = self.tools if native else None
        tokens = count(messages, tools) if count else estimate
        if tokens > self.env.context_tokens and native and len(self.tools) > len(LEAN_TOOLS):
            lean = [s for s in self.tools if s.get("function", {}).get("name") in LEAN_TOOLS]
            if lean:
                self.tools = lean
                tokens = count(messages, lean) if count else estimate
        self.prompt_tokens = tokens
        return tokens

    def _cap_note(self, reply: LLMReply) -> str | None:
        if reply.finish_reason != "length":
            return None
        return (
            "The answer reached the reply length cap (max_tokens) and is cut short; ask for less or raise it."
        )

    def _bound_hit(self) -> str | None:
        env = self.env
        if self.step >= env.max_steps:
            return "max_steps"
        if env.clock() >= self.deadline:
            return "turn_timeout"
        left = env.budget_left()
        if left is not None:
            spent = self.result.usage.cost_usd or 0.0
            left -= spent
            average = spent / self.llm_calls if self.llm_calls else 0.0
            if left <= 0 or left < average:  # the next request would probably go over
                return "budget_usd"
        return None

    # -- one model request -----------------------------------------------------------------------------------
    def _ask(self, messages: list[dict[str, Any]], native: bool) -> LLMReply | LLMError | None:
        env = self.env
        tools = self.tools if native else None
        self.result.requests.append(_request_record(env.llm, messages, tools))
        gate = self._gate = StreamGate(tags=not native, tool_params=self.params)
        guard = RepetitionGuard()
        self.streamed = []
        self.answering = False  # each reply that streams text announces "answering" again

        def on_text(piece: str) -> None:
            looping = guard.feed(piece)
            out = gate.feed(piece)
            if out and not looping:
                self._show(out)
            if looping:  # cut the stream now: more of the same helps nobody
                raise LLMError(LOOP_NOTE, kind="repetition")
            if env.clock() >= self.deadline:  # a stream that trickles on past the turn's deadline
                raise LLMError("turn_timeout", kind="turn_timeout")

        timeout = max(0.1, min(env.request_timeout, self.deadline - env.clock()))
        started = env.clock()
        try:
            reply = env.llm.complete(messages, tools, on_text=on_text, timeout=timeout)
        except KeyboardInterrupt:
            self._record(
                "llm",
                env.llm.model,
                started,
                size=len("".join(self.streamed)),
                ok=False,
                detail="interrupted by Ctrl-C",
            )
            raise
        except LLMError as exc:
            if exc.kind == "repetition":  # cut on purpose: the step did its job
                self._record(
                    "llm", env.llm.model, started, size=len(guard.text), detail="cut: repeating itself"
                )
                kept = guard.kept()
                text = kept if native else parse_blocks(kept)[1]
                self.llm_calls += 1
                return LLMReply(text=text, finish_reason="repetition")
            self._record("llm", env.llm.model, started, ok=False, detail=str(exc))
            if exc.kind == "tools_unsupported" and native:
                return None
            # At the deadline the request is cut short on purpose, however the cut surfaces (a timeout, or
            # a stream "broken off in the middle" when the read timeout fires between chunks): the turn's
            # bound stopped it, so the user gets the best answer so far and that one sentence.
            timed_out = exc.kind in ("timeout", "turn_timeout", "stream_cut", "connection")
            if timed_out and env.clock() >= self.deadline - 0.05:
                self.best = "".join(self.streamed) or self.best
                return LLMError("turn_timeout", kind="turn_timeout")
            return exc
        self._record("llm", env.llm.model, started, size=len(reply.text), detail=_reply_detail(reply))
        self._add_usage(reply.usage)
        self.llm_calls += 1
        return reply

    def _show(self, text: str) -> None:
        if not self.answering:
            self.answering = True
            self._state("answering")
        self.streamed.append(text)
        self.env.emit(AnswerChunkEvent(text=text))

    def _calls(self, reply: LLMReply, native: bool) -> tuple[list[tuple[str, ParsedCall]], str]:
        """(call id, parsed call) for each tool call of a reply, and the reply's prose around them.

        Native calls first; then the text protocol's blocks; then the formats local models write on their
        own (Hermes ``<tool_call>``, Llama JSON, Mistral ``[TOOL_CALLS]``, Gemma ``tool_code``, pythonic).
        """
        if native and reply.tool_calls:
            out = []
            for i, tc in enumerate(reply.tool_calls):
                call_id = tc.id or f"call_{self.step}_{i}"
                if call_id in self.call_ids:  # some servers number calls per reply: keep ids unique
                    call_id = f"{call_id}_{self.step}_{i}"
                self.call_ids.add(call_id)
                out.append((call_id, _parse_native(tc.name, tc.arguments)))
            return out, reply.text
        if not native:
            blocks, prose = parse_blocks(reply.text)
            if blocks:
                return [(f"text_{self.step}_{i}", c) for i, c in enumerate(blocks)], prose
        found = recover_calls(reply.text, self.params)
        calls = [(f"call_text_{self.step}_{i}", c) for i, c in enumerate(found.calls[:MAX_CALLS_PER_REPLY])]
        return calls, found.prose

    # -- tools -----------------------------------------------------------------------------------------------
    def _run_calls(
        self, reply: LLMReply, calls: list[tuple[str, ParsedCall]], prose: str, native: bool
    ) -> bool:
        """Run a reply's tool calls and record them in the conversation; True when the user chose "edit"."""
        env = self.env
        if prose.strip():
            self.best = prose.strip()
            shown = "".join(self.streamed).strip()
            unseen = prose.strip()[len(shown) :].strip() if prose.strip().startswith(shown) else ""
            if shown:  # shown as answer text: end its paragraph before what comes next
                if unseen:  # prose after the call, held back while the call streamed
                    self._show("\n\n" + unseen)
                full = "".join(self.streamed)
                gap = "\n\n"[len(full) - len(full.rstrip("\n")) :]
                if gap:
                    env.emit(AnswerChunkEvent(text=gap))
            else:
                env.emit(ThinkingEvent(text=prose.strip()))
        text_calls = native and not reply.tool_calls  # calls the model wrote as text: keep them as text
        if native and not text_calls:
            message: dict[str, Any] = {"role": "assistant"}
            if prose:  # no "content" key at all otherwise (litellm drops a None content; /sent must match)
                message["content"] = prose
            message["tool_calls"] = [
                {"id": cid, "type": "function", "function": {"name": c.name, "arguments": _args_text(c)}}
                for cid, c in calls
            ]
            self.current.append(message)
        else:
            self.current.append({"role": "assistant", "content": reply.text})
        native = native and not text_calls
        self.open_native = native
        self.open_calls = [(cid, c.name) for cid, c in calls]
        observations: list[str] = []
        edit = False
        for cid, call in calls:
            text, decision = self._run_one(cid, call)
            edit = edit or decision == "edit"
            self.open_calls = [oc for oc in self.open_calls if oc[0] != cid]
            if native:
                self.current.append({"role": "tool", "tool_call_id": cid, "content": text})
            else:
                observations.append(f'<observation tool="{call.name}">\n{text}\n</observation>')
        if observations:
            self.current.append({"role": "user", "content": "\n\n".join(observations)})
        self._state("observing")
        return edit

    def _run_one(self, cid: str, call: ParsedCall) -> tuple[str, str | None]:
        env = self.env
        args = call.args or {}
        self._state("calling", detail=f"→ {call.name}({_arg_summary(args)})")
        env.emit(
            ToolStartEvent(call_id=cid, name=call.name, args=_masked_args(args, env.mask), step=self.step)
        )
        started = env.clock()
        decision = None
        if call.error or call.args is None:
            ok, text, error, truncated = False, "", f"Error: {call.error}.", False
        elif call.name == PROPOSE:
            ok, text, error, decision = self._propose(cid, args)
            truncated = False
        else:
            outcome = env.run_tool(call.name, args)
            ok, text, error, truncated = outcome.ok, outcome.text, outcome.error, outcome.truncated
        observation = text if ok else (error if (error or "").startswith("Error") else f"Error: {error}")
        duration = (env.clock() - started) * 1000
        env.emit(
            ToolEndEvent(
                call_id=cid,
                name=call.name,
                ok=ok,
                text=env.mask(text),
                error=None if ok else env.mask(observation),
                truncated=truncated,
                duration_ms=round(duration, 3),
            )
        )
        self._record("tool", call.name, started, size=len(observation), ok=ok, detail=_arg_summary(args))
        first = (observation.strip().splitlines() or [""])[0]
        self.findings.append(f"{call.name}({_arg_summary(args)}) → {first[:120]}")
        return observation, decision

    def _propose(self, cid: str, args: dict[str, Any]) -> tuple[bool, str, str | None, str | None]:
        code = args.get("code")
        if not isinstance(code, str) or not code.strip():
            return False, "", "Error: propose_code needs a non-empty string argument 'code'.", None
        explanation = args.get("explanation") or ""
        event = ApprovalRequiredEvent(call_id=cid, code=code, explanation=str(explanation))
        self.env.emit(event)
        approval = self.env.approve(event)
        return True, approval.observation, None, approval.decision

    # -- endings ---------------------------------------------------------------------------------------------
    def _answer(self, text: str, stopped_by: str | None = None, note: str | None = None) -> TurnResult:
        rest = self._gate.rest() if self._gate is not None else ""
        if rest.strip():
            self._show(rest)
        return self._finish(text, stopped_by, note)

    def _finish(self, text: str, stopped_by: str | None = None, note: str | None = None) -> TurnResult:
        # The model is told which bound stopped it, but not about its own cut reply: small models copy such
        # notes into later answers, where the user would take them for pyaichat's.
        remembered = note if note and stopped_by not in _UNREMEMBERED_NOTES else None
        self.current.append(
            {"role": "assistant", "content": text + (f"\n\n({remembered})" if remembered else "")}
        )
        self.result.answer, self.result.stopped_by, self.result.note = text, stopped_by, note
        self.env.emit(AnswerEvent(text=text, stopped_by=stopped_by, note=note))
        self._usage_event()
        self._state("done", detail=stopped_by or "")
        return self.result

    def _stop(self, bound: str) -> TurnResult:
        env = self.env
        notes = {
            "max_steps": f"Stopped after {env.max_steps} steps (the max_steps bound); "
            "ask a narrower question or "
            "raise --max-steps.",
            "turn_timeout": f"Stopped after {env.turn_timeout:g} s (the turn_timeout bound).",
            "context_tokens": self._context_note(),
            "budget_usd": "Stopped: the next request would go over the session's money budget (budget_usd).",
        }
        return self._finish(self._best_text(), bound, notes[bound])

    def _context_note(self) -> str:
        env = self.env
        window = env.context_window
        if window and env.context_tokens < window:
            return (
                f"Stopped: the request needs about {self.prompt_tokens:,} tokens, more than the model's "
                f"{window:,}-token window holds with room for the answer; /clear, or use a model with a "
                "larger window."
            )
        return (
            f"Stopped: the request would exceed the context budget of {env.context_tokens:,} tokens "
            "(context_tokens); /clear or raise it."
        )

    def _best_text(self) -> str:
        if self.best:
            return self.best
        if self.findings:
            return "I had not reached an answer yet. What I found so far:\n" + "\n".join(
                f"- {f}" for f in self.findings[-6:]
            )
        return "I had not reached an answer yet."

    def _fail(self, exc: LLMError) -> TurnResult:
        if exc.kind == "turn_timeout":
            return self._stop("turn_timeout")
        partial = "".join(self.streamed)
        self.result.error = str(exc)
        # The streamed text is completed as the answer before the error, so no front end shows it twice.
        if partial.strip():
            self.current.append({"role": "assistant", "content": partial + "\n\n(cut off by an error)"})
            self.result.answer = partial
            self.env.emit(
                AnswerEvent(text=partial, note="The answer above is incomplete (see the error below).")
            )
        else:
            self._close_conversation()
        self.env.emit(ErrorEvent(message=str(exc), kind=exc.kind))
        self._usage_event()
        self._state("failed", detail=exc.kind)
        return self.result

    def _interrupted(self) -> TurnResult:
        self.result.interrupted = True
        for cid, _name in self.open_calls:
            if self.open_native:
                self.current.append(
                    {"role": "tool", "tool_call_id": cid, "content": "Cancelled by the user."}
                )
        if self.open_calls and not self.open_native:
            self.current.append({"role": "user", "content": "(The user cancelled the tool calls.)"})
        self.open_calls = []
        partial = "".join(self.streamed) or ""
        note = (
            "Stopped by Ctrl-C; the partial answer is kept."
            if partial.strip()
            else "Stopped by Ctrl-C before an answer arrived."
        )
        self.current.append(
            {"role": "assistant", "content": (partial or "(no answer yet)") + "\n\n(interrupted)"}
        )
        self.result.answer, self.result.stopped_by, self.result.note = partial, "interrupt", note
        try:
            self.env.emit(AnswerEvent(text=partial, stopped_by="interrupt", note=note))
            self._usage_event()
            self._state("failed", detail="cancelled")
        except KeyboardInterrupt:  # a second Ctrl-C while rendering: the record above is already consistent
            pass
        return self.result

    def _close_conversation(self) -> None:
        """After a failure, end the turn's messages with an assistant message so the next request is valid."""
        if self.current[-1].get("role") != "assistant" or self.current[-1].get("tool_calls"):
            self.current.append({"role": "assistant", "content": "(no answer: the model request failed)"})

    # -- bookkeeping -----------------------------------------------------------------------------------------
    def _state(self, state: str, detail: str = "") -> None:
        self.env.emit(StateEvent(state=state, step=self.step, max_steps=self.env.max_steps, detail=detail))

    def _record(
        self, kind: str, name: str, started: float, *, size: int = 0, ok: bool = True, detail: str = ""
    ) -> None:
        duration = (self.env.clock() - started) * 1000
        self.result.steps.append(StepRecord(kind, name, round(duration, 3), size, ok, detail))

    def _add_usage(self, usage: Usage) -> None:
        total = self.result.usage
        total.prompt_tokens += usage.prompt_tokens
        total.completion_tokens += usage.completion_tokens
        if usage.cost_usd is not None:
            total.cost_usd = (total.cost_usd or 0.0) + usage.cost_usd

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


# -- helpers -------------------------------------------------------------------------------------------------
def _parse_native(name: str, arguments: str) -> ParsedCall:
    if not arguments.strip():
        return ParsedCall(name, {})
    try:
        args = json.loads(arguments)
    except ValueError as exc:
        return ParsedCall(
            name, None, f"the arguments of {name} are not valid JSON ({exc.msg}); send one JSON object"
        )
    if not isinstance(args, dict):
        return ParsedCall(name, None, f"the arguments of {name} must be a JSON object")
    return ParsedCall(name, args)


def _args_text(call: ParsedCall) -> str:
    return json.dumps(call.args if call.args is not None else {}, ensure_ascii=False)


def _arg_summary(args: dict[str, Any], limit: int = 60) -> str:
    if not args:
        return ""
    if len(args) == 1:
        value = next(iter(args.values()))
        text = value if isinstance(value, str) else json.dumps(value, default=str)
    else:
        text = ", ".join(f"{k}={v!r}" for k, v in args.items())
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _masked_args(args: dict[str, Any], mask: Callable[[str], str]) -> dict[str, Any]:
    return {k: mask(v) if isinstance(v, str) else v for k, v in args.items()}


def _reply_detail(reply: LLMReply) -> str:
    u = reply.usage
    calls = f", {len(reply.tool_calls)} tool call(s)" if reply.tool_calls else ""
    return f"{u.prompt_tokens} in / {u.completion_tokens} out tokens{calls}"


def _request_record(
    llm: LLM, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
) -> dict[str, Any]:
    builder = getattr(llm, "request_kwargs", None)
    if callable(builder):
        return builder(messages, tools)
    body: dict[str, Any] = {"model": llm.model, "messages": messages}
    if tools:
        body["tools"] = tools
    return body
