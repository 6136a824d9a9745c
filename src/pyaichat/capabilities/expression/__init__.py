"""Reading an expression without running any code of the session's: the one policy behind ``eval_expr``
and the ``expr`` argument of ``get_type``, ``get_repr``, ``get_dir`` and ``get_doc``.

Three levels, least power first; each expression is read at the lowest one that can read it:

1. ``PATH`` — a name, attribute reads that are a look-up, declared library metadata and literal subscripts
   of exact builtin containers (``df.shape``, ``cfg["x"]``, ``type(df).__name__``): structural reads only
   (``reader``, ``structural``). Allowed even at privacy level ``names``.
2. ``PURE`` — also operators, displays, computed keys and a few builtins and methods over plain values
   (``len(xs)``, ``sorted(d.items())``, ``n + 1``), each after its result's size was found to fit
   (``sizes``). No code of any object runs: only CPython's own code over exact builtin values.
3. ``CHILD`` — everything else runs in the sandbox's walled child (``sandbox.run``): a forked copy of the
   session where what it writes is thrown away and files, network and processes are walled off. Every
   pandas, numpy or session method call is read there, and so is a description that would need the value's
   own code (``summary_here.here``): the introspection capabilities describe the value there too
   (``render``), since a value cannot cross a fork.

Levels 1 and 2 run with the cyclic collector paused, so no finaliser of the session's garbage runs during a
read; they refuse any computation through a secret value, and before the child reads an expression no part
of it that they can read may lead through one (``Reader.refuse_secret_paths``). Nothing here warns while
parsing (``warnless``): a warning would go through the session's ``warnings`` machinery.
"""

from __future__ import annotations

import ast
import enum
import functools
import re
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from ...errors import CapabilityError, CapabilityTimeout, SandboxViolation
from ..deadline import not_asked, remember_overrun
from ..privacy import level
from ..redact import masker_for
from ..structural import collector_paused
from ..summary import describe
from ..summary_here import here
from ..text import type_name
from ..warnless import compiler_warning, respelled
from .reader import NotInProcess, Reader
from .secrets import SecretChecks

if TYPE_CHECKING:
    from ..catalog import CapabilityContext

__all__ = [
    "Level",
    "NotInProcess",
    "evaluate",
    "inspect",
    "level_of",
    "parse_expression",
    "resolve",
]

MAX_EXPR_CHARS = 2_000
MAX_PATH_CHARS = 500  # the ``expr`` of the introspection capabilities names a value rather than computing one
# Dunder attributes that are plain metadata: a class's names and module (``type(df).__name__``) in any
# expression, and also these in the ``expr`` of the introspection capabilities.
STRICT_DUNDERS = frozenset({"__name__", "__qualname__", "__module__", "__doc__"})
SAFE_DUNDERS = STRICT_DUNDERS | frozenset({"__class__", "__wrapped__", "__file__"})


class Level(enum.Enum):
    PATH = "path"
    PURE = "pure"
    CHILD = "child"


def evaluate(ctx: CapabilityContext, expr: str) -> str:
    """``eval_expr``: a bounded summary of ``expr``'s value, read at the lowest level that can."""
    if ctx.privacy == "names":
        raise SandboxViolation(
            "Evaluating expressions is not allowed at privacy level 'names' (it would reveal values); "
            "raise the privacy setting to 'schema' or higher."
        )
    tree = parse_expression(expr)
    render = partial(describe, privacy=ctx.privacy, limit=ctx.config.max_output_chars)
    try:
        try:
            text, _ = _in_process(ctx, tree, "repr", render)
            return text
        except NotInProcess as stop:
            _reader(ctx, strict=True).refuse_secret_paths(tree.body)
            return _child(ctx, respelled(expr), stop=stop, whole=tree.body)
    except SandboxViolation as exc:
        raise SandboxViolation(f"`{_short(expr)}`: {exc}") from None


