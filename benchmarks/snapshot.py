"""Snapshot and resume benchmarks: time and size for a session holding a 1-million-row DataFrame, and the
measurements behind the format choices.

Run: ``.venv/bin/python benchmarks/snapshot.py`` (about a minute; prints figures, asserts nothing). For the
comparisons install the optional contenders first: ``.venv/bin/pip install dill pyarrow`` (each row is
skipped when its library is missing).

* Formats for the frame: pickle protocol 5 (stdlib and cloudpickle), dill, Feather (uncompressed, lz4, zstd)
  and Parquet (snappy, none), serialised to memory and back: dump ms, load ms, MB. Two frames: numeric,
  categorical, datetime and string columns with pandas' default string dtype, and the same with the strings
  as Python objects (what older pandas, or pandas without pyarrow, holds).
* Pickler for what a session defines (functions, lambdas, classes, instances): cloudpickle vs dill, time and
  whether the round trip gives working objects back.
* ``save_snapshot`` / ``load_snapshot`` end to end (select, pickle, sign, fsync, rename / read, verify,
  unpickle) for a session holding the 1M-row frame and a few small values; median of paired runs.
* ``save_resume`` / ``load_resume`` for 20 turns and 200 inputs.
* The undo checkpoint's fingerprint pass over a 10-million-row, five-column frame (checkpoint + finish).
"""

from __future__ import annotations

import io
import os
import pickle
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

RUNS = 5
ROWS = 1_000_000


def median_ms(fn: Callable[[], Any], runs: int = RUNS) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), result


def frame(rows: int, object_strings: bool = False) -> Any:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    words = rng.choice(["alpha", "beta", "gamma", "delta"], rows)
    return pd.DataFrame(
        {
            "id": np.arange(rows),
            "amount": rng.normal(100, 15, rows),
            "qty": rng.integers(0, 100, rows).astype("int32"),
            "region": pd.Categorical(rng.choice(["north", "south", "east", "west"], rows)),
            "label": pd.Series(words, dtype=object) if object_strings else pd.array(words, dtype="str"),
            "when": pd.date_range("2024-01-01", periods=rows, freq="s"),
        }
    )


def formats(df: Any) -> list[tuple[str, Callable[[], bytes], Callable[[bytes], Any]]]:
    rows: list[tuple[str, Callable[[], bytes], Callable[[bytes], Any]]] = [
        ("pickle protocol 5", lambda: pickle.dumps(df, protocol=5), pickle.loads),
    ]
    try:
        import cloudpickle

        rows.append(("cloudpickle (protocol 5)", lambda: cloudpickle.dumps(df, protocol=5), pickle.loads))
    except ImportError:
        print("  (cloudpickle not installed: skipped)")
    try:
        import dill

        rows.append(("dill (protocol 5)", lambda: dill.dumps(df, protocol=5), dill.loads))
    except ImportError:
        print("  (dill not installed: skipped)")
    try:
        import pandas as pd
        import pyarrow.feather as feather

        def feather_dump(compression: str) -> Callable[[], bytes]:
            def dump() -> bytes:
                out = io.BytesIO()
                feather.write_feather(df, out, compression=compression)
                return out.getvalue()

            return dump

        def parquet_dump(compression: str | None) -> Callable[[], bytes]:
            def dump() -> bytes:
                out = io.BytesIO()
                df.to_parquet(out, compression=compression)
                return out.getvalue()

            return dump

        for comp in ("uncompressed", "lz4", "zstd"):
            rows.append(
                (f"feather {comp}", feather_dump(comp), lambda b: feather.read_feather(io.BytesIO(b)))
            )
        for comp in ("snappy", None):
            rows.append(
                (f"parquet {comp or 'none'}", parquet_dump(comp), lambda b: pd.read_parquet(io.BytesIO(b)))
            )
    except ImportError:
        print("  (pyarrow not installed: Feather and Parquet skipped)")
    return rows


def bench_formats() -> None:
    for title, df in (
        ("default string dtype", frame(ROWS)),
        ("strings as Python objects", frame(ROWS, object_strings=True)),
    ):
        print(f"\n1M-row frame, {title} ({df.memory_usage(deep=True).sum() / 1e6:.0f} MB in memory):")
        print(f"  {'format':28s} {'dump ms':>9s} {'load ms':>9s} {'MB':>7s}")
        for name, dump, load in formats(df):
            dump_ms, data = median_ms(dump)
            load_ms, _ = median_ms(lambda data=data, load=load: load(data))
            print(f"  {name:28s} {dump_ms:9.1f} {load_ms:9.1f} {len(data) / 1e6:7.1f}")


SESSION_CODE = """
import math
def f{i}(x, k={i}):
    return math.sqrt(x) + k
g{i} = lambda v: v * {i}
class C{i}:
    def __init__(self):
        self.items = list(range(10))
    def total(self):
        return sum(self.items) + {i}
c{i} = C{i}()
"""


