"""The receipts-quality corpus (``receipts_quality/``, its rules in its README) holds what it says: enough
labelled answers over enough kinds of session, every mark and form readable, the split the fixed rule made,
the SmolLM2 answers verbatim, and turns whose results are what the real capabilities return today."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "receipts_quality"
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402

ANSWERS = corpus.read_answers()
TURNS = corpus.read_turns()


def test_enough_answers_over_enough_kinds_and_sources():
    assert len(ANSWERS) >= 300
    assert len({a.kind for a in ANSWERS}) >= 10
    assert Counter(a.source for a in ANSWERS).keys() == set(corpus.SOURCES)
    assert sum(1 for a in ANSWERS if not a.right) >= 100 and sum(1 for a in ANSWERS if a.right) >= 200


def test_every_answer_is_readable_and_names_a_real_turn():
    ids = [a.id for a in ANSWERS]
    assert len(ids) == len(set(ids))
    for a in ANSWERS:
        assert a.turn in TURNS, a.id
        assert set(a.forms) <= corpus.FORMS, (a.id, a.forms)
        assert a.source in corpus.SOURCES
        for claim in a.claims:
            assert a.text[claim.start : claim.end] == claim.text, a.id
        assert "[[" not in a.text or "|" not in a.text[a.text.index("[[") :].split("]]")[0], a.id


def test_the_split_is_the_fixed_rule_and_covers_every_answer():
    held = corpus.read_split()
    assert held == {a.id for a in ANSWERS if corpus.held_out_rule(a.id)}
    assert 0.25 <= len(held) / len(ANSWERS) <= 0.4


def test_the_model_answers_are_verbatim():
    raw = {(r["turn"], r["seed"]): r["answer"] for r in json.loads((HERE / "smollm2_raw.json").read_text())}
    model = [a for a in ANSWERS if a.source == "smollm2"]
    assert len(model) >= 40
    for a in model:
        seed = int(a.id.rsplit("-", 1)[1])
        assert raw[(a.turn, seed)].strip("\n") == a.text, a.id


def test_the_turns_are_what_the_capabilities_return():
    """Rebuild every session and call: the stored pictures and results are real (slow: ~20 s)."""
    pytest.importorskip("polars")
    pytest.importorskip("dask")
    pytest.importorskip("matplotlib")
    ran = subprocess.run(
        [sys.executable, str(HERE / "build_turns.py"), "--check"], capture_output=True, text=True, timeout=300
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
