"""Command line: parse flags, load the configuration, and start the REPL (TTY) or piped mode."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .configuration.config import load_config
from .errors import ConfigError
from .printable import show
from .runtime import LocalRuntime
from .session import Session
from .version import __version__

if TYPE_CHECKING:
    import argparse

    from .configuration.config import Config


def build_parser() -> argparse.ArgumentParser:
    """The one place the command line is declared (argparse loads only when there are flags to parse)."""
    import argparse  # only with flags: not at every start-up

    parser = argparse.ArgumentParser(
        prog="pyaichat",
        description="A Python REPL with an AI assistant that can look at (never change) your live session.",
        epilog="pyaichat mcp [--existing FILE | --kernel NAME | --server URL] serves a session to an agent "
        "that starts a command (Claude Code, Codex, Cursor…) over stdio: the running REPL it finds (after "
        "/mcp on or --mcp), or a Jupyter kernel; pyaichat mcp --help says more.",
    )
    parser.add_argument("--model", help="litellm model string, e.g. gpt-4o-mini, ollama/qwen2.5-coder")
    parser.add_argument("--api-base", dest="api_base", help="base URL of the provider or compatible server")
    parser.add_argument("--max-steps", dest="max_steps", type=int, help="most tool steps per answer")
    parser.add_argument("--config", help="config file (default: $XDG_CONFIG_HOME/pyaichat/config.toml)")
    parser.add_argument(
        "--mcp-config",
        dest="mcp_config",
        metavar="FILE.json",
        help="MCP servers the assistant may use, in the mcpServers JSON of Claude Desktop, Cursor or VS Code",
    )
    parser.add_argument("--no-color", dest="color", action="store_false", default=None, help="no colours")
    parser.add_argument("--version", action="version", version=f"pyaichat {__version__}")
    parser.add_argument(
        "--mcp",
        action="store_true",
        default=None,
        help="serve this session to outside agents over MCP from the start (as /mcp on does)",
    )
    parser.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="SNAPSHOT",
        help="bring back the last session's conversation and inputs, and the variables of SNAPSHOT (default: "
        "the last session's own last /snapshot, if it took one)",
    )
    from .configuration.kernel_flags import add_kernel_flags  # with the other flags

    add_kernel_flags(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # The start-up only allocates what lives as long as the process (modules, classes, functions): the cyclic
    # garbage collector would run dozens of times for nothing, ~10% of the time to the first prompt. It
    # resumes before any user code runs (piped: below; terminal: once the first prompt is drawn).
    gc.disable()
    try:
        return _main(argv)
    finally:
        gc.enable()


def _main(argv: Sequence[str] | None) -> int:
    # litellm fetches a price list from the internet on import unless told otherwise; pyaichat never does.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["mcp"]:  # `pyaichat mcp`: the stdio MCP server an agent starts (not a REPL)
        from .mcpserve.bridge_cli import main as mcp_main  # the stdio bridge only: no REPL is loaded

        gc.enable()
        return mcp_main(argv[1:])
    # Without flags there is nothing to parse; building the parser costs ~4 ms of start-up (it imports
    # shutil).
    flags = vars(build_parser().parse_args(argv)) if argv else {}
    try:
        config = load_config(
            {key: flags.get(key) for key in ("model", "api_base", "max_steps", "color", "mcp_config")},
            config_file=flags.get("config"),
        )
        if flags.get("mcp_config"):  # named on the command line: a mistake in it is told now, not later
            from .configuration.mcp_servers import read_json_file  # only with --mcp-config

            read_json_file(flags["mcp_config"])
    except ConfigError as exc:
        show(f"pyaichat: {exc}", file=sys.stderr)
        return 2

    first = _first_inputs(flags)
    if flags:
        from .configuration.kernel_flags import server_misuse  # the flags' own module: loaded with the parser

        misuse = server_misuse(flags)
        if misuse:
            show(f"pyaichat: {misuse}", file=sys.stderr)
            return 2
    if flags.get("server") is not None:  # a kernel on a Jupyter Server or JupyterHub
        from .attach import run_server  # Jupyter: only with --server

        gc.enable()
        return run_server(config, flags, first)
    if flags.get("existing") is not None or flags.get("kernel"):  # the data lives in a Jupyter kernel
        from .attach import run_attached  # Jupyter: only with these flags

        gc.enable()  # the Jupyter start-up dwarfs what a paused collector saves
        return run_attached(config, existing=flags["existing"], kernel=flags.get("kernel"), first=first)
    terminal = sys.stdin.isatty() and sys.stdout.isatty()
    supervised = _supervised(config, terminal)  # the parent stays here as the supervisor, never returning
    runtime = LocalRuntime(Session(config=config))
    try:
        if terminal:
            from .repl.app import run_repl  # the terminal front end: not when piped

            return run_repl(runtime, first=first, supervised=supervised)
        from .assemble import assemble  # the session's parts: only once it is known which front end
        from .piped import PlainFrontEnd, run_piped  # the piped front end: not in a terminal

        gc.enable()
        return run_piped(assemble(runtime, PlainFrontEnd()), first=first, supervised=supervised)
    except SystemExit as exc:  # user code called exit()/sys.exit()
        return _exit_code(exc)
    except KeyboardInterrupt:
        return 130


def _supervised(config: Config, terminal: bool) -> Any:
    """Checkpoints for this session (``checkpoints``): the link to the supervisor forked now — the process
    the shell started becomes it and never returns from here — or why there is none, in one sentence."""
    off = " /undo takes back the last approved proposal only."
    if config.checkpoints == "off":
        return "Checkpoints are off (the checkpoints setting)." + off
    if not terminal and config.checkpoints != "on":
        return 'Checkpoints are off for piped input (checkpoints = "on" keeps them).' + off
    if not hasattr(os, "fork"):
        return "This system has no fork(), so checkpoints are off." + off
    from .checkpoints.launch import start  # only where checkpoints are kept

    return start(config.checkpoint_memory)


def _first_inputs(flags: dict[str, object]) -> list[str]:
    """What runs before the first prompt: ``--resume [SNAPSHOT]`` is the ``/resume`` command, ``--mcp`` is
    ``/mcp on``."""
    first = ["/mcp on"] if flags.get("mcp") else []
    resume = flags.get("resume")
    if resume is None:
        return first
    if not resume:
        return ["/resume", *first]
    import shlex  # only with --resume FILE

    return [f"/resume {shlex.quote(str(resume))}", *first]


def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    show(str(code), file=sys.stderr)
    return 1
