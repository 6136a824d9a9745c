"""What a ghost-text suggestion may know of the session: facts about the names around the cursor, and the
last few inputs — small, masked and bounded, gathered where the data lives (here, or in a kernel's helper).

A fact is one line per name or attribute path the code near the cursor uses, nearest the cursor first:
``orders: DataFrame 3×2: id object, total float64``, ``pd.merge: function merge(left, right, how='inner', …)``
It comes from the session picture's own summary made by structure alone (``variable_lines.line_here``: no
code of the session's runs, no lazy frame is computed, no property read; an object whose line would need its
own code is described by its type) at the configured privacy level, so ``names`` gives types only and
``schema`` no values. Attribute paths are resolved by structure (``structural.attribute``): a property or
``__getattr__`` is never run to find them. Secret-looking names give no fact, and every line is
masked like anything else that leaves the session.
"""

from __future__ import annotations

import inspect
import io
import keyword
import tokenize
import types
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .completion import Unresolvable

if TYPE_CHECKING:
    from ..capabilities.redact import Masker
    from ..configuration.config import Config
    from ..records import HistoryEntry

MAX_FACTS = 8  # names described per suggestion
FACT_WIDTH = 200  # characters of one fact
FACTS_CHARS = 1200  # all facts together: about 300 tokens
MAX_INPUTS = 3  # recent inputs sent along
INPUT_CHARS = 400  # characters of one recent input
MAX_LINES = 8  # lines of one recent input
SCAN_CHARS = 2000  # code around the cursor searched for names


