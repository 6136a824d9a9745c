"""One question, put together and answered: the model client, this turn's tools (the capabilities and the
MCP servers'), the masking, the prompt and its budget; then the bounded loop (``loop.run_turn``).

``Assistant.ask`` imports this module with the first question: the loop, pydantic's events and the model
client come with it, never at start-up (making an ``Assistant`` is cheap).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import LLMError
from ..untrusted import Reads, span
from .budget import Budget, Limits, OutsideSchemas, Prompt, Remembered
from .context import Turn, make_masker, mask_messages, memoize, pinned_section
from .events import ErrorEvent, Event, NoticeEvent, StateEvent
from .llm import LLM
from .loop import ToolOutcome, TurnEnv, run_turn
from .protocol import images_as_sizes
from .side import SideRequests
from .trace import TurnResult

if TYPE_CHECKING:
    from ..config import Config
    from ..mcptools.approval import Ask, Completion, Sample
    from ..mcptools.tools import ServerTools, TurnTools
    from ..proposal import Decide, Outcome, Proposal
    from .context import Memory
    from .llm import Usage


class Assistant(Protocol):
    """What a question needs of the session's assistant (``assistant.Assistant``): what it remembers and
    counts, its model client, and its view of the session."""

    notes: list[str]
    requests: int

    @property
    def memory(self) -> Memory: ...

    @property
    def totals(self) -> Usage: ...

    @property
    def system_prompt(self) -> str: ...

    @property
    def servers(self) -> ServerTools | None: ...

    def client(self, config: Config | None = None) -> LLM: ...

    def ended(self, result: TurnResult) -> None: ...

    def picture(self) -> str: ...

    def describe(self, ref: str) -> str: ...

    def tool_schemas(self) -> list[dict[str, Any]]: ...

    def look(self, name: str, args: dict[str, Any], *, images: bool = False) -> ToolOutcome: ...


def answer(
    assistant: Assistant,
    question: str,
    emit: Callable[[Event], None],
    decide: Decide,
    *,
    config: Config,
    interactive: bool = False,
    ask_person: Ask | None = None,
) -> TurnResult | None:
    """``Assistant.ask``: answer ``question`` with ``config``; ``None`` when no model can be used (an error
    event says why)."""
    reads = Reads()  # what the turn reads that looks like an instruction: named on a proposal's panel
    decide = _stamped(decide, reads)
    approve_tool = decide if interactive else None  # an MCP call that needs the person, only where one is
    try:
        llm = assistant.client(config)
    except LLMError as exc:
        emit(ErrorEvent(message=str(exc), kind=exc.kind))
        return None
    side: list[SideRequests] = []  # made with the budget, below; a server's sampling goes through it
    outside = _outside_tools(
        assistant,
        emit,
        config,
        can_approve=approve_tool is not None,
        approve=approve_tool,
        ask=ask_person,
        sample=_sampler(llm, side, emit),
    )
    # pyaichat's masking rules and, with MCP servers, every value their entries gave them
    mask = memoize(outside.mask if outside is not None else make_masker(config))
    told, assistant.notes = assistant.notes, []
    since = "## Since your last answer\n" + "\n".join(told) if told else ""
    # what the session holds is data (column names, reprs, cells): inside spans the model does not obey
    pinned = pinned_section(question, assistant.describe)
    parts = (span(assistant.picture()), since, span(pinned) if pinned else "")
    context = "\n\n".join(part for part in parts if part)
    # The system message (and the tool schemas) are the same bytes at every step and turn of the session,
    # so prompt caches reuse them; what changes each turn, the session picture, goes with the question.
    # What is said of MCP servers' tools comes after our own, so a change there keeps our part cached.
    offered = None
    note = ""
    if outside is not None and outside.offered:
        offered = OutsideSchemas(*outside.schemas(), full_tokens=config.mcp_tool_tokens)
        note = outside.system_note()
    memory = assistant.memory
    prompt = Prompt(
        system=assistant.system_prompt,
        schemas=assistant.tool_schemas(),
        context=context,
        history=[Remembered(t.messages, t.compact()) for t in memory.turns],
        mask=mask,
        outside=offered,
        note=note,
    )
    budget = Budget(
        llm, Limits.of(config), prompt, spent_before=assistant.totals, requests_before=assistant.requests
    )
    side.append(SideRequests(llm, budget, mask=mask, emit=emit))
    run_tool = assistant.look if outside is None else _runner(assistant, outside, approve_tool)
    env = TurnEnv(
        llm=llm,
        budget=budget,
        emit=emit,
        run_tool=run_tool,
        decide=decide,
        mask=mask,
        side=side[0],
        receipts=config.receipts,
        reads=reads,
        picture=mask(context),
    )
    result = run_turn(env, question)
    if outside is not None:  # a server that failed during the turn: the model knows, now the user does
        _tell(emit, outside.servers.news())
    # An old turn's pictures are not worth their tokens: memory keeps their sizes only.
    memory.add(Turn(question, images_as_sizes(result.messages, as_text=True), result.answer))
    # sized as the budget sizes a remembered turn: masked (a redacted secret may be shorter than it was)
    memory.fit(config.context_tokens, lambda messages: llm.count_tokens(mask_messages(messages, mask), None))
    assistant.ended(result)
    return result


def _stamped(decide: Decide, reads: Reads) -> Decide:
    """``decide``, with each proposal told what the turn read before it that looked like an instruction
    (the panel says so in one line)."""

    def stamped(proposal: Proposal) -> Outcome:
        if not proposal.provenance:
            proposal.provenance = reads.line()
        return decide(proposal)

    return stamped


def _runner(
    assistant: Assistant, outside: TurnTools, approve_tool: Decide | None
) -> Callable[..., ToolOutcome]:
    """Tool calls of this turn: an MCP server's tools through ``outside``, the rest as capabilities."""

    def run_tool(name: str, args: dict[str, Any], *, images: bool = False) -> ToolOutcome:
        if outside.handles(name):
            return outside.run(name, args, images=images, approve=approve_tool)
        result = assistant.look(name, args, images=images)
        error = getattr(result, "error", None) or ""
        if error.startswith("There is no capability named"):  # say what was offered: MCP tools too
            ours = [s["function"]["name"] for s in assistant.tool_schemas()]
            return result.model_copy(update={"error": outside.unknown(name, ours)})
        return result

    return run_tool


def _sampler(llm: LLM, side: list[SideRequests], emit: Callable[[Event], None]) -> Sample:
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
    assistant: Assistant,
    emit: Callable[[Event], None],
    config: Config,
    *,
    can_approve: bool,
    approve: Decide | None = None,
    ask: Ask | None = None,
    sample: Sample | None = None,
) -> TurnTools | None:
    """The MCP tools for this turn (servers still starting are waited for, within their deadlines); each
    failure is told once, as a warning before the answer."""
    servers = assistant.servers
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
    _tell(emit, turn.news)
    return turn


def _tell(emit: Callable[[Event], None], sentences: list[str]) -> None:
    for sentence in sentences:
        emit(NoticeEvent(text=f"{sentence} The assistant goes on without it.", level="warning"))
