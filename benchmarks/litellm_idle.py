"""litellm loaded while the prompt is idle: what the first answer waits, and what the person pays meanwhile.

``python -m pyaichat`` in a pseudo-terminal (100×30), a model configured (the scripted server, in a process of
its own), each measure in a fresh session, and with ``--before SRC`` the same against another checkout's code
(``PYTHONPATH=SRC``), alternated run by run so the machine's load hits both alike:

1. **The first answer**: the person reads the prompt for ``--read`` seconds, then asks ``/ask …``: seconds
   from Enter to the answer on screen (the answer itself is immediate: the rest is litellm's load, or what
   is left of it).
2. **Keys while it loads**: keys typed one by one (each a character that appears nowhere else), about ten a
   second, starting just as the idle prompt starts the load; milliseconds from a key to its echo (p50, p90,
   p99, max), against the same typing once litellm is loaded.
3. **Ctrl-C during the load**: a question asked at once, Ctrl-C while it waits for litellm: milliseconds from
   Ctrl-C to the next prompt, then from Enter to ``42`` for ``6 * 7``.
4. **``import pandas`` typed during the load**: seconds from Enter to the next prompt, 1.3 s after the prompt
   showed, against the same in a session without a model (nothing loads there).

    .venv/bin/python benchmarks/litellm_idle.py [--before /work/main/src] [--runs 3] [--read 10]

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import pexpect  # noqa: E402

from pty_terminal import NEW_PY, spawn  # noqa: E402

SERVER = """
import sys, time
sys.path.insert(0, {tests!r})
from fakes.openai_server import ScriptedServer
srv = ScriptedServer().start()
for _ in range(1000):
    srv.text("The answer is 42.")
print(srv.base_url, flush=True)
time.sleep(100000)
"""


def start_server() -> tuple[subprocess.Popen[str], str]:
    code = SERVER.format(tests=str(ROOT / "tests"))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def session(url: str, src: str | None) -> pexpect.spawn:
    env = {"PYAICHAT_MODEL": "openai/demo", "PYAICHAT_API_BASE": url, "OPENAI_API_KEY": "sk-t"}
    env["PYAICHAT_AUDIT"] = "false"
    if src:
        env["PYTHONPATH"] = src
    child = spawn(Path(tempfile.mkdtemp(prefix="pyaichat-idle-")), **env)
    child.timeout = 300
    child.delaybeforesend = None
    return child


def first_answer(url: str, src: str | None, read: float) -> float:
    child = session(url, src)
    try:
        time.sleep(read)
        began = time.perf_counter()
        child.send("/ask why?\r")
        child.expect_exact("The answer is 42.")
        return time.perf_counter() - began
    finally:
        child.close(force=True)


def echo(child: pexpect.spawn, keys: int, start: int) -> list[float]:
    samples = []
    for i in range(keys):
        key = chr(0x4E00 + start + i)
        began = time.perf_counter()
        child.send(key)
        child.expect_exact(key, timeout=60)
        samples.append((time.perf_counter() - began) * 1000)
        time.sleep(0.1)
    child.sendcontrol("u")
    return samples


def keys_while_loading(url: str, src: str | None, keys: int) -> tuple[list[float], list[float]]:
    child = session(url, src)
    try:
        child.send("# ")
        time.sleep(1.1)  # the prompt idle: the load starts (with this checkout's code)
        during = echo(child, keys, 0)
        child.sendcontrol("u")
        child.send("/ask why?\r")  # loaded for sure afterwards
        child.expect_exact("The answer is 42.")
        child.expect(NEW_PY)
        child.send("# ")
        after = echo(child, keys, keys)
        return during, after
    finally:
        child.close(force=True)


def ctrl_c(url: str, src: str | None) -> tuple[float, float]:
    child = session(url, src)
    try:
        child.send("/ask why?\r")
        child.expect("loading the model library")
        time.sleep(0.5)
        began = time.perf_counter()
        child.sendcontrol("c")
        child.expect(NEW_PY)
        to_prompt = (time.perf_counter() - began) * 1000
        began = time.perf_counter()
        child.send("6 * 7\r")
        child.expect(r"42\r\n")
        return to_prompt, (time.perf_counter() - began) * 1000
    finally:
        child.close(force=True)


def pandas_import(url: str | None, src: str | None) -> float:
    """Seconds from Enter to the next prompt for ``import pandas`` typed 1.3 s after the prompt showed: with
    a model configured (``url``) the idle prompt has started litellm's load by then; without, nothing
    loads."""
    child = session(url, src) if url else session_without_model(src)
    try:
        time.sleep(1.3)
        began = time.perf_counter()
        child.send("import pandas; print('imported')\r")
        child.expect_exact("imported")
        child.expect(NEW_PY)
        return time.perf_counter() - began
    finally:
        child.close(force=True)


def session_without_model(src: str | None) -> pexpect.spawn:
    env = {"PYTHONPATH": src} if src else {}
    child = spawn(Path(tempfile.mkdtemp(prefix="pyaichat-idle-")), **env)
    child.timeout = 300
    child.delaybeforesend = None
    return child


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def spread(values: list[float]) -> str:
    return (
        f"p50 {statistics.median(values):6.1f}  p90 {pct(values, 0.9):6.1f}  p99 {pct(values, 0.99):6.1f}  "
        f"max {max(values):6.1f} ms ({len(values)} keys)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", help="another checkout's src folder, measured alongside")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--read", type=float, default=10.0, help="seconds the person reads before asking")
    parser.add_argument("--keys", type=int, default=40)
    args = parser.parse_args()
    server, url = start_server()
    checkouts = [("this checkout", None)] + ([("before", args.before)] if args.before else [])
    try:
        print(f"load average at start: {os.getloadavg()[0]:.1f}")
        results: dict[str, dict[str, list]] = {label: {} for label, _ in checkouts}
        for run in range(args.runs):
            order = checkouts if run % 2 == 0 else list(reversed(checkouts))
            for label, src in order:
                r = results[label]
                r.setdefault("answer", []).append(first_answer(url, src, args.read))
                during, after = keys_while_loading(url, src, args.keys)
                r.setdefault("during", []).extend(during)
                r.setdefault("after", []).extend(after)
                r.setdefault("ctrl_c", []).append(ctrl_c(url, src))
                r.setdefault("pandas", []).append(pandas_import(url, src))
                r.setdefault("pandas_alone", []).append(pandas_import(None, src))
                print(f"run {run + 1} {label}: done (load {os.getloadavg()[0]:.1f})", flush=True)
        for label, _ in checkouts:
            r = results[label]
            print(f"\n== {label}")
            answers = ", ".join(f"{a:.1f}" for a in r["answer"])
            print(f"1. first answer after reading {args.read:g} s: {answers} s")
            print(f"2. keys while litellm loads:  {spread(r['during'])}")
            print(f"   keys once it is loaded:    {spread(r['after'])}")
            prompts = ", ".join(f"{p:.0f}" for p, _ in r["ctrl_c"])
            answers = ", ".join(f"{a:.0f}" for _, a in r["ctrl_c"])
            print(
                f"3. Ctrl-C during the load: next prompt after {prompts} ms; 6 * 7 answered in {answers} ms"
            )
            during = ", ".join(f"{d:.1f}" for d in r["pandas"])
            alone = ", ".join(f"{d:.1f}" for d in r["pandas_alone"])
            print(f"4. import pandas typed 1.3 s in, a model configured: {during} s;")
            print(f"   the same without a model (nothing loads): {alone} s")
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    finally:
        server.kill()


if __name__ == "__main__":
    main()
