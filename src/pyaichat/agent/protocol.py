"""How tools are offered to a model and how calls and results travel: one object per tool protocol.

- ``NATIVE``: the tool schemas go with the request as function definitions; the model answers with tool
  calls, and each result goes back as a ``tool`` message.
- ``TEXT``: the system prompt teaches ``<tool name="…">{json}</tool>`` blocks (``textproto``); the model
  writes them in its reply, and the results go back in one user message of ``<observation>`` blocks.

Each protocol owns its part of the system text, the tools it sends, the gate that keeps a streamed call off
the screen, how a reply is read into calls and prose, how the assistant's message and the results go back
into the conversation, and how a remembered turn is replayed. Switching protocol (the provider refused the
schemas, the server never showed them) is swapping the object. A model may also write a call as text in its
own trained format while offered native tools (``textcalls``): that exchange is written back as text, so
``read`` says which protocol writes it (``Step.writer``).

Images a tool returns (``data:`` URLs) follow its result as ``image_url`` parts of a user message, which every
provider litellm speaks accepts, when the model can see them; otherwise the result says they were left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .calls import ToolCall, tool_params
from .context import mask_messages
from .llm import LLMReply, ProtocolName
from .stream_gate import StreamGate
from .textcalls import recover_calls
from .textproto import describe_protocol, observation, parse_blocks

if TYPE_CHECKING:
    from ..capabilities.catalog import CapabilityResult

MAX_CALLS_PER_REPLY = 8  # calls recovered from prose: a reply listing dozens is describing, not calling
CANCELLED = "Cancelled by the user."

Messages = list[dict[str, Any]]
# a call and its result as the model reads it (``text``: the observation), back into the conversation
Observed = tuple[ToolCall, "CapabilityResult"]


@dataclass(frozen=True)
class Remembered:
    """A turn from memory: its messages as they were sent, and the same turn compacted to question and
    answer."""

    messages: Messages
    compact: Messages


@dataclass(frozen=True)
class OutsideSchemas:
    """Tools from outside (MCP servers) in both forms the budget chooses between, for the whole turn."""

    full: list[dict[str, Any]]  # each with its server's description and JSON schema
    brief: list[dict[str, Any]]  # the same tools by name and first line, no parameters
    describe: dict[str, Any]  # the tool that gives one tool's full schema (offered with the brief form)
    full_tokens: int  # the most tokens the full form may add to a request (``mcp_tool_tokens``)


@dataclass(frozen=True)
class Prompt:
    """What every request of a turn is made of, before it is fitted."""

    system: str  # the system prompt; the protocol adds its own part
    schemas: list[dict[str, Any]]  # every tool of our own
    context: str  # the session picture and pinned names, sent with the question
    history: Sequence[Remembered] = ()  # oldest first
    mask: Callable[[str], str] = lambda text: text
    outside: OutsideSchemas | None = None
    note: str = ""  # what the system prompt says about the outside tools: after everything of our own


@dataclass
class Step:
    """What one reply asks for: its tool calls (numbered), the prose around them, and the protocol in which
    this exchange goes back into the conversation."""

    calls: list[ToolCall]
    prose: str
    writer: ToolProtocol


class ToolProtocol:
    """The parts both protocols share; ``NativeProtocol`` and ``TextProtocol`` fill in the rest."""

    name: ProtocolName
    tags = False  # the gate holds back ``<tool``/``<python`` openings too

    def system_text(self, prompt: str, schemas: Sequence[dict[str, Any]], note: str = "") -> str:
        """The system message: ``prompt``, this protocol's part, then ``note`` (about the MCP servers' tools,
        which come after our own: a change there leaves the part before it as it was, for prompt caches)."""
        return "\n\n".join(part for part in (prompt, note) if part)

    def messages(self, prompt: Prompt, offered: Sequence[dict[str, Any]], current: Messages) -> Messages:
        """A request's messages before fitting: the system text (with the ``offered`` tools, in this
        protocol's words), the question after the session's context, the turn so far; all masked."""
        system = {"role": "system", "content": self.system_text(prompt.system, offered, prompt.note)}
        question = {**current[0], "content": f"{prompt.context}\n\n## Question\n{current[0]['content']}"}
        return mask_messages([system, question, *current[1:]], prompt.mask)

    def tools(self, schemas: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        return None

    def gate(self, schemas: Sequence[dict[str, Any]]) -> StreamGate:
        return StreamGate(tags=self.tags, tool_params=tool_params(schemas))

    def read(self, reply: LLMReply, step: int, schemas: Sequence[dict[str, Any]], seen: set[str]) -> Step:
        """Calls the model wrote in its own format (Hermes, Llama JSON, Mistral, Gemma, pythonic)."""
        found = recover_calls(reply.text, tool_params(schemas))
        calls = [c.numbered(f"call_text_{step}_{i}") for i, c in enumerate(found.calls[:MAX_CALLS_PER_REPLY])]
        return Step(calls, found.prose, TEXT)

    def prose(self, text: str) -> str:
        """A reply's text without any of this protocol's call syntax."""
        return text

    def assistant_message(self, reply_text: str, step: Step) -> dict[str, Any]:
        return {"role": "assistant", "content": reply_text}

    def results(self, results: Sequence[Observed], *, see_images: bool) -> Messages:
        """Each call's result as the model reads it, in this protocol's messages."""
        raise NotImplementedError

    def remembered(self, messages: Messages, compact: Messages) -> Messages:
        """How a turn from memory is replayed in this protocol's requests (``compact``: question, answer)."""
        return messages


