"""What the model sees: the system prompt, a session digest, pinned ``@names`` and the conversation memory.

The digest is rebuilt every turn and bounded by construction (at most ``MAX_VARS`` variables are summarised,
each in one line; the rest are only counted), so its size and cost do not grow with the data. The memory keeps
whole turns and fits them into ``config.context_tokens``: older turns shrink to question and answer first,
then the oldest are dropped. Every message leaves through ``mask_messages`` (the one masking function), so
``/sent`` shows exactly what the provider received.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import Config
    from ..session import Session

MAX_VARS = 40
RECENT_INPUTS = 5
_LINE = 110
_PIN = re.compile(r"(?<![\w@])@([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
_IDENT = re.compile(r"[A-Za-z_]\w*")


# -- system prompt -------------------------------------------------------------------------------------------
def load_system_prompt() -> str:
    """``pyaichat/prompts/system.md`` from the installed package, else ``<repo>/prompts/system.md``."""
    try:
        from importlib.resources import files

        return files("pyaichat.prompts").joinpath("system.md").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError, TypeError, AttributeError, OSError):
        pass
    import pyaichat

    here = Path(pyaichat.__file__).resolve().parent
    for path in (here / "prompts" / "system.md", here.parents[1] / "prompts" / "system.md"):
        if path.is_file():
            return path.read_text(encoding="utf-8")
    return "You are pyaichat, an assistant inside a Python REPL. Use the tools to look at the live session."


# -- tokens --------------------------------------------------------------------------------------------------
def approx_tokens(obj: Any) -> int:
    """A cheap token estimate (≈4 characters a token); the provider's real counts are reported separately."""
    text = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False, default=str)
    return len(text) // 4 + 1


# -- masking -------------------------------------------------------------------------------------------------
def make_masker(config: Config | None) -> Callable[[str], str]:
    from ..capabilities.redact import masker_for

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
        if isinstance(new.get("content"), str):
            new["content"] = mask(new["content"])
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


# -- session digest ------------------------------------------------------------------------------------------
def _user_names(namespace: Mapping[str, Any]) -> list[str]:
    try:
        from ..capabilities.introspect import user_names
    except ImportError:  # pragma: no cover - the capabilities package always has it
        return [n for n in namespace if isinstance(n, str) and not n.startswith("_")]
    return user_names(namespace)


def _one_line(value: Any, privacy: str) -> str:
    try:
        from ..capabilities.summary import one_line
    except ImportError:  # pragma: no cover
        return type(value).__name__
    return one_line(value, privacy, width=_LINE)


def _short(text: str, limit: int = _LINE) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ordered_names(session: Session, names: list[str]) -> list[str]:
    """Names used in the latest inputs first, then the most recently defined ones."""
    present = set(names)
    first: list[str] = []
    for entry in reversed(session.history[-RECENT_INPUTS * 2 :]):
        for ident in _IDENT.findall(entry.source):
            if ident in present and ident not in first:
                first.append(ident)
    seen = set(first)
    return first + [n for n in reversed(names) if n not in seen]


def session_digest(
    session: Session, config: Config | None, max_vars: int = MAX_VARS, *, seen_error: object = None
) -> str:
    """A bounded picture of the session: variables, the last few inputs and the last error."""
    from ..runtime import remote

    runtime = remote(session)
    if runtime is not None:  # the data lives in a kernel: the digest is built there
        return runtime.remote_digest(config, max_vars)
    privacy = getattr(config, "privacy", "sample")
    names = _user_names(session.namespace)
    lines = ["## Session (live; rebuilt for this question)", f"Variables ({len(names):,}):"]
    if not names:
        lines.append("  (none yet)")
    shown = _ordered_names(session, names)[:max_vars]
    from ..capabilities.redact import masker_for

    is_secret = masker_for(config).is_secret_name
    for name in shown:
        if is_secret(name):
            lines.append(f"  {name}: <redacted: secret-looking name>")
        else:
            lines.append(f"  {name}: {_one_line(session.namespace.get(name), privacy)}")
    if len(names) > len(shown):
        lines.append(f"  … and {len(names) - len(shown):,} more (list_globals shows them)")
    from ..capabilities.adapters.matplotlib import open_figures_line

    lines.extend(filter(None, [open_figures_line(session.namespace)]))

    recent = session.history[-RECENT_INPUTS:]
    if recent:
        lines.append("Recent inputs:")
        for entry in recent:
            first, *more = entry.source.strip().splitlines() or [""]
            src = _short(first, 90) + (f"  (+{len(more)} lines)" if more else "")
            outcome = ("✗ " if not entry.ok else "") + _short(entry.summary, 90) if entry.summary else ""
            lines.append(f"  [{entry.number}] {src}" + (f"  → {outcome}" if outcome else ""))
    lines.extend(_error_lines(session, seen_error))
    return "\n".join(lines)


