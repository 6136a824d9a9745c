"""The assistant facade: one object per session that answers questions and remembers the conversation.

Front ends (the REPL, piped mode, later the IPython extension) hold one ``Assistant`` through the
``Controller`` and call ``ask(question, emit, approve)``; everything they show comes back as events. It holds
no terminal code. It also keeps what ``/trace``, ``/sent``, ``/cost`` and ``/save`` report.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import LLMError
from ..runtime import Runtime, as_runtime
from .context import (
    Memory,
    Turn,
    approx_tokens,
    load_system_prompt,
    make_masker,
    mask_messages,
    memoize,
    pinned_section,
)
from .events import ApprovalRequiredEvent, ErrorEvent, Event
from .llm import LLM, LiteLLMClient, Usage, warm_up
from .loop import Approval, TurnEnv, TurnResult, run_turn
from .textproto import describe_protocol

if TYPE_CHECKING:
    from ..config import Config
    from ..records import ExecResult
    from ..session import Session

LLMFactory = Callable[["Config"], LLM]


class Assistant:
    """Answers questions about the user's session (a ``Runtime``, or a ``Session`` in this process) with the
    model ``config`` names (read at every question)."""

    def __init__(
        self, config: Config, runtime: Runtime | Session, *, llm_factory: LLMFactory | None = None
    ) -> None:
        self.config = config
        self.runtime = as_runtime(runtime)
        self.memory = Memory()
        self.turns: list[TurnResult] = []  # every turn of the session, for /save and /cost
        self.totals = Usage()
        self._factory: LLMFactory = llm_factory or LiteLLMClient
        self._llm: LLM | None = None
        self._llm_key: tuple[Any, ...] | None = None
        self._prompt: str | None = None
        self._schemas: tuple[tuple[int, ...], list[dict[str, Any]]] | None = None

    # -- set-up ----------------------------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Import litellm in the background (called when the user enters Assistant mode)."""
        if self.config.model and self._factory is LiteLLMClient:
            warm_up()

    def client(self) -> LLM:
        """The model client for the current settings (a ``/model`` switch applies at the next question)."""
        cfg = self.config
        key = (cfg.model, cfg.api_base, cfg.api_key_value, getattr(cfg, "tool_protocol", "auto"))
        if self._llm is None or key != self._llm_key:
            self._llm = self._factory(cfg)
            self._llm_key = key
        return self._llm

    @property
    def system_prompt(self) -> str:
        if self._prompt is None:
            self._prompt = load_system_prompt().strip()
        return self._prompt

    # -- a turn ----------------------------------------------------------------------------------------------
    def ask(
        self,
        question: str,
        emit: Callable[[Event], None],
        approve: Callable[[ApprovalRequiredEvent], Approval],
    ) -> TurnResult | None:
        """Answer ``question``; ``None`` when no model can be used (an error event says why)."""
        try:
            llm = self.client()
        except LLMError as exc:
            emit(ErrorEvent(message=str(exc), kind=exc.kind))
            return None
        cfg = self.config
        mask = memoize(make_masker(cfg))
        schemas = self._tool_schemas()
        digest = self.runtime.digest()
        pinned = pinned_section(question, self.runtime, self._describe)

        limits: dict[str, Any] = {"prompt": cfg.context_tokens}

        def fit_limits() -> tuple[int, int | None]:
            """Called by the loop once litellm is loaded (the window may come from its model table)."""
            prompt, window = self._prompt_limit(llm)
            limits["prompt"] = prompt
            return prompt, window

        context = "\n\n".join(part for part in (digest, pinned) if part)
        schema_tokens = approx_tokens(schemas)  # the same schemas at every step of the turn

        def build_request(current: list[dict[str, Any]], native: bool) -> tuple[list[dict[str, Any]], int]:
            # The system message is the same bytes at every step and turn of the session (prompt caches
            # reuse it, with the tool schemas); what changes each turn (the session picture) goes with
            # the question, after the remembered turns.
            system = {"role": "system", "content": self._system_text(native, schemas)}
            first = {**current[0], "content": f"{context}\n\n## Question\n{current[0]['content']}"}
            tool_tokens = schema_tokens if native else 0
            messages, tokens = self.memory.fit(
                system, [first, *current[1:]], limits["prompt"] - tool_tokens, native=native
            )
            return mask_messages(messages, mask), tokens + tool_tokens

        counter = getattr(llm, "count_tokens", None)
        env = TurnEnv(
            llm=llm,
            emit=emit,
            run_tool=lambda name, args: self.runtime.call(name, args),
            approve=approve,
            build_request=build_request,
            tool_schemas=schemas,
            max_steps=cfg.max_steps,
            turn_timeout=cfg.turn_timeout,
            request_timeout=cfg.request_timeout,
            context_tokens=cfg.context_tokens,
            limits=fit_limits,
            count_tokens=counter if callable(counter) else None,
            budget_left=self._budget_left,
            mask=mask,
        )
        result = run_turn(env, question)
        self.memory.add(Turn(question, result.messages, result.answer, result.native))
        self.turns.append(result)
        self.totals.prompt_tokens += result.usage.prompt_tokens
        self.totals.completion_tokens += result.usage.completion_tokens
        if result.usage.cost_usd is not None:
            self.totals.cost_usd = (self.totals.cost_usd or 0.0) + result.usage.cost_usd
        return result

    def _system_text(self, native: bool, schemas: list[dict[str, Any]]) -> str:
        if native:
            return self.system_prompt
        return f"{self.system_prompt}\n\n{describe_protocol(schemas)}"

    def _prompt_limit(self, llm: LLM) -> tuple[int, int | None]:
        """Most prompt tokens per request, and the model's window when known.

        The prompt gets the window less room for the answer (``max_tokens``, but at most a quarter of the
        window, so a small window still leaves the prompt most of it), and never more than ``context_tokens``.
        """
        cfg = self.config
        window_of = getattr(llm, "context_window", None)
        if not callable(window_of):
            return cfg.context_tokens, None
        try:
            window = int(window_of())
        except Exception:
            return cfg.context_tokens, None
        room = min(int(getattr(cfg, "max_tokens", 1024)), max(window // 4, 64))
        return max(256, min(cfg.context_tokens, window - room)), window

    def _tool_schemas(self) -> list[dict[str, Any]]:
        """The registry's tool schemas, rebuilt only when the capabilities change (pydantic is slow)."""
        from ..capabilities import all_capabilities, tool_schemas

        key = tuple(id(c) for c in all_capabilities())
        if self._schemas is None or key != self._schemas[0]:
            self._schemas = (key, tool_schemas())
        return self._schemas[1]

    def _budget_left(self) -> float | None:
        """Money left before the budget, less a typical request's cost (so the next will not overshoot)."""
        budget = self.config.budget_usd
        if budget is None:
            return None
        spent = self.totals.cost_usd or 0.0
        calls = sum(1 for turn in self.turns for step in turn.steps if step.kind == "llm" and step.ok)
        return budget - spent - (spent / calls if calls else 0.0)

    def _describe(self, ref: str) -> str:
        """A pinned variable's bounded, masked description (through the capabilities, like any tool call)."""
        result = self.runtime.call("get_repr", {"expr": ref})
        return result.text if result.ok else f"({result.error})"

    def clear(self) -> None:
        self.memory.clear()

    # -- reports for the slash commands ----------------------------------------------------------------------
    @property
    def last(self) -> TurnResult | None:
        return self.turns[-1] if self.turns else None

    def sent_json(self) -> list[str]:
        """Each request of the last turn as pretty JSON: exactly the (masked) bodies given to the provider."""
        last = self.last
        if last is None:
            return []
        return [json.dumps(body, indent=2, ensure_ascii=False) for body in last.requests]

    def trace_text(self) -> str:
        last = self.last
        if last is None:
            return "No question asked yet."
        lines = [f"Question: {last.question}"]
        for i, step in enumerate(last.steps, 1):
            mark = "" if step.ok else " ✗"
            if step.kind == "llm":
                lines.append(f"{i:>2}. model {step.name}: {step.duration_ms:,.0f} ms, {step.detail}{mark}")
            else:
                lines.append(
                    f"{i:>2}. → {step.name}({step.detail}): {step.duration_ms:,.1f} ms, "
                    f"{step.size:,} chars{mark}"
                )
        ending = (
            f"stopped by {last.stopped_by}" if last.stopped_by else ("failed" if last.error else "answered")
        )
        lines.append(f"Total {last.duration_ms:,.0f} ms, {ending}.")
        return "\n".join(lines)

    def cost_text(self) -> str:
        t = self.totals
        if not self.turns:
            return "No questions asked yet in this session."
        cost = (
            _dollars(t.cost_usd)
            if t.cost_usd is not None
            else "unknown (the model has no price in litellm's table)"
        )
        text = (
            f"{len(self.turns)} question(s): {t.prompt_tokens:,} prompt + "
            f"{t.completion_tokens:,} completion tokens; "
            f"cost {cost}."
        )
        if self.config.budget_usd is not None:
            text += f" Budget: ${self.config.budget_usd:g}."
        return text

    def transcript(self) -> str:
        """The session's questions, steps and answers as Markdown (``/save``)."""
        out = ["# pyaichat transcript", ""]
        for n, turn in enumerate(self.turns, 1):
            out += [f"## Question {n}", "", turn.question, ""]
            tools = [s for s in turn.steps if s.kind == "tool"]
            if tools:
                out.append("Steps:")
                out += [
                    f"- `{s.name}({s.detail})` → {s.size:,} chars{'' if s.ok else ' (failed)'}" for s in tools
                ]
                out.append("")
            out += ["### Answer", "", turn.answer or "(no answer)", ""]
            if turn.note:
                out += [f"_{turn.note}_", ""]
            if turn.error:
                out += [f"_Error: {turn.error}_", ""]
        return "\n".join(out)


def _dollars(amount: float) -> str:
    """Dollars with enough digits to see small amounts (a short question costs a fraction of a cent)."""
    return f"${amount:.4f}" if amount >= 0.01 else f"${amount:.6f}"


def describe_run(result: ExecResult) -> str:
    """What the model is told after the user ran a proposal (it is now the user's input ``[n]``)."""
    head = f"The user ran the proposed code as input [{result.number}]."
    if result.interrupted:
        return head + " They interrupted it before it finished."
    if not result.ok and result.error is not None:
        return head + f" It failed: {result.error.headline()}"
    parts = [head + " It succeeded."]
    if result.output.strip():
        parts.append("Output:\n" + result.output.strip()[:1500])
    if result.has_value:
        from ..capabilities.summary import one_line

        parts.append("Value: " + one_line(result.value, width=1000))  # bounded, whatever the value's size
    return "\n".join(parts)


DECLINED = "The user declined to run the proposed code; it did not run. Do not propose the same code again."
EDITING = "The user put the proposed code in their input to edit it before running; it has not run yet."
