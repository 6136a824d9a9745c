"""``eval_expr``: one read-only expression, least power first.

Names, attribute paths, literal subscripts, plain operators and calls of an allow-list of side-effect-free
functions and methods (``len(x)``, ``sorted(d)[:5]``, ``df['a'].mean()``) are evaluated here, in-process, in
microseconds — the model is IPython's ``guarded_eval`` "limited" policy. Anything else (an unknown call, a
user class's property or ``__getattr__``, a lambda) raises ``NotFast`` and goes through the sandbox, with the
same isolation as ``run_python``.
"""

from __future__ import annotations

import ast
import builtins
import functools
import operator
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import CapabilityError, SandboxViolation
from .sandbox import limits, run, secrets_for
from .sandbox.modules import check_attr_name
from .summary import describe

if TYPE_CHECKING:
    from .registry import CapabilityContext

MAX_EXPR_CHARS = 2_000
_MISSING = object()

# Library roots whose objects have no user code behind attribute reads or the allowed methods.
_KNOWN_ROOTS = frozenset({"builtins", "numpy", "pandas", "collections", "datetime", "decimal", "fractions"})
SAFE_FUNCTIONS = frozenset(
    {
        "len", "sorted", "min", "max", "sum", "abs", "round", "repr", "str", "int", "float", "bool", "list",
        "tuple", "set", "frozenset", "any", "all", "isinstance", "type", "reversed", "enumerate", "dict",
        "divmod", "hex", "oct", "bin", "ord", "chr",
    }
)  # fmt: skip
SAFE_METHODS = frozenset(
    {
        "head", "tail", "mean", "median", "sum", "min", "max", "std", "var", "count", "nunique", "unique",
        "value_counts", "describe", "isna", "isnull", "notna", "notnull", "any", "all", "keys", "values",
        "items", "get", "index", "startswith", "endswith", "lower", "upper", "strip", "split", "dropna",
        "sort_values", "sort_index", "nlargest", "nsmallest", "idxmax", "idxmin", "round", "abs", "tolist",
        "to_list", "memory_usage", "corr", "cov", "quantile", "cumsum", "argmax", "argmin", "astype", "isin",
        "between", "duplicated", "drop_duplicates", "select_dtypes", "prod", "mode", "first_valid_index",
        "last_valid_index", "reshape", "ravel", "flatten", "transpose", "nonzero", "find", "rfind", "replace",
        "join", "title", "capitalize", "isdigit", "isalpha", "isnumeric", "groupby", "size", "date", "time",
        "isoformat", "weekday", "total_seconds", "most_common", "elements", "copy", "difference", "union",
        "intersection", "issubset", "issuperset", "get_loc", "equals", "fillna", "clip", "diff",
        "pct_change", "rank", "sample_none",
    }
)  # fmt: skip
_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
    ast.RShift: operator.rshift, ast.MatMult: operator.matmul,
}  # fmt: skip
_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}  # fmt: skip


class NotFast(Exception):
    """The expression needs the sandbox (not an error)."""


def evaluate(ctx: CapabilityContext, expr: str) -> str:
    """The ``eval_expr`` capability: a bounded summary of ``expr``'s value."""
    if ctx.privacy == "names":
        raise SandboxViolation(
            "Evaluating expressions is not allowed at privacy level 'names' (it would reveal values); "
            "raise the privacy setting to 'schema' or higher."
        )
    tree = parse_expression(expr)
    try:
        value = _Fast(ctx.namespace, secrets_for(ctx).is_secret_name).eval(tree.body)
    except NotFast:
        return run(ctx, expr.strip(), "eval")
    except SandboxViolation as exc:
        raise SandboxViolation(f"`{_short(expr)}`: {exc}") from None
    return describe(value, ctx.privacy, ctx.config.max_output_chars)


def _short(expr: str) -> str:
    expr = " ".join(expr.split())
    return expr if len(expr) <= 80 else expr[:77] + "..."


def fast_value(ctx: CapabilityContext, expr: str) -> Any:
    """The value of ``expr`` by the fast path; ``NotFast`` when it needs the sandbox."""
    return _Fast(ctx.namespace, secrets_for(ctx).is_secret_name).eval(parse_expression(expr).body)


def value_of(ctx: CapabilityContext, expr: str) -> Any:
    """The raw value of ``expr`` for the other capabilities (``get_type(expr)`` …): fast path only."""
    tree = parse_expression(expr)
    try:
        return _Fast(ctx.namespace, secrets_for(ctx).is_secret_name).eval(tree.body)
    except NotFast:
        raise CapabilityError(
            f"{expr.strip()!r} is too complex to inspect directly; use eval_expr or run_python for it."
        ) from None


@functools.lru_cache(maxsize=512)
def parse_expression(expr: str) -> ast.Expression:
    """``expr`` parsed once (cached) with the size and syntax checks every capability argument gets."""
    expr = (expr or "").strip()
    if not expr:
        raise CapabilityError("The expression is empty; give one such as df.shape or len(x).")
    if len(expr) > MAX_EXPR_CHARS:
        raise CapabilityError(f"The expression is longer than {MAX_EXPR_CHARS:,} characters.")
    try:
        return ast.parse(expr, "<expr>", "eval")
    except SyntaxError as exc:
        problem = exc.msg
    try:  # an assignment, an import, a del: a write asked of a reading tool, so say what to do instead
        ast.parse(expr, "<expr>", "exec")
    except SyntaxError:
        raise CapabilityError(f"{expr!r} is not a valid Python expression: {problem}.") from None
    raise CapabilityError(
        f"{expr!r} is not a valid Python expression: it is a statement, and this tool only reads. Code that "
        "changes the session goes to the person, who runs it or not (propose_code)."
    )


