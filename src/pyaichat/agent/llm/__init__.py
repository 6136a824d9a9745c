"""The model client: the only package that imports litellm (and only once a question needs it).

- ``types``: the ``LLM`` protocol the loop talks to, and its request and reply;
- ``loader``: litellm loaded once, in the background, as one future;
- ``client``: ``LiteLLMClient``, what the loop asks of a model, and litellm's side of a completion;
- ``stream``: a completion as its reader pulls it (``for item in stream``), with the one retry budget;
- ``window``: where the model's context window comes from;
- ``errors``: a failed call as one ``LLMError`` with a sentence for the user.

Importing this package imports none of litellm.
"""

from .client import LiteLLMClient
from .errors import NO_MODEL
from .loader import LITELLM, Loader, is_loaded, load_litellm, warm_up
from .stream import ChatStream, Retry
from .types import (
    LLM,
    LLMReply,
    ProtocolName,
    Receiving,
    Request,
    Retrying,
    Stream,
    StreamItem,
    ToolCall,
    Usage,
)
from .window import window_in_error

__all__ = [
    "LITELLM",
    "LLM",
    "NO_MODEL",
    "ChatStream",
    "LLMReply",
    "LiteLLMClient",
    "Loader",
    "ProtocolName",
    "Receiving",
    "Request",
    "Retry",
    "Retrying",
    "Stream",
    "StreamItem",
    "ToolCall",
    "Usage",
    "is_loaded",
    "load_litellm",
    "warm_up",
    "window_in_error",
]
