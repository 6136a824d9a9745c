"""What a runtime says about its tools: one plain record per capability, made where the capabilities run.

The assistant, ``/tools`` and an MCP server never read the registry themselves: they ask their runtime
(``Runtime.tools()``). A local runtime answers from this process's registry; a kernel's runtime answers from
inside the kernel, which may have other plugins installed. The records hold no pydantic and no functions, so
they cross a kernel's wire as JSON and load here without the registry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


def clean_description(text: str) -> str:
    """A description as a model reads it: a docstring's indentation and line breaks gone (they cost tokens and
    say nothing), paragraphs kept apart by one line break."""
    paragraphs = re.split(r"\n\s*\n", text.strip())
    return "\n".join(" ".join(p.split()) for p in paragraphs if p.strip())


def model_parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """An argument schema as the model gets it: only what helps it call the tool. pydantic's titles, the
    argument model's own docstring and ``additionalProperties`` go (arguments are validated here anyway, and
    an unknown one comes back as an error the model reads); an optional ``X | None`` defaulting to ``None``
    is plain ``X``, left out of ``required``; a default of nothing (``None``, ``""``, ``False``) goes too."""
    out = {k: v for k, v in schema.items() if k not in ("title", "description", "additionalProperties")}
    props = {}
    for name, spec in (schema.get("properties") or {}).items():
        spec = {k: v for k, v in spec.items() if k != "title"}
        options = spec.get("anyOf")
        if isinstance(options, list) and spec.get("default", ...) is None:
            kept = [o for o in options if o != {"type": "null"}]
            if len(kept) == 1 and isinstance(kept[0], dict):
                spec = {**{k: v for k, v in spec.items() if k != "anyOf"}, **kept[0]}
        if _says_nothing(spec.get("default", 0)):  # what leaving the argument out means anyway
            del spec["default"]
        props[name] = spec
    out["properties"] = props
    return out


def _says_nothing(default: Any) -> bool:
    """``None``, ``False`` or ``""`` (not ``0``, which is a number like any other)."""
    return default is None or default is False or (isinstance(default, str) and not default)


def first_sentence(text: str) -> str:
    """The first sentence of ``text``, on one line (a tool's summary)."""
    text = " ".join(text.split())
    end = re.search(r"\.\s+(?=[A-Z])", text)
    return text if end is None else text[: end.start() + 1]


@dataclass(frozen=True)
class Tool:
    """One capability as a model (or an outside agent) sees it."""

    name: str
    description: str  # written for the model
    parameters: dict[str, Any]  # the JSON schema of the arguments (an object)
    source: str = "builtin"  # "builtin", or "plugin <distribution>"
    # False for an approval gate (propose_code): the assistant asks the person, ``call`` refuses it
    executable: bool = True
    # False: for outside agents only (the session picture: the assistant is sent it with every question)
    assistant: bool = True

    @property
    def summary(self) -> str:
        return first_sentence(self.description)

    def schema(self) -> dict[str, Any]:
        """The OpenAI-style function schema, which litellm translates for other providers."""
        params = model_parameters(self.parameters)
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": params},
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "source": self.source,
            "executable": self.executable,
            "assistant": self.assistant,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Tool:
        return cls(
            name=str(data["name"]),
            description=str(data["description"]),
            parameters=dict(data["parameters"]),
            source=str(data.get("source", "builtin")),
            executable=bool(data.get("executable", True)),
            assistant=bool(data.get("assistant", True)),
        )


@dataclass(frozen=True)
class Toolbox:
    """A runtime's tools, in the registry's order, its plugin adapters, and the plugins that could not load
    there."""

    tools: tuple[Tool, ...] = ()
    problems: tuple[str, ...] = field(default=())  # one sentence each (``/tools`` shows them)
    adapters: tuple[str, ...] = field(default=())  # "sensors  [plugin sensors-pyaichat]", one per adapter

    def schemas(self) -> list[dict[str, Any]]:
        """The function schema of every tool offered to the assistant: what it sends with each request."""
        return [tool.schema() for tool in self.tools if tool.assistant]

    def get(self, name: str) -> Tool | None:
        return next((tool for tool in self.tools if tool.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tools": [tool.to_dict() for tool in self.tools],
            "problems": list(self.problems),
            "adapters": list(self.adapters),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Toolbox:
        return cls(
            tools=tuple(Tool.from_dict(tool) for tool in data.get("tools") or ()),
            problems=tuple(str(p) for p in data.get("problems") or ()),
            adapters=tuple(str(a) for a in data.get("adapters") or ()),
        )
