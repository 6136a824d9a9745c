"""A Jupyter Server's REST API, as ``pyaichat --server URL`` uses it: the address, the token, and each answer
or failure turned into one sentence.

The address is what a person has: ``http://127.0.0.1:8888/lab?token=…`` as ``jupyter server`` prints it,
a JupyterHub user's ``https://hub.example.org/user/ada/lab/tree/x.ipynb``, or just the server's root. The UI
part (``/lab``, ``/tree``, …) and the query are dropped; the token travels only in the ``Authorization``
header, never in a URL a proxy or the server's access log would keep. Only the standard library (``urllib``):
a handful of small requests do not justify an HTTP client's start-up, and redirects are not followed, so a
hub that answers a bad token with its login page is recognised instead of parsed as a kernel list.

Every failure is a ``ServerError`` (a ``KernelUnavailable``) whose text is the sentence the user reads.
"""

from __future__ import annotations

import json
import socket
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit, urlunsplit

from .. import KernelUnavailable

TIMEOUT = 10.0  # seconds for one REST request
# The path segments where a Jupyter UI starts: the server's base URL is what comes before them.
UI_SEGMENTS = ("lab", "tree", "notebooks", "doc", "edit", "voila", "api", "terminals", "retro", "nbclassic")


class ServerError(KernelUnavailable):
    """A Jupyter Server could not be used; the text is the one sentence the user reads."""


class TokenRefused(ServerError):
    """The server refused the token (or asked for one): another token may work."""


@dataclass(frozen=True)
class ServerAddress:
    """Where a Jupyter Server (or a JupyterHub user's server) answers."""

    base: str  # the server's base URL, with a trailing "/" and no query: "https://hub/user/ada/"
    insecure: bool = False  # accept a TLS certificate that cannot be verified (--insecure)

    @property
    def shown(self) -> str:
        """The address for messages (the same as ``base``: it never holds a token)."""
        return self.base

    @property
    def hub_user(self) -> str | None:
        """The JupyterHub user name when the address is a hub user's server (``…/user/NAME/[SERVER/]``)."""
        parts = urlsplit(self.base).path.strip("/").split("/")
        return parts[parts.index("user") + 1] if "user" in parts[:-1] else None

    @property
    def root(self) -> str:
        """The scheme and host: where a hub's own pages (``/hub/…``) are."""
        split = urlsplit(self.base)
        return urlunsplit((split.scheme, split.netloc, "/", "", ""))

    def url(self, path: str) -> str:
        return self.base + path.lstrip("/")

    def ws_url(self, path: str) -> str:
        url = self.url(path)
        return "wss" + url[5:] if url.startswith("https") else "ws" + url[4:]


def parse_address(text: str, *, insecure: bool = False) -> tuple[ServerAddress, str | None]:
    """The server's address in ``text`` (as a browser shows it) and the token found in its query, if any."""
    text = text.strip()
    if "://" not in text:
        text = "http://" + text
    split = urlsplit(text)
    if split.scheme not in ("http", "https") or not split.hostname:
        raise ServerError(f"{_without_query(text)} is not a server address: give one like http://host:8888/.")
    tokens = parse_qs(split.query).get("token")
    token = tokens[0] if tokens else None
    segments = [s for s in split.path.split("/") if s]
    for index, segment in enumerate(segments):
        if segment in UI_SEGMENTS or (segment == "hub" and index == 0):
            segments = segments[:index]
            break
    path = "/" + "".join(f"{s}/" for s in segments)
    return ServerAddress(urlunsplit((split.scheme, split.netloc, path, "", "")), insecure), token


