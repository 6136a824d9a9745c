"""``pyaichat --server URL`` (and ``pyaichat mcp --server URL``): from a server's address and a token to one
of its kernels, as a ``KernelRuntime``.

The token comes from ``--token``, the address's own ``?token=`` (as ``jupyter server`` prints it), or
``JUPYTER_TOKEN``; when the server refuses or wants one and a person is at the terminal, it is asked for
without echo. It goes nowhere but the ``Authorization`` header: not into a URL, a message, the history, the
audit or the resume file. The kernel is the one ``--kernel-id`` or ``--notebook`` names, a new one of
``--kernel NAME``, the only one running, or the person's choice in a short menu.
"""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ...configuration.config import Config
from ...printable import show
from .rest import ServerAPI, ServerError, TokenRefused, parse_address

if TYPE_CHECKING:
    from ..kernel import KernelRuntime
    from .kernels import KernelEntry

ASKS = 3  # tries at the token prompt and at the menu


def open_server(
    flags: Mapping[str, Any],
    config: Config,
    *,
    interactive: bool,
    ask: Callable[[str], str] = input,
    ask_secret: Callable[[str], str] = getpass.getpass,
    say: Callable[[str], None] = lambda text: show(text, file=sys.stderr),
) -> KernelRuntime | None:
    """The runtime of the kernel the flags choose (``None`` after ``--list``). Raises ``ServerError`` (one
    sentence); asks the person (token, menu) only when ``interactive``."""
    try:  # websocket-client and jupyter_client: the `server` extra
        from .kernels import attach, pick, start, table
    except ImportError as exc:
        from ...extras import install_command, package_of  # only to say how

        package = package_of(exc, "jupyter_client")
        raise ServerError(
            f"--server needs the {package} package, which is missing or broken here: "
            f"{install_command('server', also=(package,))}"
        )
    address, url_token = parse_address(str(flags["server"]), insecure=bool(flags.get("insecure")))
    token = flags.get("token") or url_token or os.environ.get("JUPYTER_TOKEN") or None
    api = ServerAPI(address, token)
    api.version()  # a Jupyter Server at all (this needs no token)
    entries = _listed(api, interactive, ask_secret, say)
    if flags.get("list"):
        show(f"Kernels on {address.shown}:" if entries else f"{address.shown} runs no kernel.")
        for line in table(entries) if entries else []:
            show(f"  {line}")
        return None
    keep = bool(flags.get("keep"))
    if flags.get("kernel"):
        return start(api, str(flags["kernel"]), config, keep=keep)
    if flags.get("kernel_id") or flags.get("notebook"):
        entry = pick(entries, kernel_id=flags.get("kernel_id"), notebook=flags.get("notebook"))
        return attach(api, entry, config)
    if len(entries) == 1:
        return attach(api, entries[0], config)
    default = str((_quiet_specs(api)).get("default") or "python3")
    if not interactive:
        if not entries:
            raise ServerError(
                f"{address.shown} runs no kernel: start one with --kernel {default} (or open a notebook "
                "there)."
            )
        raise ServerError(
            f"{address.shown} runs {len(entries)} kernels: choose one with --kernel-id or --notebook (--list "
            "shows them)."
        )
    choice = _menu(address.shown, entries, default, ask, say)
    if choice is None:
        return start(api, default, config)
    return attach(api, choice, config)


def _listed(
    api: ServerAPI, interactive: bool, ask_secret: Callable[[str], str], say: Callable[[str], None]
) -> list[KernelEntry]:
    """The running kernels, asking for the token (without echo) while the server refuses it."""
    from .kernels import running  # the server API: only with --server

    for attempt in range(ASKS + 1):
        try:
            return running(api)
        except TokenRefused as exc:
            if not interactive or attempt == ASKS:
                raise
            if api.has_token:
                say(f"pyaichat: {exc}")
            token = ask_secret(f"Token for {api.address.shown} (not shown): ").strip()
            if not token:
                raise
            api.set_token(token)
    raise AssertionError("unreachable")  # pragma: no cover


def _quiet_specs(api: ServerAPI) -> dict[str, Any]:
    try:
        return api.kernelspecs()
    except ServerError:
        return {}


def _menu(
    shown: str,
    entries: list[KernelEntry],
    default: str,
    ask: Callable[[str], str],
    say: Callable[[str], None],
) -> KernelEntry | None:
    """The person's choice: a running kernel, or ``None`` for a new one of ``default``."""
    from .kernels import table  # as above

    new = f"a new {default} kernel (shut down when pyaichat exits)"
    if not entries:  # a yes-or-no question: its capital letter is what Enter takes
        say(f"{shown} runs no kernel.")
        for _ in range(ASKS):
            answer = ask(f"Start {new}? [Y/n]: ").strip().lower()
            if answer in ("", "y", "yes"):
                return None
            if answer in ("n", "no"):
                raise ServerError("No kernel chosen; nothing was started.")
            say("Type y (or Enter) to start one, or n not to.")
        raise ServerError("No kernel chosen.")
    say(f"Kernels on {shown}:")
    for line in table(entries, numbered=True):
        say(f"  {line}")
    say(f"  n  {new}")
    for _ in range(ASKS):  # Enter takes what the prompt says it takes: the first kernel
        answer = ask(f"Attach to [1-{len(entries)}, n] (Enter: 1): ").strip().lower()
        if answer in ("n", "new"):
            return None
        if answer == "":
            return entries[0]
        if answer.isdigit() and 1 <= int(answer) <= len(entries):
            return entries[int(answer) - 1]
        say(f"Type a number from 1 to {len(entries)}, or n for a new kernel.")
    raise ServerError("No kernel chosen.")
