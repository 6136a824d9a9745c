"""What the model sees: the system prompt, pinned ``@names`` and the conversation memory (the session
picture, rebuilt every turn, comes from the runtime: ``capabilities.picture``).

The memory keeps whole turns (``agent.budget`` fits them into each request). Every message leaves
through ``mask_messages`` (the one masking function), so ``/sent`` shows exactly what the provider
received.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..capabilities.redact import masker_for

if TYPE_CHECKING:
    from ..configuration.config import Config

_PIN = re.compile(r"(?<![\w@])@([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")


# -- system prompt -------------------------------------------------------------------------------------------
def load_system_prompt() -> str:
    """``pyaichat/prompts/system.md`` from the installed package, else ``<repo>/prompts/system.md``."""
    try:
        return files("pyaichat.prompts").joinpath("system.md").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError, TypeError, AttributeError, OSError):
        pass
    here = Path(__file__).resolve().parents[1]  # the pyaichat package
    for path in (here / "prompts" / "system.md", here.parents[1] / "prompts" / "system.md"):
        if path.is_file():
            return path.read_text(encoding="utf-8")
    return "You are pyaichat, an assistant inside a Python REPL. Use the tools to look at the live session."


# -- masking -------------------------------------------------------------------------------------------------
def make_masker(config: Config | None) -> Callable[[str], str]:
    return masker_for(config).mask_text


def memoize(mask: Callable[[str], str], limit: int = 512) -> Callable[[str], str]:
    """``mask`` with a per-turn memory: every request of a turn resends the same messages, masked once."""
    seen: dict[str, str] = {}

    def masked(text: str) -> str:
        hit = seen.get(text)
        if hit is None:
            hit = mask(text)
            if len(seen) < limit:
                seen[text] = hit
        return hit

    return masked


def mask_messages(messages: Iterable[Mapping[str, Any]], mask: Callable[[str], str]) -> list[dict[str, Any]]:
    """A masked copy of chat messages: every content string and tool-call argument passes ``mask``."""
    out = []
    for msg in messages:
        new = dict(msg)
        content = new.get("content")
        if isinstance(content, str):
            new["content"] = mask(content)
        elif isinstance(content, list):  # parts: text is masked, images are pictures, not text
            new["content"] = [
                {**p, "text": mask(p["text"])} if isinstance(p.get("text"), str) else p for p in content
            ]
        if new.get("tool_calls"):
            calls = []
            for call in new["tool_calls"]:
                fn = dict(call.get("function", {}))
                if isinstance(fn.get("arguments"), str):
                    fn["arguments"] = mask(fn["arguments"])
                calls.append({**call, "function": fn})
            new["tool_calls"] = calls
        out.append(new)
    return out


def pinned_names(question: str) -> list[str]:
    """``@name`` and ``@name.attr`` references in a question, in order, without repeats."""
    out: list[str] = []
    for ref in _PIN.findall(question):
        if ref not in out:
            out.append(ref)
    return out


def pinned_section(question: str, describe: Callable[[str], str]) -> str:
    """Summaries of the variables pinned with ``@name`` (``describe`` is a bounded capability call)."""
    refs = pinned_names(question)
    if not refs:
        return ""
    parts = ["## Pinned by the user"]
    for ref in refs[:8]:
        parts.append(f"### {ref}\n{describe(ref)}")
    return "\n".join(parts)


# -- conversation memory -------------------------------------------------------------------------------------
@dataclass
class Turn:
    """One question and everything said while answering it (native tool messages or text protocol)."""

    question: str
    messages: list[dict[str, Any]]
    answer: str = ""
    # tokens of its compacted form, counted once by ``Memory.fit``
    compact_tokens: int | None = field(default=None, repr=False, compare=False)

    def compact(self) -> list[dict[str, Any]]:
        """Question and answer only: how an old turn survives when the budget is tight."""
        out = [{"role": "user", "content": self.question}]
        if self.answer:
            out.append({"role": "assistant", "content": self.answer})
        return out


@dataclass
class Memory:
    """The conversation so far, newest last, holding only turns some request could still send."""

    turns: list[Turn] = field(default_factory=list)

    def add(self, turn: Turn) -> None:
        self.turns.append(turn)

    def fit(self, limit: int, count: Callable[[list[dict[str, Any]]], int]) -> None:
        """Forget the turns no request can hold any more: the budget (``agent.budget``) takes remembered
        turns newest first, each at least as large as its compacted form, and stops at the first one that
        does not fit in what is left of ``limit`` (``context_tokens``, the ceiling of every request). Once the
        turns after a turn fill ``limit`` by themselves, that turn can never be sent again, however short
        later questions are. ``count`` is the model's token counter; each turn is counted once, so the work
        per question does not grow with the session's age."""
        room = limit
        for i in range(len(self.turns) - 1, -1, -1):
            if room <= 0:  # the newer turns already fill every possible request
                del self.turns[: i + 1]
                return
            turn = self.turns[i]
            if turn.compact_tokens is None:
                turn.compact_tokens = count(turn.compact())
            room -= turn.compact_tokens

    def clear(self) -> None:
        self.turns.clear()
