"""The server's address as a person has it, and the sentences for the servers people meet: each against a real
server (or a real socket that answers as a hub or a plain web server does)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from pyaichat.runtime.jupyter_server.kernels import KernelEntry, pick
from pyaichat.runtime.jupyter_server.rest import ServerAPI, ServerError, TokenRefused, parse_address


@pytest.mark.parametrize(
    ("given", "base", "token"),
    [
        ("http://127.0.0.1:8888/lab?token=abc123", "http://127.0.0.1:8888/", "abc123"),
        ("127.0.0.1:8888", "http://127.0.0.1:8888/", None),
        ("https://hub.example.org/user/ada/lab/tree/work/x.ipynb", "https://hub.example.org/user/ada/", None),
        ("https://hub.example.org/user/ada/", "https://hub.example.org/user/ada/", None),
        ("https://hub.example.org/user/ada/gpu/lab", "https://hub.example.org/user/ada/gpu/", None),
        ("https://hub.example.org/hub/home", "https://hub.example.org/", None),
        ("http://box:8888/jupyter/tree?token=t#x", "http://box:8888/jupyter/", "t"),
    ],
)
def test_the_address_as_the_browser_shows_it(given: str, base: str, token: str | None) -> None:
    address, found = parse_address(given)
    assert (address.base, found) == (base, token)
    assert "token" not in address.shown


def test_a_hub_user_and_the_websocket_address() -> None:
    address, _ = parse_address("https://hub.example.org/user/ada/lab")
    assert address.hub_user == "ada"
    assert address.root == "https://hub.example.org/"
    assert address.ws_url("api/kernels/k/channels").startswith("wss://hub.example.org/user/ada/api/")


def test_not_an_address_is_one_sentence() -> None:
    with pytest.raises(ServerError, match="is not a server address"):
        parse_address("ftp://example.org/")


ENTRIES = [
    KernelEntry("3f2a9c1d-0000", "python3", "idle", "", paths=("work/sales.ipynb",)),
    KernelEntry("3f2b0000-1111", "python3", "busy", "", paths=("scratch/sales.ipynb",)),
    KernelEntry("77b0e412-2222", "ir", "idle", "", paths=()),
]


def test_pick_by_id_prefix_and_by_notebook() -> None:
    assert pick(ENTRIES, kernel_id="77b0").id.startswith("77b0")
    assert pick(ENTRIES, kernel_id="3f2a9c1d-0000").id == "3f2a9c1d-0000"
    assert pick(ENTRIES, notebook="work/sales.ipynb").id.startswith("3f2a")
    assert pick(ENTRIES, notebook="/scratch/sales.ipynb").id.startswith("3f2b")
    with pytest.raises(ServerError, match=r"Several kernels match .*3f2a9c1d, 3f2b0000"):
        pick(ENTRIES, kernel_id="3f2")
    with pytest.raises(ServerError, match=r"Several kernels match a notebook 'sales.ipynb'"):
        pick(ENTRIES, notebook="sales.ipynb")
    with pytest.raises(ServerError, match=r"runs no kernel 9999 \(3 kernels running; --list shows them\)"):
        pick(ENTRIES, kernel_id="9999")


# -- what people meet: each a real answer over a real socket -------------------------------------------------
class _Answer(http.server.BaseHTTPRequestHandler):
    """A web server that answers every request the same way (``status``, ``location``, ``body``)."""

    status = 200
    location = ""
    body = b"<html>hello</html>"

    def do_GET(self) -> None:
        self.send_response(self.status)
        if self.location:
            self.send_header("Location", self.location)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def answering() -> Iterator[object]:
    servers = []

    def serve(status: int, location: str = "", body: bytes = b"<html>hello</html>") -> str:
        handler = type("Handler", (_Answer,), {"status": status, "location": location, "body": body})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


def _api(url: str, token: str | None = "t0ken") -> ServerAPI:
    return ServerAPI(parse_address(url)[0], token)


def test_a_hub_that_answers_with_its_login_page(answering) -> None:
    # JupyterHub: a user's server that is not running, asked with a bad token, sends the login page
    root = answering(302, "/hub/login?next=%2Fuser%2Fada%2Fapi%2Fkernels")
    with pytest.raises(TokenRefused) as caught:
        _api(f"{root}/user/ada/").kernels()
    text = str(caught.value)
    assert text.startswith("The hub answered with its login page instead of your server")
    assert f"{root}/hub/token" in text and "t0ken" not in text


def test_a_hub_whose_server_is_not_running(answering) -> None:
    root = answering(302, "/hub/user/ada/api/kernels")
    with pytest.raises(ServerError, match=r"Your server on the hub is not running: start it from .*/hub/hom"):
        _api(f"{root}/user/ada/").kernels()
    root = answering(424, body=b'{"message": "ada is not running"}')
    with pytest.raises(ServerError, match="Your server on the hub is not running"):
        _api(f"{root}/user/ada/").kernels()


def test_a_web_server_that_is_no_jupyter_server(answering) -> None:
    root = answering(404)
    with pytest.raises(ServerError, match=r"is not a Jupyter Server \(it has no /api\)"):
        _api(root).version()
    root = answering(200)  # an HTML page where the API should be
    with pytest.raises(ServerError, match="is not a Jupyter Server"):
        _api(root).version()


def test_nothing_listening() -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ServerError, match=r"Nothing answers at http://127.0.0.1:\d+/: is the server running"):
        _api(f"http://127.0.0.1:{port}/").version()
