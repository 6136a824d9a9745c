"""The package's import graph, read from the source: no cycles, and the layers import one way.

Every edge counts, whether or not it runs at import time: each ``import`` statement (at module level, inside
functions and classes, under ``try``, and under ``if TYPE_CHECKING:`` too: a type a module names is a
dependency on the module that defines it), and each import made by name at run time — a string that names
one of the package's modules, as ``importlib.import_module``, ``__import__`` and the registries' providers
(``"pyaichat.commands.core"``, ``"pyaichat.capabilities.plugins:load_all"``) take them. ``from package import
name`` is an import of the submodule ``package.name`` when there is one, else of the package itself; the
implicit import of a module's parent packages is not an edge (a parent is always on its way in before its
child).

Two graphs are checked: the modules', and the rooms' — each top-level module and each top-level package of
``pyaichat`` as one node — so that no import runs in a circle between files, nor up a floor between parts.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "pyaichat"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in SRC.rglob("*.py")}

# an import made by name at run time: the string given to one of these, or any "module:attr" or
# "__import__('module')" string (a provider, an entry's target, code sent to run elsewhere)
_IMPORTERS = frozenset({"import_module", "__import__", "Registry"})
_MODULE = r"pyaichat(?:\.\w+)+"
_BY_NAME = re.compile(rf"^({_MODULE})(?::[\w.]+)?$")
_NAMED = re.compile(rf"^({_MODULE}):[\w.]+$|__import__\(['\"]({_MODULE})['\"]")


def _named_in_calls(tree: ast.AST) -> set[int]:
    """The ids of the strings given to an importer (``import_module("…")``, ``Registry(("…", …))``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _IMPORTERS:
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    found.update(id(n) for n in ast.walk(arg) if isinstance(n, ast.Constant))
    return found


def _targets(node: ast.AST, package: str, by_name: set[int]) -> Iterator[str]:
    """The module names an import statement, or a string that names a module to import, refers to."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            origin = ".".join(base + ([node.module] if node.module else []))
        else:
            origin = node.module or ""
        for alias in node.names:
            yield f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in MODULES else origin
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        match = _BY_NAME.match(node.value) if id(node) in by_name else None
        match = match or _NAMED.search(node.value)
        if match is not None:
            yield next(group for group in match.groups() if group)


def imports_of(name: str) -> set[str]:
    """The pyaichat modules that module ``name`` imports, in any of the ways above."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    by_name = _named_in_calls(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        found.update(t for t in _targets(node, package, by_name) if t in MODULES and t != name)
    return found


def graph() -> dict[str, set[str]]:
    return {name: imports_of(name) for name in MODULES}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle_and_only_cycles() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d"}, "f": {"g"}, "g": {"f"}}
    assert sorted(cycles(edges)) == [["a", "b", "c"], ["f", "g"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_package_has_no_import_cycle() -> None:
    found = cycles(graph())
    assert found == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def room(name: str) -> str:
    """The part of the house a module belongs to: a top-level module, or a top-level package whole."""
    parts = name.split(".")
    if len(parts) == 1:
        return name
    package = MODULES[".".join(parts[:2])].name == "__init__.py"
    return ".".join(parts[:2]) + ("/" if package else "")


def rooms(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The imports between the parts (a package's own ``__init__`` only hands names on: it is no part)."""
    found: dict[str, set[str]] = {}
    for name, imported in edges.items():
        if name == "pyaichat":
            continue
        found.setdefault(room(name), set()).update(
            room(t) for t in imported if t != "pyaichat" and room(t) != room(name)
        )
    return found


def test_the_parts_import_one_way() -> None:
    """No part imports one that imports it back, however far round: every import runs down a floor."""
    found = cycles(rooms(graph()))
    assert found == [], "imports up a floor between: " + "; ".join(" <-> ".join(c) for c in found)


def test_a_new_circle_or_upward_import_is_caught() -> None:
    """The graph sees each kind of edge: a function-level import, one under ``TYPE_CHECKING``, and a module
    named for ``importlib`` or a registry."""
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .controller import Controller\n"
        "def f():\n    from .repl import app\n"
        "import importlib\nimportlib.import_module('pyaichat.cli')\n"
        "R = Registry(('pyaichat.commands.core',))\n"
        "GROUP = 'pyaichat.capabilities'  # a name, not an import\n"
    )
    by_name = _named_in_calls(tree)
    seen = {t for node in ast.walk(tree) for t in _targets(node, "pyaichat", by_name)}
    assert {"pyaichat.controller", "pyaichat.repl.app", "pyaichat.cli", "pyaichat.commands.core"} <= seen
    assert "pyaichat.capabilities" not in seen
    edges = graph()
    edges["pyaichat.session"] = edges["pyaichat.session"] | {
        "pyaichat.controller"
    }  # a lower part reaching up
    assert cycles(edges) and cycles(rooms(edges))


# -- layers --------------------------------------------------------------------------------------------------
FRONT_ENDS = ("pyaichat.repl", "pyaichat.ipython", "pyaichat.commands", "pyaichat.cli", "pyaichat.attach")


def _importers_of(edges: dict[str, set[str]], layer: str, targets: tuple[str, ...]) -> dict[str, list[str]]:
    return {
        name: sorted(t for t in imported if t.startswith(targets))
        for name, imported in edges.items()
        if (name == layer or name.startswith(layer + ".")) and any(t.startswith(targets) for t in imported)
    }


def test_the_layers_import_one_way() -> None:
    """session → capabilities → runtime → agent → front ends: a lower layer never imports a higher one."""
    edges = graph()
    assert _importers_of(edges, "pyaichat.session", ("pyaichat.capabilities", "pyaichat.runtime")) == {}
    assert (
        _importers_of(edges, "pyaichat.capabilities", ("pyaichat.runtime", "pyaichat.agent", *FRONT_ENDS))
        == {}
    )
    assert (
        _importers_of(edges, "pyaichat.runtime", ("pyaichat.agent", "pyaichat.controller", *FRONT_ENDS)) == {}
    )
    assert _importers_of(edges, "pyaichat.agent", FRONT_ENDS) == {}
    # the user's MCP servers as tools: below the agent (which offers them), beside the capabilities
    higher = ("pyaichat.agent", "pyaichat.runtime", "pyaichat.controller", *FRONT_ENDS)
    assert _importers_of(edges, "pyaichat.mcptools", higher) == {}
    # the work that lasts takes plain data: the REPL, IPython and the kernel helper all call it
    higher = ("pyaichat.runtime", "pyaichat.agent", "pyaichat.controller", *FRONT_ENDS)
    assert _importers_of(edges, "pyaichat.persist", higher) == {}


# The controller keeps modes and dispatch: proposals, what lasts and the journal have modules of their own,
# and it reaches the agent only through the events it emits, the proposal service's ``decide`` it hands the
# assistant and the ghost-text suggester it holds for the prompt; an MCP server's question reaches the person
# through ``mcptools.approval``.
CONTROLLER_MAY_IMPORT = {
    "pyaichat.agent.events",
    "pyaichat.agent.suggest",
    "pyaichat.mcptools.approval",
    "pyaichat.commands",
    "pyaichat.errors",
    "pyaichat.journal",
    "pyaichat.resume_file",
    "pyaichat.modes",
    "pyaichat.prose",  # the one hint where questions go, for a question typed as Python
    "pyaichat.proposals",
    "pyaichat.proposal",
    "pyaichat.mcpserve.gate",  # outside agents' calls wait while an input is handled (standard library only)
    # types it names: the interfaces it is written against, the assistant, the configuration, a run's record
    "pyaichat.ports",
    "pyaichat.agent.assistant",
    "pyaichat.configuration.config",
    "pyaichat.records",
    "pyaichat.runtime",
}
# The session's services below the front ends: none of them imports a front end or the controller.
SERVICES = ("pyaichat.proposals", "pyaichat.resume_file", "pyaichat.journal", "pyaichat.ports")


def test_the_controller_imports_only_what_dispatch_needs() -> None:
    edges = graph()
    assert sorted(edges["pyaichat.controller"] - CONTROLLER_MAY_IMPORT) == []
    for service in SERVICES:
        higher = ("pyaichat.controller", "pyaichat.piped", *FRONT_ENDS)
        assert _importers_of(edges, service, higher) == {}, service
    # the proposal path needs neither the agent's loop nor a runtime's internals (the protocol, yes)
    path = set().union(*(edges[name] for name in edges if name.startswith("pyaichat.proposals")))
    assert not [m for m in path if m.startswith(("pyaichat.agent.loop", "pyaichat.runtime."))]


def test_plain_start_up_modules_do_not_import_the_kernel_runtime() -> None:
    edges = graph()
    kernel = ("pyaichat.runtime.kernel", "pyaichat.runtime.connect", "pyaichat.runtime.execute")
    for name in (
        "pyaichat.cli",
        "pyaichat.controller",
        "pyaichat.piped",
        "pyaichat.session",
        "pyaichat.runtime",
    ):
        assert not [i for i in edges[name] if i.startswith(kernel)], name


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _running(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under ``node`` that can run (``if TYPE_CHECKING:`` bodies left out: a library
    named only for its types is never loaded)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
        return
    if isinstance(node, ast.If) and _is_type_checking(node.test):
        children: list[ast.AST] = list(node.orelse)
    else:
        children = list(ast.iter_child_nodes(node))
    for child in children:
        yield from _running(child)


def third_party_imports(name: str) -> set[str]:
    """The top-level packages outside pyaichat that module ``name`` loads."""
    found: set[str] = set()
    for node in _running(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif not node.level and node.module:
            found.add(node.module.partition(".")[0])
    return found - {"pyaichat"}


MCP_SERVER_FACES = ("pyaichat.mcpserve.face", "pyaichat.mcpserve.http_main", "pyaichat.mcpserve.bridge_cli")


def test_each_heavy_library_has_one_home() -> None:
    """litellm only in the LLM client, RestrictedPython only in the sandbox, rich only in rendering,
    prompt_toolkit and IPython only in the front ends (and in the helper a kernel loads: its IPython end)."""
    homes = {
        "litellm": ("pyaichat.agent.llm",),
        "RestrictedPython": ("pyaichat.capabilities.sandbox",),
        "rich": ("pyaichat.repl.render",),
        "prompt_toolkit": ("pyaichat.repl", "pyaichat.ipython"),
        "IPython": ("pyaichat.ipython", "pyaichat.runtime.kernel_helper"),
        # the MCP SDK: its client for the servers the assistant uses; its server in the faces that serve the
        # session (their own processes: the HTTP face, `pyaichat mcp`)
        "mcp": ("pyaichat.mcptools.connection", *MCP_SERVER_FACES),
        "mcp_types": ("pyaichat.mcptools.connection", *MCP_SERVER_FACES),
        # the SQL parser: the statement check and the lineage of its result columns
        "sqlglot": ("pyaichat.capabilities.sqlcheck", "pyaichat.capabilities.sqllineage"),
    }
    strays = {
        library: sorted(n for n in MODULES if library in third_party_imports(n) and not n.startswith(home))
        for library, home in homes.items()
    }
    assert strays == {library: [] for library in homes}
