"""The type checker reads the whole of ``src/`` (mypy, configured in ``pyproject.toml``: strict at the seams —
``ports``, ``proposal``, ``runtime/``, ``agent/``): 0 errors. It runs here, beside the other tests, so the
README's test command (and ``.ci/run``) runs it on whatever tree is tested, merged branches included.

Its cache is ``.mypy_cache`` at the repository's root: a first run takes about a minute and a half of CPU, a
run after a change a few seconds."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# a ``type: ignore`` names its error code and says why on the same line: ``# type: ignore[code]  # why``
_IGNORE = re.compile(r"#\s*type:\s*ignore(?P<rest>.*)$")
_REASONED = re.compile(r"^\[[a-z-]+(?:,\s*[a-z-]+)*\]\s+#\s*\S")


def test_the_type_checker_finds_no_error() -> None:
    from mypy import api  # the test extra's

    out, err, status = api.run(
        ["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(ROOT / ".mypy_cache")]
    )
    assert status == 0, out + err


def test_every_type_ignore_names_its_code_and_says_why() -> None:
    bare = []
    for path in sorted((ROOT / "src").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found = _IGNORE.search(line)
            if found and not _REASONED.match(found["rest"].strip()):
                bare.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert bare == []
