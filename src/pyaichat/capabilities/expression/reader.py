"""The in-process tier of ``expression``: an evaluator that reads structurally and computes only over plain
values, so that no code of any object runs in the session's process.

What it evaluates, and nothing else (``IN_PROCESS`` lists it, each kind with its reason):

* **names** — the session's variables, and Python's builtins;
* **attribute reads** that are a lookup (``structural.attribute``: an instance's ``__dict__`` or slots, a C
  field of Python's own types, a class's namespace, a module's namespace) or a declared metadata attribute
  of numpy's and pandas' own types (``library_metadata.TABLE``: ``df.shape``, ``arr.dtype``);
* **subscripts** of exact ``dict``, ``list``, ``tuple``, ``str`` and ``bytes`` with plain keys (an exact
  ``dict`` whose keys are all plain: a ``defaultdict``'s ``__missing__`` or a ``ChainMap``'s maps are never
  reached, and no key's ``__eq__`` runs);
* **literals and displays** of plain values;
* **operators, comparisons and a few builtins and methods** (``BUILTINS``, ``METHODS``) over plain values
  only, each after ``sizes`` has found that its result fits before it is computed.

Anything else — a call of any other function or method (every pandas, numpy or session method), a dunder of
a session object, a comprehension, a lambda, an f-string, an operand that is not plain — raises
``NotInProcess``: the walled child reads the expression. A private name, a secret-named variable, key or
attribute (``eval_expr``), the environment, and the ``os``/``sys``/``subprocess``/``builtins`` modules are
refused in one sentence, as the child refuses them; so is any computation through a secret value
(``SecretChecks.value``): a string, bytes or number that is, or holds, one of the session's secrets.
"""

from __future__ import annotations

import ast
import builtins
import gc
import os
import sys
import types
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from ...errors import CapabilityError, SandboxViolation
from .. import library_metadata, structural
from ..layout import is_environ
from ..sandbox.modules import check_attr_name
from ..sandbox.rules import INTERNALS, PRIVATE_MESSAGE
from . import sizes
from .secrets import SecretChecks

ENVIRONMENT = "the environment (os.environ, or a copy of it) is never shown to the assistant"
MAX_KEYS = 100_000  # keys of a dict checked to be plain before it is subscripted here

# What the in-process tier evaluates, each kind with why it runs no code of any object.
IN_PROCESS: dict[str, str] = {
    "name": "a look-up in the session's namespace (or Python's builtins)",
    "attribute": "a look-up in the instance's __dict__ or slots or the class's namespace through the type's "
    "own descriptors, or a C field of Python's own types (structural.attribute)",
    "metadata": "a declared metadata attribute of numpy's or pandas' own types, read from where they store "
    "it (library_metadata.TABLE)",
    "subscript": "an exact dict whose keys are plain, or an exact list, tuple, str or bytes, by a plain key",
    "literal": "a constant or a display of plain values",
    "operator": "an operator over plain values (CPython's own code), its result's size checked first",
    "builtin": "one of BUILTINS over plain values, its result's size checked first",
    "method": "one of METHODS of an exact builtin type over plain values, its result's size checked first",
}
# The operators, written out here rather than taken from ``operator`` (a module the session could patch).
_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
    ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b,
}  # fmt: skip
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: lambda a: -a, ast.UAdd: lambda a: +a, ast.Not: lambda a: not a, ast.Invert: lambda a: ~a,
}  # fmt: skip
_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
    ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b, ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}  # fmt: skip
