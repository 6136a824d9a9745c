"""``get_session_picture``: the session picture as a tool, the first call of an outside agent (MCP).

The built-in assistant is sent the picture with every question (``Runtime.picture``), so this tool is not
offered to it. It runs through ``call`` like every capability — bounded, masked, audited — wherever the
session lives (in a kernel, inside the kernel), and leaves the assistant's own state alone (which error its
next picture calls new). Its first line says which process the session is and at which privacy level.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .catalog import Capability, CapabilityContext, NoArgs, register

NAME = "get_session_picture"


def _picture(ctx: CapabilityContext, args: Any) -> str:
    from .picture import session_picture  # the picture and its adapters: with the first picture

    head = (
        f"pid {os.getpid()} · {os.getcwd()} · Python {sys.version.split()[0]} · privacy level "
        f"{ctx.config.privacy}."
    )
    return f"{head}\n\n{session_picture(ctx.session, ctx.config)}"


register(
    Capability(
        name=NAME,
        description=(
            "Start here: the live Python session at a glance — its variables with one-line summaries, the "
            "latest inputs and the last error (what pyaichat's own assistant sees first)."
        ),
        args_model=NoArgs,
        func=_picture,
        assistant=False,
        output_floor=4000,  # the picture is bounded by construction; a small max_output_chars would cut it
    )
)
