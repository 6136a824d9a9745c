"""The capabilities package imports one way (no cycle, not even through a lazy import inside a function), and
every module of it imports on its own, fresh, in a clean interpreter."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pyaichat.capabilities

PACKAGE = "pyaichat.capabilities"
ROOT = Path(pyaichat.capabilities.__file__).parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = (*PACKAGE.split("."), *path.relative_to(ROOT).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Modules of the package that ``name`` imports anywhere (module level or inside functions), except under
    ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text())
    skip = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for alias in node.names:
                target = f"{mod}.{alias.name}"
                out.add(target if target in modules else mod)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m in modules and m != name}


def test_capabilities_imports_have_no_cycle() -> None:
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    done: set[str] = set()

    def visit(node: str, trail: list[str]) -> None:
        if node in trail:
            cycle = [*trail[trail.index(node) :], node]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if node in done:
            return
        for dep in sorted(graph[node]):
            visit(dep, [*trail, node])
        done.add(node)

    for name in sorted(graph):
        visit(name, [])
    assert f"{PACKAGE}.catalog" in graph and not any("builtin" in d for d in graph[f"{PACKAGE}.catalog"])


def test_each_module_imports_fresh() -> None:
    names = sorted(_modules())
    script = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    for loaded in [m for m in sys.modules if m.startswith('pyaichat')]:\n"
        "        del sys.modules[loaded]\n"
        "    importlib.import_module(name)\n"
        "print('ok', len(" + repr(names) + "))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("ok")
