"""Compile a snippet for the sandbox: our own checks first (plain messages that name the line and the source
segment), then RestrictedPython's ``RestrictingNodeTransformer`` extended with size checks and deadline ticks.

``RestrictingNodeTransformer`` is used exactly as ``compile_restricted`` uses it (same visitor, same error
list); the subclass only adds rewrites *after* RestrictedPython has checked a node, so the names it introduces
(``_mul_``, ``_tick_``, ``_result_``) cannot be written by the snippet itself.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from RestrictedPython.transformer import RestrictingNodeTransformer, copy_locations

from ...errors import SandboxViolation
from ..redact import Masker
from ..warnless import compiler_warning, respelled
from .modules import denied_text, module_allowed
from .rules import (
    DUNDER_METHODS,
    FORBIDDEN_BUILTINS,
    INTERNALS,
    PRIVATE_MESSAGE,
    SAFE_DUNDERS,
    SANDBOX_FILENAME,
)

RESULT_NAME = "_result_"
MAX_SOURCE_CHARS = 50_000
_CHECKED_OPS = {ast.Mult: "_mul_", ast.Pow: "_pow_", ast.LShift: "_lshift_"}


@dataclass(frozen=True)
class Compiled:
    code: object  # types.CodeType
    names: frozenset[str]  # every name the snippet reads (the user variables it may need)
    imports: frozenset[str]  # modules it imports (pre-imported by the parent before a fork)
    has_result: bool


def segment(source: str, node: ast.AST) -> str:
    text = ast.get_source_segment(source, node) or ""
    text = " ".join(text.split())
    return text if len(text) <= 80 else text[:77] + "..."


def located(source: str, node: ast.AST, message: str) -> SandboxViolation:
    line = getattr(node, "lineno", None)
    seg = segment(source, node)
    where = f"line {line}, `{seg}`" if seg else f"line {line}"
    return SandboxViolation(f"{where}: {message}")


class _Checker(ast.NodeVisitor):
    """Refuses what the sandbox never allows, with the exact place in the source."""

    def __init__(self, source: str, walled: bool = False) -> None:
        self.source = source
        self.walled = walled
        self.imports: set[str] = set()

    def fail(self, node: ast.AST, message: str) -> None:
        raise located(self.source, node, message)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.generic_visit(node)  # innermost first: report the first step of a walk
        if node.attr in SAFE_DUNDERS and isinstance(node.ctx, ast.Load):
            return
        if self.walled and is_super_dunder(node):
            return
        if node.attr.startswith("_"):
            self.fail(node, PRIVATE_MESSAGE)
        if node.attr in INTERNALS:
            self.fail(node, f"the attribute {node.attr} leads out of the sandbox and is not available")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id.startswith("_") and node.id != "_":
            self.fail(node, "names starting with _ are not available in the sandbox")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_BUILTINS:
            self.fail(
                node, f"{node.func.id}() is not available in the sandbox ({FORBIDDEN_BUILTINS[node.func.id]})"
            )
        if isinstance(node.func, ast.Name) and node.func.id == "type" and len(node.args) > 1:
            self.fail(node, "type() with three arguments (making classes dynamically) is not available")
        self.generic_visit(node)

    def _check_module(self, node: ast.AST, name: str) -> None:
        if not module_allowed(name):
            self.fail(node, denied_text(name))
        self.imports.add(name)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self.fail(node, "relative imports are not available in the sandbox")
        self._check_module(node, node.module or "")
        for alias in node.names:
            if alias.name.startswith("_"):
                self.fail(node, PRIVATE_MESSAGE)

    def _refuse(self, node: ast.AST, what: str) -> None:
        self.fail(node, f"{what} are not available in the sandbox")

    def visit_AsyncFunctionDef(self, node: ast.AST) -> None:
        self._refuse(node, "async functions")

    def visit_Await(self, node: ast.AST) -> None:
        self._refuse(node, "await expressions")

    def visit_AsyncFor(self, node: ast.AST) -> None:
        self._refuse(node, "async loops")

    def visit_AsyncWith(self, node: ast.AST) -> None:
        self._refuse(node, "async with blocks")

    def visit_TryStar(self, node: ast.AST) -> None:  # ``except*`` (GHSA: exception groups)
        self._refuse(node, "except* handlers")


def is_super_dunder(node: ast.Attribute) -> bool:
    """``super().__init__`` (or another ordinary protocol method) read from ``super()``."""
    value = node.value
    return (
        node.attr in DUNDER_METHODS
        and isinstance(node.ctx, ast.Load)
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "super"
    )


class SandboxTransformer(RestrictingNodeTransformer):
    """RestrictedPython's transformer plus: ``*``, ``**``, ``<<`` (and in-process ``+``) through size-checked
    helpers, and (in-process) a deadline tick in every loop body, comprehension and function entry."""

    ticks = False
    check_add = False  # ``+`` is not checked: doubling loops meet RLIMIT_AS (fork) or the deadline tick
    # Fork mode: ``n += 1`` on a local name stays native (the child owns every object).
    native_augassign = True
    relaxed = False  # the checks behind the kernel wall (``_Checker``): a few dunder forms allowed

    def _tick_call(self, node: ast.AST) -> ast.Call:
        call = ast.Call(func=ast.Name("_tick_", ast.Load()), args=[], keywords=[])
        copy_locations(call, node)
        return call

    def _tick_stmt(self, node: ast.AST) -> ast.Expr:
        stmt = ast.Expr(self._tick_call(node))
        copy_locations(stmt, node)
        return stmt

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        """Reading ``x.__name__``-style plain-string dunders (``SAFE_DUNDERS``) is allowed, through
        ``_getattr_`` like every other read; RestrictedPython itself refuses every ``_`` name."""
        if node.attr in SAFE_DUNDERS and isinstance(node.ctx, ast.Load):
            node = self.node_contents_visit(node)
            call = ast.Call(
                func=ast.Name("_getattr_", ast.Load()),
                args=[node.value, ast.Constant(node.attr)],
                keywords=[],
            )
            copy_locations(call, node)
            return call
        return super().visit_Attribute(node)

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        node = self.node_contents_visit(node)
        helper = _CHECKED_OPS.get(type(node.op))
        if helper is None and self.check_add and isinstance(node.op, ast.Add):
            helper = "_add_"
        if helper is None:
            return node
        call = ast.Call(func=ast.Name(helper, ast.Load()), args=[node.left, node.right], keywords=[])
        copy_locations(call, node)
        return call

    is_secret_key: Callable[[str], bool] = staticmethod(lambda key: True)  # type: ignore[assignment]  # RestrictedPython's attribute, set per class

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        """``row['name']`` / ``xs[0]`` with a constant, non-secret key is read natively: ``_getitem_`` only
        refuses secret-named keys, which for a constant is decided here, once."""
        key = node.slice
        if (
            isinstance(node.ctx, ast.Load)
            and isinstance(key, ast.Constant)
            and type(key.value) in (str, int)
            and not (isinstance(key.value, str) and self.is_secret_key(key.value))
        ):
            return self.node_contents_visit(node)
        return super().visit_Subscript(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        """In fork mode ``name op= value`` stays a native operation (RestrictedPython would route it through
        ``_inplacevar_``), except the operators whose result size is checked. Attribute and item targets are
        refused by RestrictedPython as before."""
        if self.native_augassign and isinstance(node.target, ast.Name) and type(node.op) not in _CHECKED_OPS:
            return self.node_contents_visit(node)
        return super().visit_AugAssign(node)

    def visit_For(self, node: ast.For) -> ast.AST:
        node = super().visit_For(node)
        if self.ticks:
            node.body.insert(0, self._tick_stmt(node))
        return node

    def visit_While(self, node: ast.While) -> ast.AST:
        node = super().visit_While(node)
        if self.ticks:
            node.body.insert(0, self._tick_stmt(node))
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node = super().visit_FunctionDef(node)
        if self.ticks:
            node.body.insert(0, self._tick_stmt(node))
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        node = super().visit_Lambda(node)
        if self.ticks:
            node.body = ast.BoolOp(op=ast.And(), values=[self._tick_call(node), node.body])
            copy_locations(node.body, node)
        return node

    def visit_comprehension(self, node: ast.comprehension) -> ast.AST:
        node = super().visit_comprehension(node)
        if self.ticks:
            node.ifs.insert(0, self._tick_call(node.iter))
        return node


class WalledTransformer(SandboxTransformer):
    """Fork mode behind the kernel wall: a snippet's own classes may define ordinary protocol methods and call
    ``super().__init__()``; ``obj.attr op= v`` and ``obj[k] op= v`` run natively with ``obj`` passed through
    ``_write_`` first (so modules, functions and foreign classes stay unwritable)."""

    relaxed = True

    def check_name(self, node: ast.AST, name: str | None, allow_magic_methods: bool = False) -> None:
        if allow_magic_methods and name in DUNDER_METHODS and getattr(node, "col_offset", 0) != 0:
            return
        super().check_name(node, name, allow_magic_methods)  # type: ignore[arg-type]  # RestrictedPython's untyped signature

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if is_super_dunder(node):
            return self.node_contents_visit(node)
        return super().visit_Attribute(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        target = node.target
        if isinstance(target, (ast.Attribute, ast.Subscript)) and type(node.op) not in _CHECKED_OPS:
            guarded = ast.Call(
                func=ast.Name("_write_", ast.Load()), args=[self.visit(target.value)], keywords=[]
            )
            copy_locations(guarded, target.value)
            target.value = guarded
            if isinstance(target, ast.Subscript):
                target.slice = self.visit(target.slice)
            node.value = self.visit(node.value)
            return node
        return super().visit_AugAssign(node)


class TickingTransformer(SandboxTransformer):
    """In-process: a deadline check (``_tick_()``) in every loop body, function, comprehension and lambda."""

    ticks = True
    native_augassign = False


_RP_LINE = re.compile(r"^Line (\d+): (.*)$")


def _rp_error(message: str, source: str) -> SandboxViolation:
    m = _RP_LINE.match(message)
    if not m:
        return SandboxViolation(message)
    line = int(m.group(1))
    lines = source.splitlines()
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    where = f"line {line}, `{text[:80]}`" if text else f"line {line}"
    return SandboxViolation(f"{where}: {m.group(2).rstrip('.')}")


def compile_snippet(
    source: str,
    dialect: type[SandboxTransformer] = SandboxTransformer,
    *,
    mode: str = "exec",
    secret_names: tuple[str, ...] = (),
) -> Compiled:
    """Check and compile ``source``; raise ``SandboxViolation`` naming the line and segment. ``dialect``: the
    transformer the sandbox's policy runs code under (``SandboxTransformer`` in a forked child,
    ``WalledTransformer`` behind the kernel wall, which allows a little more, ``TickingTransformer``
    in-process); ``secret_names`` are the user's extra secret-name patterns (config ``secret_names``)."""
    return _compile(source, dialect, mode, secret_names)


