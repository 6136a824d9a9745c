"""A third-party pyaichat capability: registering it only takes the ``@capability`` decorator."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pyaichat.capabilities import capability
from pyaichat.capabilities.expression import resolve


class CountArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    expr: str = Field(description="a variable name such as df")


@capability("demo_count", CountArgs)
def demo_count(ctx, args: CountArgs) -> str:
    """Return how many items a sized value holds (a demo plugin capability). Use it to count rows or
    elements."""
    value = resolve(ctx, args.expr)
    return f"{args.expr} holds {len(value):,} items"
