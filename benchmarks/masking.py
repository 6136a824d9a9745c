"""What masking costs: every capability result, the session picture and every request to the model pass
``Masker.mask_text``, so its time must stay small and grow with the text, never faster.

Texts: a typical ``get_repr`` of a DataFrame (4k characters), a summary that a display cut short (the cut
rules run), a DataFrame pandas cut (``...``), a result of one long run of word characters (4k and 100k: a
name pattern tried inside the run once rescanned it to its end from every position), and a dict's repr of
100k characters with 2,000 cut values. Prints the median and the minimum of repeated runs.

Then the session's secret values (``secret_values``): ``mask_text`` of the 4k frame with 0, 32 and 256 known
values; and the session picture of a session holding a DataFrame of a million rows with a ``password``
column (and 10,000 other variables): warm (nothing changed since the last picture), and the first picture
after an input (the namespace walked again). Run it against another checkout to compare (``PYTHONPATH``);
there, the session's values are not collected at all.

    .venv/bin/python benchmarks/masking.py [seconds per text]
"""

from __future__ import annotations

import statistics
import sys
import time

from pyaichat.capabilities.redact import default_masker

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
FRAME = "".join(f"{i:<4} north  {i % 17:>3}  {9.5 + i / 10:6.2f}\n" for i in range(170))
TEXTS = {
    "get_repr of a DataFrame, 4k chars": FRAME,
    "a summary cut short ('…')": "note: str, 83 chars: 'deploy with the key for the service in the north…'",
    "a frame pandas cut ('...')": "   note\n0  deploy with the key for...\n1  and another long...\n" * 20,
    "one word run, 4k chars": "x" * 4_000,
    "one word run, 100k chars": "x" * 100_000,
    "a dict repr, 100k chars, 2k cuts": repr({f"key_{i}": "value " * 5 + f"{i}…" for i in range(2_000)}),
}


def _timed(func, seconds: float = SECONDS) -> tuple[float, float, int]:
    func()
    samples = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(samples) < 3:
        started = time.perf_counter()
        func()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), min(samples), len(samples)


def known_values_table() -> None:
    try:
        from pyaichat.capabilities.redact import set_known_values
    except ImportError:
        print("\n(this checkout masks no session values)")
        return
    masker = default_masker()
    print("\nmask_text of the 4k frame with the session's known secret values")
    for n in (0, 32, 256):
        set_known_values([f"secret-value-{i:04d}-Zq8v" for i in range(n)])
        median, low, runs = _timed(lambda: masker.mask_text(FRAME))
        print(f"  {n:4} known values  median {median:9.3f} ms  min {low:9.3f} ms  ({runs} runs)")
    set_known_values([])


def picture_table() -> None:
    import numpy as np
    import pandas as pd

    from pyaichat.configuration.config import Config
    from pyaichat.session import Session

    rows = 1_000_000
    frame = pd.DataFrame({"id": np.arange(rows), "password": [f"pw-{i:07d}-Zq8v" for i in range(rows)]})
    for others in (10, 10_000):
        session = Session(echo=lambda value: None, config=Config(audit=False))
        session.namespace.update({f"v{i}": i for i in range(others)})
        session.namespace["accounts"] = frame
        session.run("note = 'the accounts frame'")
        _picture(session, rows, others)


def _picture(session, rows: int, others: int) -> None:
    from pyaichat.capabilities.picture import session_picture

    session_picture(session, session.config)
    print(
        f"\nthe session picture: a {rows:,}-row frame with a password column and {others:,} other variables"
    )
    median, low, runs = _timed(lambda: session_picture(session, session.config))
    print(f"  warm (no input since)       median {median:9.3f} ms  min {low:9.3f} ms  ({runs} runs)")

    def after_an_input() -> None:
        session.run("x = 1")
        session_picture(session, session.config)

    run_only = _timed(lambda: session.run("x = 1"))
    median, low, runs = _timed(after_an_input)
    print(
        f"  after an input              median {median - run_only[0]:9.3f} ms  "
        f"min {low - run_only[1]:9.3f} ms  ({runs} runs; the input's own {run_only[0]:.3f} ms taken off)"
    )
    try:
        from pyaichat.capabilities.redact import masker_for
        from pyaichat.capabilities.secret_values import collect
    except ImportError:
        return
    is_secret = masker_for(session.config).is_secret_name
    median, low, runs = _timed(lambda: collect(session.namespace, is_secret))
    found = len(collect(session.namespace, is_secret)[0])
    print(f"  the walk alone              median {median:9.3f} ms  min {low:9.3f} ms  ({found} values)")


def main() -> None:
    masker = default_masker()
    print(f"Masker.mask_text, {SECONDS:g} s per text")
    for name, text in TEXTS.items():
        masker.mask_text(text)
        samples = []
        deadline = time.perf_counter() + SECONDS
        while time.perf_counter() < deadline or len(samples) < 3:
            started = time.perf_counter()
            masker.mask_text(text)
            samples.append((time.perf_counter() - started) * 1000)
        print(
            f"  {name:36} median {statistics.median(samples):9.3f} ms  min {min(samples):9.3f} ms  "
            f"({len(samples)} runs)"
        )
    known_values_table()
    picture_table()


if __name__ == "__main__":
    main()