@functools.lru_cache(maxsize=32)
def _secret_checker(secret_names: tuple[str, ...]) -> Callable[[str], bool]:
    return Masker(extra_names=list(secret_names), environ={}).is_secret_name


@functools.lru_cache(maxsize=256)
def _compile(
    source: str, dialect: type[SandboxTransformer], mode: str, secret_names: tuple[str, ...] = ()
) -> Compiled:
    if len(source) > MAX_SOURCE_CHARS:
        raise SandboxViolation(f"the code is longer than {MAX_SOURCE_CHARS:,} characters")
    # Compiled in the REPL's process: nothing may warn here, since a warning goes through the session's
    # ``warnings`` machinery (``warnless``): the tokenizer's are spelled away, the compiler's refused.
    try:
        tree = ast.parse(respelled(source), SANDBOX_FILENAME, "exec")
    except SyntaxError as exc:
        where = f"line {exc.lineno}, `{(exc.text or '').strip()[:80]}`" if exc.lineno else "the code"
        raise SandboxViolation(f"{where}: syntax error: {exc.msg}") from None
    shape = compiler_warning(tree)
    if shape is not None:
        raise SandboxViolation(f"the code holds {shape}, which Python warns about")
    if mode == "eval" and not (len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr)):
        raise SandboxViolation("eval_expr takes one expression; use run_python for statements")
    checker = _Checker(source, dialect.relaxed)
    checker.visit(tree)
    errors: list[str] = []
    warnings: list[str] = []
    used: dict[str, bool] = {}
    transformer = dialect(errors, warnings, used)
    transformer.is_secret_key = _secret_checker(secret_names)
    transformer.visit(tree)
    if errors:
        raise _rp_error(errors[0], source)
    has_result = bool(tree.body) and isinstance(tree.body[-1], ast.Expr)
    if has_result:
        last = tree.body[-1]
        assign = ast.Assign(targets=[ast.Name(RESULT_NAME, ast.Store())], value=last.value)  # type: ignore[attr-defined]  # the last statement is an expression here
        copy_locations(assign, last)
        tree.body[-1] = assign
    ast.fix_missing_locations(tree)
    code = compile(tree, SANDBOX_FILENAME, "exec")
    return Compiled(code, frozenset(used), frozenset(checker.imports), has_result)
