"""Write ``split.json``: the held-out ids by the fixed rule of ``corpus.held_out_rule`` (run once, when the
answers were written, before the checker was changed; the held-out part is run only to report)."""

from __future__ import annotations

import json

import corpus

if __name__ == "__main__":
    answers = corpus.read_answers()
    held = sorted(a.id for a in answers if corpus.held_out_rule(a.id))
    (corpus.HERE / "split.json").write_text(
        json.dumps({"rule": "sha256(id)[0] < 86", "held_out": held}, indent=1) + "\n"
    )
    print(f"{len(held)} of {len(answers)} answers held out")