# Builtins called over plain values: the name → what may be passed (checked by ``Reader._builtin``).
BUILTINS = frozenset(
    {"len", "type", "id", "callable", "isinstance", "abs", "round", "min", "max", "sum", "sorted", "list",
     "tuple", "set", "frozenset", "str", "repr", "bool", "int", "float", "any", "all", "divmod", "hash"}
)  # fmt: skip
# Methods of exact builtin types called over plain values (C methods that call nothing back).
_STR_METHODS = frozenset(
    {"lower", "upper", "strip", "lstrip", "rstrip", "startswith", "endswith", "split", "rsplit", "splitlines",
     "count", "find", "rfind", "replace", "join", "isdigit", "isalpha", "isalnum", "isnumeric", "isspace",
     "islower", "isupper", "title", "capitalize", "casefold", "partition", "rpartition", "center", "ljust",
     "rjust", "zfill", "encode"}
)  # fmt: skip
METHODS: dict[type, frozenset[str]] = {
    dict: frozenset({"keys", "values", "items", "get"}),
    str: _STR_METHODS,
    bytes: frozenset({"decode", "hex", "startswith", "endswith", "count", "find", "split", "strip"}),
    list: frozenset({"count", "index"}),
    tuple: frozenset({"count", "index"}),
}
_METHOD_TYPES = structural.ids(dict, str, bytes, list, tuple)
_SUBSCRIPTABLE = structural.ids(list, tuple, str, bytes)
_VIEWS = structural.ids(type({}.keys()), type({}.values()), type({}.items()))
_BUILTIN_TYPES = {t.__name__: t for t in (int, float, complex, bool, str, bytes, list, tuple, dict, set,
                                           frozenset, type(None))}  # fmt: skip
# Modules that lead out of the session, refused when a path reaches them through another object (a name the
# person imported stays theirs to read): the ones ``os`` is made of, the interpreter's, processes, builtins.
# Under ``python -b`` comparing bytes with text, or turning bytes into text, raises a BytesWarning.
_BYTES_WARNING = bool(sys.flags.bytes_warning)
_DANGEROUS_MODULES = frozenset({"os", "posix", "nt", "sys", "subprocess", "builtins"})


class NotInProcess(Exception):
    """The expression is read in the walled child (not an error). ``value``: the object it names when it was
    read here and only describing it needs the object's own code (then ``read`` is true); ``attribute``: the
    (object, name, node) whose reading would run code, when that is where reading stopped."""

    def __init__(self, value: Any = None, *, read: bool = False, attribute: Any = None) -> None:
        super().__init__()
        self.value, self.read = value, read
        self.attribute: tuple[Any, str, ast.AST] | None = attribute


