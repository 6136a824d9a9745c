"""``defer_package_init``: submodules load without the package ``__init__``, which runs once, when asked."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyaichat.repl.deferred_init import defer_package_init, is_deferred, run_deferred_init

# A package whose __init__ is costly and counts its runs; ``inner`` is a sub-package deferred with it.
FILES = {
    "lazypkg/__init__.py": """
        import sys
        sys.lazypkg_runs = getattr(sys, "lazypkg_runs", 0) + 1
        from .inner import Greeting
        from . import heavy
        VERSION = "1.2"
        __all__ = ["Greeting", "VERSION"]
    """,
    "lazypkg/core.py": """
        from lazypkg import helpers   # a submodule asked for by name: must not run the package __init__
        from lazypkg.inner.shapes import Shape
        def greet():
            return helpers.word() + Shape.__name__
    """,
    "lazypkg/helpers.py": "def word():\n    return 'hi'\n",
    "lazypkg/heavy.py": "import sys\nsys.lazypkg_heavy = True\n",
    "lazypkg/inner/__init__.py": """
        import sys
        sys.lazypkg_inner_runs = getattr(sys, "lazypkg_inner_runs", 0) + 1
        from .shapes import Shape as Greeting
    """,
    "lazypkg/inner/shapes.py": "class Shape:\n    pass\n",
}


@pytest.fixture
def lazypkg(tmp_path: Path) -> Iterator[Path]:
    for name, text in FILES.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "lazypkg" or m.startswith("lazypkg.")]:
            del sys.modules[name]
        for attr in ("lazypkg_runs", "lazypkg_inner_runs", "lazypkg_heavy"):
            if hasattr(sys, attr):
                delattr(sys, attr)


def test_submodules_load_without_the_package_init(lazypkg: Path) -> None:
    defer_package_init("lazypkg", "lazypkg.inner")
    from lazypkg.core import greet

    assert greet() == "hiShape"
    assert not hasattr(sys, "lazypkg_runs") and not hasattr(sys, "lazypkg_inner_runs")
    assert "lazypkg.heavy" not in sys.modules
    assert is_deferred("lazypkg") and is_deferred("lazypkg.inner")
    import lazypkg

    assert lazypkg.core is sys.modules["lazypkg.core"]  # children are attributes, as after a plain import
    assert lazypkg.inner.shapes is sys.modules["lazypkg.inner.shapes"]


def test_the_first_ask_for_a_name_runs_the_init_once_in_the_same_module(lazypkg: Path) -> None:
    defer_package_init("lazypkg", "lazypkg.inner")
    import lazypkg
    from lazypkg.inner.shapes import Shape

    module = sys.modules["lazypkg"]
    assert lazypkg.VERSION == "1.2"
    assert sys.modules["lazypkg"] is module
    assert not is_deferred("lazypkg") and not is_deferred("lazypkg.inner")
    assert sys.lazypkg_runs == 1 and sys.lazypkg_inner_runs == 1  # type: ignore[attr-defined]
    assert sys.lazypkg_heavy  # type: ignore[attr-defined]  # what the __init__ imports is imported now
    from lazypkg import VERSION, Greeting

    assert Greeting is Shape and VERSION == "1.2"
    assert sys.lazypkg_runs == 1  # type: ignore[attr-defined]
    assert "__getattr__" not in vars(module)  # nothing of the mechanism is left behind
    namespace: dict[str, object] = {}
    exec("from lazypkg import *", namespace)
    assert namespace["Greeting"] is Shape and "heavy" not in namespace
    with pytest.raises(AttributeError, match="has no attribute 'missing'"):
        lazypkg.missing  # noqa: B018


def test_star_import_and_unknown_names_also_run_it(lazypkg: Path) -> None:
    defer_package_init("lazypkg")
    import lazypkg

    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        lazypkg.nothing_here  # noqa: B018
    assert sys.lazypkg_runs == 1  # type: ignore[attr-defined]
    assert lazypkg.VERSION == "1.2"


def test_threads_asking_at_once_run_the_init_once(lazypkg: Path) -> None:
    defer_package_init("lazypkg", "lazypkg.inner")
    import lazypkg

    barrier = threading.Barrier(8)
    seen: list[object] = []

    def ask() -> None:
        barrier.wait()
        seen.append(lazypkg.Greeting)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 8 and len(set(map(id, seen))) == 1
    assert sys.lazypkg_runs == 1 and sys.lazypkg_inner_runs == 1  # type: ignore[attr-defined]


def test_imported_or_missing_packages_are_left_alone(lazypkg: Path) -> None:
    import lazypkg

    defer_package_init("lazypkg")
    assert sys.modules["lazypkg"] is lazypkg and not is_deferred("lazypkg")
    defer_package_init("no_such_package_anywhere", "no_such_package_anywhere.child")
    assert "no_such_package_anywhere" not in sys.modules
    with pytest.raises(ModuleNotFoundError):
        import no_such_package_anywhere  # noqa: F401


def test_a_failing_init_leaves_no_half_package_and_the_next_import_reports_it(lazypkg: Path) -> None:
    (lazypkg / "lazypkg" / "__init__.py").write_text("from . import helpers\nraise RuntimeError('broken')\n")
    defer_package_init("lazypkg")
    from lazypkg.helpers import word

    assert word() == "hi"
    with pytest.raises(RuntimeError, match="broken"):
        run_deferred_init("lazypkg")
    assert "lazypkg" not in sys.modules
    with pytest.raises(RuntimeError, match="broken"):
        import lazypkg


REAL_PROMPT_TOOLKIT = """
import sys
from pyaichat.repl.deferred_init import defer_package_init
defer_package_init("prompt_toolkit", "prompt_toolkit.shortcuts")
from prompt_toolkit.shortcuts.prompt import PromptSession
skipped = sorted(m for m in ("importlib.metadata", "prompt_toolkit.shortcuts.dialogs",
                             "prompt_toolkit.shortcuts.progress_bar") if m in sys.modules)
import prompt_toolkit
from prompt_toolkit import PromptSession as Again, __version__, print_formatted_text
from prompt_toolkit.shortcuts import ProgressBar
from importlib.metadata import version
assert Again is PromptSession and __version__ == version("prompt_toolkit"), __version__
print(skipped, prompt_toolkit.VERSION[0])
"""


def test_prompt_toolkit_loads_its_prompt_without_its_init_and_is_whole_when_asked() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", REAL_PROMPT_TOOLKIT], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[]", "3"]
