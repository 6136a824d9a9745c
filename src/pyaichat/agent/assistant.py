"""The session's assistant: one object per session that answers questions and remembers the conversation.

The composition root (``assemble``) makes one and hands it to the ``Controller``, which calls ``ask(question,
front, config=...)``; everything front ends show comes back as events through a ``Front``. It
holds no terminal code. It also keeps what ``/trace``, ``/sent`` and ``/cost`` report, and what ``--resume``
brings back (``memory_state``, ``restore``); ``tell`` gives it a note for the model's next question (an
``/undo``).

Making one is cheap, so every session has its real assistant from the start: this module imports nothing
heavy, and a question brings in the rest (``turn``: the loop, the events, the model client;
litellm itself loads in the background once Assistant mode is entered, ``warm_up``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..configuration.config import Config, Settings
from ..errors import LLMError
from ..runtime import Runtime, as_runtime
from .front import Front as Front  # the controller names it here (it may import the assistant)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from ..mcptools.tools import ServerTools
    from ..session import Session
    from .context import Memory
    from .llm import LLM, Loader, Usage
    from .trace import TurnResult

LLMFactory = Callable[[Config], "LLM"]


class Assistant:
    """Answers questions about the user's session (a ``Runtime``, or a ``Session`` in this process).

    ``settings`` holds the session's current configuration (the controller changes it; a bare ``Config`` gets
    a holder of its own); a question asked with ``ask(..., config=...)`` uses that one instead, for that
    question only."""

    def __init__(
        self,
        settings: Settings | Config,
        runtime: Runtime | Session,
        *,
        llm_factory: LLMFactory | None = None,
        loader: Loader | None = None,
    ) -> None:
        self.settings = Settings.of(settings)
        self.runtime = as_runtime(runtime)
        self._memory: Memory | None = None  # made with the first turn (or ``restore``)
        # Of the finished turns only the last is kept whole (for /trace and /sent); the session's totals are
        # added up as turns end. /save reads the controller's journal, not these.
        self.last: TurnResult | None = None
        self.questions = 0
        self._totals: Usage | None = None  # tokens and cost of the whole session
        self.requests = 0  # model requests of the whole session that got a reply
        self.notes: list[str] = []  # what the user's commands changed since the last question (an /undo)
        self._factory = llm_factory  # None: litellm's client
        self._loader = loader  # None: litellm's own loader
        self._give_way: Callable[[], bool] | None = None  # the front end's "the person is busy"
        self._llm: LLM | None = None
        self._llm_key: tuple[Any, ...] | None = None
        self._prompt: str | None = None
        self._servers: ServerTools | None = None

    @property
    def config(self) -> Config:
        return self.settings.current()

    @property
    def memory(self) -> Memory:
        """The conversation so far (``context.Memory``)."""
        if self._memory is None:
            from .context import Memory  # with the first question or /resume

            self._memory = Memory()
        return self._memory

    @property
    def totals(self) -> Usage:
        if self._totals is None:
            from .llm import Usage  # with the first question

            self._totals = Usage()
        return self._totals

    # -- set-up ----------------------------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Start loading litellm and the MCP servers in the background (called when the user enters
        Assistant mode)."""
        self.preload()
        if self.config.model and self.servers is not None:
            self.servers.warm_up()

    def give_way_to(self, busy: Callable[[], bool]) -> None:
        """litellm's background load pauses while ``busy()`` says the person is busy (``Loader.give_way_to``):
        said once by a front end that draws a prompt. Nothing loads here, nor is the loader imported (at
        start-up): it is told when it is first needed."""
        self._give_way = busy

    def preload(self) -> None:
        """Start loading litellm (only: MCP servers start when Assistant mode or a question needs them), when
        a model is configured; called by a front end whose prompt has been idle a moment."""
        if self.config.model and self._factory is None:
            self._litellm().start()

    def _litellm(self) -> Loader:
        if self._loader is None:
            from .llm import LITELLM  # the loader, not litellm: that loads in its background thread

            self._loader = LITELLM
        if self._give_way is not None:
            self._loader.give_way_to(self._give_way)
        return self._loader

    @property
    def servers(self) -> ServerTools | None:
        """The user's MCP servers as tools (``None`` when none is configured); nothing starts until a
        question needs them (or ``warm_up``)."""
        cfg = self.config
        if self._servers is None and (cfg.mcp_servers or cfg.mcp_config):
            from ..mcptools.tools import ServerTools  # only with MCP servers configured

            self._servers = ServerTools(cfg, session=self.runtime.audit_key())
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
            if self._factory is None:
                from .llm import LiteLLMClient  # with the first question; litellm itself loads on its own

                self._llm = LiteLLMClient(cfg)
            else:
                self._llm = self._factory(cfg)
            self._llm_key = key
        return self._llm

    @property
    def system_prompt(self) -> str:
        if self._prompt is None:
            from .context import load_system_prompt  # with the first question

            self._prompt = load_system_prompt().strip()
        return self._prompt

    # -- a turn ----------------------------------------------------------------------------------------------
    def ask(self, question: str, front: Front, *, config: Config | None = None) -> TurnResult | None:
        """Answer ``question`` with ``config`` (default: the current settings); ``None`` when no model can be
        used (an error event says why). The turn (``agent.turn``) shows its events through ``front`` and puts
        whatever is proposed on the way to ``front.decide`` (the proposal path); this records its result."""
        from .context import Turn, make_masker, mask_messages, memoize, pinned_section  # with a question
        from .events import ErrorEvent
        from .protocol import images_as_sizes
        from .turn import Inputs, answer  # the loop, the client, the events: with the first question

        cfg = config or self.config
        try:
            llm = self.client(cfg)
        except LLMError as exc:
            front.emit(ErrorEvent(message=str(exc), kind=exc.kind))
            return None
        servers = self.servers
        # pyaichat's masking rules and, with MCP servers, every value their entries gave them
        mask = memoize(make_masker(cfg) if servers is None else lambda text: servers.mask(text, cfg))
        notes, self.notes = self.notes, []
        inputs = Inputs(
            llm=llm,
            config=cfg,
            system=self.system_prompt,
            memory=self.memory,
            picture=self.runtime.picture(),  # the runtime marks an error new since the previous question
            pinned=pinned_section(question, self._describe),
            notes=notes,
            schemas=self.tool_schemas(),
            run_tool=self.runtime.call,
            servers=servers,
            mask=mask,
            spent=self.totals,
            requests=self.requests,
        )
        result = answer(question, inputs, front)
        # An old turn's pictures are not worth their tokens: memory keeps their sizes only.
        self.memory.add(Turn(question, images_as_sizes(result.messages, as_text=True), result.answer))
        # sized as the budget sizes a remembered turn: masked (a redacted secret may be shorter than it was)
        self.memory.fit(
            cfg.context_tokens, lambda messages: llm.count_tokens(mask_messages(messages, mask), None)
        )
        self.questions += 1
        self._totals = self.totals + result.usage
        self.requests += result.requests_made
        self.last = result
        return result

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The tools of the runtime, as it describes them where they run (a kernel has its own plugins)."""
        return self.runtime.tools().schemas()

    def _describe(self, ref: str) -> str:
        """A pinned variable's bounded, masked description (through the capabilities, like any tool call)."""
        result = self.runtime.call("get_repr", {"expr": ref})
        return result.text if result.ok else f"({result.error})"

    def clear(self) -> None:
        if self._memory is not None:
            self._memory.clear()

    # -- what lasts: told with the next question, kept for --resume --------------------------------------
    def tell(self, note: str) -> None:
        """Tell the model ``note`` with the next question (what the user's commands changed: an ``/undo``)."""
        self.notes.append(note)

    def memory_state(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The conversation memory as plain data (``persist.resume``'s turn shape) and the notes not yet
        told, for the resume file."""
        kept = self._memory.turns if self._memory is not None else []
        turns = [{"question": t.question, "messages": t.messages, "answer": t.answer} for t in kept]
        return turns, list(self.notes)

    def restore(self, turns: Iterable[Mapping[str, Any]], notes: Iterable[str]) -> None:
        """Put a resumed session's conversation (``memory_state``'s shape) before this one's, and its untold
        notes before this one's."""
        from .context import Turn  # with /resume

        self.memory.turns[:0] = [Turn(t["question"], list(t["messages"]), t["answer"]) for t in turns]
        self.notes[:0] = list(notes)

    # -- reports for the slash commands ----------------------------------------------------------------------
    def sent_json(self) -> list[str]:
        """Each request of the last turn as pretty JSON: exactly the (masked) bodies given to the provider."""
        import json  # with /sent

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
