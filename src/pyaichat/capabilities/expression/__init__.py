"""Reading an expression without writing: the one policy behind ``eval_expr`` and the ``expr`` argument of
``get_type``, ``get_repr``, ``get_dir`` and ``get_doc``.

Three levels, least power first; each expression is read at the lowest one that can read it:

1. ``PATH`` — a name, attribute reads and literal subscripts (``df.columns``, ``cfg["x"]``, ``np.add``):
   nothing is called, no code the session wrote runs (a user class's property, ``__getattr__`` or
   ``__getitem__`` sends it to level 3). Allowed even at privacy level ``names``.
2. ``PURE`` — also operators, displays, computed keys and calls of the allow-listed functions and methods of
   ``signatures`` whose arguments fit their read-only form (``len(xs)``, ``sorted(d)[:5]``,
   ``df["a"].mean()``): a closed set that cannot write whatever the values are (``reader``). No callable is
   ever an argument, no output parameter is accepted, receivers and operands are of types Python, numpy or
   pandas define, and values that hold a secret are left to level 3.
3. ``CHILD`` — everything else runs in the sandbox's walled child (``sandbox.run``): a forked copy of the
   session where what it writes is thrown away and files, network and processes are walled off; the
   introspection capabilities describe the value there too (``render``), since a value cannot cross a fork.

Levels 1 and 2 run inside ``deadline.no_user_code``: if a library would reach the session's own code (an
element's ``__eq__``, an extension dtype, a ``__repr__`` while describing), the in-process result is thrown
away and level 3 reads it instead. Describing the result runs under it too (unless the value provably holds
nothing of the session's, ``plain.library_only``), so the text a level-1 or level-2 read returns was made
without running any of the session's code.
"""

from __future__ import annotations

import ast
import enum
import functools
import re
import warnings
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from ...errors import CapabilityError, CapabilityTimeout, SandboxViolation
from ..deadline import UserCodeNeeded, no_user_code, not_asked, remember_overrun
from ..redact import masker_for
from ..summary import describe
from ..text import type_name
from .plain import SecretsOf, library_only, module_of, pandas_display_plain
from .reader import NotInProcess, Reader

if TYPE_CHECKING:
    from ..registry import CapabilityContext

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
# Dunder attributes that are plain metadata, readable in the ``expr`` of the introspection capabilities.
SAFE_DUNDERS = frozenset(
    {"__doc__", "__name__", "__qualname__", "__module__", "__class__", "__wrapped__", "__annotations__",
     "__file__"}
)  # fmt: skip


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
    try:
        text, _ = _in_process(ctx, tree, lambda v: describe(v, ctx.privacy, ctx.config.max_output_chars))
        return text
    except NotInProcess as stop:
        return _child(ctx, expr, stop=stop, whole=tree.body)
    except SandboxViolation as exc:
        raise SandboxViolation(f"`{_short(expr)}`: {exc}") from None


def inspect(ctx: CapabilityContext, expr: str, render: Callable[[Any], str]) -> str:
    """The text ``render`` makes of ``expr``'s value (``get_type``, ``get_repr``, ``get_dir``, ``get_doc``):
    in-process where a path or an allow-listed computation reads it, else in the walled child."""
    tree = _parse_path(expr)
    try:
        text, level = _in_process(ctx, tree, render, strict=False)
    except NotInProcess as stop:
        _names_only(ctx, expr)
        return _child(ctx, expr, render, stop=stop, whole=tree.body)
    if level is Level.PURE:
        _names_only(ctx, expr)
    return text


def resolve(ctx: CapabilityContext, expr: str) -> Any:
    """The object ``expr`` names, for a capability that works with the object itself (``query_sql``'s
    connection, ``get_figure``, a plugin's argument): read in-process only — a value cannot come back from
    the walled child — so an expression that needs more than levels 1 and 2 is refused in one sentence."""
    tree = _parse_path(expr)
    try:
        value, level = _in_process(ctx, tree, None, strict=False)
    except NotInProcess:
        raise CapabilityError(
            f"{expr.strip()!r} cannot be read here without running code; name the object by a variable or "
            "an attribute path (such as con or db.engine)."
        ) from None
    if level is Level.PURE:
        _names_only(ctx, expr)
    return value


def level_of(ctx: CapabilityContext, expr: str, *, strict: bool = True) -> Level:
    """Which level reads ``expr`` here (benchmarks and tests); evaluates it in-process to find out."""
    try:
        return _in_process(ctx, parse_expression(expr), None, strict=strict)[1]
    except NotInProcess:
        return Level.CHILD


def _in_process(
    ctx: CapabilityContext, tree: ast.Expression, render: Callable[[Any], Any] | None, *, strict: bool = True
) -> tuple[Any, Level]:
    """``render(value)`` of ``tree`` read at level 1 or 2 (the value itself when ``render`` is None), and the
    level; ``NotInProcess`` when only the walled child can read it."""
    secrets = _secrets(ctx.config)
    read: list[Any] = []  # the value, once read: only describing it may still need the session's code
    with no_user_code() as block:
        reader = Reader(
            ctx.namespace,
            secrets,
            strict=strict,
            dunders=frozenset() if strict else SAFE_DUNDERS,
            block=block,
        )
        try:
            result = reader.eval(tree.body)
            read.append(result)
            if render is not None:
                # Describing a value with nothing of the session's in it runs none of its code (and pandas'
                # display options hold none of the person's functions: ``plain.pandas_display_plain``).
                untraced = type(result) not in _TRACED_DESCRIPTIONS and library_only(result)
                if untraced and module_of(type(result)).startswith("pandas"):
                    untraced = pandas_display_plain()
                result = (render if untraced else partial(block.run, render))(result)
        except UserCodeNeeded:
            raise NotInProcess(*read, read=bool(read)) from None
    if block.tripped:  # the session's own code was about to run (and a library swallowed the stop)
        raise NotInProcess(*read, read=bool(read))
    if reader.pure and reader.named_secret:
        raise NotInProcess  # a computation over a secret-named value: the child hides that value
    return result, Level.PURE if reader.pure else Level.PATH


_TRACED_DESCRIPTIONS = frozenset({list, tuple, dict, set, frozenset})  # cheap to trace: few frames
_secrets_cache: dict[tuple[Any, ...], SecretsOf] = {}
_last_secrets: tuple[Any, SecretsOf] | None = None


def _secrets(config: Any) -> SecretsOf:
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
        found = _secrets_cache[key] = SecretsOf(is_secret_name, looks_secret)
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
    try:
        with warnings.catch_warnings():  # an invalid escape: not for the person's terminal
            warnings.simplefilter("ignore", SyntaxWarning)
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
