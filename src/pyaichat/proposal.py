"""One vocabulary for whatever is proposed to the person: a ``Proposal`` (code for the session, or a call of
an outside tool that needs their approval), the person's ``Decision`` and the proposal's ``Outcome``, with
what a model is told of it.

Every proposer speaks it: the assistant's ``propose_code`` (``agent.loop``), a tool call or a sampling
request of one of the user's MCP servers (``mcptools``) and an outside agent's code (``mcpserve``). Each is
handed a ``decide(proposal) -> Outcome`` callable (the proposal service's, ``proposals.Proposals.decide``)
or submits to the service from another thread. Plain values, below everything that uses them: this module
imports nothing of pyaichat.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .records import ExecResult

ASSISTANT = "assistant"  # the source of our own model's proposals

Decision = Literal["run", "edit", "no", "shown", "session", "project"]
"""The person's answer: run it, edit it first, no; "shown": the front end showed it but cannot ask;
"session"/"project": run it, and allow this tool from now on for the session or the project (offered only
for a proposal whose ``choices`` are ``scopes``)."""

Choices = Literal["", "scopes", "accept"]
"""What the panel asks: "" run / edit / no; "scopes" run once / this session / this project / edit / no (an
MCP tool call); "accept" accept / no (changed tool definitions: "run" accepts them)."""

Status = Literal["ran", "edited", "declined", "placed", "unanswered", "not_asked", "failed"]

_ids = itertools.count(1)


class Proposal:
    """Something someone proposes to do to the session, waiting for the person's decision."""

    __slots__ = (
        "arguments",
        "call",
        "call_id",
        "choices",
        "code",
        "explanation",
        "kind",
        "provenance",
        "source",
        "title",
        "tool",
        "unseen",
    )

    def __init__(
        self,
        kind: Literal["code", "tool"],
        *,
        code: str = "",
        explanation: str = "",
        source: str = ASSISTANT,
        tool: str = "",
        arguments: Mapping[str, Any] | None = None,
        call: Callable[[dict[str, Any]], str] | None = None,
        call_id: str | None = None,
        title: str = "",
        provenance: str = "",
        choices: Choices = "",
    ) -> None:
        if kind == "code" and not code.strip():
            raise ValueError("a code proposal needs code")
        if kind == "tool" and (not tool or call is None):
            raise ValueError("a tool proposal needs the tool's name and a call that runs it")
        self.kind = kind
        self.code = code
        self.explanation = explanation
        self.source = source or ASSISTANT
        self.tool = tool
        self.arguments = dict(arguments or {})
        self.call = call
        self.call_id = call_id or f"proposal-{next(_ids)}"
        self.title = title  # the panel's title, when the default one would not say what it is
        # what the proposer read just before that looked like an instruction (``untrusted.Reads``): one
        # line for the panel, "" when nothing did
        self.provenance = provenance
        self.choices: Choices = choices if kind == "tool" else ""
        # what its preview could not see, as whoever proposed it is told (set by the preview; "" for nothing)
        self.unseen = ""

    @classmethod
    def of_code(
        cls,
        code: str,
        explanation: str = "",
        *,
        source: str = ASSISTANT,
        call_id: str | None = None,
        provenance: str = "",
    ) -> Proposal:
        """Python code to run in the session as the person's input."""
        return cls(
            "code", code=code, explanation=explanation, source=source, call_id=call_id, provenance=provenance
        )

    @classmethod
    def of_tool(
        cls,
        tool: str,
        arguments: Mapping[str, Any],
        call: Callable[[dict[str, Any]], str],
        *,
        source: str,
        explanation: str = "",
        call_id: str | None = None,
        title: str = "",
        choices: Choices = "",
    ) -> Proposal:
        """A call of an outside tool: ``call(arguments)`` runs it (on the front end's thread) and returns its
        result as text; an exception from it is the outcome ``failed``. ``title``: the panel's, for what is
        not a plain tool call (an MCP server's sampling request)."""
        return cls(
            "tool",
            tool=tool,
            arguments=arguments,
            call=call,
            source=source,
            explanation=explanation,
            call_id=call_id,
            title=title,
            choices=choices,
        )

    @property
    def outside(self) -> bool:
        """Proposed by an outside client, not by our assistant."""
        return self.source != ASSISTANT

    def __repr__(self) -> str:
        what = self.tool if self.kind == "tool" else self.code.strip().splitlines()[0][:40]
        return f"Proposal({self.kind}, {what!r}, source={self.source!r}, call_id={self.call_id!r})"