class NativeProtocol(ToolProtocol):
    name: ProtocolName = "native"

    def tools(self, schemas: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        return schemas

    def read(self, reply: LLMReply, step: int, schemas: Sequence[dict[str, Any]], seen: set[str]) -> Step:
        if not reply.tool_calls:
            return super().read(reply, step, schemas, seen)
        calls = []
        for i, tc in enumerate(reply.tool_calls):
            call_id = tc.id or f"call_{step}_{i}"
            if call_id in seen:  # some servers number calls per reply: keep ids unique in the conversation
                call_id = f"{call_id}_{step}_{i}"
            seen.add(call_id)
            calls.append(tc if tc.id == call_id else tc.numbered(call_id))
        return Step(calls, reply.text, self)

    def assistant_message(self, reply_text: str, step: Step) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant"}
        if step.prose:  # no "content" key at all otherwise (litellm drops a None content; /sent must match)
            message["content"] = step.prose
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json()}}
            for c in step.calls
        ]
        return message

    def results(self, results: Sequence[Observed], *, see_images: bool) -> Messages:
        texts, images = _with_images(results, see_images)
        out: Messages = [
            {"role": "tool", "tool_call_id": call.id, "content": text}
            for (call, _), text in zip(results, texts, strict=True)
        ]
        if images:  # tool messages hold text only: the images follow them as the user's
            out.append({"role": "user", "content": images})
        return out


class TextProtocol(ToolProtocol):
    name: ProtocolName = "text"
    tags = True

    def system_text(self, prompt: str, schemas: Sequence[dict[str, Any]], note: str = "") -> str:
        return "\n\n".join(part for part in (prompt, describe_protocol(schemas), note) if part)

    def read(self, reply: LLMReply, step: int, schemas: Sequence[dict[str, Any]], seen: set[str]) -> Step:
        blocks, prose = parse_blocks(reply.text)
        if blocks:
            return Step([c.numbered(f"text_{step}_{i}") for i, c in enumerate(blocks)], prose, self)
        return super().read(reply, step, schemas, seen)

    def prose(self, text: str) -> str:
        return parse_blocks(text)[1]

    def results(self, results: Sequence[Observed], *, see_images: bool) -> Messages:
        texts, images = _with_images(results, see_images)
        body = "\n\n".join(observation(c.name, text) for (c, _), text in zip(results, texts, strict=True))
        return [{"role": "user", "content": [{"type": "text", "text": body}, *images] if images else body}]

    def remembered(self, messages: Messages, compact: Messages) -> Messages:
        """Native tool messages mean nothing to a model driven by text: such turns are replayed compacted."""
        native = any(m.get("role") == "tool" or m.get("tool_calls") for m in messages)
        return compact if native else messages


NATIVE = NativeProtocol()
TEXT = TextProtocol()
PROTOCOLS: dict[str, ToolProtocol] = {"native": NATIVE, "text": TEXT}


# -- images --------------------------------------------------------------------------------------------------
def _with_images(results: Sequence[Observed], see_images: bool) -> tuple[list[str], list[dict[str, Any]]]:
    """Each result's text (saying where its images went), and the ``image_url`` parts to send after them."""
    texts: list[str] = []
    parts: list[dict[str, Any]] = []
    for call, r in results:
        if not r.images:
            texts.append(r.text)
        elif see_images:
            texts.append(
                f"{r.text}\n({_count(r.images)} from {call.name} follow as the user's next message.)"
            )
            parts.append({"type": "text", "text": f"{_count(r.images).capitalize()} from {call.name}:"})
            parts += [{"type": "image_url", "image_url": {"url": url}} for url in r.images]
        else:
            texts.append(f"{r.text}\n({_count(r.images)} left out: this model cannot see images.)")
    return texts, parts


def _count(images: Sequence[str]) -> str:
    return "1 image" if len(images) == 1 else f"{len(images)} images"


_DATA_URL = re.compile(r"^data:(?P<type>[\w.+-]+/[\w.+-]+)?(?:;[^,]*)?,")


def image_size(url: str) -> str:
    """An image part as ``/sent`` shows it: its type and size, not its base64."""
    m = _DATA_URL.match(url)
    if not m:
        return f"<image {url[:80]}>"
    payload = url[m.end() :].rstrip()
    size = len(payload) * 3 // 4 - (len(payload) - len(payload.rstrip("=")))  # base64: 4 characters, 3 bytes
    return f"<{m['type'] or 'image'}, {size:,} bytes>"


def images_as_sizes(messages: Iterable[dict[str, Any]], *, as_text: bool = False) -> Messages:
    """``messages`` with each image's data URL replaced by its type and size: for ``/sent``, which keeps the
    part's shape, and (``as_text``) for memory, where an old turn's pictures are not worth their tokens."""
    out: Messages = []
    for msg in messages:
        content = msg.get("content")
        if isinstance(content, list) and any(p.get("type") == "image_url" for p in content):
            parts = []
            for part in content:
                if part.get("type") == "image_url":
                    size = image_size((part.get("image_url") or {}).get("url", ""))
                    if as_text:
                        part = {"type": "text", "text": f"{size} (an image shown earlier, not kept)"}
                    else:
                        part = {**part, "image_url": {**part["image_url"], "url": size}}
                parts.append(part)
            msg = {**msg, "content": parts}
        out.append(msg)
    return out
