"""An expression's text and tree made so that parsing and compiling it raise no warning in this process.

A warning is not a message to the terminal only: CPython hands it to the ``warnings`` module, whose
``showwarning`` and filters are the session's to replace (``logging.captureWarnings(True)`` sends it to the
session's log handlers, a file among them) — session code run, and a write made, by a read. Catching
warnings does not help: ``warnings.catch_warnings`` is itself looked up on that module, and it swaps the
process's filters while the session's own threads run.

So nothing that would warn reaches the parser or the compiler here:

* the tokenizer's warnings are about spelling, and the text is respelled with the same meaning — an
  invalid escape in a non-raw literal (``'\\d'``, whose value keeps the backslash) gets its backslash
  doubled, and a number followed at once by a keyword (``1if``) gets a space;
* the compiler's are about shapes that fail or mislead at run time (``x is 1``, ``'a'['x']``, ``(1)(2)``):
  ``compiler_warning`` names them, and the expression is refused in one sentence.
"""

from __future__ import annotations

import ast
import re

_STR_ESCAPES = frozenset("\n\\'\"abfnrtv01234567xNuU")
_BYTES_ESCAPES = _STR_ESCAPES - frozenset("NuU")
# A comment, or the start of a string literal with its prefix (not part of a longer name).
_LITERAL = re.compile(r"""#[^\n]*|(?<![\w])([rRbBfFuU]{0,2})('''|\"\"\"|'|")""")
# A number followed at once by a keyword: the tokenizer warns "invalid decimal literal".
_NUMBER_KEYWORD = re.compile(
    r"(?<![\w.])(0[xX][\da-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|\d[\d_]*(?:\.[\d_]*)?(?:[eE][+-]?\d[\d_]*)?[jJ]?)"
    r"(?=(?:and|else|for|if|in|is|not|or)\b)"
)


def respelled(source: str) -> str:
    """``source`` with the tokenizer's warnings spelled away (module docstring); the same expression."""
    out: list[str] = []
    pos = 0
    while (found := _LITERAL.search(source, pos)) is not None:
        out.append(_NUMBER_KEYWORD.sub(r"\1 ", source[pos : found.start()]))
        if found.group(0).startswith("#"):
            out.append(found.group(0))
            pos = found.end()
            continue
        prefix, quote = found.group(1).lower(), found.group(2)
        valid = None if "r" in prefix else _BYTES_ESCAPES if "b" in prefix else _STR_ESCAPES
        out.append(found.group(0))
        pos = _body(source, found.end(), quote, valid, out)
    out.append(_NUMBER_KEYWORD.sub(r"\1 ", source[pos:]))
    return "".join(out)


def _body(source: str, at: int, quote: str, valid: frozenset[str] | None, out: list[str]) -> int:
    """Copy a literal's body from ``at`` to its closing quote (included), doubling each backslash of an
    invalid escape (``valid`` None: a raw literal, copied as it is); the position after it."""
    while at < len(source) and not source.startswith(quote, at):
        char = source[at]
        if char == "\\" and at + 1 < len(source):
            if valid is not None and source[at + 1] not in valid:
                out.append("\\")
            out.append(source[at : at + 2])
            at += 2
            continue
        out.append(char)
        at += 1
    out.append(source[at : at + len(quote)])
    return at + len(quote)


def compiler_warning(tree: ast.AST) -> str | None:
    """The shape in ``tree`` that CPython's compiler warns about (``compile.c``: ``check_is_arg``,
    ``check_caller``, ``check_subscripter``, ``check_index``, an assert of a tuple, and from 3.14 a return,
    break or continue in ``finally``), in words; None if there is none."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op, left, right in zip(node.ops, operands, operands[1:], strict=False):
                if isinstance(op, (ast.Is, ast.IsNot)) and (_constant(left) or _constant(right)):
                    return "`is` with a literal (use `==`)"
        elif isinstance(node, ast.Call) and isinstance(node.func, _NOT_CALLABLE):
            return "a call of a literal (a missing comma?)"
        elif isinstance(node, ast.Subscript):
            if _not_subscriptable(node.value):
                return "a subscript of a literal that has no items (a missing comma?)"
            if _sequence(node.value) and _not_index(node.slice):
                return "a literal sequence subscripted by a literal that is not an index (a missing comma?)"
        elif isinstance(node, ast.Assert) and isinstance(node.test, ast.Tuple) and node.test.elts:
            return "an assert of a tuple (always true)"
        elif isinstance(node, ast.Try) and any(
            isinstance(inner, (ast.Return, ast.Break, ast.Continue)) for part in node.finalbody
            for inner in ast.walk(part)
        ):  # fmt: skip
            return "a return, break or continue in a finally block"
    return None


_NOT_CALLABLE = (ast.Constant, ast.Tuple, ast.List, ast.ListComp, ast.Dict, ast.DictComp, ast.Set,
                 ast.SetComp, ast.GeneratorExp, ast.JoinedStr, ast.FormattedValue)  # fmt: skip


def _constant(node: ast.AST) -> bool:
    """A constant other than ``None``, ``True``, ``False`` and ``...`` (a tuple of constants is folded into
    one before the check, so a tuple display counts too)."""
    if isinstance(node, ast.Tuple):
        return all(isinstance(item, ast.Constant) for item in node.elts)
    return isinstance(node, ast.Constant) and not any(node.value is v for v in (None, True, False, ...))


def _not_subscriptable(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        value = node.value
        return value is None or value is ... or type(value) in (int, bool, float, complex, frozenset)
    return isinstance(node, (ast.Set, ast.SetComp, ast.GeneratorExp, ast.Lambda))


def _sequence(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return type(node.value) in (str, bytes, tuple)
    return isinstance(node, (ast.Tuple, ast.List, ast.ListComp, ast.JoinedStr, ast.FormattedValue))


def _not_index(node: ast.AST) -> bool:
    """A literal whose type the compiler knows and that is not an integer or a slice."""
    if isinstance(node, ast.Constant):
        return type(node.value) not in (int, bool)
    return isinstance(node, (ast.Tuple, ast.List, ast.ListComp, ast.Dict, ast.DictComp, ast.Set, ast.SetComp,
                             ast.GeneratorExp, ast.Lambda, ast.JoinedStr, ast.FormattedValue))  # fmt: skip
