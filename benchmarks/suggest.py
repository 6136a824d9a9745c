"""Ghost-text suggestions: what they cost the person typing, and what they cost in requests and tokens.

Prints (asserts nothing):

1. **Keystroke echo latency** in a real pseudo-terminal, suggestions on versus off, the same keys typed the
   same way, in pairs of runs alternated (off first, then on first) so the machine's load hits both alike;
   every run is printed with the load average, then the pooled p50, p90, p99 and max, milliseconds from
   writing a key to its echo on the screen, with a 90% bootstrap interval of each on − off difference and
   the p99 difference pair by pair (the scripted server runs in a process of its own, so that its threads
   never compete with this one's measuring loop). Two scenarios: the scripted server answers every request at
   once, and it holds every request until the client hangs up (as a slow local model does: each request is
   aborted by the next key). The typing is a person's: about ten keys a second, with pauses of 0.3–0.7 s at
   word and statement boundaries (each pause is a request). The first suggestion of a run starts the
   helper process (litellm's import there: 4–5 s of a busy core); keys typed then are reported apart.
   ``--in-process`` makes the model calls in the REPL's own process instead (``inprocess.py``: the arrangement
   the helper replaced, measured for the rule in ``pyaichat.ipc``).
   ``--probe`` runs pyaichat under ``echo_probe.py`` and counts the keys whose echo window saw another
   thread of the REPL process at work (the suggestion engine's, the helper's reader): work that could
   delay the echo through the interpreter's lock.
2. **Requests per 100 typed characters**, from the scripted server's own count; and the **REPL-side work per
   request** (facts, the masked request, its JSON, cutting the answer), in-process, its thread's CPU time.
3. **Pause to ghost text**: from the last key of a line to the suggestion on the screen, with the scripted
   server and with the real local model (SmolLM2-135M on llama-cpp-python's server, as the realmodel tests).
4. **Tokens per suggestion** with the real local model (its own usage figures), and the prompt's size.

    .venv/bin/python benchmarks/suggest.py [--pairs 3] [--server fast|slow|both] [--echo-only] [--probe]
                                           [--in-process]
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
from typing import Any

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
IN_PROCESS = "--in-process" in sys.argv  # the model calls in the REPL's own process (``inprocess.py``)


class Terminal:
    """``python -m pyaichat`` in a pseudo-terminal, read raw."""

    def __init__(self, env: dict[str, str], probe: Path | None = None, in_process: bool = False) -> None:
        """``probe``: run pyaichat under ``echo_probe.py``, which writes what its other threads did there;
        ``in_process``: under ``inprocess.py``, which makes the model calls in the REPL's own process."""
        import pty

        self.master, slave = pty.openpty()
        os.set_blocking(self.master, False)
        import fcntl
        import struct
        import termios

        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
        command = [sys.executable, "-m", "pyaichat"]
        if probe is not None:
            command = [sys.executable, str(ROOT / "benchmarks" / "echo_probe.py")]
            env = dict(env, ECHO_PROBE_OUT=str(probe))
        elif in_process:
            command = [sys.executable, str(ROOT / "benchmarks" / "inprocess.py"), "suggest"]
        self.proc = subprocess.Popen(
            command, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
        os.close(slave)
        self.seen = b""
        self.keys: list[tuple[float, float]] = []  # (written at, ms to its echo), by perf_counter

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
                ms = (time.perf_counter() - began) * 1000
                self.keys.append((began, ms))
                return ms
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


class ServerProcess:
    """The scripted server in a process of its own, so that its threads (answering, or polling a held
    request for the client's hang-up) never compete with this process's measuring loop for the GIL; asked
    for its request count over a pipe, outside the timed part."""

    def __init__(self, slow: bool) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", "slow" if slow else "fast"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()

    def count(self) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("count\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


def serve(kind: str) -> None:
    """``--serve fast|slow``: the scripted server for ``ServerProcess``."""
    with ScriptedServer() as server:
        for _ in range(20000):
            if kind == "slow":  # held until the client hangs up: every request is aborted by the next key
                server.fault("slow", delay=60.0)
            else:
                server.text(".round(2)")
        print(server.base_url, flush=True)
        for _ in sys.stdin:
            print(len(server.requests), flush=True)


class Run:
    """One typing run's figures: ``latencies`` once warm, ``starting`` while the helper starts, ``requests``
    the server got, and (with the probe) ``crossed``: how many warm keys had another thread of the REPL run
    in their echo window (or be woken in it)."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.starting: list[float] = []
        self.requests = 0
        self.crossed: int | None = None


def crossings(keys: list[tuple[float, float]], events: list[list[Any]]) -> int:
    """Keys whose window — from 2 ms before the key was written to its echo — overlaps other threads' work."""
    spans = sorted((start, start + seconds) for _thread, start, seconds, _what in events)
    count = 0
    for began, ms in keys:
        low, high = began - 0.002, began + ms / 1000
        if any(start < high and end >= low for start, end in spans):
            count += 1
    return count


def typing_run(
    server: ServerProcess | None, seed: int, statements: list[str] = TYPED, probe: bool = False
) -> Run:
    """One run of typed statements."""
    rng = random.Random(seed)
    run = Run()
    with tempfile.TemporaryDirectory() as tmp:
        extra = {}
        if server is not None:
            extra = {"PYAICHAT_SUGGEST_MODEL": "openai/fim", "PYAICHAT_SUGGEST_API_BASE": server.base_url}
        recorded = Path(tmp) / "probe.json" if probe else None
        term = Terminal(environment(Path(tmp), **extra), recorded, IN_PROCESS and server is not None)
        try:
            term.wait_for(b">>> ", 30)
            term.drain(0.3)
            for line in SETUP:
                term.line(line)
            before = server.count() if server is not None else 0
            warm = server is None
            warm_keys = []
            for statement in statements:
                for ch in statement:
                    echoed = len(term.keys)
                    ms = term.key(ch)
                    (run.latencies if warm else run.starting).append(ms)
                    if warm and len(term.keys) > echoed:
                        warm_keys.append(term.keys[-1])
                    if not warm and server.count() > before:  # type: ignore[union-attr]
                        warm = True  # a request reached the server: the helper is up (litellm loaded)
                    time.sleep(rng.uniform(0.3, 0.7) if ch in PAUSE_AFTER and rng.random() < 0.5 else 0.1)
                os.write(term.master, b"\x03")  # drop the line (not run: the last one opens a block)
                term.wait_for(b">>> ", 10)
                time.sleep(0.5)
            run.requests = (server.count() - before) if server is not None else 0
        finally:
            term.close()
        if recorded is not None and recorded.exists():
            import json

            run.crossed = crossings(warm_keys, json.loads(recorded.read_text()))
    return run


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


def row(label: str, values: list[float], extra: str = "") -> str:
    figures = "".join(f"{pct(values, q):>8.2f}" for q in (0.5, 0.9, 0.99, 1.0))
    return f"{label:34}{len(values):>6}{figures}{extra}"


HEADER = f"{'':34}{'keys':>6}{'p50':>8}{'p90':>8}{'p99':>8}{'max':>8}"


def interval(on: list[float], off: list[float], q: float, rounds: int = 2000) -> tuple[float, float]:
    """A 90% bootstrap interval of pct(on, q) − pct(off, q): how far the pooled figure can be trusted."""
    rng = random.Random(1)
    diffs = sorted(
        pct(rng.choices(on, k=len(on)), q) - pct(rng.choices(off, k=len(off)), q) for _ in range(rounds)
    )
    return diffs[int(0.05 * rounds)], diffs[int(0.95 * rounds)]


def echo(pairs: int, slow: bool, probe: bool = False) -> None:
    """Paired runs, off and on alternately (off first in even pairs), so the machine's load hits both alike;
    every run is printed with the load average at its end, then the pooled figures."""
    server = ServerProcess(slow)
    title = "held (each aborted by the next key)" if slow else "answers at once"
    print(f"\nKeystroke echo in a pty (ms), the scripted server {title}:")
    print(HEADER + "  load" + ("  crossed" if probe else ""))
    pooled: dict[str, list[float]] = {"on": [], "off": []}
    per_pair: dict[str, list[float]] = {"on": [], "off": []}
    crossed: dict[str, list[int]] = {"on": [0, 0], "off": [0, 0]}
    starting: list[float] = []
    requests = 0
    for pair in range(pairs):
        for mode in ("off", "on") if pair % 2 == 0 else ("on", "off"):
            run = typing_run(server if mode == "on" else None, seed=pair, probe=probe)
            pooled[mode].extend(run.latencies)
            per_pair[mode].append(pct(run.latencies, 0.99))
            if mode == "on":
                starting.extend(run.starting)
                requests += run.requests
            extra = f"  {os.getloadavg()[0]:4.1f}"
            if run.crossed is not None:
                crossed[mode][0] += run.crossed
                crossed[mode][1] += len(run.latencies)
                extra += f"  {run.crossed:>4} of {len(run.latencies)}"
            print(row(f"pair {pair + 1}, suggestions {mode}", run.latencies, extra))
    on, off = pooled["on"], pooled["off"]
    print(row("all runs, suggestions off", off))
    print(row("all runs, suggestions on", on))
    print(row("on, while the helper starts", starting))
    for q, name in ((0.99, "p99"), (0.9, "p90"), (0.5, "p50")):
        low, high = interval(on, off, q)
        diff = pct(on, q) - pct(off, q)
        print(f"{name} on − off: {diff:+.2f} ms (90% bootstrap interval {low:+.2f} to {high:+.2f})")
    diffs = [a - b for a, b in zip(per_pair["on"], per_pair["off"], strict=True)]
    print("p99 on − off, pair by pair: " + ", ".join(f"{d:+.1f}" for d in diffs) + " ms")
    if probe:
        for mode in ("off", "on"):
            n, of = crossed[mode]
            print(f"Keys with another REPL thread at work in their echo window, {mode}: {n} of {of}")
    rate = 100 * requests / max(len(on), 1)
    print(f"Requests per 100 typed characters: {rate:.1f} ({requests} for {len(on)} once the helper was up)")
    server.close()


def repl_side(rounds: int = 200) -> None:
    """What the REPL still does per request, in its own process (the engine's thread, holding the GIL):
    the facts, the masked request, its JSON for the pipe, and cutting the answer to the cursor."""
    import json

    from pyaichat.agent.suggest.fit import fit
    from pyaichat.agent.suggest.prompt import build_request
    from pyaichat.agent.suggest.route import route_for
    from pyaichat.configuration.config import Config
    from pyaichat.runtime import LocalRuntime
    from pyaichat.session import Session

    config = Config(suggest_model="openai/fim", suggest_api_base="http://127.0.0.1:9/v1")
    session = Session(config=config)
    for line in SETUP:
        session.run(line)
    runtime = LocalRuntime(session)
    route = route_for(config)
    parts: dict[str, list[float]] = {"facts": [], "request": [], "json": [], "fit": [], "all": []}
    cuts = [s[:n] for s in TYPED for n in range(8, len(s), 7)]
    for n in range(rounds):
        before = cuts[n % len(cuts)]
        t0 = time.thread_time()
        found = runtime.suggestion_facts(before, "")
        t1 = time.thread_time()
        request = build_request(config, route, before, "", found)
        t2 = time.thread_time()
        json.dumps({"op": "ask", "id": n, "request": request.to_wire() if request else {}, "timeout": 30})
        t3 = time.thread_time()
        fit(".round(2)", before, "", block=False, echoes=False)
        t4 = time.thread_time()
        for name, d in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0), strict=True):
            parts[name].append(d * 1000)
    print("\nREPL-side work per request (ms of its thread's CPU; once per pause, never per key):")
    for name, values in parts.items():
        print(f"  {name:8} median {statistics.median(values):.3f}, p99 {pct(values, 0.99):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=3, help="off/on runs per scenario, alternated")
    parser.add_argument("--server", choices=("fast", "slow", "both"), default="both")
    parser.add_argument("--no-real-model", action="store_true")
    parser.add_argument("--echo-only", action="store_true", help="only the keystroke echo and request rate")
    parser.add_argument(
        "--probe", action="store_true", help="count keys whose echo window saw another REPL thread at work"
    )
    parser.add_argument(
        "--in-process", action="store_true", help="suggestions call litellm in the REPL (the rejected way)"
    )
    parser.add_argument("--serve", choices=("fast", "slow"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve)

    # pyaichat's modules byte-compiled, as an installed copy has them: with PYTHONDONTWRITEBYTECODE set (as
    # here), each lazy import in the REPL would compile its source again, in every run, and on the keystrokes
    import compileall

    compileall.compile_dir(str(ROOT / "src" / "pyaichat"), quiet=1)
    print(f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs")
    if args.server in ("fast", "both"):
        echo(args.pairs, slow=False, probe=args.probe)
    if args.server in ("slow", "both"):
        echo(args.pairs, slow=True, probe=args.probe)
    if args.echo_only:
        return
    repl_side()
    with ScriptedServer() as server:
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
    from pyaichat.configuration.config import Config
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