def bench_picklers() -> None:
    ns: dict[str, Any] = {"__name__": "__main__"}
    for i in range(200):
        exec(SESSION_CODE.format(i=i), ns)
    values = {k: v for k, v in ns.items() if not k.startswith("_") and k != "math"}
    print(f"\nPickling what a session defines ({len(values)} functions, lambdas, classes, instances):")
    contenders: list[tuple[str, Any]] = []
    try:
        import cloudpickle

        contenders.append(("cloudpickle", cloudpickle))
    except ImportError:
        pass
    try:
        import dill

        contenders.append(("dill", dill))
    except ImportError:
        print("  (dill not installed: skipped)")
    for name, lib in contenders:
        try:
            dump_ms, data = median_ms(lambda lib=lib: lib.dumps(values, protocol=5))
            load_ms, back = median_ms(lambda data=data, lib=lib: lib.loads(data))
            works = back["f7"](4.0) == 9.0 and back["g3"](2) == 6 and back["c5"].total() == 50
            works = works and type(back["c5"]) is back["C5"]
            print(
                f"  {name:12s} dump {dump_ms:7.1f} ms  load {load_ms:7.1f} ms  {len(data) / 1e3:7.1f} KB  "
                f"round trip {'works' if works else 'BROKEN'}"
            )
        except Exception as exc:  # a contender that cannot do it at all is a finding too
            print(f"  {name:12s} failed: {type(exc).__name__}: {str(exc)[:80]}")


def bench_snapshot(state: Path) -> None:
    from pyaichat.persist.snapshot import load_snapshot, save_snapshot

    ns: dict[str, Any] = {"__name__": "__main__", "df": frame(ROWS), "threshold": 0.5, "notes": ["a"] * 100}
    exec("import numpy as np\ndef score(x):\n    return x * threshold\n", ns)
    path = state / "bench.snapshot"
    floor = state / "floor.pickle"

    def plain_save() -> None:
        with open(floor, "wb") as fh:
            pickle.dump(ns["df"], fh, protocol=5)
            fh.flush()
            os.fsync(fh.fileno())

    def plain_load() -> Any:
        with open(floor, "rb") as fh:
            return pickle.load(fh)

    floor_saves, floor_loads = [], []
    for _ in range(RUNS):
        floor_saves.append(median_ms(plain_save, 1)[0])
        floor_loads.append(median_ms(plain_load, 1)[0])
    saves, loads, size = [], [], 0
    for _ in range(RUNS):  # paired: each save followed by its load
        report = save_snapshot(ns, path)
        saves.append(report.seconds * 1000)
        size = report.size
        loaded = load_snapshot(path)
        loads.append(loaded.seconds * 1000)
    print(
        "\nsave_snapshot / load_snapshot, session with the 1M-row frame (default strings) + 4 small values:"
    )
    print(
        f"  save {statistics.median(saves):7.1f} ms   load {statistics.median(loads):7.1f} ms   "
        f"{size / 1e6:.1f} MB   (median of {RUNS} paired runs; includes HMAC, fsync, rename / verify)"
    )
    print(
        f"  floor: pickle.dump of the frame to a file + fsync {statistics.median(floor_saves):7.1f} ms, "
        f"pickle.load from the file {statistics.median(floor_loads):7.1f} ms"
    )
    print(f"  as reported to the user: {report.text()}")
    print(f"  {loaded.text()}")


def bench_resume(state: Path) -> None:
    from pyaichat.persist.resume import load_resume, save_resume
    from pyaichat.records import HistoryEntry

    turns = [
        {
            "question": f"question {i} about df?",
            "messages": [
                {"role": "user", "content": f"question {i} about df?"},
                {
                    "role": "tool",
                    "tool_call_id": "c",
                    "content": "DataFrame 1,000,000 rows × 6 columns " * 20,
                },
                {"role": "assistant", "content": "an answer " * 60},
            ],
            "answer": "an answer " * 60,
            "native": True,
        }
        for i in range(20)
    ]
    history = [
        HistoryEntry(
            n,
            f"x{n} = df.amount.mean() * {n}",
            True,
            "100.2",
            1.0,
            stdout="ok\n" * 20,
            result=repr(100.0 + n),
        )
        for n in range(1, 201)
    ]
    path = state / "resume.json"
    save_ms, report = median_ms(lambda: save_resume(turns, history, path=path))
    load_ms, _ = median_ms(lambda: load_resume(path))
    print("\nsave_resume / load_resume, 20 turns and 200 inputs:")
    print(f"  save {save_ms:6.1f} ms   load {load_ms:6.1f} ms   {report.size / 1e3:.1f} KB")


def bench_undo() -> None:
    import numpy as np
    import pandas as pd

    from pyaichat.persist.undo import checkpoint, finish

    big = pd.DataFrame({f"c{i}": np.random.default_rng(i).normal(size=10_000_000) for i in range(5)})
    ns = {"__name__": "__main__", "big": big}
    code = "big.loc[5, 'c3'] = 0.0"
    checkpoint(ns, code)  # warm-up (the checksum's weights)
    cps, fins = [], []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        cp = checkpoint(ns, code)
        t1 = time.perf_counter()
        finish(ns, cp)
        fins.append((time.perf_counter() - t1) * 1000)
        cps.append((t1 - t0) * 1000)
    print("\nUndo fingerprint pass, 10M rows x 5 float columns (400 MB):")
    print(f"  checkpoint {statistics.median(cps):6.1f} ms   finish {statistics.median(fins):6.1f} ms")


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    import pandas as pd

    print(f"pandas {pd.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_STATE_HOME"] = tmp  # a throwaway snapshot key, not the user's
        bench_formats()
        bench_picklers()
        bench_snapshot(Path(tmp))
        bench_resume(Path(tmp))
        bench_undo()
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
