"""The assistant facade: one object per session that answers questions and remembers the conversation.

The ``Controller`` is given one at construction (the entry points make it) and calls ``ask(question, emit,
approve, config=...)``; everything front ends show comes back as events. It holds no terminal code. It also
keeps what ``/trace``, ``/sent`` and ``/cost`` report, and what ``--resume`` brings back (``memory_state``,
``restore``); ``tell`` gives it a note for the model's next question (an ``/undo``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import LLMError
from ..runtime import Runtime, as_runtime
from .budget import Budget, Limits, OutsideSchemas, Prompt, Remembered
from .context import (
    Memory,
    Turn,
    load_system_prompt,
    make_masker,
    mask_messages,
    memoize,
    pinned_section,
)
from .events import ApprovalRequiredEvent, ErrorEvent, Event, NoticeEvent, StateEvent
from .llm import LITELLM, LLM, LiteLLMClient, Loader, Usage
from .loop import Approval, ToolOutcome, TurnEnv, run_turn
from .protocol import images_as_sizes
from .side import SideRequests
from .trace import TurnResult

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from ..config import Config
    from ..mcptools.approval import Approve, Ask, Completion, Sample
    from ..mcptools.offer import TurnTools
    from ..mcptools.tools import ServerTools
    from ..session import Session

LLMFactory = Callable[["Config"], LLM]


class Assistant:
    """Answers questions about the user's session (a ``Runtime``, or a ``Session`` in this process).

    ``config`` is the session's current configuration: its owner (the controller) gives it a new one when it
    changes; a question asked with ``ask(..., config=...)`` uses that one instead, for that question only."""

    def __init__(
        self,
        config: Config,
        runtime: Runtime | Session,
        *,
        llm_factory: LLMFactory | None = None,
        loader: Loader = LITELLM,
    ) -> None:
        self.config = config
        self.runtime = as_runtime(runtime)
        self.memory = Memory()
        # Of the finished turns only the last is kept whole (for /trace and /sent); the session's totals are
        # added up as turns end. /save reads the controller's journal, not these.
        self.last: TurnResult | None = None
        self.questions = 0
        self.totals = Usage()  # tokens and cost of the whole session
        self.requests = 0  # model requests of the whole session that got a reply
        self.notes: list[str] = []  # what the user's commands changed since the last question (an /undo)
        self._factory: LLMFactory = llm_factory or LiteLLMClient
        self._loader = loader
        self._llm: LLM | None = None
        self._llm_key: tuple[Any, ...] | None = None
        self._prompt: str | None = None
        self._servers: ServerTools | None = None

    # -- set-up ----------------------------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Start loading litellm and the MCP servers in the background (called when the user enters
        Assistant mode)."""
        if self.config.model and self._factory is LiteLLMClient:
            self._loader.start()
        if self.config.model and self.servers is not None:
            self.servers.warm_up()

    @property
    def servers(self) -> ServerTools | None:
        """The user's MCP servers as tools (``None`` when none is configured); nothing starts until a
        question needs them (or ``warm_up``)."""
        cfg = self.config
        if self._servers is None and (cfg.mcp_servers or cfg.mcp_config):
            from ..mcptools.tools import ServerTools  # only with MCP servers configured

            self._servers = ServerTools(cfg, session=getattr(self.runtime, "session", self.runtime))
        return self._servers

    def close(self) -> None:
        """Stop what the assistant started (the MCP servers)."""
        if self._servers is not None:
            self._servers.close()

    def client(self, config: Config | None = None) -> LLM:
        """The model client for ``config`` (default: the current settings), made anew when a setting it reads
        changes (a ``/model`` switch applies at the next question)."""
        cfg = config or self.config
        key = (
            cfg.model,
            cfg.api_base,
            cfg.api_key_value,
            cfg.tool_protocol,
            cfg.temperature,
            cfg.seed,
            cfg.context_window,
        )
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
        *,
        config: Config | None = None,
        approve_tool: Approve | None = None,
        ask_person: Ask | None = None,
    ) -> TurnResult | None:
        """Answer ``question`` with ``config`` (default: the current settings); ``None`` when no model can be
        used (an error event says why). ``approve_tool`` asks the person about a call of an MCP tool that does
        not run at once, and about a server's sampling request (``None``: no one can be asked, so only those
        that do are offered); ``ask_person`` puts a server's question to them (elicitation)."""
        config = config or self.config
        try:
            llm = self.client(config)
        except LLMError as exc:
            emit(ErrorEvent(message=str(exc), kind=exc.kind))
            return None
        side: list[SideRequests] = []  # made with the budget, below; a server's sampling goes through it
        outside = self._outside_tools(
            emit,
            config,
            can_approve=approve_tool is not None,
            approve=approve_tool,
            ask=ask_person,
            sample=self._sampler(llm, side, emit),
        )
        # pyaichat's masking rules and, with MCP servers, every value their entries gave them
        mask = memoize(outside.mask if outside is not None else make_masker(config))
        told, self.notes = self.notes, []
        since = "## Since your last answer\n" + "\n".join(told) if told else ""
        context = "\n\n".join(
            part for part in (self._picture(), since, pinned_section(question, self._describe)) if part
        )
        # The system message (and the tool schemas) are the same bytes at every step and turn of the session,
        # so prompt caches reuse them; what changes each turn, the session picture, goes with the question.
        # What is said of MCP servers' tools comes after our own, so a change there keeps our part cached.
        offered = None
        note = ""
        if outside is not None and outside.offered:
            offered = OutsideSchemas(*outside.schemas(), full_tokens=config.mcp_tool_tokens)
            note = outside.system_note()
        prompt = Prompt(
            system=self.system_prompt,
            schemas=self._tool_schemas(),
            context=context,
            history=[Remembered(t.messages, t.compact()) for t in self.memory.turns],
            mask=mask,
            outside=offered,
            note=note,
        )
        budget = Budget(
            llm, Limits.of(config), prompt, spent_before=self.totals, requests_before=self.requests
        )
        side.append(SideRequests(llm, budget, mask=mask, emit=emit))
        run_tool = self._look if outside is None else self._runner(outside, approve_tool)
        env = TurnEnv(
            llm=llm, budget=budget, emit=emit, run_tool=run_tool, approve=approve, mask=mask, side=side[0]
        )
        result = run_turn(env, question)
        if outside is not None:  # a server that failed during the turn: the model knows, now the user does
            self._tell(emit, outside.servers.news())
        # An old turn's pictures are not worth their tokens: memory keeps their sizes only.
        self.memory.add(Turn(question, images_as_sizes(result.messages, as_text=True), result.answer))
        # sized as the budget sizes a remembered turn: masked (a redacted secret may be shorter than it was)
        self.memory.fit(
            config.context_tokens, lambda messages: llm.count_tokens(mask_messages(messages, mask), None)
        )
        self._ended(result)
        return result

    def _ended(self, result: TurnResult) -> None:
        """Count a finished turn into the session's totals; it becomes the one kept whole."""
        self.questions += 1
        self.totals = self.totals + result.usage
        self.requests += result.requests_made
        self.last = result

    def _runner(self, outside: TurnTools, approve_tool: Approve | None) -> Callable[..., ToolOutcome]:
        """Tool calls of this turn: an MCP server's tools through ``outside``, the rest as capabilities."""

        def run_tool(name: str, args: dict[str, Any], *, images: bool = False) -> ToolOutcome:
            if outside.handles(name):
                return outside.run(name, args, images=images, approve=approve_tool)
            return self._look(name, args, images=images)

        return run_tool

    def _sampler(self, llm: LLM, side: list[SideRequests], emit: Callable[[Event], None]) -> Sample:
        """How this turn answers a server's sampling request the person approved: the turn's own model,
        through ``side`` (recorded in the turn; see ``agent.side``)."""

        def sample(messages: list[dict[str, Any]], max_tokens: int, server: str) -> Completion:
            from ..mcptools.approval import Completion  # only with a sampling request

            reply = side[0].complete(messages, max_tokens, label=f"the MCP server {server!r}")
            usage = reply.usage
            first = (reply.text.strip().splitlines() or [""])[0]
            first = first if len(first) <= 100 else first[:99] + "…"
            emit(
                NoticeEvent(
                    text=f"Your model answered the MCP server {server!r} "
                    f"({usage.completion_tokens:,} tokens): {first}"
                )
            )
            return Completion(
                text=reply.text,
                model=llm.model,
                stop_reason="maxTokens" if reply.finish_reason == "length" else "endTurn",
                tokens=usage.prompt_tokens + usage.completion_tokens,
            )

        return sample

    def _outside_tools(
        self,
        emit: Callable[[Event], None],
        config: Config,
        *,
        can_approve: bool,
        approve: Approve | None = None,
        ask: Ask | None = None,
        sample: Sample | None = None,
    ) -> TurnTools | None:
        """The MCP tools for this turn (servers still starting are waited for, within their deadlines); each
        failure is told once, as a warning before the answer."""
        servers = self.servers
        if servers is None:
            return None
        servers.warm_up()
        waiting = servers.manager.pending()
        if waiting:
            emit(StateEvent(state="starting", detail=f"starting MCP servers: {', '.join(waiting)}"))
        turn = servers.for_turn(
            can_approve=can_approve,
            config=config,
            approve=approve,
            ask=ask,
            sample=sample,
            tell=lambda sentence: emit(NoticeEvent(text=sentence, level="warning")),
        )
        self._tell(emit, turn.news)
        return turn

    @staticmethod
    def _tell(emit: Callable[[Event], None], sentences: list[str]) -> None:
        for sentence in sentences:
            emit(NoticeEvent(text=f"{sentence} The assistant goes on without it.", level="warning"))

    def _tool_schemas(self) -> list[dict[str, Any]]:
        """The tools of the runtime, as it describes them where they run (a kernel has its own plugins)."""
        return self.runtime.tools().schemas()

    # -- the session, seen only through these ----------------------------------------------------------------
    def _look(self, name: str, args: dict[str, Any], *, images: bool = False) -> ToolOutcome:
        """One tool call: a capability where the data lives (bounded, masked, audited)."""
        return self.runtime.call(name, args, images=images)

    def _picture(self) -> str:
        """The session picture for this question (the runtime marks an error new since the previous one)."""
        return self.runtime.picture()

    def _describe(self, ref: str) -> str:
        """A pinned variable's bounded, masked description (through the capabilities, like any tool call)."""
        result = self.runtime.call("get_repr", {"expr": ref})
        return result.text if result.ok else f"({result.error})"

    def clear(self) -> None:
        self.memory.clear()

    # -- what lasts: told with the next question, kept for --resume --------------------------------------
    def tell(self, note: str) -> None:
        """Tell the model ``note`` with the next question (what the user's commands changed: an ``/undo``)."""
        self.notes.append(note)

    def memory_state(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The conversation memory as plain data (``persist.resume``'s turn shape) and the notes not yet
        told, for the resume file."""
        turns = [
            {"question": t.question, "messages": t.messages, "answer": t.answer} for t in self.memory.turns
        ]
        return turns, list(self.notes)

    def restore(self, turns: Iterable[Mapping[str, Any]], notes: Iterable[str]) -> None:
        """Put a resumed session's conversation (``memory_state``'s shape) before this one's, and its untold
        notes before this one's."""
        self.memory.turns[:0] = [Turn(t["question"], list(t["messages"]), t["answer"]) for t in turns]
        self.notes[:0] = list(notes)

    # -- reports for the slash commands ----------------------------------------------------------------------
    def sent_json(self) -> list[str]:
        """Each request of the last turn as pretty JSON: exactly the (masked) bodies given to the provider."""
        last = self.last
        if last is None:
            return []
        return [json.dumps(body, indent=2, ensure_ascii=False) for body in last.requests]

    def sent_labels(self) -> list[str]:
        """For each request of the last turn, who it was made for ("" for the turn itself; "the MCP server
        'fault'" for a server's sampling request)."""
        last = self.last
        if last is None:
            return []
        return [last.side_requests.get(i, "") for i in range(len(last.requests))]

    def trace_text(self) -> str:
        last = self.last
        if last is None:
            return "No question asked yet."
        lines = [f"Question: {last.question}"]
        for i, step in enumerate(last.steps, 1):
            mark = ("" if step.ok else " ✗") + (f" ({step.note})" if step.note else "")
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
        if not self.questions:
            return "No questions asked yet in this session."
        cost = (
            _dollars(t.cost_usd)
            if t.cost_usd is not None
            else "unknown (the model has no price in litellm's table)"
        )
        about = " (some counted by pyaichat: a request cut short reports no usage of its own)"
        text = (
            f"{self.questions} question(s): {t.prompt_tokens:,} prompt + "
            f"{t.completion_tokens:,} completion tokens{about if t.estimated else ''}; "
            f"cost {cost}."
        )
        if self.config.budget_usd is not None:
            text += f" Budget: ${self.config.budget_usd:g}."
        if t.prefix_tokens:
            read = t.cached_tokens
            cached = f"; the provider read {read:,} from its prompt cache" if read else ""
            text += (
                f"\nPrompt tokens: about {t.prefix_tokens:,} the stable prefix (system prompt and tools, the "
                f"same in every request) and {t.prompt_tokens - t.prefix_tokens:,} the rest (pictures, "
                f"questions, conversation, tool results){cached}."
            )
        return text

    def sent_tokens(self) -> str:
        """The prompt tokens of each request of the last turn, the stable prefix apart from the rest (for
        ``/sent``); "" when the provider counted none."""
        last = self.last
        if last is None:
            return ""
        steps = [s for s in last.steps if s.kind == "llm"]  # one per request, in the same order
        lines = []
        for n, step in enumerate(steps, 1):
            u = step.usage
            label = last.side_requests.get(n - 1)
            if u is None or not u.prompt_tokens:
                lines.append(f"  request {n}: not counted (no reply)")
                continue
            if label:  # made for someone else: no prefix of ours
                lines.append(f"  request {n} (for {label}): {u.prompt_tokens:,}")
                continue
            parts = f"{u.prefix_tokens:,} stable prefix + {u.prompt_tokens - u.prefix_tokens:,} the rest"
            cached = f"; {u.cached_tokens:,} read from the provider's cache" if u.cached_tokens else ""
            lines.append(f"  request {n}: {u.prompt_tokens:,} = {parts}{cached}")
        if not any(s.usage is not None and s.usage.prefix_tokens for s in steps):
            return ""
        head = (
            "Prompt tokens per request, as the provider counted them (the stable prefix, about: the system "
            "prompt and the tools, the same in every request, which prompt caches reuse):"
        )
        return "\n".join([head, *lines])


def _dollars(amount: float) -> str:
    """Dollars with enough digits to see small amounts (a short question costs a fraction of a cent)."""
    return f"${amount:.4f}" if amount >= 0.01 else f"${amount:.6f}"
