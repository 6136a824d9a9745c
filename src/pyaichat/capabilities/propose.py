"""``propose_code``: the approval gate, registered as a capability so the model sees it as a tool.

It is not executable through ``capabilities.call``: the agent loop intercepts it, shows the code to the user
and asks run / edit / no. Only code the user approves runs, through ``Session.run``, as the user's own input.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .catalog import Capability, CapabilityContext, register


class ProposeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = Field(description="exactly as the user would type it")
    explanation: str = Field("", description="what it does and why, in a sentence or two")


def _never_called(ctx: CapabilityContext, args: Any) -> str:  # pragma: no cover - call() refuses it first
    raise RuntimeError("propose_code is handled by the assistant, not run as a capability")


register(
    Capability(
        name="propose_code",
        description=(
            "Propose code that changes the session; the user runs, edits or rejects it and you are told "
            "which. Use it for anything not read-only (assign, fix data, import, write a file)."
        ),
        args_model=ProposeArgs,
        func=_never_called,
        executable=False,
    )
)
