"""matplotlib: figures and axes described as text — what is drawn, where, and why it may look wrong.

Everything is read from the artists (``get_xlim``, ``get_lines``, ``containers``, ``collections``, …): no
figure is drawn, made current or resized, and pyplot is never imported (its open figures are read from
``matplotlib._pylab_helpers.Gcf``, which lists them without changing which one is current). Titles, labels
and counts are shown from ``schema`` up; data ranges, tick-free values and a PNG from ``sample`` up.

The notes at the end answer the usual questions: an axes with nothing drawn, data outside the view limits,
a log scale hiding values ≤ 0, bars stacked on others or overlapping them.
"""

from __future__ import annotations

import base64
import io
import sys
from collections.abc import Mapping
from typing import Any

from .common import SAMPLE, isinstance_of
from .protocol import Adapter

MAX_AXES = 12
MAX_ARTISTS = 8
MAX_PIXELS = 1024  # the longer side of a rendered PNG
MAX_PNG_BYTES = 1_500_000


def is_figure(value: Any) -> bool:
    return isinstance_of(value, "matplotlib.figure", "Figure")


def is_axes(value: Any) -> bool:
    return isinstance_of(value, "matplotlib.axes", "Axes")


def open_figures() -> list[tuple[Any, Any]]:
    """``(number, figure)`` of the figures pyplot has open, in creation order (nothing imported)."""
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None:
        return []
    try:
        managers = helpers.Gcf.get_all_fig_managers()
    except Exception:
        return []
    return [(m.num, m.canvas.figure) for m in managers]


# -- numbers -------------------------------------------------------------------------------------------------
def _num(x: Any) -> str:
    try:
        return f"{float(x):.4g}"
    except Exception:
        return str(x)


def _range(values: Any) -> str:
    np = sys.modules.get("numpy")
    try:
        arr = np.asarray(values, dtype=float).ravel()
        finite = arr[np.isfinite(arr)]
    except Exception:
        return "non-numeric"
    if not finite.size:
        return "no finite values"
    return f"{_num(finite.min())}…{_num(finite.max())}"


def _finite(values: Any) -> Any:
    np = sys.modules.get("numpy")
    try:
        arr = np.asarray(values, dtype=float).ravel()
    except Exception:
        return None
    return arr[np.isfinite(arr)]


# -- one axes ------------------------------------------------------------------------------------------------
def _label(text: str) -> str:
    return repr(text) if text else "none"


def _axis(ax: Any, which: str, lvl: int) -> str:
    label = getattr(ax, f"get_{which}label")()
    scale = getattr(ax, f"get_{which}scale")()
    lo, hi = getattr(ax, f"get_{which}lim")()
    limits = f" [{_num(lo)}, {_num(hi)}]" if lvl >= SAMPLE else ""
    return f"{which} {_label(label)} {scale}{limits}"


def _title(ax: Any) -> str:
    """``title 'Sales'`` (left / centre / right titles joined), or ``untitled``."""
    parts = [ax.get_title(loc) for loc in ("left", "center", "right")]
    shown = " / ".join(repr(p) for p in parts if p)
    return f"title {shown}" if shown else "untitled"


def _lines(ax: Any, lvl: int, notes: list[str]) -> list[str]:
    lines = list(ax.get_lines())
    if not lines:
        return []
    out = [f"lines ({len(lines)}):"]
    xlo, xhi = sorted(ax.get_xlim())
    ylo, yhi = sorted(ax.get_ylim())
    for ln in lines[:MAX_ARTISTS]:
        x, y = ln.get_xdata(orig=True), ln.get_ydata(orig=True)
        n = len(y) if hasattr(y, "__len__") else 1
        name = ln.get_label()
        name = repr(name) if name and not str(name).startswith("_") else "(no label)"
        desc = f"  {name}: {n:,} points, style {ln.get_linestyle()!r} marker {str(ln.get_marker())!r}"
        if not ln.get_visible():
            desc += ", hidden"
        if lvl >= SAMPLE and n:
            desc += f", x {_range(x)}, y {_range(y)}"
            fx, fy = _finite(x), _finite(y)
            if fx is not None and fy is not None and fx.size and fy.size:
                outside = fx.max() < xlo or fx.min() > xhi or fy.max() < ylo or fy.min() > yhi
                if outside:
                    notes.append(f"all data of line {name} lies outside the view limits")
                if ax.get_yscale() == "log" and (fy <= 0).any():
                    notes.append(f"line {name} has {(fy <= 0).sum():,} values ≤ 0, which a log y scale hides")
        if n == 0:
            notes.append(f"line {name} has no data")
        out.append(desc)
    if len(lines) > MAX_ARTISTS:
        out.append(f"  … {len(lines) - MAX_ARTISTS} more lines")
    return out