class Reader:
    """Evaluates one expression tree over ``namespace`` structurally (module docstring).

    ``strict`` (``eval_expr``): secret names are refused wherever they appear, and attribute names follow the
    sandbox's rules. Otherwise (the ``expr`` of ``get_type`` …) a path may end on a secret — the capability
    hides its value — and the metadata dunders of ``dunders`` may be read. ``pure`` becomes True once the
    expression is more than a path (an operator, a call, a computed key)."""

    def __init__(
        self,
        namespace: Mapping[str, Any],
        secrets: SecretChecks,
        *,
        strict: bool = True,
        dunders: frozenset[str] = frozenset(),
    ) -> None:
        self.ns = namespace
        self.secrets = secrets
        self.strict = strict
        self.dunders = dunders
        self.pure = False
        self.named_secret = False  # a path named a secret (allowed when not strict, for a path only)
        self._plain_dicts: set[int] = set()

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
        namespace = self.ns if type(self.ns) is dict else dict(self.ns)
        if not structural.names_only(namespace):
            raise NotInProcess  # a key that is not a name: looking one up could compare with it
        value = namespace.get(name, structural.MISSING)
        if value is structural.MISSING:
            value = structural.module_namespace(builtins).get(name, structural.MISSING)
        if value is structural.MISSING:
            said = f"there is no variable named {name!r} in the session."
            raise CapabilityError(f"NameError: {said}" if self.strict else said[0].upper() + said[1:])
        return value  # a module the session imported under a name of its own is the person's to read

    def _reached(self, value: Any) -> Any:
        """A value reached through another object's attribute or item: the modules that lead out of the
        session (``pd.compat.sys``, ``sys.modules['os']``) are refused."""
        if type(value) is types.ModuleType:
            name = structural.module_namespace(value).get("__name__")
            if type(name) is str and name.partition(".")[0] in _DANGEROUS_MODULES:
                raise SandboxViolation(f"the {name} module is not available to the assistant")
        return value

    def _Attribute(self, node: ast.Attribute) -> Any:
        base = self.eval(node.value)
        name = node.attr
        self._attribute_name(name)
        if is_environ(base) and not name.startswith("_"):
            raise SandboxViolation(ENVIRONMENT)
        try:
            if library_metadata.kind(base) is not None and (library_metadata.kind(base), name) in (
                library_metadata.TABLE
            ):
                return library_metadata.metadata(base, name)
            return self._reached(structural.attribute(base, name))
        except structural.NotStructural:
            raise NotInProcess(attribute=(base, name, node)) from None
        except structural.NoAttribute:
            raise CapabilityError(f"{ast.unparse(node.value)} has no attribute {name!r}.") from None

    def _attribute_name(self, name: str) -> None:
        """The rules for an attribute's name, decided once per name and setting (``secrets.seen``)."""
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
            check_attr_name(name)
        elif self.secrets.name(name):
            raise _NamedSecret

    def _Subscript(self, node: ast.Subscript) -> Any:
        base = self.eval(node.value)
        literal = _is_literal(node.slice)
        if not literal:
            self.pure = True
        key = self.eval(node.slice)
        if is_environ(base) or structural.is_subclass(type(base), os._Environ):
            raise SandboxViolation(ENVIRONMENT)
        self._refuse_secret_labels(key, literal)
        if not literal:
            self._operand_value(key, node.slice)
        if type(base) is dict:
            if not structural.is_plain_key(key):
                raise NotInProcess
            self._refuse_secret_key(key, node.slice)
            if not self._plain_keys(base):
                raise NotInProcess  # a key of the session's type: looking one up could run its __eq__
            found = base.get(key, structural.MISSING)
            if found is structural.MISSING:
                raise CapabilityError(f"{ast.unparse(node.value)} has no key {key!r}.")
            return self._reached(found)
        if not structural.one_of(type(base), _SUBSCRIPTABLE):
            raise NotInProcess  # the session's __getitem__, or a library's
        if type(key) is slice:
            if not all(part is None or type(part) is int for part in (key.start, key.stop, key.step)):
                raise NotInProcess
            length = len(range(*key.indices(len(base))))
            if length > sizes.MAX_ITEMS:
                raise NotInProcess
        elif type(key) is not int:
            raise NotInProcess
        if not isinstance(node.value, ast.Constant):
            self._through(base, node.value)  # a piece of a secret is still a secret
        try:
            return base[key]
        except IndexError:
            raise CapabilityError(f"{ast.unparse(node.value)} has no item {key!r}.") from None

    def _plain_keys(self, mapping: dict[Any, Any]) -> bool:
        if id(mapping) in self._plain_dicts:
            return True
        ok = len(mapping) <= MAX_KEYS and (
            structural.all_scalars(mapping) or all(map(structural.is_plain_key, mapping))
        )
        if ok:
            self._plain_dicts.add(id(mapping))
        return ok

    def _refuse_secret_labels(self, key: Any, literal: bool) -> None:
        """A secret-named key (also inside a tuple key) is refused; a literal one in a path of the
        introspection capabilities is let through (they hide the value they find)."""
        parts = key if type(key) is tuple and len(key) <= 64 else (key,)
        for part in parts:
            if type(part) is str and self.secrets.name(part):
                if literal and not self.strict:
                    self.named_secret = True
                    continue
                raise SandboxViolation(f"the key {part!r} looks like a secret and is not available")

    def _refuse_secret_key(self, key: Any, node: ast.AST) -> None:
        """A look-up by a key that is a secret value is refused: whether ``by_code[48291357]`` is found
        would say whether the guess is the secret (a guess that is not says only that)."""
        parts = key if type(key) is tuple and len(key) <= 64 else (key,)
        if any(self.secrets.value(part) is not False or self.secrets.bears(part) for part in parts):
            raise SandboxViolation(f"{_short(ast.unparse(node))} is a secret value; it is not looked up here")

    def _Slice(self, node: ast.Slice) -> slice:
        parts = [None if n is None else self._operand(n) for n in (node.lower, node.upper, node.step)]
        return slice(*parts)

    # -- computing -------------------------------------------------------------------------------------------
    def _Tuple(self, node: ast.Tuple) -> tuple[Any, ...]:
        return tuple(self._operand(e) for e in node.elts)

    def _List(self, node: ast.List) -> list[Any]:
        self.pure = True
        return [self._operand(e) for e in node.elts]

    def _Set(self, node: ast.Set) -> set[Any]:
        self.pure = True
        items = [self._operand(e) for e in node.elts]
        if not all(map(structural.is_plain_key, items)):
            raise NotInProcess
        return set(items)

    def _Dict(self, node: ast.Dict) -> dict[Any, Any]:
        self.pure = True
        keys = [k for k in node.keys if k is not None]
        if len(keys) != len(node.keys):
            raise NotInProcess  # ``{**d}``
        pairs = [(self._operand(k), self._operand(v)) for k, v in zip(keys, node.values, strict=True)]
        if not all(structural.is_plain_key(k) for k, _ in pairs):
            raise NotInProcess
        return dict(pairs)

    def _UnaryOp(self, node: ast.UnaryOp) -> Any:
        self.pure = True
        value = self._operand(node.operand)
        if type(value) is bool and isinstance(node.op, ast.Invert):
            raise NotInProcess  # ``~True`` warns from Python 3.12 (through the warnings module)
        return _UNARY[type(node.op)](value)

    def _BinOp(self, node: ast.BinOp) -> Any:
        self.pure = True
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise NotInProcess  # ``@``: numpy's
        left, right = self._operand(node.left), self._operand(node.right)
        self._fits(sizes.binary, type(node.op).__name__, left, right)
        return op(left, right)

    def _BoolOp(self, node: ast.BoolOp) -> Any:
        self.pure = True
        value: Any = None
        for item in node.values:
            value = self._operand(item)
            if bool(value) is isinstance(node.op, ast.Or):
                return value
        return value

    def _IfExp(self, node: ast.IfExp) -> Any:
        self.pure = True
        return self._operand(node.body) if self._operand(node.test) else self._operand(node.orelse)

    def _Compare(self, node: ast.Compare) -> Any:
        self.pure = True
        left = self._compared(node.left, node.ops[0])
        result: Any = True
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = self._compared(comp, op)
            result = _CMPOPS[type(op)](left, right)
            if not result:
                return result
            left = right
        return result

    def _compared(self, node: ast.AST, op: ast.cmpop) -> Any:
        """An operand of a comparison: plain, except for ``is``/``is not`` (identity runs nothing)."""
        if isinstance(op, (ast.Is, ast.IsNot)):
            return self.eval(node)
        return self._operand(node)

    def _operand(self, node: ast.AST) -> Any:
        """A value an operator, a display or a call works on: plain, not the environment, no secret."""
        value = self.eval(node)
        return self._operand_value(value, node)

    def _operand_value(self, value: Any, node: ast.AST) -> Any:
        if is_environ(value):
            raise SandboxViolation(ENVIRONMENT)
        if _BYTES_WARNING:
            raise NotInProcess  # ``python -b``: comparing bytes with text warns (session-reachable code)
        if not structural.is_plain(value, numpy=False) and not _plain_view(value):
            raise NotInProcess  # the session's objects, a library's, a callable: only the child computes
        held = _viewed(value) if structural.one_of(type(value), _VIEWS) else value
        self._fits(sizes.operand, held)
        if not isinstance(node, ast.Constant):
            self._through(value, node)
            held_secret = self.secrets.bears(held)
            if held_secret == "value":
                raise SandboxViolation(
                    f"{_short(ast.unparse(node))} holds a secret value; nothing is computed from it here"
                )
            if held_secret is not None:
                raise NotInProcess  # under a secret name (the child hides it), or too much to check here
        return value

    def _through(self, value: Any, node: ast.AST) -> None:
        """Nothing is computed from a secret here: a value under a secret name or equal to (or holding) one
        of the session's secret values is refused, whatever its type."""
        secret = self.secrets.value(value)
        if secret is None:
            raise NotInProcess  # too long to tell here: the walled child computes with it
        if self.named_secret or secret:
            raise SandboxViolation(
                f"{_short(ast.unparse(node))} holds a secret value; nothing is computed from it here"
            )

    def refuse_secret_paths(self, root: ast.AST) -> None:
        """Before the child reads ``root``: no path in it that this tier can read leads through a secret
        value (``blob.hex()`` for ``blob = api_key.encode()``, ``code + 1`` for an integer password). The
        expression as a whole may name one (the capability's answer is masked); a part of it may not."""
        for node in ast.walk(root):
            if node is root or not _is_path(node):
                continue
            reader = Reader(self.ns, self.secrets, strict=self.strict, dunders=self.dunders)
            try:
                value = reader.eval(node)
            except (NotInProcess, CapabilityError):
                continue
            if reader.named_secret or self.secrets.value(value) is True:
                raise SandboxViolation(
                    f"{_short(ast.unparse(node))} holds a secret value; nothing is computed from it"
                )

    def _fits(self, check: Callable[..., object], *args: Any) -> None:
        try:
            check(*args)
        except sizes.TooBig:
            raise NotInProcess from None

    # -- calls -----------------------------------------------------------------------------------------------
    def _Call(self, node: ast.Call) -> Any:
        self.pure = True
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise NotInProcess
        func = node.func
        if isinstance(func, ast.Name) and func.id in BUILTINS and func.id not in self.ns:
            return self._builtin(func.id, node)
        if isinstance(func, ast.Attribute) and not node.keywords:
            receiver = self.eval(func.value)
            exact = structural.one_of(type(receiver), _METHOD_TYPES)  # before hashing the type
            if not exact or func.attr not in METHODS[type(receiver)]:
                raise NotInProcess  # every other method: the session's, a library's, or one that calls back
            receiver = self._operand_value(receiver, func.value)
            args = [self._operand(a) for a in node.args]
            if type(receiver) is dict and func.attr == "get" and args:
                if not (structural.is_plain_key(args[0]) and self._plain_keys(receiver)):
                    raise NotInProcess
                self._refuse_secret_labels(args[0], False)
                self._refuse_secret_key(args[0], node.args[0])
            if func.attr in ("encode", "decode") and not _codec_in_c(receiver, args):
                raise NotInProcess  # a codec or error handler the registry finds: maybe the session's
            self._fits(sizes.method, receiver, func.attr, args)
            return _call_method(receiver, func.attr, args)
        raise NotInProcess

    def _builtin(self, name: str, node: ast.Call) -> Any:
        if name in ("type", "id", "callable"):  # look at the object, never into it
            if len(node.args) != 1 or node.keywords:
                raise NotInProcess
            value = self.eval(node.args[0])
            looks: dict[str, Callable[[Any], Any]] = {"type": type, "id": id, "callable": callable}
            return looks[name](value)
        if name == "isinstance":
            return self._isinstance(node)
        if name == "len":
            return self._len(node)
        args = [self._operand(a) for a in node.args]
        kwargs = {k.arg: self._operand(k.value) for k in node.keywords if k.arg is not None}
        if kwargs and not (name in ("sorted", "min", "max", "sum", "round") and set(kwargs) <= _KEYWORDS):
            raise NotInProcess  # ``key=``: a callable, which only the child calls
        if name in ("sorted", "list", "tuple", "set", "frozenset", "min", "max", "sum", "any", "all"):
            if not args or not _collection(args[0]):
                raise NotInProcess
            hashed = name in ("sorted", "set", "frozenset") or type(args[0]) is str
            self._fits(sizes.items, args[0], sizes.MAX_SORTED if hashed else sizes.MAX_ITEMS)
            if name in ("set", "frozenset") and not all(map(structural.is_plain_key, args[0])):
                raise NotInProcess
        if name in ("sorted", "min", "max", "sum"):
            start = args[1] if len(args) > 1 else kwargs.get("start", kwargs.get("default", 0))
            self._fits(sizes.reduction, name, _viewed_items(args[0]), start)
        if name == "str" and len(args) > 1:
            raise NotInProcess  # ``str(b, encoding)``: a codec the registry finds (``_codec_in_c``)
        if name in ("str", "repr") and args:
            self._fits(partial(sizes.text, quoted=name == "repr"), args[0])
        if name in ("int", "float") and args:
            self._fits(sizes.digits, args[0])
        if name == "round" and len(args) == 2:
            self._fits(sizes.rounding, *args)
        if name == "divmod" and len(args) == 2:
            self._fits(sizes.binary, "FloorDiv", *args)
        if name == "sum" and args and not all(type(v) in (int, float, bool, complex) for v in args[0]):
            raise NotInProcess  # ``sum`` of lists concatenates: quadratic
        return _builtin_function(name)(*args, **kwargs)

    def _len(self, node: ast.Call) -> int:
        if len(node.args) != 1 or node.keywords:
            raise NotInProcess
        value = self.eval(node.args[0])
        t = type(value)
        if t is str or t is bytes or t is bytearray:
            self._through(value, node.args[0])  # a secret's length is a piece of it
        if structural.one_of(t, _SIZED) or structural.one_of(t, _VIEWS) or is_environ(value):
            return len(value)
        found = library_metadata.kind(value)
        if found is not None:
            try:
                shape = library_metadata.metadata(value, "shape")
            except structural.NotStructural:
                raise NotInProcess from None
            if shape:
                return int(shape[0])
        raise NotInProcess  # the session's __len__, or a library's that computes

    def _isinstance(self, node: ast.Call) -> bool:
        """``isinstance(x, T)`` with ``T`` a builtin type or a tuple of them, decided from ``type(x)``'s MRO
        (``isinstance`` itself would ask ``x.__class__``, which a class may make a property)."""
        if len(node.args) != 2 or node.keywords:
            raise NotInProcess
        value = self.eval(node.args[0])
        spec = node.args[1]
        names = spec.elts if isinstance(spec, ast.Tuple) else [spec]
        kinds = []
        for item in names:
            if not isinstance(item, ast.Name) or item.id in self.ns or item.id not in _BUILTIN_TYPES:
                raise NotInProcess
            kinds.append(_BUILTIN_TYPES[item.id])
        return any(structural.is_subclass(type(value), kind) for kind in kinds)


