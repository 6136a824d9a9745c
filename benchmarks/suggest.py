"""Ghost-text suggestions: what they cost the person typing, and what they cost in requests and tokens.

Prints (asserts nothing):

1. **Keystroke echo latency** in a real pseudo-terminal, suggestions on (the scripted server answers every
   request at once) versus off, the same keys typed the same way, runs paired and alternated: p50, p90, p99
   and max, milliseconds from writing a key to its echo on the screen. The typing is a person's: about ten
   keys a second, with pauses of 0.3–0.7 s at word and statement boundaries (each pause is a request).
   The first suggestion of a run pays litellm's import in the background (3–4 s of a busy second thread);
   keys typed then are reported apart ("while loading").
2. **Requests per 100 typed characters**, from the scripted server's own count.
3. **Pause to ghost text**: from the last key of a line to the suggestion on the screen, with the scripted
   server and with the real local model (SmolLM2-135M on llama-cpp-python's server, as the realmodel tests).
4. **Tokens per suggestion** with the real local model (its own usage figures), and the prompt's size.

    .venv/bin/python benchmarks/suggest.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import random
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakes.openai_server import ScriptedServer  # noqa: E402

SETUP = [
    "import pandas as pd",
    "sales = pd.DataFrame({'region_code': ['N', 'S', 'N'], 'units': [3, 1, 2]})",
    "sales['net_revenue' + '_eur_q3'] = [1.0, 2.5, 4.0]",
]
TYPED = [
    'by_region = sales.groupby("region_code")["net_revenue_eur_q3"].sum()',
    "top = by_region.sort_values(ascending=False).head(2)",
    "share = (sales.net_revenue_eur_q3 / sales.net_revenue_eur_q3.sum()).round(3)",
    "for code, rows in sales.groupby('region_code'):",
]
PAUSE_AFTER = set(" .([,=")


class Terminal:
    """``python -m pyaichat`` in a pseudo-terminal, read raw."""

    def __init__(self, env: dict[str, str]) -> None:
        import pty

        self.master, slave = pty.openpty()
        os.set_blocking(self.master, False)
        import fcntl
        import struct
        import termios

        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pyaichat"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.seen = b""

    def read(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return b""
        try:
            data = os.read(self.master, 65536)
        except OSError:
            return b""
        self.seen += data
        return data

    def drain(self, quiet: float = 0.05) -> None:
        while self.read(quiet):
            pass

    def wait_for(self, needle: bytes, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        start = len(self.seen)
        while time.monotonic() < deadline:
            if needle in self.seen[start:]:
                return True
            self.read(0.05)
        return needle in self.seen[start:]

    def key(self, ch: str, timeout: float = 5.0) -> float:
        """Write one key; milliseconds until its echo is on the screen."""
        self.drain(0)
        start = len(self.seen)
        began = time.perf_counter()
        os.write(self.master, ch.encode())
        needle = ch.encode()
        deadline = began + timeout
        while time.perf_counter() < deadline:
            if needle in self.seen[start:]:
                return (time.perf_counter() - began) * 1000
            self.read(deadline - time.perf_counter())
        return float("nan")

    def line(self, text: str) -> None:
        os.write(self.master, text.encode() + b"\r")
        self.wait_for(b">>> ", 30)
        self.drain()

    def close(self) -> None:
        try:
            os.write(self.master, b"\x04")
            self.proc.wait(10)
        except Exception:
            self.proc.kill()
        os.close(self.master)


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYAICHAT_", "OPENAI_"))}
    env.update(
        XDG_STATE_HOME=str(home / "state"),
        XDG_CONFIG_HOME=str(home / "config"),
        TERM="xterm-256color",
        PROMPT_TOOLKIT_NO_CPR="1",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        OPENAI_API_KEY="sk-bench",
        **extra,
    )
    return env


def typing_run(server: ScriptedServer | None, seed: int) -> tuple[list[float], list[float], int, int]:
    """One run of typed statements; (latencies, latencies while litellm loads, chars, requests)."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        extra = {}
        if server is not None:
            extra = {"PYAICHAT_SUGGEST_MODEL": "openai/fim", "PYAICHAT_SUGGEST_API_BASE": server.base_url}
        term = Terminal(environment(Path(tmp), **extra))
        try:
            term.wait_for(b">>> ", 30)
            term.drain(0.3)
            for line in SETUP:
                term.line(line)
            before = len(server.requests) if server is not None else 0
            latencies: list[float] = []
            loading: list[float] = []
            chars = 0
            warm = server is None
            for statement in TYPED:
                for ch in statement:
                    ms = term.key(ch)
                    (latencies if warm else loading).append(ms)
                    chars += 1
                    if server is not None and not warm and server.requests and server.requests[-1].server_ms:
                        warm = True  # the first suggestion was answered: litellm is loaded
                    time.sleep(rng.uniform(0.3, 0.7) if ch in PAUSE_AFTER and rng.random() < 0.5 else 0.1)
                os.write(term.master, b"\x03")  # drop the line (not run: the last one opens a block)
                term.wait_for(b">>> ", 10)
                time.sleep(0.5)
            requests = (len(server.requests) - before) if server is not None else 0
            return latencies, loading, chars, requests
        finally:
            term.close()


