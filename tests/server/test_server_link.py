"""The link itself: a dropped websocket is made again without losing the session (one line says so), a
self-signed server is refused unless ``--insecure`` (and why), a slow link shows in ``/status``."""

from __future__ import annotations

import datetime
import ipaddress
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_process import CuttableProxy, JupyterServer, start_server

from pyaichat.configuration.config import Config
from pyaichat.runtime import KernelUnavailable
from pyaichat.runtime.jupyter_server.kernels import attach, running
from pyaichat.runtime.jupyter_server.rest import ServerAPI, ServerError, parse_address

pytestmark = pytest.mark.e2e


@pytest.fixture
def proxy(jupyter: JupyterServer) -> Iterator[CuttableProxy]:
    proxy = CuttableProxy(jupyter.port)
    yield proxy
    proxy.close()


def _through(proxy: CuttableProxy, jupyter: JupyterServer, kernel_id: str):
    address, _ = parse_address(f"http://127.0.0.1:{proxy.port}/")
    api = ServerAPI(address, jupyter.token)
    entry = next(e for e in running(api) if e.id == kernel_id)
    return attach(api, entry, Config(audit=False, color=False))


def test_a_dropped_websocket_is_made_again_and_the_running_input_finishes(
    jupyter: JupyterServer, proxy: CuttableProxy, capsys
) -> None:
    kernel_id = jupyter.start_kernel()
    runtime = _through(proxy, jupyter, kernel_id)
    try:
        runtime.run("import time\nx = 5")
        capsys.readouterr()
        results = []
        cell = threading.Thread(
            target=lambda: results.append(runtime.run("time.sleep(3)\nprint('finished')\ny = x * 2"))
        )
        cell.start()
        time.sleep(1.0)
        proxy.cut()  # the link drops while the kernel runs the input
        cell.join(60)
        assert not cell.is_alive()
        (result,) = results
        assert result.ok and result.output == "finished\n"  # what the kernel sent meanwhile, replayed
        said = capsys.readouterr()
        assert "finished" in said.out
        assert said.err.startswith("pyaichat: The link to the server dropped; reconnected after ")
        assert said.err.count("\n") == 1  # one line
        assert runtime.run("y").output.strip() == "10"  # the same kernel, its variables intact
        assert runtime.call("get_type", {"expr": "y"}).ok  # the helper's comm survived too
        assert runtime.kernel.client.drops == 1
        proxy.cut()  # and again, while idle
        time.sleep(0.5)
        assert runtime.run("x + y").output.strip() == "15"
        assert runtime.kernel.client.drops == 2
    finally:
        runtime.close()


def test_a_link_that_stays_down_ends_in_one_sentence(jupyter: JupyterServer, capsys, monkeypatch) -> None:
    from pyaichat.runtime.jupyter_server import kernel_socket

    monkeypatch.setattr(kernel_socket, "RECONNECT_FOR", 1.0)  # the bound, not the mechanism, is shortened
    proxy = CuttableProxy(jupyter.port)
    kernel_id = jupyter.start_kernel()
    runtime = _through(proxy, jupyter, kernel_id)
    try:
        runtime.run("z = 1")
        proxy.close()  # nothing listens there any more
        deadline = time.monotonic() + 20
        while runtime.kernel.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        with pytest.raises(KernelUnavailable) as caught:
            runtime.run("z")
        assert str(caught.value) == (
            "The link to the server dropped and could not be made again within 1 s: Nothing answers at "
            f"http://127.0.0.1:{proxy.port}/: is the server running, and is the address right?"
        )
        result = runtime.call("get_type", {"expr": "z"})
        assert not result.ok and result.error == str(caught.value)
    finally:
        runtime.close()
    assert kernel_id in jupyter.kernel_ids()  # the kernel itself never noticed


def test_a_slow_link_shows_in_the_attach_line_and_status(jupyter: JupyterServer) -> None:
    proxy = CuttableProxy(jupyter.port, delay=0.15)  # 150 ms each way
    kernel_id = jupyter.start_kernel()
    try:
        runtime = _through(proxy, jupyter, kernel_id)
        try:
            assert " over a slow link (" in runtime.describe()
            lines = runtime.kernel.status_lines()
            trip = int(lines[-1].split("), ")[1].split(" ms")[0])
            assert trip >= 300, lines
        finally:
            runtime.close()
    finally:
        proxy.close()


# -- TLS ----------------------------------------------------------------------------------------------------
def _self_signed(directory: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .sign(key, hashes.SHA256())
    )
    certfile, keyfile = directory / "cert.pem", directory / "key.pem"
    certfile.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    keyfile.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return certfile, keyfile


def test_a_self_signed_server_is_refused_unless_insecure(tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    certfile, keyfile = _self_signed(tmp_path)
    server = start_server(tmp_path / "tls", certfile=certfile, keyfile=keyfile)
    try:
        kernel_id = server.start_kernel()
        address, _ = parse_address(server.url)
        with pytest.raises(ServerError) as caught:
            ServerAPI(address, server.token).kernels()
        text = str(caught.value)
        assert text.startswith(f"The TLS certificate of {server.url} cannot be trusted (self-signed")
        assert "anyone between you and the server could then read the token" in text
        assert text.endswith("run again with --insecure.")
        address, _ = parse_address(server.url, insecure=True)
        api = ServerAPI(address, server.token)
        entry = next(e for e in running(api) if e.id == kernel_id)
        runtime = attach(api, entry, Config(audit=False, color=False))  # the websocket is wss:// too
        try:
            assert runtime.run("'over tls'").output.strip() == "'over tls'"
        finally:
            runtime.close()
    finally:
        server.stop()


def test_a_drop_while_another_client_is_attached_loses_the_output_and_says_so(
    jupyter: JupyterServer, proxy: CuttableProxy
) -> None:
    """The server replays what the kernel sent during a drop only when no other client is attached; with a
    notebook open in a browser it keeps nothing, so the reply never comes: one sentence, not a hang."""
    from conftest import attach_to

    kernel_id = jupyter.start_kernel()
    browser = attach_to(jupyter, kernel_id)  # another client, straight to the server
    runtime = _through(proxy, jupyter, kernel_id)
    try:
        runtime.run("import time\nx = 5")
        results: list[object] = []

        def run() -> None:
            try:
                results.append(runtime.run("time.sleep(2)\ny = x * 2"))
            except KernelUnavailable as exc:
                results.append(exc)

        cell = threading.Thread(target=run)
        cell.start()
        time.sleep(0.7)
        proxy.cut(hold=2.5)  # down until after the kernel has answered
        cell.join(60)
        assert not cell.is_alive()
        (outcome,) = results
        assert isinstance(outcome, KernelUnavailable), outcome
        assert str(outcome).startswith("The link to the server dropped while this input ran, and the server")
        assert runtime.run("y").output.strip() == "10"  # the kernel ran it all the same
    finally:
        runtime.close()
        browser.close()