def _bars(ax: Any, lvl: int, notes: list[str]) -> list[str]:
    containers = [c for c in ax.containers if type(c).__name__ == "BarContainer"]
    if not containers:
        return []
    out = [f"bar groups ({len(containers)}):"]
    positions = []
    for k, cont in enumerate(containers[:MAX_ARTISTS]):
        patches = list(cont.patches)
        vertical = getattr(cont, "orientation", "vertical") != "horizontal"
        size = [p.get_height() if vertical else p.get_width() for p in patches]
        base = [p.get_y() if vertical else p.get_x() for p in patches]
        where = [round(p.get_x() if vertical else p.get_y(), 9) for p in patches]
        positions.append(tuple(where))
        label = cont.get_label()
        name = repr(label) if label and not str(label).startswith("_") else f"group {k + 1}"
        desc = f"  {name}: {len(patches)} {'vertical' if vertical else 'horizontal'} bars"
        if lvl >= SAMPLE and patches:
            desc += f", sizes {_range(size)}"
            if any(b != 0 for b in base):
                desc += f", starting at {_range(base)} (stacked on other bars)"
        out.append(desc)
    if lvl >= SAMPLE and len(set(positions)) < len(positions):
        stacked = any(
            any(
                (p.get_y() if getattr(c, "orientation", "vertical") != "horizontal" else p.get_x()) != 0
                for p in c
            )
            for c in containers
        )
        if stacked:
            notes.append("bar groups share positions and start on each other: they are stacked (bottom=…)")
        else:
            notes.append("bar groups share the same positions from 0: they overlap (offset x or use width)")
    return out


def _collections(ax: Any, lvl: int) -> list[str]:
    out = []
    for coll in ax.collections[:MAX_ARTISTS]:
        kind = type(coll).__name__
        if kind == "PathCollection":  # scatter
            offsets = coll.get_offsets()
            desc = f"scatter: {len(offsets):,} points"
            if lvl >= SAMPLE and len(offsets):
                desc += f", x {_range(offsets[:, 0])}, y {_range(offsets[:, 1])}"
        elif kind == "QuadMesh":
            arr = coll.get_array()
            desc = f"mesh (pcolormesh): {getattr(arr, 'shape', '?')} cells"
            if lvl >= SAMPLE and arr is not None:
                desc += f", values {_range(arr)}, cmap {coll.get_cmap().name}"
        else:
            desc = f"{kind}: {len(coll.get_paths()):,} paths"
        out.append("  " + desc)
    if len(ax.collections) > MAX_ARTISTS:
        out.append(f"  … {len(ax.collections) - MAX_ARTISTS} more")
    return ["collections:", *out] if out else []


def _images(ax: Any, lvl: int) -> list[str]:
    out = []
    for im in ax.images[:MAX_ARTISTS]:
        arr = im.get_array()
        desc = f"  image {getattr(arr, 'shape', '?')}, cmap {im.get_cmap().name}"
        if lvl >= SAMPLE and arr is not None:
            lo, hi = im.get_clim()
            desc += f", values {_range(arr)}, colour limits {_num(lo)}…{_num(hi)}"
        out.append(desc)
    return ["images:", *out] if out else []


def describe_axes(ax: Any, lvl: int, index: int | None = None) -> list[str]:
    cb = ax.__dict__.get("_colorbar")
    if cb is not None:
        label = ax.get_ylabel() or ax.get_xlabel()
        rng = f", range {_num(cb.vmin)}…{_num(cb.vmax)}" if lvl >= SAMPLE else ""
        return [f"colour bar {_label(label)}{rng}"]
    notes: list[str] = []
    head = f"axes {index}" if index is not None else "axes"
    out = [f"{head}: {_title(ax)}; {_axis(ax, 'x', lvl)}; {_axis(ax, 'y', lvl)}"]
    body = _lines(ax, lvl, notes) + _bars(ax, lvl, notes) + _collections(ax, lvl) + _images(ax, lvl)
    other = len(ax.patches) - sum(len(c.patches) for c in ax.containers if type(c).__name__ == "BarContainer")
    if other > 0:
        body.append(f"other patches: {other}")
    if ax.texts:
        body.append(f"texts/annotations: {len(ax.texts)}")
    legend = ax.get_legend()
    if legend is not None:
        entries = [t.get_text() for t in legend.get_texts()]
        body.append(f"legend: {', '.join(repr(e) for e in entries[:10])}")
    if not (ax.get_lines() or ax.containers or ax.collections or ax.images or ax.patches or ax.texts):
        notes.append("nothing is drawn on this axes")
    out += ["  " + line for line in body]
    out += [f"  note: {n}" for n in notes]
    return out


