"""The documentation site builds strictly: ``mkdocs build --strict`` (``mkdocs.yml``), into a temporary
folder, so the README's test command holds it (not --quiet: mkdocs counts only the warnings it shows). A
broken link or anchor, a page left out of the navigation, a missing picture or a docstring the Python API page
cannot read fails here, with mkdocs' own warning as the message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build(site: Path, config: Path = ROOT / "mkdocs.yml") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_the_site_builds_strictly(tmp_path):
    done = build(tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    for page in ("index.html", "configuration/index.html", "safety/index.html", "api/index.html"):
        assert (tmp_path / "site" / page).is_file(), page


def test_a_broken_link_fails_the_build(tmp_path):
    """The strict build is not a formality: the same configuration over a copy of the pages with one link
    broken fails."""
    import shutil

    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    page = docs / "using" / "piped.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n[gone](no-such-page.md)\n", encoding="utf-8")
    config = tmp_path / "mkdocs.yml"
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    text = text.replace("docs_dir: docs", f"docs_dir: {docs}").replace(
        "paths: [src]", f"paths: [{ROOT / 'src'}]"
    )
    config.write_text(text, encoding="utf-8")
    done = build(tmp_path / "site", config)
    assert done.returncode != 0 and "no-such-page.md" in done.stdout + done.stderr, done.stdout + done.stderr
