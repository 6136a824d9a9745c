"""Read-only evaluation of the ``expr`` argument of the introspection capabilities, least power first.

1. A *path* — a name, dotted attributes, subscripts with literal keys (``df.columns``, ``d["a"][0]``,
   ``np.add``, ``len``) — is read here directly: nothing is called or assigned. Reading an attribute that is
   the session's own code (a property, ``__getattr__``) or indexing with its own ``__getitem__`` is one
   bounded ask of that object (``deadline.ask``: abandoned at its budget, never again in the session once it
   overran); library properties run under ``summary.guarded``. Dict lookups check membership first so a
   ``defaultdict`` never grows, and ``os.environ`` can be named but never looked into.
2. Anything else (``df[df.a > 0]``, ``sorted(d)[:5]``) goes through ``eval_expr``'s machinery: its in-process
   fast path for allow-listed side-effect-free calls, else the sandbox's guarded evaluation (in-process,
   because an object cannot cross a fork), with every guard of ``run_python``.
"""

from __future__ import annotations

import ast
import builtins
import os
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import CapabilityError
from . import fast_eval
from .deadline import NotAsked, ask
from .fast_eval import parse_expression
from .sandbox import evaluate_value
from .sandbox.origin import is_user_function, runs_user_code
from .summary import Overtime, guarded, static

if TYPE_CHECKING:
    from .registry import CapabilityContext

MAX_EXPR_CHARS = 500
# Dunder attributes that are plain metadata; every other dunder is refused (``__globals__``,
# ``__subclasses__``…).
SAFE_DUNDERS = frozenset(
    {
        "__doc__",
        "__name__",
        "__qualname__",
        "__module__",
        "__class__",
        "__wrapped__",
        "__annotations__",
        "__file__",
    }
)
_MISSING = object()


def resolve(ctx: CapabilityContext, expr: str) -> Any:
    """Evaluate ``expr`` read-only against the session namespace (then builtins); raise
    ``CapabilityError``."""
    expr = (expr or "").strip()
    if len(expr) > MAX_EXPR_CHARS:  # tighter than eval_expr's own limit: these name a value, not compute one
        raise CapabilityError(f"The expression is longer than {MAX_EXPR_CHARS} characters.")
    tree = parse_expression(expr)
    try:
        return guarded(lambda: _eval(tree.body, ctx.namespace, expr), budget=ctx.config.tool_timeout)
    except Overtime:
        raise CapabilityError(
            f"Reading {expr} took too long (a property or __getitem__ that does not finish)."
        )
    except _NotAPath:
        return _evaluated(ctx, expr)


class _NotAPath(Exception):
    """``expr`` is more than a path; it needs ``eval_expr``'s evaluation."""


def _evaluated(ctx: CapabilityContext, expr: str) -> Any:
    if ctx.privacy == "names":
        raise CapabilityError(
            f"At privacy level 'names' only names and attribute paths can be inspected, not {expr!r}."
        )
    try:
        return fast_eval.fast_value(ctx, expr)
    except fast_eval.NotFast:
        return evaluate_value(ctx, expr)


def _eval(node: ast.AST, namespace: Any, expr: str) -> Any:
    if isinstance(node, ast.Name):
        value = namespace.get(node.id, _MISSING)
        if value is _MISSING:
            value = getattr(builtins, node.id, _MISSING)
        if value is _MISSING:
            raise CapabilityError(f"There is no variable named {node.id!r} in the session.")
        return value
    if isinstance(node, ast.Attribute):
        if node.attr.startswith("__") and node.attr.endswith("__") and node.attr not in SAFE_DUNDERS:
            raise CapabilityError(f"Reading the special attribute {node.attr!r} is not allowed.")
        base = _eval(node.value, namespace, expr)
        _refuse_environ(base)
        name = node.attr
        try:
            if runs_user_code(type(base), base, name):  # the session's own property or __getattr__
                return _asked(base, lambda: getattr(base, name), f".{name}", expr)
            return getattr(base, name)
        except AttributeError:
            raise CapabilityError(f"{ast.unparse(node.value)} has no attribute {node.attr!r}.")
    if isinstance(node, ast.Subscript):
        base = _eval(node.value, namespace, expr)
        _refuse_environ(base)
        key = _literal(node.slice, expr)
        where = ast.unparse(node.value)
        getitem = static(type(base), "__getitem__")
        if isinstance(getitem, types.FunctionType) and is_user_function(getitem):  # the session's own code
            return _asked(base, lambda: _subscript(base, key, where), "__getitem__", expr)
        return _subscript(base, key, where)
    raise _NotAPath


def _asked(owner: Any, read: Callable[[], Any], what: str, expr: str) -> Any:
    """``read()``, which runs ``owner``'s own code: one bounded ask (``deadline.ask``)."""
    try:
        return ask(owner, read, what)
    except NotAsked as exc:
        raise CapabilityError(f"{expr} was not read: {exc}") from None
    except Overtime:
        raise CapabilityError(
            f"Reading {expr} took too long (a property or __getitem__ that does not finish); "
            f"{type(owner).__qualname__}'s own code is not asked again in this session."
        ) from None


def _literal(node: ast.AST, expr: str) -> Any:
    """A literal key: a constant, a negative number, or a tuple of those."""
    if isinstance(node, ast.Constant):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
    ):
        value = node.operand.value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
    if isinstance(node, ast.Tuple):
        return tuple(_literal(elt, expr) for elt in node.elts)
    raise _NotAPath


def _subscript(base: Any, key: Any, where: str) -> Any:
    if isinstance(base, dict):
        # Check first: indexing a defaultdict (or any dict with __missing__) would insert the key.
        try:
            present = dict.__contains__(base, key)
        except TypeError:
            raise CapabilityError(f"{key!r} cannot be a key of {where}.")
        if not present:
            raise CapabilityError(f"{where} has no key {key!r}.")
        return dict.__getitem__(base, key)
    try:
        return base[key]
    except (KeyError, IndexError):
        raise CapabilityError(f"{where} has no item {key!r}.")
    except TypeError as exc:
        raise CapabilityError(f"{where} cannot be indexed with {key!r}: {exc}.")


def _refuse_environ(value: Any) -> None:
    if isinstance(value, os._Environ):
        raise CapabilityError("The contents of os.environ are never shown to the assistant.")
