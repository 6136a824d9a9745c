"""The configuration page's settings table, its ``--help`` and the commands page's table are generated from
the code by ``scripts/docs_reference.py``; these tests fail when a page and the code disagree."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reference():
    sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location("docs_reference", ROOT / "scripts" / "docs_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_pages_match_the_code(reference, capsys):
    code = reference.main(["--check"])
    assert code == 0, capsys.readouterr().err


def test_every_setting_is_a_row_of_the_configuration_page(reference):
    from pyaichat.configuration.settings import SETTINGS

    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for name, setting in SETTINGS.items():
        assert f"**`{name}`**" in page and setting.description.replace("|", "\\|") in page, name


def test_a_setting_the_page_does_not_say_fails_the_check(reference, monkeypatch, capsys):
    """Change the table in the code only (here a default): the check names the page."""
    import copy

    from pyaichat.configuration import settings

    changed = dict(settings.SETTINGS)
    changed["max_steps"] = copy.copy(changed["max_steps"])
    changed["max_steps"].default = 9
    monkeypatch.setattr(settings, "SETTINGS", changed)
    assert reference.main(["--check"]) == 1
    assert "docs/configuration.md" in capsys.readouterr().err


def test_a_command_the_page_does_not_list_fails_the_check(reference, monkeypatch, capsys):
    import pyaichat.commands as commands

    real = commands.all_commands
    monkeypatch.setattr(commands, "all_commands", lambda: [c for c in real() if c.name != "undo"])
    assert reference.main(["--check"]) == 1
    assert "docs/using/commands.md" in capsys.readouterr().err