def inspect(ctx: CapabilityContext, expr: str, render: Callable[[Any], str], what: str = "repr") -> str:
    """The text ``render`` makes of ``expr``'s value (``get_type``, ``get_repr``, ``get_dir``, ``get_doc``;
    ``what`` says which): in-process where the value is read and described by structure alone, else in the
    walled child."""
    tree = _parse_path(expr)
    try:
        text, level = _in_process(ctx, tree, what, render, strict=False)
    except NotInProcess as stop:
        if ctx.privacy == "names":
            raise CapabilityError(
                f"At privacy level 'names', {expr.strip()!r} cannot be described without running its own "
                "code, which that level does not allow; raise the privacy setting to 'schema' or higher."
            ) from None
        _reader(ctx, strict=False).refuse_secret_paths(tree.body)
        return _child(ctx, respelled(expr), render, stop=stop, whole=tree.body)
    if level is Level.PURE:
        _names_only(ctx, expr)
    return text


def resolve(ctx: CapabilityContext, expr: str) -> Any:
    """The object ``expr`` names, for a capability that works with the object itself (``query_sql``'s
    connection, ``get_figure``, a plugin's argument): read in-process only — a value cannot come back from
    the walled child — so an expression that needs more than levels 1 and 2 is refused in one sentence."""
    tree = _parse_path(expr)
    try:
        value, level = _in_process(ctx, tree, None, None, strict=False)
    except NotInProcess:
        raise CapabilityError(
            f"{expr.strip()!r} cannot be read here without running code; name the object by a variable or "
            "an attribute path (such as con or db.engine)."
        ) from None
    if level is Level.PURE:
        _names_only(ctx, expr)
    return value


def level_of(ctx: CapabilityContext, expr: str, *, strict: bool = True) -> Level:
    """Which level reads ``expr``'s value here (benchmarks and tests); evaluates it in-process to find out."""
    try:
        return _in_process(ctx, parse_expression(expr), None, None, strict=strict)[1]
    except NotInProcess:
        return Level.CHILD


def _reader(ctx: CapabilityContext, *, strict: bool) -> Reader:
    return Reader(ctx.namespace, _secrets(ctx.config), strict=strict, dunders=_DUNDERS[strict])


_DUNDERS = {True: STRICT_DUNDERS, False: SAFE_DUNDERS}


def _in_process(
    ctx: CapabilityContext,
    tree: ast.Expression,
    what: str | None,
    render: Callable[[Any], Any] | None,
    *,
    strict: bool = True,
) -> tuple[Any, Level]:
    """``render(value)`` of ``tree`` read at level 1 or 2 (the value itself when ``render`` is None), and the
    level; ``NotInProcess`` when only the walled child can read it, or describe it (``what``)."""
    reader = _reader(ctx, strict=strict)
    with collector_paused():
        value = reader.eval(tree.body)
        if reader.pure and reader.named_secret:
            raise SandboxViolation("it computes with a value under a secret name, which is not available")
        if render is None:
            return value, Level.PURE if reader.pure else Level.PATH
        if what is not None and not here(value, what, level(ctx.privacy)):
            raise NotInProcess(value, read=True)  # describing it needs its own code: the child describes it
        return render(value), Level.PURE if reader.pure else Level.PATH


_secrets_cache: dict[tuple[Any, ...], SecretChecks] = {}
_last_secrets: tuple[Any, SecretChecks] | None = None


def _secrets(config: Any) -> SecretChecks:
    """The secret checks of ``config``'s settings, made once: a name's verdict depends on the settings only;
    whether a string holds a secret asks the masker of the moment (the environment, the session's values)."""
    global _last_secrets
    last = _last_secrets
    if last is not None and last[0] is config:
        return last[1]
    key = (tuple(config.secret_names), tuple(config.secret_patterns))
    found = _secrets_cache.get(key)
    if found is None:
        is_secret_name = masker_for(config).is_secret_name

        def looks_secret(text: str) -> bool:
            return masker_for(config).mask_text(text) != text

        if len(_secrets_cache) >= 16:
            _secrets_cache.clear()
        found = _secrets_cache[key] = SecretChecks(is_secret_name, looks_secret)
    _last_secrets = (config, found)  # the same settings object as last time: no key to build
    return found


