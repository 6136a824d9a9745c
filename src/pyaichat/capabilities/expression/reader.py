"""The in-process levels of ``expression``: a closed evaluator that can only read.

It knows names, attribute reads, subscripts, literals and displays, operators, and calls of the allow-listed
functions and methods of ``signatures`` whose arguments fit their read-only form (plain values, never a
callable). Everything else — a comprehension, a lambda, an f-string, an unknown call, a receiver or operand of
a type the session defined or of a library not known here, a value that holds a secret — raises
``NotInProcess``: the walled child reads it instead. A private name, a secret name or key and the
environment are refused (``SandboxViolation``), as the child would refuse them.

It runs inside ``deadline.no_user_code``: every operation on the session's objects — an attribute read, a
subscript, an operator, a call — runs under the block's tracer (``self._run``), so the session's own code
never starts here, whichever road a library would take to it (the policy reads in the child when it tried).
The reader's own checks look at types and into builtin containers only (``plain``), and run untraced: a
traced call per check would cost more than the expression.

One module of ~500 lines on purpose: one ``Reader`` with a method per kind of node, each taking the same
decisions (traced or not, secret or shown, ``NotInProcess`` or refused); split, the rule "nothing of the
session's runs untraced here" would be kept in several files.
"""

from __future__ import annotations

import ast
import builtins
import operator
import types
from collections.abc import Callable, Mapping
from typing import Any

from ...errors import CapabilityError, SandboxViolation
from ..deadline import NoUserCode
from ..sandbox import limits
from ..sandbox.modules import check_attr_name
from ..sandbox.origin import runs_user_code
from ..sandbox.rules import INTERNALS, PRIVATE_MESSAGE
from ..summary import static
from .plain import (
    SecretsOf,
    bears_secret,
    is_environment,
    is_known,
    is_module,
    is_plain,
    library_attribute,
    library_only,
    module_of,
    pandas_owner,
)
from .signatures import FUNCTIONS, MATERIALISING, NUMPY_FUNCTIONS, method_sig

ENVIRONMENT = "the environment (os.environ, or a copy of it) is never shown to the assistant"
_MISSING = object()
# What a pandas object with a secret column or label still shows in-process: its shape, never its cells.
METADATA = frozenset(
    {"shape", "columns", "dtypes", "dtype", "index", "ndim", "size", "empty", "names", "axes", "nbytes"}
)
_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: limits.add, ast.Sub: operator.sub, ast.Mult: limits.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: limits.pow_, ast.LShift: limits.lshift,
    ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
    ast.BitXor: operator.xor, ast.MatMult: operator.matmul,
}  # fmt: skip
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.invert,
}  # fmt: skip
_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}  # fmt: skip
_BUILTIN_TYPES = frozenset(
    {int, float, complex, bool, str, bytes, list, tuple, dict, set, frozenset, type(None)}
)


class NotInProcess(Exception):
    """The expression is read in the walled child (not an error). ``value``: the object it names when it was
    read here and only describing it needed the session's own code (then ``read`` is true)."""

    def __init__(self, value: Any = None, *, read: bool = False, attribute: Any = None) -> None:
        super().__init__()
        self.value, self.read = value, read
        # (the object, the attribute's name, its node): reading stopped at an attribute whose own code runs
        self.attribute: tuple[Any, str, ast.AST] | None = attribute


class _NamedSecret(Exception):
    """A path names a secret attribute (allowed outside ``strict``: the capability hides what it finds)."""