class _NamedSecret(Exception):
    """A path names a secret attribute (allowed outside ``strict``: the capability hides what it finds)."""


_KEYWORDS = frozenset({"reverse", "default", "start", "ndigits"})
_SIZED = structural.ids(str, bytes, list, tuple, dict, set, frozenset, range, bytearray)


_OWN_BUILTINS = structural.ids(types.BuiltinFunctionType, type)


def _builtin_function(name: str) -> Callable[..., Any]:
    """Python's own builtin ``name``: what the builtins module holds under that name, if it is the builtin
    function or type of that name (the session may have put something else there)."""
    found: Any = structural.module_namespace(builtins).get(name)
    kind = type(found)
    if not structural.one_of(kind, _OWN_BUILTINS):
        raise NotInProcess
    if kind is type:
        own = structural.compiled(found) and structural.module_of(found) == "builtins"
    else:
        own = structural.attribute(found, "__self__") is builtins
    if (
        not own
        or (structural.name_of(found) if kind is type else structural.attribute(found, "__name__")) != name
    ):
        raise NotInProcess
    return found


def _collection(value: Any) -> bool:
    t = type(value)
    return t in (list, tuple, set, frozenset, dict, str, bytes) or structural.one_of(t, _VIEWS)


def _plain_view(value: Any) -> bool:
    """A view (``d.keys()``, ``d.items()``) of an exact dict whose items are plain."""
    return (
        structural.one_of(type(value), _VIEWS)
        and len(value) <= structural.PLAIN_ITEMS
        and structural.is_plain(list(value), numpy=False)
    )


