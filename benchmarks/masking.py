"""What masking costs: every capability result, the session picture and every request to the model pass
``Masker.mask_text``, so its time must stay small and grow with the text, never faster.

Texts: a typical ``get_repr`` of a DataFrame (4k characters), a summary that a display cut short (the cut
rules run), a DataFrame pandas cut (``...``), a result of one long run of word characters (4k and 100k: a
name pattern tried inside the run once rescanned it to its end from every position), and a dict's repr of
100k characters with 2,000 cut values. Prints the median and the minimum of repeated runs.

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


if __name__ == "__main__":
    main()
