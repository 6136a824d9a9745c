"""Every setting as plain data: the one declaration of names, kinds, defaults, bounds and descriptions.

``config.Config`` takes its slots, defaults and checks from this table (its annotations restate each kind for
readers and type checkers; ``tests/core/test_config_values.py`` holds the two together), and
``configuration.sources`` the environment variables to read. Plain data on purpose: no ``dataclasses`` or
``NamedTuple`` (both generate and compile code as the class is made, that is at import), so loading the table
costs the start-up next to nothing.

A setting whose default is ``None`` is optional (``X | None`` in ``Config``); any other is not.
"""

from __future__ import annotations

from typing import Any


class Setting:
    """One setting: what the config file key, ``PYAICHAT_<NAME>`` and ``Config.<name>`` accept.

    ``kind`` is the type in ``Config``: ``str``, ``int``, ``float``, ``bool``, ``secret`` (``config.Secret``),
    ``choice`` (``Literal[*choices]``), ``strlist`` (``tuple[str, ...]``, from the environment
    comma-separated) or ``servers`` (``tuple[ServerSpec, ...]``: the config file's ``[mcp_servers.NAME]``
    tables, ``configuration.mcp_servers``) or ``rules`` (``configuration.mcp_tool_rules.Rules``: the
    ``[mcp_tool_rules]`` table).
    """

    __slots__ = ("bounds", "choices", "default", "description", "kind", "name")

    def __init__(
        self,
        name: str,
        kind: str,
        *,
        default: Any = None,
        choices: tuple[str, ...] = (),
        ge: float | None = None,
        gt: float | None = None,
        le: float | None = None,
        lt: float | None = None,
        description: str,
    ) -> None:
        self.name, self.kind, self.default = name, kind, default
        self.choices, self.description = choices, description
        given = {"ge": ge, "gt": gt, "le": le, "lt": lt}
        self.bounds: dict[str, float] = {key: bound for key, bound in given.items() if bound is not None}

    def default_value(self) -> Any:
        """The value a configuration holds when nobody sets this one."""
        return self.default

    def __repr__(self) -> str:
        return f"Setting({', '.join(f'{k}={getattr(self, k)!r}' for k in self.__slots__)})"


def _table(*settings: Setting) -> dict[str, Setting]:
    return {setting.name: setting for setting in settings}