def code_paths(before: str, after: str = "") -> list[str]:
    """Dotted names (``df``, ``pd.merge``, ``df.groupby``) used in the code around the cursor, nearest the
    cursor first: those before it from the end backwards, then those after it. Strings, comments and
    keywords are skipped; code cut off mid-statement (the usual case while typing) is read up to the cut."""
    ahead = _paths(before[-SCAN_CHARS:])
    behind = _paths(after[: SCAN_CHARS // 4])
    found: list[str] = []
    for path in [*reversed(ahead), *behind]:
        if path not in found:
            found.append(path)
    return found


def _paths(code: str) -> list[str]:
    paths: list[str] = []
    current: list[str] = []
    after_dot = False
    previous: Any = None
    depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            kind, text = token.type, token.string
            if kind == tokenize.OP and text in "([{":
                depth += 1
            elif kind == tokenize.OP and text in ")]}":
                depth = max(depth - 1, 0)
            if kind == tokenize.OP and text == "=" and depth and len(current) == 1:
                current = []  # a keyword argument's name (``on=``), not a value
            elif kind == tokenize.NAME and not keyword.iskeyword(text):
                if after_dot and current:
                    current.append(text)
                elif not _follows_value(previous):
                    _flush(current, paths)
                    current = [text]
                after_dot = False
            elif kind == tokenize.OP and text == "." and current:
                after_dot = True
            else:
                _flush(current, paths)
                current, after_dot = [], False
            previous = token
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # an unterminated string or bracket: what came before it counts
    _flush(current, paths)
    return paths


def _follows_value(previous: Any) -> bool:
    """A name right after ``)``/``]``/a string and a dot (``f(x).attr``) is an attribute of something the
    facts cannot name without running code."""
    return previous is not None and previous.type == tokenize.OP and previous.string == "."


def _flush(current: list[str], paths: list[str]) -> None:
    if current:
        paths.append(".".join(current))


def suggestion_facts(
    namespace: Mapping[str, Any],
    history: Sequence[HistoryEntry],
    config: Config,
    before: str,
    after: str = "",
) -> dict[str, list[str]]:
    """``{"facts": [...], "inputs": [...]}`` for a suggestion at the cursor between ``before`` and
    ``after``: plain JSON, so a kernel's helper can send it as it is. Never raises."""
    from ..capabilities.redact import masker_for  # the capabilities: with the first suggestion
    from ..capabilities.variable_lines import line_here as one_line

    masker = masker_for(config)
    facts: list[str] = []
    used = 0
    for path in code_paths(before, after):
        if len(facts) >= MAX_FACTS or used >= FACTS_CHARS:
            break
        for line in _fact(namespace, path, config.privacy, masker, one_line):
            if line in facts or len(facts) >= MAX_FACTS or used >= FACTS_CHARS:
                continue
            line = line if used + len(line) <= FACTS_CHARS else line[: max(0, FACTS_CHARS - used - 1)] + "…"
            facts.append(line)
            used += len(line)
    inputs = [_input(entry.source, masker) for entry in list(history)[-MAX_INPUTS:]]
    return {"facts": facts, "inputs": [text for text in inputs if text]}


def _fact(namespace: Mapping[str, Any], path: str, privacy: str, masker: Masker, one_line: Any) -> list[str]:
    """The lines for one path: its root's (the frame whose columns matter after ``df.groupby(``) and the
    longest part of the path that resolves without running code (the method whose signature matters)."""
    parts = path.split(".")
    if parts[0] not in namespace:
        return []  # builtins and names not defined yet say nothing a model does not know
    if any(masker.is_secret_name(part) for part in parts):
        return [f"{path}: <redacted: secret-looking name>"]
    lines = []
    for end in range(len(parts), 0, -1):
        name = ".".join(parts[:end])
        try:
            value = _resolve(namespace, name)
        except Exception:  # Unresolvable: a property, a __getattr__, a missing name
            continue
        lines.append(_describe(namespace, name, value, privacy, masker, one_line))
        break
    if len(parts) > 1 and lines and not lines[0].startswith(parts[0] + ":"):
        lines.insert(0, _describe(namespace, parts[0], namespace[parts[0]], privacy, masker, one_line))
    return [line for line in lines if line]


def _resolve(namespace: Mapping[str, Any], path: str) -> Any:
    """The object a dotted ``path`` names, read by structure only (``structural.attribute``): a property,
    ``__getattr__`` or anything else that would run code leaves it unresolved."""
    from ..capabilities import structural  # with the first suggestion, as the rest of the capabilities

    first, *rest = path.split(".")
    if type(namespace) is not dict or first not in namespace:
        raise Unresolvable(first)
    obj = namespace[first]
    for name in rest:
        obj = structural.attribute(obj, name)
    return obj


def _describe(
    namespace: Mapping[str, Any], name: str, value: Any, privacy: str, masker: Masker, one_line: Any
) -> str:
    from ..capabilities.summary_here import callable_of_library, plain_function

    try:
        signed = callable_of_library(value) or plain_function(value)  # a signature that is structure
        if signed and privacy != "names":
            signature = _signature(value)
            kind = _callable_kind(name, value, namespace)
            text = f"{kind} {signature}" if signature else one_line(value, privacy, width=FACT_WIDTH)
        else:
            text = one_line(value, privacy, width=FACT_WIDTH)
    except Exception:
        return ""
    return masker.mask_text(f"{name}: {_cut(text)}")


def _callable_kind(name: str, value: Any, namespace: Mapping[str, Any]) -> str:
    """``method`` for a function reached through an instance (``df.merge``), else ``function``."""
    parent = name.rpartition(".")[0]
    if parent:
        try:
            owner = _resolve(namespace, parent)
        except Exception:
            owner = None
        if owner is not None and not issubclass(type(owner), (type, types.ModuleType)):
            return "method"
    if issubclass(type(value), (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return "function"
    return "callable"


def _signature(value: Any) -> str | None:
    """``name(params)`` without annotations (shorter, and the defaults are what completion needs); a
    ``__signature__`` may be user code, so it runs guarded like every other summary."""
    from ..capabilities.deadline import Overtime, guarded  # with the first suggestion

    def read() -> str:
        signature = inspect.signature(value)
        params = [p.replace(annotation=p.empty) for p in signature.parameters.values()]
        if params and params[0].name == "self":
            params = params[1:]
        text = str(signature.replace(parameters=params, return_annotation=signature.empty))
        return f"{getattr(value, '__name__', '') or type(value).__name__}{text}"

    try:
        return guarded(read)
    except (Exception, Overtime):
        return None


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= FACT_WIDTH else text[: FACT_WIDTH - 1] + "…"


def _input(source: str, masker: Masker) -> str:
    lines = source.strip("\n").splitlines()[:MAX_LINES]
    text = "\n".join(line.rstrip() for line in lines)
    if len(text) > INPUT_CHARS:
        text = text[: INPUT_CHARS - 1] + "…"
    return masker.mask_text(text)