def describe_figure(fig: Any, lvl: int, number: Any = None) -> list[str]:
    w, h = fig.get_size_inches()
    suptitle = getattr(fig, "_suptitle", None)
    title = f", suptitle {suptitle.get_text()!r}" if suptitle is not None and suptitle.get_text() else ""
    label = f" {fig.get_label()!r}" if fig.get_label() else ""
    name = f"Figure {number}{label}" if number is not None else f"Figure{label}"
    axes = fig.get_axes()
    out = [f"{name}: {w:.3g}×{h:.3g} in at {fig.dpi:.0f} dpi, {len(axes)} axes{title}"]
    for k, ax in enumerate(axes[:MAX_AXES], 1):
        out += ["  " + line for line in describe_axes(ax, lvl, k)]
    if len(axes) > MAX_AXES:
        out.append(f"  … {len(axes) - MAX_AXES} more axes")
    if not axes:
        out.append("  note: the figure has no axes: nothing is drawn")
    return out


def render_png(fig: Any) -> str | None:
    """The figure as a PNG data URL, rendered off-screen by Agg at most ``MAX_PIXELS`` on its longer side; the
    user's canvas, size and dpi are left as they were (``savefig`` swaps the canvas only for the call)."""
    w, h = fig.get_size_inches()
    dpi = min(float(fig.dpi), MAX_PIXELS / max(w, h, 1e-6))
    for _ in range(3):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, backend="agg")
        data = buf.getvalue()
        if len(data) <= MAX_PNG_BYTES:
            return "data:image/png;base64," + base64.b64encode(data).decode("ascii")
        dpi /= 2
    return None


def open_figures_line(namespace: Mapping[str, Any] | None = None) -> str | None:
    """One line for the session picture: which pyplot figures are open (``None`` when none is)."""
    try:
        figures = open_figures()
        if not figures:
            return None
        parts = []
        for number, fig in figures[:6]:
            label = f" {fig.get_label()!r}" if fig.get_label() else ""
            axes = [ax for ax in fig.get_axes() if ax.__dict__.get("_colorbar") is None]
            empty = sum(1 for ax in axes if not (ax.lines or ax.containers or ax.collections or ax.images))
            state = f", {empty} empty" if empty else ""
            parts.append(f"{number}{label} ({len(axes)} axes{state})")
        more = f", … {len(figures) - 6} more" if len(figures) > 6 else ""
        return f"Open figures (matplotlib): {', '.join(parts)}{more} — get_figure describes them"
    except Exception:
        return None


# -- the adapter ---------------------------------------------------------------------------------------------
class MatplotlibAdapter(Adapter):
    """Figures and axes (get_figure describes them in full)."""

    def one_line(self, value: Any, lvl: int) -> str | None:
        if is_figure(value):
            w, h = value.get_size_inches()
            n = len(value.get_axes())
            label = f" {value.get_label()!r}" if value.get_label() else ""
            return f"matplotlib Figure{label} {w:.3g}×{h:.3g} in, {n} axes (get_figure describes it)"
        if is_axes(value):
            lines = len(value.get_lines())
            noun = "line" if lines == 1 else "lines"
            return f"matplotlib Axes: {_title(value)}, {lines} {noun} (get_figure describes it)"
        return None

    def details(self, value: Any, lvl: int) -> list[str] | None:
        line = self.one_line(value, lvl)
        return [line] if line else None

    def describe(self, value: Any, lvl: int) -> str | None:
        if is_figure(value):
            return "\n".join(describe_figure(value, lvl))
        if is_axes(value):
            return "\n".join(describe_axes(value, lvl))
        return None
