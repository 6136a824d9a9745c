"""Where a model's context window comes from: the setting, the server's word, litellm's table, or a guess.

A request that does not fit the window is refused, or worse, silently cut from the front (Ollama, llama.cpp),
system prompt first; so every request is sized against the window (``agent.budget``). This module only finds
the figure: asked once per client, and corrected when a server names its real window in a refusal.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Callable
from typing import Any

DEFAULT_WINDOW = 8192  # a server that does not say: most local models today have at least this


def is_ollama(model: str) -> bool:
    return model.startswith(("ollama/", "ollama_chat/"))


class Window:
    """One model's window: found on first use, learned again from a refusal that names it."""

    def __init__(
        self,
        model: str,
        *,
        configured: int | None,
        api_base: str | None,
        table: Callable[[str], dict[str, Any]],
    ) -> None:
        self.model = model
        self.configured = configured
        self.api_base = api_base
        self._table = table  # litellm.get_model_info
        self._tokens: int | None = None

    def tokens(self) -> int:
        if self._tokens is None:
            self._tokens = self.configured or self._from_server() or self._from_table() or DEFAULT_WINDOW
        return self._tokens

    def learn(self, tokens: int) -> None:
        """The server named its real window in an error: use it from now on (a setting still wins)."""
        if tokens >= 256 and not self.configured:
            self._tokens = tokens

    def _from_server(self) -> int | None:
        if not self.api_base or is_ollama(self.model):
            return None
        return probe_server_window(self.api_base, self.model, timeout=2.0)

    def _from_table(self) -> int | None:
        if is_ollama(self.model):
            return None  # litellm knows the model's training window; Ollama serves num_ctx, which we set
        try:
            info = self._table(self.model)
        except Exception:
            return None
        window = info.get("max_input_tokens") or info.get("max_tokens")
        return int(window) if window else None


def probe_server_window(api_base: str, model: str, timeout: float = 2.0) -> int | None:
    """Ask an OpenAI-compatible server for its context window (llama.cpp ``/props``, vLLM ``/v1/models``).

    Only for a server the user named with ``api_base``; a short timeout, and any failure means "not said".
    """
    root = api_base.rstrip("/")
    root_no_v1 = root[:-3] if root.endswith("/v1") else root
    name = model.split("/", 1)[1] if "/" in model else model

    def get(url: str) -> Any:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as resp:
                return json.loads(resp.read(200_000).decode("utf-8", "replace"))
        except Exception:
            return None

    props = get(root_no_v1 + "/props")
    if isinstance(props, dict):
        settings = props.get("default_generation_settings") or {}
        n_ctx = settings.get("n_ctx") or props.get("n_ctx")
        if isinstance(n_ctx, int) and n_ctx > 0:
            return n_ctx
    models = get(root + "/models")
    entries = models.get("data") if isinstance(models, dict) else None
    if isinstance(entries, list):
        chosen = [m for m in entries if isinstance(m, dict) and m.get("id") == name] or [
            m for m in entries if isinstance(m, dict)
        ]
        for entry in chosen[:1]:
            meta = entry.get("meta")
            meta = meta if isinstance(meta, dict) else {}
            for value in (entry.get("max_model_len"), entry.get("context_length"), meta.get("n_ctx")):
                if isinstance(value, int) and value > 0:
                    return value
    return None


_WINDOW_IN_ERROR = re.compile(
    r"(?:context window of|context length is|maximum context length is|n_ctx[ =:]+|context size[^0-9]{0,20})"
    r"\s*(\d{3,7})",
    re.I,
)


def window_in_error(exc: BaseException) -> int | None:
    """The window a server named when it refused a prompt ("exceed context window of 2048"), if any."""
    text = f"{exc} {getattr(exc, 'original_exception', '')}"
    m = _WINDOW_IN_ERROR.search(text)
    return int(m.group(1)) if m else None