class Reader:
    """Evaluates one expression tree over ``namespace``, reading only.

    ``strict`` (``eval_expr``): secret names are refused wherever they appear, and attribute names follow the
    sandbox's rules. Otherwise (the ``expr`` of ``get_type`` …) a path may name a secret — the capability
    hides its value — and the metadata dunders of ``dunders`` may be read. ``pure`` becomes True once the
    expression is more than a path (a call, an operator, a computed key)."""

    def __init__(
        self,
        namespace: Mapping[str, Any],
        secrets: SecretsOf,
        *,
        strict: bool = True,
        dunders: frozenset[str] = frozenset(),
        block: NoUserCode | None = None,
    ) -> None:
        self.ns = namespace
        self.secrets = secrets
        # Operations on the session's objects run under the block's tracer; the reader's own checks (types
        # and builtin containers only) run outside it.
        self._run: Callable[..., Any] = block.run if block is not None else _call
        self.strict = strict
        self.dunders = dunders
        self.pure = False
        self.named_secret = False  # a path named a secret (allowed when not strict, for a path only)
        self._bearing: dict[int, bool] = {}
        self._plain: dict[int, bool] = {}

    def eval(self, node: ast.AST) -> Any:
        method = _DISPATCH.get(type(node))
        if method is None:
            raise NotInProcess
        return method(self, node)

    # -- paths -----------------------------------------------------------------------------------------------
    def _Constant(self, node: ast.Constant) -> Any:
        return node.value

    def _Name(self, node: ast.Name) -> Any:
        name = node.id
        if name.startswith("_"):
            raise NotInProcess  # the child knows which private names exist (none)
        if self.secrets.name(name):
            if self.strict:
                raise SandboxViolation(f"the variable {name} looks like a secret and is not available")
            self.named_secret = True
        value = self.ns.get(name, _MISSING)
        if value is _MISSING:
            value = getattr(builtins, name, _MISSING)
        if value is _MISSING:
            said = f"there is no variable named {name!r} in the session."
            raise CapabilityError(f"NameError: {said}" if self.strict else said[0].upper() + said[1:])
        return value

    def _Attribute(self, node: ast.Attribute) -> Any:
        base = self.eval(node.value)
        name = node.attr
        self._attribute_name(name)
        if not is_known(base) and self._run(runs_user_code, type(base), base, name):
            # the session's property, descriptor or __getattr__ (a library's own types have none; an
            # accessor or a patch of the session's on one trips ``no_user_code`` instead)
            raise NotInProcess(attribute=(base, name, node))
        if name not in METADATA and self._bears(base) and not self._run(self._shown_part, base, name):
            raise NotInProcess
        # A light attribute (a shape, a name) runs a frame or two: tracing them costs less than proving the
        # object holds nothing of the session's; a computed one (``df.dtypes``, ``df.T``) is worth the proof.
        untraced = name not in LIGHT and self._library_only(base) and library_attribute(type(base), name)
        run = _call if untraced else self._run
        try:
            return run(getattr, base, name)
        except AttributeError:
            raise CapabilityError(f"{ast.unparse(node.value)} has no attribute {name!r}.") from None

    def _attribute_name(self, name: str) -> None:
        """The rules for an attribute's name, decided once per name and setting (``_names_seen``)."""
        key = (name, self.strict, self.dunders)
        verdict = self.secrets.seen.get(key)
        if verdict is None:
            try:
                self._judge_attribute_name(name)
                verdict = False
            except _NamedSecret:
                verdict = True
            except (CapabilityError, NotInProcess) as exc:
                verdict = exc
            if len(self.secrets.seen) < 10_000:
                self.secrets.seen[key] = verdict
        if verdict is True:
            self.named_secret = True
        elif verdict is not False:
            raise type(verdict)(*verdict.args)

    def _judge_attribute_name(self, name: str) -> None:
        if name.startswith("__") and name.endswith("__"):
            if name in self.dunders:
                return
            if not self.strict:
                raise CapabilityError(f"Reading the special attribute {name!r} is not allowed.")
        if name.startswith("_"):
            raise SandboxViolation(PRIVATE_MESSAGE)
        if name in INTERNALS:
            raise SandboxViolation(f"the attribute {name} leads out of the sandbox and is not available")
        if self.strict:
            if self.secrets.name(name):
                raise SandboxViolation(f"the attribute {name} looks like a secret and is not available")
            if name in ("format", "format_map"):
                raise NotInProcess
            check_attr_name(name)
        elif self.secrets.name(name):
            raise _NamedSecret

    def _shown_part(self, base: Any, name: str) -> bool:
        """Of a value that holds a secret, its metadata and its columns that are not secret, by name."""
        if not module_of(type(base)).startswith("pandas"):
            return False
        if name in METADATA:
            return True
        columns = getattr(base, "columns", None) if type(base).__qualname__ == "DataFrame" else None
        return columns is not None and name in columns and not self.secrets.name(name)

    def _Subscript(self, node: ast.Subscript) -> Any:
        base = self.eval(node.value)
        literal = _is_literal(node.slice)
        if not literal:
            self.pure = True
        key = self.eval(node.slice)
        if is_environment(base):
            raise SandboxViolation(ENVIRONMENT)
        self._refuse_secret_labels(key, literal)
        if not (is_plain(key) or (is_known(key) and not callable(key) and self._run(hasattr, key, "dtype"))):
            raise NotInProcess  # a key of the session's type, or a callable (``df.loc[f]`` calls ``f``)
        if issubclass(type(base), dict) and (type(base) is dict or module_of(type(base)) == "collections"):
            # Membership first: indexing a defaultdict (a dict with __missing__) would insert the key.
            try:
                present = self._run(dict.__contains__, base, key)
            except TypeError:
                raise CapabilityError(f"{key!r} cannot be a key of {ast.unparse(node.value)}.") from None
            if not present:
                raise CapabilityError(f"{ast.unparse(node.value)} has no key {key!r}.")
            return self._run(dict.__getitem__, base, key)
        if not is_known(base):
            raise NotInProcess  # the session's __getitem__, or a library this level does not know
        if self._bears(base) and not self._run(self._shown_columns, base, key):
            raise NotInProcess
        if not isinstance(node.value, ast.Constant) and self._looks(base):
            raise NotInProcess  # a slice of a credential keeps its prefix: the child hides the string
        try:
            return self._on(base, key)(operator.getitem, base, key)
        except (KeyError, IndexError):
            raise CapabilityError(f"{ast.unparse(node.value)} has no item {key!r}.") from None

    def _shown_columns(self, base: Any, key: Any) -> bool:
        if type(base).__qualname__ != "DataFrame":
            return False
        keys = key if type(key) is list else [key]
        columns = base.columns
        return all(type(k) is str and k in columns and not self.secrets.name(k) for k in keys)

    def _refuse_secret_labels(self, key: Any, literal: bool) -> None:
        """A secret-named key, column or label (also inside a tuple or list key) is refused; a literal one in
        a path of the introspection capabilities is let through (they hide the value they find)."""
        parts = key if type(key) in (tuple, list) and len(key) <= 1000 else (key,)
        for part in parts:
            if type(part) is str and self.secrets.name(part):
                if literal and not self.strict:
                    self.named_secret = True  # the capability hides what a path finds there
                    continue
                raise SandboxViolation(f"the key {part!r} looks like a secret and is not available")

    def _Slice(self, node: ast.Slice) -> slice:
        return slice(*(None if n is None else self.eval(n) for n in (node.lower, node.upper, node.step)))

    # -- computing -------------------------------------------------------------------------------------------
    def _Tuple(self, node: ast.Tuple) -> tuple[Any, ...]:
        return tuple(self._operand(e) for e in node.elts)

    def _List(self, node: ast.List) -> list[Any]:
        self.pure = True
        return [self._operand(e) for e in node.elts]

    def _Set(self, node: ast.Set) -> set[Any]:
        self.pure = True
        return self._run(set, [self._operand(e) for e in node.elts])  # hashing runs an element's code

    def _Dict(self, node: ast.Dict) -> dict[Any, Any]:
        self.pure = True
        if any(k is None for k in node.keys):
            raise NotInProcess  # ``{**d}``
        pairs = [(self._operand(k), self._operand(v)) for k, v in zip(node.keys, node.values, strict=True)]
        return self._run(dict, pairs)

    def _UnaryOp(self, node: ast.UnaryOp) -> Any:
        self.pure = True
        value = self._operand(node.operand)
        return self._on(value)(_UNARY[type(node.op)], value)

    def _BinOp(self, node: ast.BinOp) -> Any:
        self.pure = True
        left, right = self._operand(node.left), self._operand(node.right)
        return self._on(left, right)(_BINOPS[type(node.op)], left, right)

    def _BoolOp(self, node: ast.BoolOp) -> Any:
        self.pure = True
        value: Any = None
        for item in node.values:
            value = self._operand(item)
            if self._run(bool, value) is isinstance(node.op, ast.Or):
                return value
        return value

    def _IfExp(self, node: ast.IfExp) -> Any:
        self.pure = True
        return (
            self._operand(node.body)
            if self._run(bool, self._operand(node.test))
            else self._operand(node.orelse)
        )

    def _Compare(self, node: ast.Compare) -> Any:
        self.pure = True
        left = self._operand(node.left)
        result: Any = True
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = self._operand(comp)
            result = self._on(left, right)(_CMPOPS[type(op)], left, right)
            if len(node.ops) > 1 and not self._run(bool, result):
                return result
            left = right
        return result

    def _operand(self, node: ast.AST) -> Any:
        """A value an operator, a display or a call works on: of a known type, not a callable, not the
        environment, holding no secret."""
        value = self.eval(node)
        if is_environment(value):
            raise SandboxViolation(ENVIRONMENT)
        if callable(value) or not is_known(value):
            raise NotInProcess  # a method, a function, a class: never handed on; the session's objects
        if self._bears(value) or (not isinstance(node, ast.Constant) and self._looks(value)):
            raise NotInProcess  # read in the child, where what sits under secret names is hidden
        return value

    def _bears(self, value: Any) -> bool:
        if type(value) in _BUILTIN_SCALARS:
            return False
        key = id(pandas_owner(value)) if module_of(type(value)).startswith("pandas") else id(value)
        found = self._bearing.get(key)
        if found is None:
            found = self._bearing[key] = bears_secret(value, self.secrets)
        return found

    def _looks(self, value: Any) -> bool:
        return type(value) is str and self.secrets.looks(value)

    def _library_only(self, value: Any) -> bool:
        """Nothing in this numpy or pandas value is the session's (``plain.library_only``, once per value). A
        builtin container is not looked into: an operation on one runs no Python frame unless one of its items
        is the session's, so the tracer costs nothing there and catches that item."""
        t = type(value)
        if t in _BUILTIN_SCALARS:
            return True
        if t in _BUILTIN_CONTAINERS:
            return False
        found = self._plain.get(id(value))
        if found is None:
            found = self._plain[id(value)] = library_only(value)
        return found

    def _on(self, *values: Any) -> Callable[..., Any]:
        """How to run an operation on ``values``: directly when nothing in them is the session's (numpy's
        and pandas' code on their own data reaches no code of the session's, and is too many frames to
        trace cheaply), else under the block's tracer."""
        return _call if all(self._library_only(v) for v in values) else self._run

    # -- calls -----------------------------------------------------------------------------------------------
    def _Call(self, node: ast.Call) -> Any:
        self.pure = True
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise NotInProcess
        func_node = node.func
        if isinstance(func_node, ast.Name):
            name = func_node.id
            if name not in FUNCTIONS or name in self.ns:
                raise NotInProcess
            if name == "isinstance":
                return self._isinstance(node)
            func: Callable[..., Any] = getattr(builtins, name)
            operands: tuple[Any, ...] = ()
            if name in MATERIALISING:
                func = limits.materialising(func, name)
            form = FUNCTIONS[name]
            args = [self._argument(a, name) for a in node.args]
        elif isinstance(func_node, ast.Attribute):
            name = func_node.attr
            receiver = self.eval(func_node.value)
            self._attribute_name(name)
            if is_module(receiver, "numpy") and name in NUMPY_FUNCTIONS:
                form, func = NUMPY_FUNCTIONS[name], self._run(_numpy_function, receiver, name)
                operands = ()
            else:
                if is_environment(receiver):
                    raise SandboxViolation(ENVIRONMENT)
                found = method_sig(receiver, name) if is_known(receiver) else None
                if found is None:
                    raise NotInProcess  # not a read-only method of a type known here
                if self._bears(receiver) and not (name == "keys" or (name == "get" and node.args)):
                    raise NotInProcess
                if not isinstance(func_node.value, ast.Constant) and self._looks(receiver):
                    raise NotInProcess
                form, func = found, _library_method(receiver, name)
                operands = (receiver,)
            args = [self._argument(a, name) for a in node.args]
        else:
            raise NotInProcess
        kwargs = {k.arg: self._argument(k.value, name) for k in node.keywords if k.arg is not None}
        self._refuse_secret_labels(args, False)
        self._refuse_secret_labels(list(kwargs.values()), False)
        if not form.accepts(args, kwargs):
            raise NotInProcess  # an argument form that is not known to be read-only (``out=``, ``key=`` …)
        return self._on(*operands, *args, *kwargs.values())(func, *args, **kwargs)

    def _argument(self, node: ast.AST, func: str) -> Any:
        value = self.eval(node)
        if func in _IDENTITY:
            return value  # type(x), id(x), callable(x) look at the object, never into it
        if is_environment(value):
            if func == "len":
                return value  # its size is shown, never its contents
            raise SandboxViolation(ENVIRONMENT)
        if callable(value) or not (is_known(value) or is_plain(value)):
            raise NotInProcess  # a callable is never an argument in-process (``key=lst.append``)
        if func != "len" and self._bears(value):
            raise NotInProcess
        if not isinstance(node, ast.Constant) and self._looks(value):
            raise NotInProcess
        return value

    def _isinstance(self, node: ast.Call) -> bool:
        """``isinstance(x, T)`` with ``T`` a builtin type or a tuple of them, decided from ``type(x)`` alone
        (``isinstance`` itself would ask ``x.__class__``, which a class may make a property)."""
        if len(node.args) != 2 or node.keywords:
            raise NotInProcess
        value = self.eval(node.args[0])
        spec = node.args[1]
        names = spec.elts if isinstance(spec, ast.Tuple) else [spec]
        kinds = []
        for item in names:
            if not isinstance(item, ast.Name) or item.id in self.ns:
                raise NotInProcess
            kind = getattr(builtins, item.id, None)
            if kind not in _BUILTIN_TYPES:
                raise NotInProcess
            kinds.append(kind)
        return issubclass(type(value), tuple(kinds))


