"""Figures for MCP clients: a PNG small enough for them to hold.

``get_figure`` renders at up to 1024 px (what a vision model reads well); as MCP image content that is often
70–100k characters of base64, which overflows clients today (jupyter-mcp-server#200). Here each PNG is
scaled down and, for a plot's few colours, stored with a palette until its base64 fits its share of
``MAX_CHARS``, which bounds all the images of one result together (``get_figure`` may attach four); one that
cannot fit is left out and the text says so. Pillow comes with matplotlib, so wherever a figure was
rendered it is there; where it is not, the picture is left out too.
"""

from __future__ import annotations

import base64
import io

MAX_CHARS = 40_000  # base64 characters of the images of one result, together (≈30 kB of PNG)
MIN_SIDE = 160  # smaller than this a plot says nothing
PREFIX = "data:image/png;base64,"


def fit(data_url: str, max_chars: int = MAX_CHARS) -> str | None:
    """``data_url``'s PNG as base64 of at most ``max_chars`` characters, or ``None`` when it cannot be made
    to fit (or read)."""
    if not data_url.startswith(PREFIX):
        return None
    data = data_url[len(PREFIX) :]
    if len(data) <= max_chars:
        return data
    try:
        from PIL import Image  # Pillow: a dependency of matplotlib, which drew the figure
    except ImportError:
        return None
    try:
        opened = Image.open(io.BytesIO(base64.b64decode(data)))
        opened.load()
    except Exception:
        return None
    image = opened.convert("RGB")
    width, height = image.size
    scale = min(1.0, (max_chars / len(data)) ** 0.5 * 1.6)  # a palette PNG shrinks far more than its area
    for _ in range(8):
        size = (max(int(width * scale), 1), max(int(height * scale), 1))
        if min(size) < MIN_SIDE and scale < 1.0:
            return None
        small = image.resize(size, Image.Resampling.LANCZOS) if scale < 1.0 else image
        encoded = base64.b64encode(_png(small.quantize(colors=128))).decode("ascii")
        if len(encoded) <= max_chars:
            return encoded
        scale *= 0.75
    return None


def _png(image: object) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG", optimize=True)  # type: ignore[attr-defined]  # Pillow is optional: no stubs when it is absent
    return buf.getvalue()


def fit_all(data_urls: list[str], max_chars: int = MAX_CHARS) -> tuple[list[str], int]:
    """As many of the PNGs as fit ``max_chars`` together, each scaled to an equal share: all of them if they
    can be, else fewer at a larger share (a few readable plots over many unreadable ones); (the base64
    images, how many were left out)."""
    for count in range(len(data_urls), 0, -1):
        fitted = []
        for url in data_urls[:count]:
            data = fit(url, max_chars // count)
            if data is None:
                break
            fitted.append(data)
        else:
            return fitted, len(data_urls) - count
    return [], len(data_urls)