# The codecs CPython encodes and decodes in C without asking the codec registry (where the session may have
# registered a search function), by their normalised names, and for each the error handlers it applies in C
# in both directions without looking them up (the session may have registered its own "strict"):
# measured over invalid text and bytes with every handler replaced.
_C_CODECS = {
    **dict.fromkeys(("utf_8", "utf8"), frozenset({"ignore", "replace", "surrogateescape"})),
    **dict.fromkeys(("ascii", "us_ascii"), frozenset({"ignore", "replace"})),
    **dict.fromkeys(
        ("latin_1", "latin1", "iso_8859_1", "iso8859_1"),
        frozenset({"strict", "ignore", "replace", "backslashreplace", "surrogateescape"}),
    ),
}


def _codec_in_c(receiver: Any, args: list[Any]) -> bool:
    """``receiver.encode(*args)`` / ``.decode(*args)`` runs in C only: a codec of ``_C_CODECS`` with one of
    its handlers, or ``strict`` over ASCII-only text or bytes (which cannot fail, so no handler is needed)."""
    encoding = args[0] if args else "utf-8"
    errors = args[1] if len(args) > 1 else "strict"
    if type(encoding) is not str or type(errors) is not str or len(args) > 2 or len(encoding) > 20:
        return False
    handlers = _C_CODECS.get(encoding.lower().replace("-", "_"))
    if handlers is None:
        return False
    return errors in handlers or (errors == "strict" and receiver.isascii())


