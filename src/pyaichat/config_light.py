"""The start-up's configuration: same sources, precedence and messages as ``config.load_config``, no pydantic.

Importing pydantic costs about as much as the rest of a piped start-up together (issue 14). Most start-ups
have nothing that needs it: no config file, no ``PYAICHAT_*`` variable, no flag — or only plain values such as
a model name. So this module reads the declaration of ``Config`` from ``config.py``'s *source* (names, types,
defaults, bounds: ``Config`` stays the one declaration, and a field added there works here at once), checks
the given values against it, and returns a ``LazyConfig`` that answers attribute reads from those values and
builds the real pydantic ``Config`` only when something needs more (an assignment, a method, a secret, a
capability call). Whatever it is unsure about — an unusual declaration, a value it would have to coerce in a
way it does not know, any value that is wrong — goes to ``config.validate_sources`` at once, so a bad value
still stops start-up with the same one-line message.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .config_sources import Sources, gather_sources

if TYPE_CHECKING:
    from .config import Config

_CONFIG_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "config.py")
_INT = r"-?(?:0|[1-9][0-9]*)"  # re's own cache compiles these on first use, not at import
_FLOAT = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"
# pydantic's documented lax str -> bool conversions (compared in lower case).
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})
_FACTORIES: dict[str, Any] = {"list": list, "dict": dict, "set": set, "tuple": tuple}
_MODEL_CONFIG_KEYS = frozenset({"extra", "validate_assignment", "defer_build", "frozen", "title"})
_BOUNDS = ("ge", "gt", "le", "lt")
_NO_DEFAULT = object()  # required field, or a default that is not a plain literal


class _Unsure(Exception):
    """The light path cannot vouch for a value or a declaration: pydantic decides."""


class FieldSpec:
    """One setting as ``Config`` declares it, reduced to what the light path checks."""

    __slots__ = ("bounds", "choices", "default", "exact", "factory", "kind", "name", "required")

    def __init__(
        self,
        name: str,
        kind: str,  # str | int | float | bool | secret | choice | strlist | other
        choices: tuple[str, ...],
        bounds: dict[str, float],
        default: Any,  # a literal, a factory in _FACTORIES (called per instance), or _NO_DEFAULT
        factory: bool,
        required: bool,
        exact: bool,  # no constraint beyond kind and bounds (else a given value goes to pydantic)
    ) -> None:
        self.name, self.kind, self.choices, self.bounds = name, kind, choices, bounds
        self.default, self.factory, self.required, self.exact = default, factory, required, exact

    def __repr__(self) -> str:
        return f"FieldSpec({', '.join(f'{k}={getattr(self, k)!r}' for k in self.__slots__)})"


# -- reading the declaration ---------------------------------------------------------------------------------
def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise _Unsure from None


def _kind(node: ast.expr, aliases: Mapping[str, ast.expr]) -> tuple[str, tuple[str, ...]]:
    """Classify an annotation; ``X | None`` is ``X`` (a source never gives ``None``)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        parts = [n for n in (node.left, node.right) if not (isinstance(n, ast.Constant) and n.value is None)]
        return _kind(parts[0], aliases) if len(parts) == 1 else ("other", ())
    if isinstance(node, ast.Name):
        if node.id in {"str", "int", "float", "bool"}:
            return node.id, ()
        if node.id == "SecretStr":
            return "secret", ()
        if node.id in aliases:
            return _kind(aliases[node.id], {})
        return "other", ()
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        if node.value.id == "Literal":
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            choices = tuple(_literal(item) for item in items)
            if all(type(c) is str for c in choices):
                return "choice", choices
        if node.value.id == "list" and isinstance(node.slice, ast.Name) and node.slice.id == "str":
            return "strlist", ()
    return "other", ()


