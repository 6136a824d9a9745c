"""The terminal session the docs show (the first five minutes, the proposal page, the picture on the home page
and in the README) is what pyaichat shows today: ``scripts/docs_sessions.py --check`` records it again in a
real pseudo-terminal against the scripted model and compares, timings masked."""

from __future__ import annotations

import html
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sessions():
    sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location("docs_sessions", ROOT / "scripts" / "docs_sessions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.e2e
def test_the_recorded_session_is_what_pyaichat_shows(sessions, capsys):
    assert sessions.main(["--check"]) == 0, capsys.readouterr().err


def test_the_picture_is_the_recorded_session(sessions):
    """The SVG is drawn from the same recording as the pages' text: every word of the text is in it."""
    page = (ROOT / "docs" / "getting-started" / "first-five-minutes.md").read_text(encoding="utf-8")
    text = sessions.part_of(page, sessions.SCRIPT, "first-five")
    svg = html.unescape((ROOT / "docs" / "assets" / "session.svg").read_text(encoding="utf-8")).replace(
        "\xa0", " "
    )
    words = set(re.findall(r"[A-Za-z_]{3,}", "\n".join(text.splitlines()[1:-1])))
    assert len(words) > 40
    missing = sorted(word for word in words if word not in svg)
    assert not missing, f"not in the picture (run python scripts/docs_sessions.py): {missing[:10]}"


def test_timings_are_the_only_thing_masked(sessions):
    assert sessions.masked("✓ get_repr(df) 20 ms · 1.5 s · 42 rows") == "✓ get_repr(df) N ms · N s · 42 rows"