class Outcome:
    """What became of a proposal, for whoever proposed it (the assistant's loop, an outside client)."""

    __slots__ = (
        "arguments",
        "code",
        "error",
        "input_number",
        "output",
        "preview",
        "proposal",
        "result",
        "scope",
        "status",
    )

    def __init__(
        self,
        proposal: Proposal,
        status: Status,
        *,
        code: str = "",
        arguments: dict[str, Any] | None = None,
        output: str = "",
        preview: str = "",
        error: str | None = None,
        input_number: int | None = None,
        result: ExecResult | None = None,
        scope: str = "once",
    ) -> None:
        self.proposal = proposal
        self.status: Status = status
        self.code = code  # the code that ran (the person's version when edited); "" when nothing ran
        self.arguments = arguments  # a tool call's arguments as it ran
        self.output = output  # what it printed, its value or its error, bounded
        # the preview's lines as the person saw them, but for what it could not see (told in ``observation``)
        self.preview = preview
        self.error = error  # why it failed: its exception's headline, or why it could not run
        self.input_number = input_number  # the input approved code ran as
        self.result = result  # the run's full record (this process only)
        self.scope = scope  # "once", or "session"/"project": the person allowed the tool from now on

    @property
    def ran(self) -> bool:
        return self.status in ("ran", "edited")

    @property
    def decision(self) -> str:
        """The person's decision as the assistant's loop reads it: "run", "edit" or "no"."""
        if self.status in ("ran", "edited", "failed"):
            return "run"
        return "edit" if self.status == "placed" else "no"

    @property
    def observation(self) -> str:
        """What a model is told: what happened, in a few sentences, and what the preview could not see (the
        rest of the preview is the person's)."""
        p = self.proposal
        if p.kind == "tool":
            return self._tool_observation()
        told = self._code_observation()
        return f"{told}\n\n{p.unseen}" if p.unseen and self.status != "unanswered" else told

    def _code_observation(self) -> str:
        if self.status == "declined":
            return DECLINED
        if self.status == "placed":
            return EDITING
        if self.status == "not_asked":
            return NOT_ASKED
        if self.status == "unanswered":
            return "No one answered in time, so the proposal was withdrawn; the code did not run."
        if self.status == "failed":
            return f"The proposed code could not run: {self.error}"
        if self.status == "edited":
            head = f"The user edited the proposed code and ran their version as input [{self.input_number}]"
            return f"{head}:\n{self.code.rstrip()}\n{self._how_it_went()}"
        return f"The user ran the proposed code as input [{self.input_number}]. {self._how_it_went()}"

    def _how_it_went(self) -> str:
        result = self.result
        if result is not None and result.interrupted:
            return "They interrupted it before it finished."
        if self.error:
            return f"It failed: {self.error}"
        return "It succeeded." + (f"\n{self.output}" if self.output else "")

    def _tool_observation(self) -> str:
        name = self.proposal.tool
        if self.status == "declined":
            return f"The user declined the call to {name}; it did not run. Do not call it again unchanged."
        if self.status == "not_asked":
            return f"The user could not be asked here (no prompt to ask with), so {name} was not called."
        if self.status == "unanswered":
            return f"No one answered in time, so {name} was not called."
        if self.status == "failed":
            return f"The call to {name} failed: {self.error}"
        import json  # only for a tool call's outcome

        args = json.dumps(self.arguments, ensure_ascii=False, default=str)
        how = f"with the arguments they changed to {args}" if self.status == "edited" else "as proposed"
        return f"The user approved the call to {name} {how}. It returned:\n{self.output}"

    def __repr__(self) -> str:
        return f"Outcome({self.status!r}, {self.proposal!r})"


DECLINED = "The user declined to run the proposed code; it did not run. Do not propose the same code again."
EDITING = "The user put the proposed code in their input to edit it before running; it has not run yet."
NOT_ASKED = (
    "The user could not be asked (pyaichat has no prompt to ask with here: it is reading piped input), so "
    "the proposed code was shown to them and did not run. Do not propose it again; finish your answer and "
    "say what the code would do, so they can run it themselves."
)


Decide = Callable[[Proposal], Outcome]
"""The one way a proposer asks: the person decides on ``proposal`` (``proposals.Proposals.decide``) and the
outcome comes back once what they approved has run."""