def _error_lines(session: Session, seen_error: object = None) -> list[str]:
    err = getattr(session, "last_error", None)
    if err is None:
        return []
    where = f"input [{err.input_number}]" if err.input_number else ""
    if seen_error is not None and err is not seen_error:
        where += ", new since the previous question" if where else "new since the previous question"
    where = f" ({where})" if where else ""
    lines = [f"Last error{where}: {_short(err.headline(), 300)}"]
    if err.segment:
        lines.append(f"  failing expression: {_short(err.segment, 200)}")
    if err.source and len(err.source) < 1200:
        src = "\n".join("    " + line for line in err.source.strip().splitlines()[:12])
        lines.append("  input:\n" + src)
    frames = err.frames[-4:]
    if frames:
        lines.append("  innermost frames:")
        for fr in frames:
            lines.append(
                f"    {_short(_module_path(fr.filename), 60)}:{fr.lineno} in {fr.name}: {_short(fr.line, 80)}"
            )
    return lines


def _module_path(filename: str) -> str:
    """A library frame's file from its package on (``pandas/core/frame.py``): the model needs no more, and
    the install path (often with the user's name in it) is not its business."""
    for marker in ("site-packages/", "dist-packages/"):
        at = filename.rfind(marker)
        if at >= 0:
            return filename[at + len(marker) :]
    home = os.path.expanduser("~")
    if home not in ("", "/") and filename.startswith(home + os.sep):
        return "~" + filename[len(home) :]
    return filename


def pinned_names(question: str) -> list[str]:
    """``@name`` and ``@name.attr`` references in a question, in order, without repeats."""
    out: list[str] = []
    for ref in _PIN.findall(question):
        if ref not in out:
            out.append(ref)
    return out


def pinned_section(question: str, session: Session, describe: Callable[[str], str]) -> str:
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
    native: bool = True

    def compact(self) -> list[dict[str, Any]]:
        """Question and answer only: how an old turn survives when the budget is tight."""
        out = [{"role": "user", "content": self.question}]
        if self.answer:
            out.append({"role": "assistant", "content": self.answer})
        return out


@dataclass
class Memory:
    turns: list[Turn] = field(default_factory=list)

    def add(self, turn: Turn) -> None:
        self.turns.append(turn)

    def clear(self) -> None:
        self.turns.clear()

    def fit(
        self,
        system: dict[str, Any],
        current: list[dict[str, Any]],
        budget: int,
        *,
        native: bool,
    ) -> tuple[list[dict[str, Any]], int]:
        """``system`` + as much memory as fits + ``current``, and the estimated tokens of the result."""
        current = shrink_observations(current, budget - approx_tokens(system))
        total = approx_tokens(system) + sum(approx_tokens(m) for m in current)
        kept: list[dict[str, Any]] = []
        for turn in reversed(self.turns):
            full = turn.messages if (native or not _has_tool_messages(turn.messages)) else turn.compact()
            for candidate in (full, turn.compact()):
                size = sum(approx_tokens(m) for m in candidate)
                if total + size <= budget:
                    kept = candidate + kept
                    total += size
                    break
            else:
                break  # this turn does not fit even compacted: it and everything older is dropped
        return [system, *kept, *current], total


def _has_tool_messages(messages: list[dict[str, Any]]) -> bool:
    return any(m.get("role") == "tool" or m.get("tool_calls") for m in messages)


def shrink_observations(current: list[dict[str, Any]], budget: int, keep: int = 600) -> list[dict[str, Any]]:
    """When this turn alone is over budget, cut older tool results (never the question or the newest)."""
    if sum(approx_tokens(m) for m in current) <= budget:
        return current
    out = [dict(m) for m in current]
    observations = [
        i for i, m in enumerate(out) if m.get("role") == "tool" or (i > 0 and m.get("role") == "user")
    ]
    for i in observations[:-1]:
        text = out[i].get("content") or ""
        if len(text) > keep:
            out[i]["content"] = (
                text[:keep] + f"\n… {len(text) - keep:,} characters dropped to fit the context budget"
            )
        if sum(approx_tokens(m) for m in out) <= budget:
            break
    return out
