"""The request for one suggestion: the code around the cursor, the last few inputs and the facts about the
names it uses, in a few hundred tokens, masked.

Fill-in-the-middle gets the context as a comment header and the earlier inputs as the code before the
current one (what a code model continues best); chat gets the same in a short user message. Everything passes
the one masking function anything sent to a model passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..llm.infill import CodeRequest
from .fit import CURSOR, wants_block

if TYPE_CHECKING:
    from ...configuration.config import Config
    from .route import Route

BEFORE_CHARS = 1500  # code before the cursor sent along: about 20 lines
AFTER_CHARS = 400
LINE_TOKENS = 48  # most tokens of a one-line answer
BLOCK_TOKENS = 160  # of the rest of a block

SYSTEM = (
    "You complete Python code typed at an interactive prompt. Reply with only the code to insert at "
    f"{CURSOR}, with no explanation and no Markdown. Use the real names, columns and keys of the live "
    "session. If nothing fits, reply with nothing."
)


def build_request(
    config: Config, route: Route, before: str, after: str, found: dict[str, Any]
) -> CodeRequest | None:
    """The request for a suggestion between ``before`` and ``after``, with the session's ``found`` facts and
    inputs (``Runtime.suggestion_facts``); ``None`` when the cursor is inside a secret being typed."""
    from ...capabilities.redact import masker_for  # with the first suggestion

    mask = masker_for(config).mask_text
    if in_secret(mask, before, after):
        return None
    block = wants_block(before)
    facts = [str(line) for line in found.get("facts") or []]
    inputs = [str(text) for text in found.get("inputs") or []]
    before, after = _clip_before(before), after[:AFTER_CHARS]
    common: dict[str, Any] = {
        "model": route.model,
        "api_base": route.api_base,
        "api_key": route.api_key,
        "max_tokens": BLOCK_TOKENS if block else LINE_TOKENS,
        "stop": ["\n\n"] if block else ["\n"],
        "temperature": 0.0 if config.temperature is None else config.temperature,
        "seed": config.seed,
        "block": block,
    }
    if route.kind == "fim":
        header = _fim_header(facts)
        earlier = "".join(text + "\n" for text in inputs)
        return CodeRequest("fim", prompt=mask(header + earlier + before), suffix=mask(after), **common)
    user = mask(_chat(facts, inputs)) + mask(before + CURSOR + after)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
    return CodeRequest("chat", messages=messages, **common)


def in_secret(mask: Any, before: str, after: str) -> bool:
    """The cursor is inside a value the masking function hides (``password = "hun``): masked, the code
    around it would lose the cursor, so nothing is asked. A string still being typed is closed to look."""
    line = before.rpartition("\n")[2] + _MARK + after.partition("\n")[0]
    return any(_MARK not in mask(line + closing) for closing in ("", '"', "'"))


_MARK = "\u2063"  # an invisible separator: never part of a pattern the masking function looks for


def _clip_before(before: str) -> str:
    """The last ``BEFORE_CHARS`` characters, from the start of a line."""
    if len(before) <= BEFORE_CHARS:
        return before
    clipped = before[-BEFORE_CHARS:]
    return clipped.partition("\n")[2] if "\n" in clipped else clipped


def _fim_header(facts: list[str]) -> str:
    if not facts:
        return ""
    lines = ["# Live session objects (real names, columns and keys):", *(f"# {fact}" for fact in facts)]
    return "\n".join(lines) + "\n"


def _chat(facts: list[str], inputs: list[str]) -> str:
    parts = []
    if facts:
        parts.append("Live session objects:\n" + "\n".join(facts))
    if inputs:
        parts.append("Earlier inputs:\n" + "\n".join(inputs))
    parts.append(f"Complete the code at {CURSOR} (only what goes there):\n")
    return "\n\n".join(parts)
