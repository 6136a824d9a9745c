"""A small server built with the official SDK's ``MCPServer`` (tests only), whose tools ask the client back
through the SDK's own resolvers: ``Elicit`` (a question to the user) and ``Sample`` (the client's model).

On a connection at the 2026-07-28 protocol the SDK batches these into an ``InputRequiredResult`` and the
client retries the call with the answers (SEP-2322); at older versions they are requests sent mid-call. Either
way the client's callbacks answer them. ``python sdk_server.py`` serves over stdio.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import ElicitationResult, MCPServer, Resolve, Sample
from mcp.server.mcpserver.resolve import Elicit
from mcp_types import CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel

server = MCPServer("asking")


class Deploy(BaseModel):
    environment: str
    replicas: int = 2


def ask_deploy() -> Elicit[Deploy]:
    return Elicit("Where should it be deployed?", Deploy)


def ask_title(topic: str) -> Sample:
    text = TextContent(type="text", text=f"A five-word title about {topic}.")
    return Sample([SamplingMessage(role="user", content=text)], max_tokens=20)


@server.tool()
def deploy(answer: Annotated[ElicitationResult[Deploy], Resolve(ask_deploy)]) -> str:
    """Deploys, after asking the user where."""
    if answer.action == "accept":
        return f"deployed to {answer.data.environment} with {answer.data.replicas} replicas"
    return f"not deployed ({answer.action})"


@server.tool()
def title(topic: str, written: Annotated[CreateMessageResult, Resolve(ask_title)]) -> str:
    """A title for a topic, written by the client's model."""
    content = written.content
    return f"title by {written.model}: {content.text if content.type == 'text' else '?'}"


if __name__ == "__main__":
    server.run("stdio")