def _root(value: Any) -> str:
    return (getattr(type(value), "__module__", None) or "").split(".")[0]


class _Fast:
    """Evaluates the safe subset directly; raises ``NotFast`` for the rest and ``SandboxViolation`` for what
    the sandbox would refuse anyway (private names, secrets)."""

    def __init__(self, namespace: Mapping[str, Any], is_secret_name: Callable[[str], bool]) -> None:
        self.ns = namespace
        self.is_secret_name = is_secret_name

    def eval(self, node: ast.AST) -> Any:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise NotFast
        return method(node)

    def _known(self, value: Any) -> Any:
        if _root(value) not in _KNOWN_ROOTS or type(value).__name__ in ("_Environ", "module"):
            raise NotFast
        return value

    def _Constant(self, node: ast.Constant) -> Any:
        return node.value

    def _Name(self, node: ast.Name) -> Any:
        name = node.id
        if name.startswith("_"):
            raise NotFast
        if self.is_secret_name(name):
            raise SandboxViolation(f"the variable {name} looks like a secret and is not available")
        value = self.ns.get(name, _MISSING)
        if value is _MISSING:
            raise NotFast  # the sandbox reports unknown names (and knows the allowed builtins)
        return value

    def _Attribute(self, node: ast.Attribute) -> Any:
        base = self.eval(node.value)
        name = node.attr
        check_attr_name(name)
        if self.is_secret_name(name):
            raise SandboxViolation(f"the attribute {name} looks like a secret and is not available")
        if name in ("format", "format_map"):
            raise NotFast
        self._known(base)
        value = getattr(base, name, _MISSING)
        if value is _MISSING:
            raise NotFast
        return value

    def _Subscript(self, node: ast.Subscript) -> Any:
        base = self._known(self.eval(node.value))
        key = self.eval(node.slice)
        if isinstance(key, str) and self.is_secret_name(key):
            raise SandboxViolation(f"the key {key!r} looks like a secret and is not available")
        if isinstance(base, dict):
            try:
                present = dict.__contains__(base, key)
            except TypeError:
                raise NotFast from None
            if not present:
                raise CapabilityError(f"{ast.unparse(node.value)} has no key {key!r}.")
            return dict.__getitem__(base, key)
        return base[key]

    def _Slice(self, node: ast.Slice) -> slice:
        part = [None if n is None else self.eval(n) for n in (node.lower, node.upper, node.step)]
        return slice(*part)

    def _Tuple(self, node: ast.Tuple) -> tuple[Any, ...]:
        return tuple(self.eval(e) for e in node.elts)

    def _List(self, node: ast.List) -> list[Any]:
        return [self.eval(e) for e in node.elts]

    def _UnaryOp(self, node: ast.UnaryOp) -> Any:
        value = self._known(self.eval(node.operand))
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return +value
        if isinstance(node.op, ast.Not):
            return not value
        raise NotFast

    def _BinOp(self, node: ast.BinOp) -> Any:
        left = self._known(self.eval(node.left))
        right = self._known(self.eval(node.right))
        op = type(node.op)
        if op is ast.Mult:
            return limits.mul(left, right)
        if op is ast.Pow:
            return limits.pow_(left, right)
        if op is ast.LShift:
            return limits.lshift(left, right)
        if op is ast.Add:
            return limits.add(left, right)
        return _BINOPS[op](left, right)

    def _Compare(self, node: ast.Compare) -> Any:
        left = self._known(self.eval(node.left))
        result: Any = True
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = self._known(self.eval(comp))
            result = _CMPOPS[type(op)](left, right)
            if len(node.ops) > 1 and not result:
                return result
            left = right
        return result

    def _Call(self, node: ast.Call) -> Any:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise NotFast
        if isinstance(node.func, ast.Name):
            if node.func.id not in SAFE_FUNCTIONS or node.func.id in self.ns:
                raise NotFast
            func = _safe_builtin(node.func.id)
        elif isinstance(node.func, ast.Attribute) and node.func.attr in SAFE_METHODS:
            owner = self._known(self.eval(node.func.value))
            if type(owner).__module__ not in ("builtins",) and _root(owner) not in ("numpy", "pandas"):
                raise NotFast
            func = getattr(owner, node.func.attr, _MISSING)
            if func is _MISSING or not callable(func):
                raise NotFast
        else:
            raise NotFast
        args = [self._known(self.eval(a)) for a in node.args]
        kwargs = {k.arg: self._known(self.eval(k.value)) for k in node.keywords}
        if kwargs.get("inplace"):
            raise SandboxViolation("inplace=True would change the session's object")
        return func(*args, **kwargs)


def _safe_builtin(name: str) -> Callable[..., Any]:
    func = getattr(builtins, name)
    if name in limits.MATERIALISING_BUILTINS:
        return limits.materialising(func, name)
    if name == "type":
        return lambda obj: type(obj)
    return func
