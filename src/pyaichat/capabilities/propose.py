"""``propose_code``: the approval gate, registered as a capability so the model sees it as a tool.

It is not executable through ``capabilities.call``: the agent loop intercepts it, shows the code to the user
and asks run / edit / no. Only code the user approves runs, through ``Session.run``, as the user's own input.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .registry import Capability, CapabilityContext, register


class ProposeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = Field(description="Python code to run in the user's session, exactly as they would type it")
    explanation: str = Field("", description="one or two sentences: what the code does and why it helps")


def _never_called(ctx: CapabilityContext, args: Any) -> str:  # pragma: no cover - call() refuses it first
    raise RuntimeError("propose_code is handled by the assistant, not run as a capability")


register(
    Capability(
        name="propose_code",
        description=(
            "Propose Python code that would change the session (assign a variable, fix data, import, write a "
            "file). The user sees it and chooses to run it, edit it or reject it; you are told the outcome. "
            "Use it "
            "for anything that is not read-only; never for looking at values."
        ),
        args_model=ProposeArgs,
        func=_never_called,
        executable=False,
    )
)
