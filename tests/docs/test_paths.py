"""The architecture pages and CONTRIBUTING.md name files by path (`agent/loop.py`,
`runtime/kernel_helper.py`): each named file or folder exists in the repository (a bare ``loop.py`` in a
package's paragraph: some file of that name, a ``agent/loop.py``: a path ending so), so a module removed or
renamed without its page fails here rather than misleading the next contributor."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [*sorted((ROOT / "docs" / "architecture").glob("*.md")), ROOT / "CONTRIBUTING.md"]
PATH = re.compile(r"`([\w./-]+(?:\.py|\.md|\.toml|/))`")


EVERY_PATH = (
    "\n".join(
        "/" + str(path.relative_to(ROOT))
        for top in ("src", "tests", "scripts", "benchmarks", "docs", ".ci", "prompts")
        for path in [ROOT / top, *(ROOT / top).rglob("*")]
        if "__pycache__" not in path.parts
    )
    + "\n/pyproject.toml\n/mkdocs.yml\n/README.md\n/CONTRIBUTING.md\n"
)


def _exists(name: str) -> bool:
    """Some path in the repository ends with ``name``."""
    return any(line.endswith("/" + name.rstrip("/")) for line in EVERY_PATH.splitlines())


def named_paths(page: Path) -> list[str]:
    return sorted(set(PATH.findall(page.read_text(encoding="utf-8"))))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_a_page_names_exists(page):
    assert named_paths(page), "the page names no file: the pattern no longer finds them"
    missing = [name for name in named_paths(page) if not _exists(name)]
    assert not missing, f"{page.name} names files that do not exist: {missing}"
