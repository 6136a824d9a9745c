"""What lasts masks the session's known secret values, not only the values its saved texts bind: a password
read from a file under a secret name, quoted by an error message, never reaches ``/save``'s notebook or the
resume file — even when no capability call has walked the session since it arrived."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakes.recorder import Recorder
from pyaichat.assemble import assemble
from pyaichat.commands import dispatch
from pyaichat.configuration.config import Config
from pyaichat.controller import Controller
from pyaichat.persist.resume import default_path
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session

PASSWORD = "Tq7-horse-lamp-91x-Quill"  # no pattern knows it: only its name in the session says it is secret


@pytest.fixture
def ctrl(tmp_path: Path) -> Controller:
    (tmp_path / "pw.txt").write_text(PASSWORD + "\n")
    session = Session(echo=lambda value: None, config=Config(model="fake/m", audit=False, autosave="on"))
    ctrl = assemble(LocalRuntime(session), Recorder("no"))
    ctrl.handle(f"db_password = open({str(tmp_path / 'pw.txt')!r}).read().strip()")
    ctrl.handle("int(db_password)")  # ValueError: invalid literal for int() with base 10: '<the password>'
    return ctrl


def test_save_masks_a_secret_value_no_saved_text_binds(ctrl: Controller, tmp_path: Path) -> None:
    pytest.importorskip("nbformat")
    target = tmp_path / "work.ipynb"
    dispatch(ctrl, f"/save {target}")
    saved = target.read_text()
    assert "invalid literal for int()" in saved  # the error is kept, its quoted value is not
    assert PASSWORD not in saved and "<redacted secret value>" in saved


def test_the_resume_file_masks_a_secret_value_no_saved_text_binds(ctrl: Controller) -> None:
    ctrl.resume_file.flush()
    kept = Path(default_path()).read_text()
    assert "invalid literal for int()" in kept
    assert PASSWORD not in kept and "<redacted secret value>" in kept


def test_the_first_prompt_asks_a_kernel_nothing_for_the_resume_file() -> None:
    """Preparing the first write while the first prompt waits (``ResumeFile.prepare``) asks a kernel's
    session nothing: its secret values are a round trip to a kernel that may be busy with another client's
    cell, and its session is kept only after a question, when they are asked for."""
    from pyaichat.resume_file import ResumeFile

    class KernelLike:
        keeps_inputs = False

        def know_secrets(self) -> tuple[list[str], list[str]]:
            raise AssertionError("a round trip to the kernel while the first prompt waits")

    kept = ResumeFile(
        KernelLike(),  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        config=Config,
        keep=lambda: True,
        notice=lambda text, level: None,
    )
    kept.prepare()
