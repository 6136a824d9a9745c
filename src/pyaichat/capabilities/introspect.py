"""The six read-only introspection capabilities: list_globals, get_type, get_repr, get_dir, get_doc and
get_last_exception.

Each honours the privacy level (``names`` < ``schema`` < ``sample`` < ``full``) itself, masks the values of
secret-looking names, and leaves the size, time and credential-pattern limits to ``invoke.call``.
"""

from __future__ import annotations

import fnmatch
import functools
import inspect
import itertools
import re
import types
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import CapabilityError
from . import structural, summary
from .catalog import CapabilityContext, capability
from .deadline import NotAsked, ask
from .expression import inspect as read
from .redact import REDACTED, Masker, masker_for
from .summary_here import declared_members, own_dir
from .variable_lines import line_here, variable_lines

# Names IPython (and the plain REPL) put into the user namespace that are not the user's variables.
_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython", "open"})
_PLAIN_TYPES = structural.ids(
    int, float, complex, str, bytes, bool, list, dict, tuple, set, frozenset, type(None)
)
_MAX_FRAMES = 12
_MAX_LOCALS = 25
_DOC_CHARS = 2500


# -- argument models -----------------------------------------------------------------------------------------
class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ListGlobalsArgs(_Args):
    pattern: str | None = Field(None, description="a glob on names, e.g. 'df*'")


class ExprArgs(_Args):
    expr: str = Field(description="a name or attribute path, e.g. df.columns or d['a']")


class DirArgs(ExprArgs):
    include_private: bool = Field(False, description="also names starting with _")


# -- shared helpers ------------------------------------------------------------------------------------------
def user_names(namespace: Mapping[str, Any]) -> list[str]:
    """The user's own variables in ``namespace``: no modules, dunders, ``_``-private names, IPython's
    ``In``/``Out``/``_i*``/``exit``/``quit``/``get_ipython``, or objects pyaichat put there. Namespace order.

    Called for every question's picture over namespaces of 10,000+ names, so plain values take a fast path.
    """
    names = []
    for name, value in list(namespace.items()):
        if type(name) is not str or name[:1] == "_" or name in _IPYTHON_NAMES:
            continue
        cls = type(value)
        if not structural.one_of(cls, _PLAIN_TYPES):
            if structural.is_subclass(cls, types.ModuleType):
                continue
            module = structural.module_of(cls)
            if module == "pyaichat" or module.startswith("pyaichat."):
                continue
        names.append(name)
    return names


def _masker(ctx: CapabilityContext) -> Masker:
    return masker_for(ctx.config)


def _secret_path(ctx: CapabilityContext, expr: str) -> str | None:
    """The first secret-looking name in ``expr`` (variable, attribute or string key), if any."""
    masker = _masker(ctx)
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_\-]*", expr):
        if masker.is_secret_name(word):
            return word
    return None


def _names_only(ctx: CapabilityContext) -> bool:
    return summary.level(ctx.privacy) <= summary.NAMES


