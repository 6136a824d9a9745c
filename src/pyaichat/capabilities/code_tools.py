"""Registers ``run_python`` and ``eval_expr``: the two capabilities that run assistant-written code."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .catalog import CapabilityContext, capability


class CodeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: str = Field(description="Python statements")


class ExprArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    expr: str = Field(description="e.g. df.shape, len(x), df['a'].mean()")


@capability("run_python", CodeArgs)
def run_python(ctx: CapabilityContext, args: CodeArgs) -> str:
    """Run a Python snippet on the session's variables in a read-only sandbox; returns its output and last
    value. Use it for logic over several values."""
    from .sandbox import run  # deferred: RestrictedPython loads with the first run, not with the tool list

    return run(ctx, args.code, "exec")


@capability("eval_expr", ExprArgs)
def eval_expr(ctx: CapabilityContext, args: ExprArgs) -> str:
    """Evaluate one read-only Python expression. Use it, rather than run_python, for a single fact."""
    from .expression import evaluate  # deferred: as run_python's sandbox

    return evaluate(ctx, args.expr)