def _field(
    name: str, annotation: ast.expr, value: ast.expr | None, aliases: Mapping[str, ast.expr]
) -> FieldSpec:
    kind, choices = _kind(annotation, aliases)
    default: Any = _NO_DEFAULT
    factory = False
    required = value is None
    bounds: dict[str, float] = {}
    exact = kind != "other"
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "Field":
        given = [kw.arg for kw in value.keywords if kw.arg in ("default", "default_factory")]
        required = (not value.args and not given) or _is_ellipsis(value.args[0] if value.args else None)
        if value.args:
            default = _literal_or_missing(value.args[0])
        for kw in value.keywords:
            if kw.arg == "default":
                default = _literal_or_missing(kw.value)
                required = _is_ellipsis(kw.value)
            elif kw.arg == "default_factory":
                if isinstance(kw.value, ast.Name) and kw.value.id in _FACTORIES:
                    default, factory = _FACTORIES[kw.value.id], True
            elif kw.arg in _BOUNDS:
                bound = _literal(kw.value)
                if type(bound) not in (int, float):
                    raise _Unsure
                bounds[kw.arg] = bound
            elif kw.arg != "description":
                exact = False  # alias, pattern, strict, ...: pydantic knows what they mean
    elif value is not None:
        default = _literal_or_missing(value)
    return FieldSpec(name, kind, choices, bounds, default, factory, required, exact)


def _is_ellipsis(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def _literal_or_missing(node: ast.expr) -> Any:
    """A scalar literal default; anything else (a mutable literal, an expression) is read from pydantic."""
    try:
        value = _literal(node)
    except _Unsure:
        return _NO_DEFAULT
    return value if value is None or type(value) in (str, int, float, bool) else _NO_DEFAULT


def read_declaration(source: str) -> dict[str, FieldSpec]:
    """The fields of ``class Config(BaseModel)`` in ``source``; ``_Unsure`` for anything unusual."""
    tree = ast.parse(source)
    aliases: dict[str, ast.expr] = {}
    config: ast.ClassDef | None = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            aliases[node.targets[0].id] = node.value
        elif isinstance(node, ast.ClassDef) and node.name == "Config":
            config = node
    if config is None or not _is_names(config.bases, "BaseModel") or config.keywords:
        raise _Unsure
    fields: dict[str, FieldSpec] = {}
    for stmt in config.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            name = stmt.target.id
            if name.startswith("_") or any(
                isinstance(n, ast.Name) and n.id == "ClassVar" for n in ast.walk(stmt.annotation)
            ):
                raise _Unsure
            fields[name] = _field(name, stmt.annotation, stmt.value, aliases)
        elif isinstance(stmt, ast.Assign):
            _check_model_config(stmt)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not _is_names(stmt.decorator_list, "property"):
                raise _Unsure  # a validator or computed field changes what values mean
        elif not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):  # docstring
            raise _Unsure
    return fields


def _is_names(nodes: list[ast.expr], *names: str) -> bool:
    return len(nodes) == len(names) and all(
        isinstance(n, ast.Name) and n.id == name for n, name in zip(nodes, names, strict=True)
    )


def _check_model_config(stmt: ast.Assign) -> None:
    target = stmt.targets[0] if len(stmt.targets) == 1 else None
    if not (isinstance(target, ast.Name) and target.id == "model_config"):
        raise _Unsure
    call = stmt.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "ConfigDict"):
        raise _Unsure
    if call.args or any(kw.arg not in _MODEL_CONFIG_KEYS for kw in call.keywords):
        raise _Unsure  # e.g. strict, str_strip_whitespace: coercion rules the light path does not model


_declaration: dict[str, FieldSpec] | None = None


def declaration() -> dict[str, FieldSpec]:
    """``Config``'s fields, read once per process from ``config.py`` (``_Unsure`` when that fails)."""
    global _declaration
    if _declaration is None:
        try:
            with open(_CONFIG_SOURCE, encoding="utf-8") as fh:
                source = fh.read()
            _declaration = read_declaration(source)
        except (OSError, SyntaxError, ValueError):
            raise _Unsure from None
    return _declaration