def _without_query(url: str) -> str:
    split = urlsplit(url)
    return urlunsplit((split.scheme, split.netloc, split.path, "", ""))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects come back as answers: a hub's login page is not a kernel list."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def ssl_context(insecure: bool) -> ssl.SSLContext:
    """The TLS context for the REST calls and the websocket: verified unless ``--insecure``."""
    if not insecure:
        return ssl.create_default_context()
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class ServerAPI:
    """The REST calls pyaichat makes to one Jupyter Server, with its token."""

    def __init__(self, address: ServerAddress, token: str | None, *, timeout: float = TIMEOUT) -> None:
        self.address = address
        self._token = token or None
        self.timeout = timeout
        self._opener = urllib.request.build_opener(
            _NoRedirect(), urllib.request.HTTPSHandler(context=ssl_context(address.insecure))
        )

    def __repr__(self) -> str:  # never the token
        return f"ServerAPI({self.address.base!r})"

    def set_token(self, token: str | None) -> None:
        """Use ``token`` from now on (the person typed another)."""
        self._token = token or None

    @property
    def has_token(self) -> bool:
        return self._token is not None

    def headers(self) -> dict[str, str]:
        """The request headers: the token goes here and nowhere else."""
        return {"Authorization": f"token {self._token}"} if self._token else {}

    # -- the calls -------------------------------------------------------------------------------------------
    def version(self) -> str:
        """The server's version (``GET /api``), checking the address is a Jupyter Server at all."""
        info = self.call("GET", "api")
        if not isinstance(info, dict) or "version" not in info:
            raise self._not_jupyter()
        return str(info["version"])

    def kernels(self) -> list[dict[str, Any]]:
        """The running kernels: ``id``, ``name``, ``execution_state``, ``last_activity``, ``connections``."""
        return list(self.call("GET", "api/kernels") or [])

    def sessions(self) -> list[dict[str, Any]]:
        """The notebook (and console) sessions: each names its ``path`` and its ``kernel``."""
        return list(self.call("GET", "api/sessions") or [])

    def kernelspecs(self) -> dict[str, Any]:
        """``{"default": name, "kernelspecs": {name: {"spec": {...}}}}``."""
        return dict(self.call("GET", "api/kernelspecs") or {})

    def kernel(self, kernel_id: str) -> dict[str, Any] | None:
        """One kernel's model, or ``None`` when the server runs no such kernel (any more)."""
        try:
            return dict(self.call("GET", f"api/kernels/{quote(kernel_id)}"))
        except _NotFound:
            return None

    def start_kernel(self, name: str | None) -> dict[str, Any]:
        body = {"name": name} if name else {}
        try:
            return dict(self.call("POST", "api/kernels", body))
        except ServerError as exc:
            if isinstance(exc, TokenRefused):
                raise
            raise ServerError(f"The server could not start a {name or 'default'} kernel: {exc}")

    def interrupt(self, kernel_id: str) -> None:
        self.call("POST", f"api/kernels/{quote(kernel_id)}/interrupt", {})

    def restart(self, kernel_id: str) -> None:
        self.call("POST", f"api/kernels/{quote(kernel_id)}/restart", {})

    def shutdown(self, kernel_id: str) -> None:
        try:
            self.call("DELETE", f"api/kernels/{quote(kernel_id)}")
        except _NotFound:
            pass  # gone already

    # -- one request -----------------------------------------------------------------------------------------
    def call(self, method: str, path: str, body: Any = None) -> Any:
        """One request; its JSON answer (``None`` for an empty one). Raises ``ServerError`` (one sentence)."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.address.url(path), data=data, method=method)
        for key, value in self.headers().items():
            request.add_header(key, value)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise self._refusal(exc.code, exc.headers.get("Location") or "", path)
        except (urllib.error.URLError, OSError) as exc:
            raise self.unreachable(getattr(exc, "reason", exc))
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise self._not_jupyter()

    # -- the sentences ---------------------------------------------------------------------------------------
    def unreachable(self, reason: Any) -> ServerError:
        """The sentence for a server that cannot be reached at all (also for the websocket)."""
        shown = self.address.shown
        if isinstance(reason, ssl.SSLCertVerificationError):
            why = reason.verify_message or "it cannot be verified"
            return ServerError(
                f"The TLS certificate of {shown} cannot be trusted ({why}; self-signed?): pyaichat refuses "
                "it, since anyone between you and the server could then read the token and your data; if "
                "you know this server, run again with --insecure."
            )
        if isinstance(reason, ssl.SSLError):
            return ServerError(
                f"The TLS handshake with {shown} failed ({reason.reason or reason}): does the server speak "
                "https at that address (or http)?"
            )
        if isinstance(reason, socket.gaierror):
            host = urlsplit(shown).hostname
            return ServerError(f"The host {host} is unknown: check the server's address ({shown}).")
        if isinstance(reason, (TimeoutError, socket.timeout)):
            return ServerError(
                f"{shown} did not answer within {self.timeout:g} s (a slow link, or no server)."
            )
        if isinstance(reason, ConnectionRefusedError):
            return ServerError(
                f"Nothing answers at {shown}: is the server running, and is the address right?"
            )
        return ServerError(f"Cannot reach {shown} ({reason}).")

    def _refusal(self, code: int, location: str, path: str) -> ServerError:
        shown = self.address.shown
        if code in (301, 302, 303, 307, 308):
            where = urlsplit(location).path
            # a hub sends a request for a stopped server to its own /hub/user/NAME/… (or the spawn page)
            if "/hub/spawn" in where or f"/hub/user/{self.address.hub_user}/" in where + "/":
                return self._not_running()
            if "login" in where or "oauth2/authorize" in where:
                hub = "/hub/" in where
                return TokenRefused(
                    (
                        "The hub answered with its login page instead of your server: the token is wrong or "
                        f"has expired (a hub wants an API token: make one at {self.address.root}hub/token)."
                    )
                    if hub
                    else f"{shown} answered with its login page: the token is missing, wrong or expired."
                )
            if where.startswith("/hub/") and self.address.hub_user is None:  # the hub itself, not a server
                return ServerError(
                    f"{shown} is a JupyterHub: give the address of your own server on it, "
                    f"{self.address.root}user/NAME/ (as your browser shows it once your server runs)."
                )
            return ServerError(
                f"{shown} sent pyaichat elsewhere ({_without_query(location)}): give the address of the "
                "Jupyter Server itself."
            )
        if code in (401, 403) and self.address.hub_user and self.has_token:
            return TokenRefused(
                f"The hub refused the token for {shown} (wrong or expired): make a new one at "
                f"{self.address.root}hub/token and pass it in JUPYTER_TOKEN."
            )
        if code in (401, 403):
            return TokenRefused(
                f"{shown} refused the token (wrong or expired): get the current one (`jupyter server list` "
                "on the server's machine, or the hub's Token page) and pass it in JUPYTER_TOKEN."
                if self.has_token
                else f"{shown} wants a token: set JUPYTER_TOKEN, or run pyaichat in a terminal to be asked."
            )
        if code in (424, 503) and self.address.hub_user:
            return self._not_running()
        if code == 404:
            if path == "api":
                return self._not_jupyter()
            return _NotFound(f"{shown} has no {path}.")
        return ServerError(f"{shown} failed to answer {path} (HTTP {code}).")

    def _not_running(self) -> ServerError:
        return ServerError(
            f"Your server on the hub is not running: start it from {self.address.root}hub/home and try again."
        )

    def _not_jupyter(self) -> ServerError:
        return ServerError(
            f"{self.address.shown} is not a Jupyter Server (it has no /api): give the address your browser "
            "shows before /lab or /tree."
        )


class _NotFound(ServerError):
    """404 for a path that may legitimately be gone (a kernel shut down meanwhile)."""