def _viewed_items(value: Any) -> Any:
    """What iterating ``value`` goes through, as a plain value the sizes can weigh: a view's dict's keys,
    values or both (``gc`` finds the dict), a string's characters (each its own item), else itself."""
    if structural.one_of(type(value), _VIEWS):
        mapping = _viewed(value)
        keys, values = list(mapping), list(mapping.values())
        kind = type(value)
        return keys if kind is type({}.keys()) else values if kind is type({}.values()) else [keys, values]
    return value


def _viewed(view: Any) -> Any:
    """The dict a ``keys()``/``values()``/``items()`` view reads (``gc`` finds it, asking nothing of it)."""
    (mapping,) = gc.get_referents(view)
    return mapping


def _call_method(receiver: Any, name: str, args: list[Any]) -> Any:
    """``receiver.name(*args)`` through the exact builtin type's own method (never the instance's)."""
    method = structural.own_dict(type(receiver)).get(name)
    return method(receiver, *args)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


_DISPATCH: dict[type, Callable[[Reader, Any], Any]] = {
    getattr(ast, name[1:]): method
    for name, method in vars(Reader).items()
    if name[:1] == "_" and name[1:2].isupper() and hasattr(ast, name[1:])
}


def _is_path(node: ast.AST) -> bool:
    """A name, and attribute reads and literal subscripts of one."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return _is_path(node.value)
    if isinstance(node, ast.Subscript):
        return _is_literal(node.slice) and _is_path(node.value)
    return False


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
