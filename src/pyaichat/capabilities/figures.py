"""get_figure: the open matplotlib figures described as text, and the session picture's line about them.

Figures are the ones pyplot has open (read without making any current) or a Figure/Axes the model names.
A PNG rendered off-screen (Agg, at most 1024 px on the longer side) is attached only when the caller can
send images to the model (``CapabilityContext.images``, a vision model) and the privacy level shows values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import CapabilityError
from .adapters import matplotlib as mpl
from .catalog import CapabilityContext, capability
from .expression import resolve
from .introspect import user_names
from .privacy import SAMPLE, level

MAX_FIGURES = 4


class FigureArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    figure: str | None = Field(
        None,
        description="a figure's number or label, or a variable holding a Figure or Axes; omit for all",
    )


@capability("get_figure", FigureArgs)
def get_figure(ctx: CapabilityContext, args: FigureArgs) -> str:
    """Open matplotlib figures as text: axes, labels, what is drawn and common problems. Use it when the user
    asks about a plot."""
    lvl = level(ctx.privacy)
    if lvl < 1:
        raise CapabilityError("At privacy level 'names' figures are not described.")
    targets = _targets(ctx, args.figure)
    if not targets:
        return "No matplotlib figure is open (and none is held in a variable)."
    out: list[str] = []
    for number, fig in targets[:MAX_FIGURES]:
        out += mpl.describe_figure(fig, lvl, number) if mpl.is_figure(fig) else mpl.describe_axes(fig, lvl)
        if ctx.images and lvl >= SAMPLE:
            png = mpl.render_png(fig if mpl.is_figure(fig) else fig.figure)
            if png:
                ctx.attached.append(png)
                out.append("  (a PNG of this figure is attached)")
    if len(targets) > MAX_FIGURES:
        out.append(f"… {len(targets) - MAX_FIGURES} more figures (pass figure to pick one)")
    return "\n".join(out)


def _targets(ctx: CapabilityContext, which: str | None) -> list[tuple[Any, Any]]:
    figures = mpl.open_figures()
    if which is None:
        return figures or [(None, v) for v in _held(ctx.namespace)]
    wanted = which.strip()
    for number, fig in figures:
        if wanted == str(number) or (fig.get_label() and wanted == fig.get_label()):
            return [(number, fig)]
    if wanted.isdigit():
        raise CapabilityError(f"No open figure has number {wanted}.")
    value = resolve(ctx, wanted)
    if not (mpl.is_figure(value) or mpl.is_axes(value)):
        raise CapabilityError(f"{wanted} is not a matplotlib Figure or Axes, nor an open figure's label.")
    return [(None, value)]


def _held(namespace: Mapping[str, Any]) -> list[Any]:
    return [namespace[n] for n in user_names(namespace) if mpl.is_figure(namespace.get(n))][:MAX_FIGURES]


open_figures_line = mpl.open_figures_line  # the session picture's line (lives with the adapter: light)
