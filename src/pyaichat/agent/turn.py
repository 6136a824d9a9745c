"""One turn: a question answered from explicit inputs, returning its ``TurnResult``.

``answer(question, inputs, front)`` takes everything it uses as values — ``Inputs``: the model client, the
conversation memory, the session picture, the tools, the MCP servers, the notes since the last answer — and
a small ``Front``: show events, put a proposal to the person, put a server's question to them. It puts
this turn's MCP tools, prompt, budget and side requests together and runs the bounded loop (``loop.Turn``).
It calls nothing back: the ``Assistant`` records the result (memory, totals, ``/trace``).

``Assistant.ask`` imports this module with the first question: the loop, the events and the model client
come with it, never at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..untrusted import Reads, span
from .budget import Budget, Limits
from .events import Event, NoticeEvent, StateEvent
from .loop import RunTool, Turn, TurnEnv
from .protocol import OutsideSchemas, Prompt, Remembered
from .side import SideRequests
from .trace import TurnResult

if TYPE_CHECKING:
    from ..capabilities.catalog import CapabilityResult
    from ..configuration.config import Config
    from ..mcptools.approval import Sample, SampledReply
    from ..mcptools.tools import ServerTools, TurnTools
    from ..proposal import Decide, Outcome, Proposal
    from .context import Memory
    from .front import Front
    from .llm import LLM, Usage


@dataclass(frozen=True, slots=True)
class Inputs:
    """What one turn is answered from (``Assistant.ask`` gathers them)."""

    llm: LLM
    config: Config  # this question's settings
    system: str  # the system prompt
    memory: Memory  # the conversation so far: the turn's history
    picture: str  # the session picture, rebuilt for this question
    pinned: str  # the variables pinned with ``@name``, described ("" when none)
    notes: Sequence[str]  # what the user's commands changed since the last answer (an ``/undo``)
    schemas: list[dict[str, Any]]  # the runtime's own tools
    run_tool: RunTool  # one call of a runtime tool (a capability where the data lives)
    servers: ServerTools | None  # the user's MCP servers (``None``: none configured)
    mask: Callable[[str], str]  # everything sent passes it (pyaichat's rules and the servers' secrets)
    spent: Usage  # what the session spent before this turn, for the money budget
    requests: int  # model requests the session made before this turn


def answer(question: str, inputs: Inputs, front: Front) -> TurnResult:
    """Answer ``question`` (see the module docstring)."""
    config, llm, mask, emit = inputs.config, inputs.llm, inputs.mask, front.emit
    reads = Reads()  # what the turn reads that looks like an instruction: named on a proposal's panel
    decide = _stamped(front.decide, reads)
    approve = decide if front.interactive else None  # an MCP call that needs the person, only where one is
    limits = Limits.of(config)
    side = SideRequests(llm, limits, mask=mask, emit=emit, spent=inputs.spent, requests=inputs.requests)
    outside = _outside_tools(inputs.servers, front, config, approve, _sampler(llm, side, emit))
    since = "## Since your last answer\n" + "\n".join(inputs.notes) if inputs.notes else ""
    # what the session holds is data (column names, reprs, cells): inside spans the model does not obey
    parts = (span(inputs.picture), since, span(inputs.pinned) if inputs.pinned else "")
    context = "\n\n".join(part for part in parts if part)
    # The system message (and the tool schemas) are the same bytes at every step and turn of the session,
    # so prompt caches reuse them; what changes each turn, the session picture, goes with the question.
    # What is said of MCP servers' tools comes after our own, so a change there keeps our part cached.
    offered = None
    note = ""
    if outside is not None and outside.offered:
        offered = OutsideSchemas(*outside.schemas(), full_tokens=config.mcp_tool_tokens)
        note = outside.system_note()
    prompt = Prompt(
        system=inputs.system,
        schemas=inputs.schemas,
        context=context,
        history=[Remembered(t.messages, t.compact()) for t in inputs.memory.turns],
        mask=mask,
        outside=offered,
        note=note,
    )
    budget = Budget(llm, limits, prompt, spent_before=inputs.spent, requests_before=inputs.requests)
    run_tool = inputs.run_tool if outside is None else _runner(inputs, outside, approve)
    env = TurnEnv(
        llm=llm,
        budget=budget,
        emit=emit,
        run_tool=run_tool,
        decide=decide,
        mask=mask,
        side=side,
        receipts=config.receipts,
        reads=reads,
        picture=mask(context),
    )
    result = Turn(env, question).run()
    if outside is not None:  # a server that failed during the turn: the model knows, now the user does
        _tell(emit, outside.servers.news())
    return result


def _stamped(decide: Decide, reads: Reads) -> Decide:
    """``decide``, with each proposal told what the turn read before it that looked like an instruction
    (the panel says so in one line)."""

    def stamped(proposal: Proposal) -> Outcome:
        if not proposal.provenance:
            proposal.provenance = reads.line()
        return decide(proposal)

    return stamped


def _runner(inputs: Inputs, outside: TurnTools, approve: Decide | None) -> RunTool:
    """Tool calls of this turn: an MCP server's tools through ``outside``, the rest as the runtime's."""

    def run_tool(name: str, args: dict[str, Any], *, images: bool = False) -> CapabilityResult:
        if outside.handles(name):
            return outside.run(name, args, images=images, approve=approve)
        result = inputs.run_tool(name, args, images=images)
        if (result.error or "").startswith("There is no capability named"):  # say what was offered: MCP's too
            ours = [s["function"]["name"] for s in inputs.schemas]
            return result.model_copy(update={"error": outside.unknown(name, ours)})
        return result

    return run_tool


def _sampler(llm: LLM, side: SideRequests, emit: Callable[[Event], None]) -> Sample:
    """How this turn answers a server's sampling request the person approved: the turn's own model,
    through ``side`` (recorded in the turn; see ``agent.side``)."""

    def sample(messages: list[dict[str, Any]], max_tokens: int, server: str) -> SampledReply:
        from ..mcptools.approval import SampledReply  # only with a sampling request

        reply = side.complete(messages, max_tokens, label=f"the MCP server {server!r}")
        usage = reply.usage
        first = (reply.text.strip().splitlines() or [""])[0]
        first = first if len(first) <= 100 else first[:99] + "…"
        emit(
            NoticeEvent(
                text=f"Your model answered the MCP server {server!r} "
                f"({usage.completion_tokens:,} tokens): {first}"
            )
        )
        return SampledReply(
            text=reply.text,
            model=llm.model,
            stop_reason="maxTokens" if reply.finish_reason == "length" else "endTurn",
            tokens=usage.prompt_tokens + usage.completion_tokens,
        )

    return sample


def _outside_tools(
    servers: ServerTools | None, front: Front, config: Config, approve: Decide | None, sample: Sample
) -> TurnTools | None:
    """The MCP tools for this turn (servers still starting are waited for, within their deadlines); each
    failure is told once, as a warning before the answer."""
    if servers is None:
        return None
    emit = front.emit
    servers.warm_up()
    waiting = servers.manager.pending()
    if waiting:
        emit(StateEvent(state="starting", detail=f"starting MCP servers: {', '.join(waiting)}"))
    turn = servers.for_turn(
        can_approve=approve is not None,
        config=config,
        approve=approve,
        answer_question=front.answer_question,
        sample=sample,
        tell=lambda sentence: emit(NoticeEvent(text=sentence, level="warning")),
    )
    _tell(emit, turn.news)
    return turn


def _tell(emit: Callable[[Event], None], sentences: list[str]) -> None:
    for sentence in sentences:
        emit(NoticeEvent(text=f"{sentence} The assistant goes on without it.", level="warning"))
