"""Registers ``run_python`` and ``eval_expr``: the two capabilities that run assistant-written code."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .registry import CapabilityContext, capability


class CodeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: str = Field(description="Python statements; the value of a final expression is returned")


class ExprArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    expr: str = Field(description="one Python expression, e.g. df.shape, len(x), df['a'].mean()")


@capability("run_python", CodeArgs)
def run_python(ctx: CapabilityContext, args: CodeArgs) -> str:
    """Run a short Python snippet over the session's variables, read-only, and return what it printed plus
    the value of its last expression. Use it for logic over several values (loops, filters, comparisons).
    Restricted: no files, network, processes or private attributes; imports limited to math, statistics,
    itertools, functools, operator, collections, re, json, datetime, decimal, fractions, random, string,
    textwrap, copy, numpy and pandas. Changes stay inside the snippet (work on copies); 2 s time limit.
    On Linux the session's own functions, methods and classes may be called too. A string result comes
    back as plain text."""
    from .sandbox import run  # deferred: RestrictedPython loads with the first run, not with the tool list

    return run(ctx, args.code, "exec")


@capability("eval_expr", ExprArgs)
def eval_expr(ctx: CapabilityContext, args: ExprArgs) -> str:
    """Evaluate one read-only Python expression in the session and return a bounded summary of its value,
    e.g. df.shape, len(x), sorted(d)[:5], df['a'].mean(). Prefer it to run_python for a single fact."""
    from .expression import evaluate  # deferred: as run_python's sandbox

    return evaluate(ctx, args.expr)