# -- capabilities --------------------------------------------------------------------------------------------
@capability("list_globals", ListGlobalsArgs)
def list_globals(ctx: CapabilityContext, args: ListGlobalsArgs) -> str:
    """List the user's variables with types and one-line summaries. Use it when the picture is not
    enough."""
    names = user_names(ctx.namespace)
    if args.pattern:
        names = [n for n in names if fnmatch.fnmatchcase(n, args.pattern)]
    if not names:
        suffix = f" matching {args.pattern!r}" if args.pattern else ""
        return f"No user variables{suffix}."
    masker = _masker(ctx)
    budget = max(ctx.config.max_output_chars - 200, 200)
    lines: list[str] = []
    used = 0
    hidden = not _names_only(ctx)
    shown = [n for n in names[: budget // 20] if not (hidden and masker.is_secret_name(n))]
    described = variable_lines(
        ctx.namespace, shown, ctx.privacy, 160, ctx.config.sandbox_isolation, ctx.config.tool_timeout / 2
    )
    for name in names:
        value = ctx.namespace.get(name)
        if hidden and masker.is_secret_name(name):
            line = f"{name}: {summary.type_name(value)} {REDACTED} (secret-looking name)"
        elif name in described:
            line = f"{name}: {described[name]}"
        else:
            break
        if used + len(line) + 1 > budget:
            break
        lines.append(line)
        used += len(line) + 1
    rest = len(names) - len(lines)
    header = f"{len(names):,} user variable{'s' if len(names) != 1 else ''}:"
    if rest:
        lines.append(f"… and {rest:,} more (pass a pattern such as 'df*' to narrow the list)")
    return "\n".join([header, *lines])


@capability("get_type", ExprArgs)
def get_type(ctx: CapabilityContext, args: ExprArgs) -> str:
    """A value's type and what its library knows without computing (columns, dtypes, shape, tables). Use it
    to learn what a name holds."""
    return read(ctx, args.expr, lambda value: _type_text(ctx, args.expr, value), "type")


def _type_text(ctx: CapabilityContext, expr: str, value: Any) -> str:
    cls = type(value)  # its names through ``type``'s own descriptors: a metaclass runs nothing here
    name = structural.qualname_of(cls)
    mro = [structural.qualname_of(c) for c in structural.mro(cls)[1:6] if c is not object]
    lines = [
        f"{expr}: {name}",
        f"module: {structural.module_of(cls)}",
        f"mro: {' → '.join([name, *mro, 'object'])}" if cls is not object else "mro: object",
    ]
    lines += summary.type_details(value, ctx.privacy)
    return "\n".join(lines)


@capability("get_repr", ExprArgs)
def get_repr(ctx: CapabilityContext, args: ExprArgs) -> str:
    """A bounded view of a value's data: a few items, head and tail rows. Use it to see actual values."""
    secret = _secret_path(ctx, args.expr)

    def render(value: Any) -> str:
        if secret and not _names_only(ctx):
            kind = summary.type_name(value)
            return f"<{kind}: {REDACTED} — {secret!r} looks like a secret, so its value is hidden>"
        return summary.describe(value, ctx.privacy, ctx.config.max_output_chars)

    return read(ctx, args.expr, render, "repr")


@capability("get_dir", DirArgs)
def get_dir(ctx: CapabilityContext, args: DirArgs) -> str:
    """A value's methods and attributes. Use it to find what you can call or read."""
    return read(ctx, args.expr, lambda value: _dir_text(args, value), "dir")


def _dir_text(args: DirArgs, value: Any) -> str:
    note = None
    try:
        names = sorted({str(n) for n in _dir(value)})
    except NotAsked as exc:  # its own __dir__ overran before: the members its class and __dict__ declare
        note = str(exc)
        names = sorted(_members(value))
    except (Exception, summary.Overtime) as exc:
        raise CapabilityError(f"dir({args.expr}) failed: {type(exc).__name__}.")
    if not args.include_private:
        names = [n for n in names if not n.startswith("_")]
    methods, attributes, dynamic = [], [], []
    for name in names:
        kind = _member_kind(value, name)
        if kind is None:
            dynamic.append(name)
        elif kind == "method":
            methods.append(name)
        else:
            attributes.append(f"{name}{kind}")
    out = [f"{args.expr}: {summary.type_name(value)}, {len(names)} members"]
    out.append(f"methods ({len(methods)}): " + (", ".join(methods) or "none"))
    out.append(f"attributes ({len(attributes)}): " + (", ".join(attributes) or "none"))
    if dynamic:
        out.append(f"dynamic attributes ({len(dynamic)}): " + ", ".join(dynamic))
    if note:
        out.append(f"(only the members its class and attributes declare: {note})")
    return "\n".join(out)


def _dir(value: Any) -> list[str]:
    """``dir(value)``: the members its class and attributes declare, read by structure
    (``summary_here.declared_members``); a ``__dir__`` of its own is the object's code — asked once, bounded
    (in the walled child: ``summary_here.here`` sends such a value there)."""
    if own_dir(value):
        return list(ask(value, lambda: list(dir(value)), "__dir__"))
    return sorted(_members(value))


def _members(value: Any) -> set[str]:
    return {str(n) for n in declared_members(value)}


_PROPERTIES = structural.ids(
    property, types.GetSetDescriptorType, types.MemberDescriptorType, functools.cached_property
)
_METHODS = structural.ids(classmethod, staticmethod)


def _member_kind(value: Any, name: str) -> str | None:
    """``method``, `` (property)``, or ``: <type>`` for an attribute, found by structure (``None``: nothing
    declares it — a ``__dir__`` of its own listed it)."""
    if type(value) is types.ModuleType:
        found = structural.module_namespace(value).get(name, structural.MISSING)
    else:
        state = structural.instance_dict(value) if not structural.is_subclass(type(value), type) else None
        found = state.get(name, structural.MISSING) if state is not None else structural.MISSING
        if found is structural.MISSING:
            owner = value if structural.is_subclass(type(value), type) else type(value)
            found = structural.lookup(owner, name)
            if found is not structural.MISSING and structural.one_of(type(found), _PROPERTIES):
                return " (property)"
    if found is structural.MISSING:
        return None
    if structural.one_of(type(found), _METHODS) or callable(found):
        return "method"
    return f": {summary.type_name(found)}"


@capability("get_doc", ExprArgs)
def get_doc(ctx: CapabilityContext, args: ExprArgs) -> str:
    """The signature and docstring of a function, class or module. Use it to check how to call something."""
    return read(ctx, args.expr, lambda value: _doc_text(args.expr, value), "doc")


def _doc_text(expr: str, value: Any) -> str:
    target = value if _documents_itself(value) else type(value)
    lines = [f"{expr}: {summary.type_name(value)}"]
    if target is not value:
        lines.append(f"(documentation of its type, {structural.qualname_of(type(value))})")
    sig = summary.signature_text(target) if callable(target) else None
    if sig:
        lines.append(f"signature: {sig}")
    doc = (
        inspect.getdoc(target)
        if not isinstance(target, types.ModuleType)
        else getattr(target, "__doc__", None)
    )
    if isinstance(doc, str) and doc.strip():
        doc = doc.strip()
        first, _, rest = doc.partition("\n")
        if sig and first.startswith(sig.split("(")[0] + "("):  # the docstring repeats the signature
            doc = rest.lstrip()
        lines.append(summary.cut(doc, _DOC_CHARS))
    else:
        lines.append("(no docstring)")
    return "\n".join(lines)


def _documents_itself(value: Any) -> bool:
    """Code objects carry their own docs; a plain value's docs are its type's (never a per-instance
    string)."""
    return issubclass(  # by its type: ``isinstance`` would ask the value's ``__class__``
        type(value),
        (
            type,
            types.ModuleType,
            types.FunctionType,
            types.BuiltinFunctionType,
            types.MethodType,
            types.BuiltinMethodType,
            types.MethodWrapperType,
            types.WrapperDescriptorType,
            types.MethodDescriptorType,
            property,
        ),
    ) or (callable(value) and structural.name_of(type(value)) == "ufunc")


@capability("get_last_exception")
def get_last_exception(ctx: CapabilityContext, args: Any) -> str:
    """The last error with its traceback, failing source and local variables. Use it first when the user
    asks why something failed."""
    err = getattr(ctx.session, "last_error", None)
    if err is None:
        return "No exception has been raised in this session yet."
    lvl = summary.level(ctx.privacy)
    out = [f"{err.type_name}: {_message(err.message, lvl)}"]
    where = f"input [{err.input_number}]" if err.input_number is not None else "the session"
    if err.segment:
        out.append(f"failing segment ({where}, line {err.lineno}): {err.segment}")
    exc = err.exception
    if exc is not None:
        out += _chain(exc, lvl)
    frames = err.frames
    if frames:
        shown = frames[-_MAX_FRAMES:]
        out.append(
            f"traceback (most recent call last, {len(frames)} frame{'s' if len(frames) != 1 else ''}):"
        )
        if len(frames) > len(shown):
            out.append(f"  … {len(frames) - len(shown)} outer frames left out")
        for f in shown:
            failing = f"   [failing part: {f.segment}]" if f.segment and f.segment != f.line else ""
            out.append(f"  {_short_path(f.filename)}:{f.lineno} in {f.name}: {f.line}{failing}")
    if exc is not None:
        out += _failing_locals(ctx, exc, err.segment)
    if err.source:
        source = err.source if len(err.source) <= 600 else err.source[:600] + "…"
        out.append(f"input source:\n{source}")
    return "\n".join(out)


def _short_path(filename: str) -> str:
    """``…/site-packages/pandas/core/frame.py`` → ``pandas/core/frame.py``: the part that says what it is."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


def _message(message: str, lvl: int) -> str:
    if lvl >= summary.SAMPLE:
        return message
    return f"(message of {len(message)} characters withheld at privacy level 'names'/'schema')"


def _chain(exc: BaseException, lvl: int) -> list[str]:
    out = []
    seen = {id(exc)}
    current = exc
    for _ in range(3):
        cause = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
        if cause is None or id(cause) in seen:
            break
        seen.add(id(cause))
        link = "caused by" if current.__cause__ is cause else "raised while handling"
        out.append(f"{link}: {summary.type_name(cause)}: {_message(_exception_text(cause), lvl)}")
        current = cause
    return out


def _exception_text(exc: BaseException) -> str:
    """An exception's message when Python's own ``__str__`` makes it from plain arguments; an exception
    class of the session's (or an argument of one) has its own code, which is not run here."""
    try:
        args = structural.attribute(exc, "args")
    except (structural.NotStructural, structural.NoAttribute):
        args = None
    own = structural.lookup(type(exc), "__str__")
    owner = own.__objclass__ if type(own) is types.WrapperDescriptorType else None
    pythons = owner is not None and structural.module_of(owner) == "builtins" and structural.compiled(owner)
    if pythons and structural.is_plain(args):
        return str(exc)  # Python's own exception classes: the text of their plain arguments
    return "(its message is made by its own code, not run here)"


def _frames_of(exc: BaseException) -> list[Any]:
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return frames


def _failing_locals(ctx: CapabilityContext, exc: BaseException, segment: str | None) -> list[str]:
    """Local variables as one-liners: of the innermost frame and, when that is library code (pandas' own
    ``get_loc``), also of the user's innermost frame, which is usually what explains the error."""
    frames = _frames_of(exc)
    if not frames:
        return []
    inner = frames[-1]
    user = next((f for f in reversed(frames) if summary.is_user_code(f.f_code.co_filename)), None)
    out = []
    if user is not inner:
        out += _frame_locals(ctx, inner, None, library=True)
    if user is not None:
        out += _frame_locals(ctx, user, segment if user.f_code.co_name == "<module>" else None)
    return out


def _frame_locals(
    ctx: CapabilityContext, frame: Any, segment: str | None, library: bool = False
) -> list[str]:
    masker = _masker(ctx)
    lvl = summary.level(ctx.privacy)
    limit = 8 if library else _MAX_LOCALS
    if frame.f_code.co_name == "<module>":
        # Top level: the "locals" are the whole namespace, so show only the names the failing code uses.
        names = [n for n in _names_in(segment or "") if n in frame.f_locals]
        title = "names used by the failing segment:"
    else:
        names = [n for n in frame.f_locals if not n.startswith("__")]
        where = ", library code" if library else ""
        title = f"locals of the failing frame ({frame.f_code.co_name}{where}):"
    if not names:
        return []
    out = [title]
    for name in itertools.islice(names, limit):
        value = frame.f_locals.get(name)
        if masker.is_secret_name(name) and lvl > summary.NAMES:
            out.append(f"  {name}: {summary.type_name(value)} {REDACTED}")
        else:
            out.append(f"  {name}: {line_here(value, ctx.privacy, 120)}")
    if len(names) > limit:
        out.append(f"  … {len(names) - limit} more")
    return out


def _names_in(segment: str) -> Iterable[str]:
    seen: dict[str, None] = {}
    for name in re.findall(r"(?<![.\w])[A-Za-z_]\w*", segment):
        seen.setdefault(name, None)
    return list(seen)