def _child(
    ctx: CapabilityContext,
    expr: str,
    render: Callable[[Any], str] | None = None,
    *,
    stop: NotInProcess | None = None,
    whole: ast.AST | None = None,
) -> str:
    """The walled child's reading of ``expr``. The child forgets what it learns, so this process remembers
    an object whose own code overran its budget there (``deadline.remember_overrun``): asked again, by any
    capability, it is not asked (nor forked for) — the one sentence says why, as for an in-process ask.
    So too an attribute whose own code never came back (a property that hangs) when ``expr`` was that
    attribute (``whole``, the expression's node): an expression that would read it first is refused."""
    from ..sandbox import run  # RestrictedPython loads with the first expression that needs the child

    value = stop.value if stop is not None and stop.read else None
    if value is not None and (refusal := not_asked(value)) is not None:
        return f"{type_name(value)}: {refusal}"
    attribute = stop.attribute if stop is not None else None
    if attribute is not None and (refusal := not_asked(attribute[0], attribute[1])) is not None:
        raise CapabilityError(str(refusal))  # the child would run it first (it reads in the same order)
    if attribute is not None and attribute[2] is not whole:
        attribute = None  # something after it in the expression may be what does not come back
    try:
        text = run(ctx, expr.strip(), "eval", render=render)
    except CapabilityTimeout:
        if attribute is not None:
            owner, name, _ = attribute
            remember_overrun(owner, f".{name}", float(ctx.config.tool_timeout), attribute=name)
        raise
    overran = _OVERRAN.search(text.rsplit("\n", 1)[-1]) if value is not None else None
    if overran:
        remember_overrun(value, overran[1], float(overran[2]))
    return text


# the note ``brepr`` ends a description with when the object's own code overran (the child's text says it)
_OVERRAN = re.compile(
    r"[Ii]ts (\S+(?: and \S+)?) took too long \(over ([0-9.]+) s\) and was abandoned; .*in this session\.$"
)


def _names_only(ctx: CapabilityContext, expr: str) -> None:
    if ctx.privacy == "names":
        raise CapabilityError(
            f"At privacy level 'names' only names and attribute paths can be inspected, not {expr.strip()!r}."
        )


def _parse_path(expr: str) -> ast.Expression:
    if len((expr or "").strip()) > MAX_PATH_CHARS:
        raise CapabilityError(f"The expression is longer than {MAX_PATH_CHARS} characters.")
    return parse_expression(expr)


def _short(expr: str) -> str:
    expr = " ".join(expr.split())
    return expr if len(expr) <= 80 else expr[:77] + "..."


@functools.lru_cache(maxsize=512)
def parse_expression(expr: str) -> ast.Expression:
    """``expr`` parsed once (cached) with the size and syntax checks every capability argument gets."""
    expr = (expr or "").strip()
    if not expr:
        raise CapabilityError("The expression is empty; give one such as df.shape or len(x).")
    if len(expr) > MAX_EXPR_CHARS:
        raise CapabilityError(f"The expression is longer than {MAX_EXPR_CHARS:,} characters.")
    source = respelled(expr)  # nothing here may warn: a warning runs the session's warnings machinery
    try:
        tree = ast.parse(source, "<expr>", "eval")
    except SyntaxError as exc:
        problem = exc.msg
    else:
        shape = compiler_warning(tree)
        if shape is not None:
            raise CapabilityError(f"{expr!r} is not read: it holds {shape}, which Python warns about.")
        return tree
    try:  # an assignment, an import, a del: a write asked of a reading tool, so say what to do instead
        ast.parse(source, "<expr>", "exec")
    except SyntaxError:
        raise CapabilityError(f"{expr!r} is not a valid Python expression: {problem}.") from None
    raise CapabilityError(
        f"{expr!r} is not a valid Python expression: it is a statement, and this tool only reads. Code that "
        "changes the session goes to the person, who runs it or not (propose_code)."
    )
