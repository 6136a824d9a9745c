"""What the host writes for a kernel session masks the kernel's secret values by value: a password read
from a file under a secret name, quoted by an error message, never reaches ``/save``'s notebook, though the
namespace holding it is the kernel's (``Runtime.know_secrets`` travels; the resume file asks it the same
way, ``resume_file.ResumeFile.changed``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_process import attach

from fakes.recorder import Recorder
from pyaichat.assemble import assemble
from pyaichat.capabilities.redact import set_known_values
from pyaichat.commands import dispatch

PASSWORD = "Kv3-otter-brick-58z-Plume"  # no pattern knows it: only its name in the kernel says it is secret


def test_save_masks_a_kernel_secret_no_saved_text_binds(shared_kernel, tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("nbformat")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    set_known_values(())  # nothing known in this process before the kernel says it
    (tmp_path / "pw.txt").write_text(PASSWORD + "\n")
    runtime = attach(shared_kernel)
    try:
        ctrl = assemble(runtime, Recorder("no"))
        ctrl.handle(f"kernel_db_password = open({str(tmp_path / 'pw.txt')!r}).read().strip()")
        ctrl.handle("int(kernel_db_password)")  # ValueError: invalid literal for int() …: '<the password>'
        target = tmp_path / "work.ipynb"
        dispatch(ctrl, f"/save {target}")
        saved = target.read_text()
        assert "invalid literal for int()" in saved  # the error is kept, its quoted value is not
        assert PASSWORD not in saved and "<redacted secret value>" in saved
    finally:
        runtime.close()