_BUILTIN_SCALARS = frozenset({type(None), bool, int, float, complex, str, bytes})
_BUILTIN_CONTAINERS = frozenset({list, tuple, dict, set, frozenset, range, slice})
# Attributes read in a frame or two (traced): not worth proving the object holds nothing of the session's.
LIGHT = frozenset({"shape", "columns", "index", "ndim", "size", "empty", "dtype", "name", "names", "nbytes"})


def _call(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return func(*args, **kwargs)


_DISPATCH: dict[type, Callable[[Reader, Any], Any]] = {
    getattr(ast, name[1:]): method
    for name, method in vars(Reader).items()
    if name[:1] == "_" and name[1:2].isupper() and hasattr(ast, name[1:])
}
_IDENTITY = frozenset({"type", "id", "callable"})
_C_METHODS = (types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType)


def _library_method(receiver: Any, name: str) -> Callable[..., Any]:
    """``receiver.name`` bound from its class, and only if the class's attribute is the library's own method
    (an instance attribute, or a class attribute the session replaced with a callable of its own, is not
    called)."""
    cls = type(receiver)
    attr = static(cls, name)
    library = module_of(cls).partition(".")[0]
    if isinstance(attr, _C_METHODS):
        if attr.__objclass__ not in cls.__mro__:
            raise NotInProcess
    elif isinstance(attr, types.FunctionType):
        if (attr.__module__ or "").partition(".")[0] != library:
            raise NotInProcess
    else:
        raise NotInProcess
    return attr.__get__(receiver, cls)


def _numpy_function(module: Any, name: str) -> Callable[..., Any]:
    """``numpy.name`` if it is numpy's own function or ufunc (not one the session put there)."""
    func = getattr(module, name, None)
    t = type(func)
    if t.__module__ == "numpy" and t.__name__ in ("ufunc", "_ArrayFunctionDispatcher"):
        return func  # type: ignore[return-value]  # the callable checked above is the function
    if isinstance(func, types.FunctionType) and (func.__module__ or "").startswith("numpy"):
        return func
    raise NotInProcess


def _is_literal(node: ast.AST) -> bool:
    """A constant key, a negative number, a slice of those, or a tuple of those."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return isinstance(node.operand, ast.Constant)
    if isinstance(node, ast.Slice):
        return all(n is None or _is_literal(n) for n in (node.lower, node.upper, node.step))
    if isinstance(node, ast.Tuple):
        return all(_is_literal(e) for e in node.elts)
    return False
