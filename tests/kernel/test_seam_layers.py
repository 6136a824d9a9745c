"""The runtime seam's layering, read from the source (every import, including ``TYPE_CHECKING`` ones and those
inside functions): ``runtime`` sits below the capabilities and the front ends, and the two former import
cycles (``commands ↔ controller``, ``ipython.extension ↔ ipython.magics``) stay broken."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "pyaichat"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Every pyaichat module ``path`` imports, resolved to absolute names."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("pyaichat"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("pyaichat"):
                found.add(target)
                found.update(f"{target}.{a.name}" for a in node.names)
    return found


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in SRC.rglob("*.py")}
    return {name: {i for i in imports_of(path) if i in modules} for name, path in modules.items()}


def test_former_cycles_are_gone():
    g = graph()
    commands = [m for m in g if m.startswith("pyaichat.commands")]
    assert all("pyaichat.controller" not in g[m] for m in commands), {m: g[m] for m in commands}
    assert "pyaichat.ipython.extension" not in g["pyaichat.ipython.magics"]


def test_runtime_imports_nothing_above_it():
    g = graph()
    above = (
        "pyaichat.capabilities",
        "pyaichat.agent",
        "pyaichat.repl",
        "pyaichat.ipython",
        "pyaichat.commands",
    )
    for name in (m for m in g if m.startswith("pyaichat.runtime")):
        assert not [i for i in g[name] if i.startswith(above)], (name, g[name])


def test_plain_start_up_modules_do_not_import_the_kernel_runtime():
    g = graph()
    for name in ("pyaichat.cli", "pyaichat.controller", "pyaichat.piped", "pyaichat.session"):
        assert not [
            i for i in g[name] if i.startswith(("pyaichat.runtime.kernel", "pyaichat.runtime.connect"))
        ]