SETTINGS = _table(
    Setting("model", "str", description="litellm model string, e.g. gpt-4o-mini or ollama/qwen2.5-coder"),
    Setting("api_base", "str", description="base URL of the provider or an OpenAI-compatible server"),
    Setting("api_key", "secret", description="API key; else the provider's own variable is used"),
    Setting("max_steps", "int", default=8, ge=1, le=100, description="most tool-calling steps per answer"),
    Setting(
        "turn_timeout",
        "float",
        default=120.0,
        gt=0,
        le=3600,
        description="seconds one answer may take in all",
    ),
    Setting(
        "request_timeout",
        "float",
        default=60.0,
        gt=0,
        le=3600,
        description="seconds one LLM request may take",
    ),
    Setting(
        "tool_timeout",
        "float",
        default=2.0,
        gt=0,
        le=600,
        description="seconds one capability call may take",
    ),
    Setting(
        "max_output_chars",
        "int",
        default=4000,
        ge=200,
        le=200_000,
        description="characters one capability may return",
    ),
    Setting(
        "context_tokens",
        "int",
        default=8000,
        ge=1000,
        le=1_000_000,
        description="token budget for the context",
    ),
    Setting(
        "privacy",
        "choice",
        default="sample",
        choices=("names", "schema", "sample", "full"),
        description="what capabilities may reveal: names < schema < sample < full",
    ),
    Setting(
        "sandbox_isolation",
        "choice",
        default="auto",
        choices=("auto", "fork", "inprocess"),
        description="run generated code in a forked child (auto: where the platform can fork)",
    ),
    Setting("secret_names", "strlist", default=(), description="extra name patterns to treat as secret"),
    Setting("secret_patterns", "strlist", default=(), description="extra regexes to mask in any text"),
    Setting("audit", "bool", default=True, description="append every capability call to audit.jsonl"),
    Setting(
        "autosave",
        "choice",
        default="auto",
        choices=("auto", "on", "off"),
        description="keep the conversation and inputs for --resume (auto: in a terminal, not piped)",
    ),
    Setting(
        "checkpoints",
        "choice",
        default="auto",
        choices=("auto", "on", "off"),
        description="keep a paused copy of the session before each input, for /undo and crashes (auto: REPL)",
    ),
    Setting(
        "checkpoint_memory",
        "float",
        gt=0,
        le=1_000_000,
        description="GB the checkpoints' own memory may take (unset: half of what is available at start)",
    ),
    Setting("budget_usd", "float", gt=0, description="stop asking once the session has cost this much"),
    Setting(
        "color",
        "bool",
        default=True,
        description="coloured output (--no-color or NO_COLOR turn it off)",
    ),
    Setting(
        "editing_mode",
        "choice",
        default="emacs",
        choices=("emacs", "vi"),
        description="key bindings of the prompt",
    ),
    Setting(
        "receipts",
        "bool",
        default=True,
        description="check each number of an answer against the results its tools showed",
    ),
    Setting(
        "max_tokens",
        "int",
        default=1024,
        ge=16,
        le=200_000,
        description="most tokens one model reply may have (less if the window is full)",
    ),
    Setting(
        "context_window",
        "int",
        ge=512,
        le=10_000_000,
        description="the model's context window in tokens (unset: ask the model)",
    ),
    Setting("temperature", "float", ge=0, le=2, description="sampling temperature (unset: provider's)"),
    Setting("seed", "int", description="sampling seed, for repeatable local-model answers"),
    Setting(
        "tool_protocol",
        "choice",
        default="auto",
        choices=("auto", "native", "text"),
        description="tool calling: native function calls, the text protocol, or auto (by the model)",
    ),
    Setting(
        "suggest_model",
        "str",
        description="model for ghost-text suggestions in Python mode (unset: off); it gets what you type",
    ),
    Setting(
        "suggest_api_base",
        "str",
        description="base URL for suggest_model (unset: api_base if the same provider, else its default)",
    ),
    Setting(
        "mcp_servers",
        "servers",
        default=(),
        description="MCP servers the assistant may use: one [mcp_servers.NAME] table each",
    ),
    Setting(
        "mcp_tool_rules",
        "rules",
        default=(),
        description='[mcp_tool_rules] for MCP tools: "git__git_*" = "ask", "*__delete*" = "deny" (deny wins)',
    ),
    Setting(
        "mcp_config",
        "str",
        description="an mcpServers JSON file (Claude Desktop, Cursor, VS Code) whose servers it may use",
    ),
    Setting(
        "mcp_start_timeout",
        "float",
        default=20.0,
        gt=0,
        le=600,
        description="seconds an MCP server may take to start and list its tools",
    ),
    Setting(
        "mcp_call_timeout",
        "float",
        default=60.0,
        gt=0,
        le=3600,
        description="seconds one MCP tool call may take",
    ),
    Setting(
        "mcp_tool_tokens",
        "int",
        default=1000,
        ge=0,
        le=1_000_000,
        description="tokens MCP tools may add to a request in full; past it, names and first lines",
    ),
    Setting(
        "mcp_serve_host",
        "str",
        description="where /mcp on listens (default 127.0.0.1; other hosts are reachable from elsewhere)",
    ),
    Setting(
        "mcp_serve_busy_wait",
        "float",
        default=15.0,
        gt=0,
        le=600,
        description="seconds an outside agent's call waits while your own input runs, then is told busy",
    ),
    Setting(
        "mcp_serve_proposal_wait",
        "float",
        default=300.0,
        gt=0,
        le=86_400,
        description="seconds an outside agent's proposed code waits for your answer before it is withdrawn",
    ),
    Setting(
        "mcp_serve_show_calls",
        "bool",
        default=True,
        description="show each outside agent's call as one quiet line at the prompt",
    ),
    Setting(
        "mcp_serve_quiet",
        "bool",
        default=False,
        description="of outside agents' calls, show only refusals (and proposals, in their panel)",
    ),
)

# From the environment these are comma-separated.
LIST_SETTINGS = frozenset(name for name, setting in SETTINGS.items() if setting.kind == "strlist")


def closest_setting(name: str) -> str | None:
    """The setting a mistyped ``name`` most likely meant (``max_step`` → ``max_steps``), if one is close."""
    from difflib import get_close_matches  # only for a name that is not a setting

    found = get_close_matches(name.lower(), SETTINGS, n=1, cutoff=0.6)
    return found[0] if found else None
