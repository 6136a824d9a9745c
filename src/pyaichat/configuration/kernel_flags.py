"""The command-line flags that choose a kernel (``--existing``, ``--kernel``, ``--server URL`` and its own),
which ``pyaichat`` and ``pyaichat mcp`` both take.

Declared here, apart from what they do (``runtime.jupyter_server.access``), because ``cli.build_parser`` runs
whenever there are flags: it must not load the Jupyter side to declare them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

TOKEN_HELP = (
    "the server's token (or a JupyterHub API token); better from JUPYTER_TOKEN or asked without echo, since "
    "a flag stays in the shell's history and shows in ps"
)


SERVER_ONLY = ("token", "kernel_id", "notebook", "keep", "insecure", "list")

# the help of --existing and --kernel: in the REPL (interactive), and for pyaichat mcp
_KERNEL_HELP = {
    True: (
        "run in a running Jupyter kernel (default: the newest), as jupyter console --existing does",
        "start a Jupyter kernel of this kernelspec (default python3), on the --server if given",
    ),
    False: (
        "serve a running Jupyter kernel (default: the newest), read-only",
        "start a kernel of this kernelspec and serve it",
    ),
}


def add_kernel_flags(parser: argparse.ArgumentParser, *, interactive: bool = True) -> None:
    """``--existing [FILE]`` or ``--kernel [NAME]`` (one of them), then ``--server URL`` and its flags."""
    existing, start = _KERNEL_HELP[interactive]
    kernel = parser.add_mutually_exclusive_group()
    kernel.add_argument("--existing", nargs="?", const="", metavar="CONNECTION_FILE", help=existing)
    kernel.add_argument("--kernel", nargs="?", const="python3", metavar="NAME", help=start)
    add_server_flags(parser, interactive=interactive)


def add_server_flags(parser: argparse.ArgumentParser, *, interactive: bool = True) -> None:
    """``--server URL`` and the flags that choose its kernel."""
    group = parser.add_argument_group("a kernel on a Jupyter Server or JupyterHub")
    group.add_argument(
        "--server",
        metavar="URL",
        help="a Jupyter Server or JupyterHub user server (https://hub/user/NAME/), as the browser shows it",
    )
    group.add_argument("--token", help=TOKEN_HELP)
    group.add_argument(
        "--kernel-id",
        dest="kernel_id",
        metavar="ID",
        help="the server's kernel to attach to (a prefix will do)",
    )
    group.add_argument(
        "--notebook", metavar="PATH", help="attach to the kernel of this notebook on the server (or its name)"
    )
    group.add_argument(
        "--keep",
        action="store_true",
        help="leave a kernel pyaichat started on the server running at exit (--kernel NAME --server URL)",
    )
    group.add_argument(
        "--insecure",
        action="store_true",
        help="accept a TLS certificate that cannot be verified (self-signed): only for a server you know",
    )
    if interactive:
        group.add_argument(
            "--list", action="store_true", help="list the server's kernels and notebooks, and exit"
        )


def server_misuse(flags: dict[str, object]) -> str | None:
    """Why these flags do not go together (one sentence), or ``None``."""
    if flags.get("server") is None:
        given = [key for key in SERVER_ONLY if flags.get(key)]
        return f"--{given[0].replace('_', '-')} goes with --server URL." if given else None
    if flags.get("existing") is not None:
        return (
            "--existing reaches a kernel through its connection file and --server through a server: use one."
        )
    if flags.get("kernel") and (flags.get("kernel_id") or flags.get("notebook")):
        return (
            "--kernel NAME starts a new kernel on the server, --kernel-id and --notebook attach to a running "
            "one: use one."
        )
    if flags.get("keep") and not flags.get("kernel"):
        return (
            "--keep is for a kernel pyaichat starts (--kernel NAME): one it attaches to always keeps running."
        )
    return None
