"""A tool's answer as the model reads it: text, masked and bounded, and images only where they may go.

An MCP result is a list of content blocks (text, image, audio, resource links, embedded resources) and maybe
``structuredContent``. Every block becomes text the model can read, in order; binary content is described,
never pasted. Images travel as ``data:`` URLs beside the text (the loop sends them as the protocol says) only
when the model can see images *and* the privacy level allows values (``sample`` or ``full``); larger ones are
first scaled down to 1024 pixels on the longer side where Pillow is installed, and left out where it is not.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
from dataclasses import dataclass
from typing import Any

MAX_SIDE = 1024  # pixels on the longer side of an image sent to the model
MAX_IMAGE_BYTES = 1_000_000  # an image larger than this that cannot be scaled down is left out
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


@dataclass(frozen=True)
class Converted:
    """``text`` (not masked or cut yet), the images to send, and whether the server called it an error."""

    text: str
    images: tuple[str, ...]
    is_error: bool


def convert(result: Any, *, images: bool, why_no_images: str = "") -> Converted:
    """``result`` (a ``CallToolResult``) as text and images; ``images``: they may go to the model, else
    ``why_no_images`` says why they were left out."""
    parts: list[str] = []
    sent: list[str] = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "image":
            if not images:
                parts.append(f"[{_describe_binary('image', block)} left out: {why_no_images}]")
                continue
            url, note = image_url(block.data, block.mime_type)
            if url is None:
                parts.append(f"[{_describe_binary('image', block)} left out: {note}]")
            else:
                sent.append(url)
                parts.append(f"[image {len(sent)}: {block.mime_type}{note}]")
        elif kind == "audio":
            parts.append(f"[{_describe_binary('audio', block)} left out: pyaichat does not send audio]")
        elif kind == "resource_link":
            about = " ".join(x for x in (getattr(block, "name", ""), getattr(block, "description", "")) if x)
            parts.append(f"[resource link {block.uri}{': ' + about if about else ''}]")
        elif kind == "resource":
            res = block.resource
            text = getattr(res, "text", None)
            if text is not None:
                parts.append(f"[resource {res.uri}]\n{text}")
            else:
                size = _decoded_size(getattr(res, "blob", "") or "")
                mime = getattr(res, "mime_type", None) or "binary"
                parts.append(f"[resource {res.uri}: {mime}, {size:,} bytes, left out]")
        else:
            parts.append(f"[a {kind or 'content'} block pyaichat does not read]")
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, indent=1, default=str))
    text = "\n".join(parts) if parts else "(the tool returned nothing)"
    return Converted(text, tuple(sent), bool(getattr(result, "is_error", False)))


def image_url(data: str, mime: str) -> tuple[str | None, str]:
    """A ``data:`` URL for the model (scaled down if need be), or ``None`` and why not; the note says what
    was done to it."""
    if mime not in IMAGE_TYPES:
        return None, f"{mime} is not an image type models take"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None, "its data is not valid base64"
    smaller = _scaled_down(raw)
    if smaller is not None:
        return "data:image/png;base64," + base64.b64encode(smaller).decode(), f", scaled to {MAX_SIDE} px"
    if len(raw) > MAX_IMAGE_BYTES:
        return None, f"{len(raw):,} bytes is too large to send and Pillow is not installed to scale it down"
    return f"data:{mime};base64,{data}", ""


def _scaled_down(raw: bytes) -> bytes | None:
    """``raw`` as a PNG of at most ``MAX_SIDE`` pixels a side, when it is larger and Pillow can do it."""
    try:
        from PIL import Image  # optional: only for an image that arrives
    except ImportError:
        return None
    try:
        with Image.open(io.BytesIO(raw)) as img:
            if max(img.size) <= MAX_SIDE:
                return None
            img.thumbnail((MAX_SIDE, MAX_SIDE))
            out = io.BytesIO()
            img.save(out, format="PNG")
            return out.getvalue()
    except Exception:  # not an image Pillow reads: sent as it is, or left out by size
        return None


def _describe_binary(kind: str, block: Any) -> str:
    size = _decoded_size(getattr(block, "data", "") or "")
    return f"{kind} ({getattr(block, 'mime_type', '?')}, {size:,} bytes)"


def _decoded_size(data: str) -> int:
    data = data.strip()
    return len(data) * 3 // 4 - (len(data) - len(data.rstrip("=")))