def pct(values: list[float], q: float) -> float:
    values = sorted(v for v in values if v == v)
    if not values:
        return float("nan")
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def summary(times: list[float]) -> str:
    if not times:
        return "nothing showed"
    return f"median {statistics.median(times):.0f}, max {max(times):.0f} ({len(times)})"


def pause_to_ghost(env_extra: dict[str, str], prefix: str, timeout: float, tries: int) -> list[float]:
    """Milliseconds from the last key of a line (typed at once) to the next drawing on the screen after its
    echo: the ghost text. Each try is a new line (``prefix`` with another name): never a cached answer."""
    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        term = Terminal(environment(Path(tmp), **env_extra))
        try:
            term.wait_for(b">>> ", 30)
            term.drain(0.3)
            for line in SETUP:
                term.line(line)
            for n in range(tries):
                text = f"v{n} = {prefix}"
                os.write(term.master, text.encode())
                began = time.perf_counter()
                term.drain(0.1)  # the echo; the ghost text cannot come before the 0.25 s pause is over
                if term.read(timeout - (time.perf_counter() - began)):
                    times.append((time.perf_counter() - began) * 1000)
                os.write(term.master, b"\x03")
                term.wait_for(b">>> ", 10)
                term.drain(0.3)
        finally:
            term.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-real-model", action="store_true")
    parser.add_argument("--echo-only", action="store_true", help="only the keystroke echo and request rate")
    args = parser.parse_args()

    print(f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs\n")
    on: list[float] = []
    off: list[float] = []
    loading: list[float] = []
    chars = requests = 0
    with ScriptedServer() as server:
        for _ in range(4000):
            server.text(".round(2)")
        for r in range(args.rounds):
            for mode in ("on", "off") if r % 2 == 0 else ("off", "on"):
                lat, load, n, req = typing_run(server if mode == "on" else None, seed=r)
                (on if mode == "on" else off).extend(lat)
                if mode == "on":
                    loading.extend(load)
                    chars += n
                    requests += req
        print("Keystroke echo in a pty (ms), same typing, runs paired:")
        print(f"{'':22}{'keys':>6}{'p50':>8}{'p90':>8}{'p99':>8}{'max':>8}")
        for label, values in (
            ("suggestions off", off),
            ("suggestions on", on),
            ("on, while loading", loading),
        ):
            row = [pct(values, q) for q in (0.5, 0.9, 0.99, 1.0)]
            print(f"{label:22}{len(values):>6}" + "".join(f"{v:>8.2f}" for v in row))
        print(f"p99 on − off: {pct(on, 0.99) - pct(off, 0.99):+.2f} ms")
        rate = 100 * requests / max(chars, 1)
        print(f"\nRequests per 100 typed characters: {rate:.1f} ({requests} for {chars})")

        if args.echo_only:
            return
        server.reset()
        for _ in range(50):
            server.text(".round(2)")
        base = {"PYAICHAT_SUGGEST_MODEL": "openai/fim", "PYAICHAT_SUGGEST_API_BASE": server.base_url}
        scripted = pause_to_ghost(base, "sales.net_revenue_eur_q3.sum()", 30, 8)[2:]  # first two: warm-up
    print("\nPause to ghost text (ms; the pause itself is 250):")
    print(f"  scripted server: {summary(scripted)}")

    if args.no_real_model:
        return
    from realmodel.local_server import LocalModelServer, server_available

    why = server_available()
    if why:
        print(f"  real local model: not measured ({why})")
        return
    with tempfile.TemporaryDirectory() as tmp, LocalModelServer(log_path=Path(tmp) / "server.log") as model:
        env = {"PYAICHAT_SUGGEST_MODEL": model.model, "PYAICHAT_SUGGEST_API_BASE": model.base_url}
        real = pause_to_ghost(env, 'sales.groupby("region_code")[', 60, 8)[2:]
        print(f"  real local model (SmolLM2-135M, 2 threads): {summary(real)} of 6 tries showed a suggestion")
        tokens(model)


def tokens(model: object) -> None:
    """Prompt and completion tokens per suggestion, from the model's own usage figures."""
    from pyaichat.agent.suggest import Suggester
    from pyaichat.config import Config
    from pyaichat.runtime import LocalRuntime
    from pyaichat.session import Session

    config = Config(suggest_model=model.model, suggest_api_base=model.base_url)  # type: ignore[attr-defined]
    session = Session(config=config)
    for line in SETUP:
        session.run(line)
    engine = Suggester(lambda: config, LocalRuntime(session))
    sizes = []
    try:
        for statement in TYPED:
            cut = statement[: len(statement) * 2 // 3]
            asked = engine.stats.requests
            engine.edit(cut, "", lambda *a: None)
            deadline = time.monotonic() + 120
            while engine.stats.answered + engine.stats.failed <= asked and time.monotonic() < deadline:
                time.sleep(0.05)
            sizes.append(len((engine.last_request or {}).get("prompt", "")))
            engine.cancel()
        s = engine.stats
        n = max(s.answered, 1)
        print(
            f"\nTokens per suggestion (real local model, {s.answered} answered): "
            f"{s.prompt_tokens / n:.0f} prompt + {s.completion_tokens / n:.0f} completion; "
            f"prompt {statistics.median(sizes):.0f} characters (median)"
        )
    finally:
        engine.close()


if __name__ == "__main__":
    main()