# -- checking values -----------------------------------------------------------------------------------------
def _check(spec: FieldSpec, value: Any) -> Any:
    """The value pydantic would store for ``value``, when that is certain; else ``_Unsure``."""
    kind = spec.kind
    if not spec.exact:
        raise _Unsure
    if kind in ("str", "secret"):
        if type(value) is str:
            return value
    elif kind == "choice":
        if type(value) is str and value in spec.choices:
            return value
    elif kind == "strlist":
        if type(value) is list and all(type(item) is str for item in value):
            return list(value)
    elif kind == "bool":
        if type(value) is bool:
            return value
        if type(value) is str and value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE
    elif kind == "int":
        if type(value) is str and re.fullmatch(_INT, value):
            value = int(value)
        if type(value) is int:
            return _in_bounds(spec, value)
    elif kind == "float":
        if type(value) is str and re.fullmatch(_FLOAT, value):
            value = float(value)
        if type(value) in (int, float):
            return _in_bounds(spec, float(value))
    raise _Unsure


def _in_bounds(spec: FieldSpec, value: float) -> Any:
    b = spec.bounds
    if (
        ("ge" in b and not value >= b["ge"])
        or ("gt" in b and not value > b["gt"])
        or ("le" in b and not value <= b["le"])
        or ("lt" in b and not value < b["lt"])
        or value != value  # NaN
    ):
        raise _Unsure  # out of bounds: pydantic writes the message
    return value


def light_values(fields: Mapping[str, FieldSpec], sources: Sources) -> dict[str, Any]:
    """Every setting's value as pydantic would hold it, for the settings the light path can answer."""
    unknown = set(sources) - set(fields)
    if unknown:
        raise _Unsure  # pydantic names the unknown setting and lists the known ones
    values: dict[str, Any] = {}
    for name, spec in fields.items():
        if name in sources:
            checked = _check(spec, sources[name][0])
            if spec.kind != "secret":  # SecretStr needs pydantic: built when first read
                values[name] = checked
        elif spec.factory:
            values[name] = spec.default()
        elif spec.required:
            raise _Unsure  # pydantic says it is missing
        elif spec.default is not _NO_DEFAULT:
            values[name] = spec.default
        # else: a default that is not a literal; reading it builds the real Config
    return values


# -- the stand-in --------------------------------------------------------------------------------------------
class LazyConfig:
    """Stands in for ``Config`` until something needs the real model.

    Reads of settings are answered from checked values; anything else (assignment, a method such as
    ``model_dump``, a ``SecretStr``, equality) builds the real ``Config`` from the same sources once, and from
    then on every read and write goes to it, so all holders of this object keep seeing one configuration.
    """

    __slots__ = ("_real", "_sources", "_values")

    def __init__(self, values: dict[str, Any], sources: Sources) -> None:
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_sources", sources)
        object.__setattr__(self, "_real", None)

    def __getattr__(self, name: str) -> Any:
        if name in LazyConfig.__slots__:  # not set yet (e.g. a copy being built): no recursion
            raise AttributeError(name)
        if self._real is None and name in self._values:
            return self._values[name]
        return getattr(self.materialize(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.materialize(), name, value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyConfig):
            other = other.materialize()
        return self.materialize() == other

    __hash__ = None  # type: ignore[assignment]  # like Config: mutable, so unhashable

    def __repr__(self) -> str:
        return repr(self.materialize())

    def materialize(self) -> Config:
        """The real pydantic ``Config`` (imports pydantic the first time)."""
        real = self._real
        if real is None:
            from .config import validate_sources

            real = validate_sources(self._sources)
            object.__setattr__(self, "_real", real)
        return real


def real_config(config: Config | LazyConfig) -> Config:
    """The pydantic ``Config`` behind ``config`` (for code that validates it, e.g. a pydantic field)."""
    return config.materialize() if isinstance(config, LazyConfig) else config


def load_startup_config(
    overrides: Mapping[str, Any] | None = None,
    *,
    config_file: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Config | LazyConfig:
    """``config.load_config`` for the start-up: a ``LazyConfig`` when every value is plainly valid, else the
    pydantic ``Config`` (or its ``ConfigError``) exactly as ``load_config`` gives it."""
    env = os.environ if env is None else env
    try:
        fields = declaration()
    except _Unsure:
        from .config import load_config

        return load_config(overrides, config_file=config_file, env=env)
    list_fields = {name for name, spec in fields.items() if spec.kind == "strlist"}
    sources = gather_sources(overrides, config_file, env, fields, list_fields)
    try:
        return LazyConfig(light_values(fields, sources), sources)
    except _Unsure:
        from .config import validate_sources

        return validate_sources(sources)
