"""The repetition guard on loops as small models fall into them, and on answers that repeat their shape.

For each loop of ``tests/agent/repetition_corpus.py`` (issue 50's apology, a type or a total restated, a
refusal line by line, "let me check again"), streamed to the guard in pieces of 7 characters as a model's
stream arrives: how much of it went by before the guard cut it (words, and tokens at ~4 characters a token),
and whether what it kept is the loop's first round. For each legitimate answer (tables, lists, enumerations,
steps, code): whether it was cut (it must not be). With ``--before SRC``, the same for another checkout's
guard (``SRC/pyaichat/agent/repetition.py``), side by side.

    .venv/bin/python benchmarks/repetition.py [--before /work/main/src]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "agent"))

from repetition_corpus import LEGIT, LOOPS  # noqa: E402


def guard_module(src: Path) -> ModuleType:
    path = src / "pyaichat" / "agent" / "repetition.py"
    spec = importlib.util.spec_from_file_location(f"repetition_{abs(hash(str(src)))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def streamed(module: ModuleType, text: str) -> tuple[bool, str, str]:
    """(cut?, what went by before the cut, what the guard kept)."""
    guard = module.RepetitionGuard()
    for at in range(0, len(text), 7):
        if guard.feed(text[at : at + 7]):
            break
    return guard.looping, guard.text, guard.kept()


def row(module: ModuleType, name: str, text: str, start: str | None) -> str:
    cut, seen, kept = streamed(module, text)
    words, tokens = len(seen.split()), len(seen) // 4
    if start is None:
        return f"{'CUT (wrong)' if cut else 'kept whole':>14}"
    whole = len(text) // 4
    if not cut:
        return f"{'not cut':>14} {tokens:4d}/{whole} tok"
    first_round = "first round kept" if kept.startswith(start) else "KEPT TOO LITTLE"
    return f"{words:5d} words {tokens:4d}/{whole} tok  {first_round}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="another checkout's src folder, for its guard")
    args = parser.parse_args()
    guards = [("this checkout", guard_module(ROOT / "src"))]
    if args.before is not None:
        guards.insert(0, ("before", guard_module(args.before)))
    print(f"{'':36}" + "".join(f"{label:>44}" for label, _ in guards))
    print("loops (how much went by before the cut):")
    for name, (text, start) in LOOPS.items():
        print(f"  {name:34}" + "".join(f"{row(m, name, text, start):>44}" for _, m in guards))
    print("legitimate answers (must be kept whole):")
    for name, text in LEGIT.items():
        print(f"  {name:34}" + "".join(f"{row(m, name, text, None):>44}" for _, m in guards))


if __name__ == "__main__":
    main()
