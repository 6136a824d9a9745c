"""Undo for approved code: what it created, rebound or deleted goes back; what it changed in place cannot.

Plain functions over a namespace ``dict``, so the local REPL, IPython and the kernel helper use them alike::

    cp = checkpoint(namespace, code)   # before the approved code runs: cheap
    ... run the code ...
    changes = finish(namespace, cp)    # after: what it did (changes.text() for the user)
    result = undo(namespace, cp)       # /undo: restores the names, or refuses and changes nothing

The checkpoint is a shallow copy of the bindings (name → object: the old objects are kept, not copied) and a
fingerprint (``fingerprint.py``) of every existing object the code could reach by name: the names it
mentions, and, followed through, the globals used by the functions and classes of the session it mentions.
After the run the same objects are fingerprinted again; a difference is an in-place change, which undo
refuses to pretend it can take back. Names bound again by the user after the proposal ran are not
clobbered either: undo refuses and says which.
"""

from __future__ import annotations

import ast
import re
import types
from dataclasses import dataclass, field
from typing import Any

from ..capabilities import layout
from .fingerprint import Context, fingerprint

MAX_WATCHED = 500  # names followed through functions and classes
_BOOKKEEPING = re.compile(r"^(_{1,3}|_i{1,3}|_i\d+|_\d+|_oh|_ih|_dh|In|Out|__\w+__)$")


def tracked(name: Any) -> bool:
    """A user binding (not ``_``/``__``/IPython's ``_i3``/``Out`` bookkeeping nor a dunder)."""
    return isinstance(name, str) and not _BOOKKEEPING.match(name)


@dataclass
class Changes:
    """What approved code did to the namespace's names. ``unchecked``: names whose objects were too large
    or opaque to fingerprint, so an in-place change there could not be ruled out."""

    created: list[str] = field(default_factory=list)
    rebound: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    in_place: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)

    @property
    def touched(self) -> list[str]:
        return self.created + self.rebound + self.deleted

    def text(self) -> str:
        parts = []
        for label, names in (
            ("created", self.created),
            ("rebound", self.rebound),
            ("deleted", self.deleted),
            ("changed in place", self.in_place),
        ):
            if names:
                parts.append(f"{label} {', '.join(names)}")
        text = ("; ".join(parts) + ".") if parts else "No names changed."
        if self.unchecked:
            text += f" Not checked for in-place changes (too large or opaque): {', '.join(self.unchecked)}."
        return text[:1].upper() + text[1:]


@dataclass
class Checkpoint:
    """The namespace's bindings before approved code ran, and fingerprints of what it could reach."""

    code: str
    bindings: dict[str, Any]
    watched: dict[str, tuple[Any, Any]]  # name → (object, fingerprint before)
    unchecked_before: set[str] = field(default_factory=set)
    keep: list[Any] = field(default_factory=list, repr=False)
    changes: Changes | None = None
    after: dict[str, Any] = field(default_factory=dict)  # the touched names' bindings right after the run
    undone: bool = False


@dataclass
class UndoResult:
    ok: bool
    text: str
    restored: list[str] = field(default_factory=list)


def checkpoint(namespace: dict[str, Any], code: str) -> Checkpoint:
    """Take the checkpoint before ``code`` runs (reads the namespace, changes nothing)."""
    bindings = {name: value for name, value in namespace.items() if tracked(name)}
    watched: dict[str, tuple[Any, Any]] = {}
    unchecked: set[str] = set()
    # one budget for the whole pass (finish() walks the same objects in the same order); the namespace itself
    # is compared name by name, not as the state of an object that holds it (the shell's ``exit``)
    ctx = Context(namespaces=layout.namespace_ids(namespace))
    for name in sorted(reachable_names(code, namespace)):
        if name not in bindings:
            continue
        ctx.unchecked = False
        fp = fingerprint(bindings[name], ctx)
        if fp is None:
            continue  # immutable: cannot change in place
        watched[name] = (bindings[name], fp)
        if ctx.unchecked:
            unchecked.add(name)
    return Checkpoint(
        code=code, bindings=bindings, watched=watched, unchecked_before=unchecked, keep=ctx.keep
    )


def finish(namespace: dict[str, Any], cp: Checkpoint) -> Changes:
    """After the code ran: what it created, rebound, deleted and changed in place (kept in ``cp``)."""
    before = cp.bindings
    now = {name: value for name, value in namespace.items() if tracked(name)}
    changes = Changes(
        created=[n for n in now if n not in before],
        rebound=[n for n in before if n in now and now[n] is not before[n]],
        deleted=[n for n in before if n not in now],
    )
    unchecked = set(cp.unchecked_before)
    ctx = Context(namespaces=layout.namespace_ids(namespace))
    for name, (obj, fp_before) in cp.watched.items():
        ctx.unchecked = False
        if fingerprint(obj, ctx) != fp_before:  # any difference is a change, even in a partial fingerprint
            changes.in_place.append(name)
        elif ctx.unchecked:
            unchecked.add(name)
    changes.unchecked = sorted(unchecked - set(changes.in_place))
    cp.changes = changes
    cp.after = {n: now[n] for n in changes.created + changes.rebound}
    # keep only what undo may restore: the rest of the old bindings is released now
    cp.bindings = {n: before[n] for n in changes.rebound + changes.deleted}
    cp.watched, cp.keep = {}, []
    return changes


def undo(namespace: dict[str, Any], cp: Checkpoint) -> UndoResult:
    """Put back the names the code created, rebound or deleted; refuse (and change nothing) when it changed
    an object in place, or when one of those names was bound again since."""
    if cp.undone:
        return UndoResult(False, "The last proposal was already undone.")
    changes = cp.changes if cp.changes is not None else finish(namespace, cp)
    if changes.in_place:
        return UndoResult(
            False,
            f"Cannot undo: the proposal changed {_names(changes.in_place)} in place, which cannot be taken "
            "back; nothing was changed.",
        )
    if not changes.touched:
        return UndoResult(False, "The last proposal created, rebound or deleted no names: nothing to undo.")
    moved = [
        n
        for n in changes.touched
        if (n in namespace) != (n in cp.after) or (n in namespace and namespace[n] is not cp.after[n])
    ]
    if moved:
        return UndoResult(
            False,
            f"Cannot undo: {_names(moved)} changed again after the proposal ran; undoing would lose that, "
            "so nothing was changed.",
        )
    for name in changes.created:
        del namespace[name]
    for name in changes.rebound + changes.deleted:
        namespace[name] = cp.bindings[name]
    cp.undone = True
    cp.bindings, cp.after = {}, {}
    parts = []
    if changes.rebound:
        parts.append(f"restored {', '.join(changes.rebound)}")
    if changes.deleted:
        parts.append(f"brought back {', '.join(changes.deleted)}")
    if changes.created:
        parts.append(f"removed {', '.join(changes.created)}")
    text = "Undone: " + "; ".join(parts) + "."
    if changes.unchecked:
        text += f" ({_names(changes.unchecked)} could not be checked for in-place changes.)"
    return UndoResult(True, text, changes.rebound + changes.deleted + changes.created)


def _names(names: list[str]) -> str:
    return ", ".join(names) if len(names) < 2 else ", ".join(names[:-1]) + " and " + names[-1]


# -- what the code could reach ------------------------------------------------------------------------------
def reachable_names(code: str, namespace: dict[str, Any]) -> set[str]:
    """Names ``code`` mentions, plus the globals used by the session's own functions and classes it mentions
    (followed transitively, at most ``MAX_WATCHED``). Unparsable code reaches nothing (it will not run)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    queue = list(names)
    while queue and len(names) < MAX_WATCHED:
        value = namespace.get(queue.pop())
        for code_obj in _own_code(value, namespace):
            for name in _code_names(code_obj):
                if name not in names and name in namespace:
                    names.add(name)
                    queue.append(name)
    return names


def _own_code(value: Any, namespace: dict[str, Any]) -> list[types.CodeType]:
    """Code objects of the session's own functions: a function, a method, a class or an instance of one."""
    if type(value) is types.MethodType:
        value = value.__func__
    if type(value) is types.FunctionType:
        return [value.__code__] if value.__globals__ is namespace else []
    cls = value if issubclass(type(value), type) else type(value)
    if cls.__dict__.get("__module__") != namespace.get("__name__") or issubclass(
        type(value), types.ModuleType
    ):
        return []
    found = []
    for attr in vars(cls).values():
        kind = type(attr)  # by type: no attribute of an arbitrary object is looked up (no user code)
        func = (
            attr.__func__ if kind in (staticmethod, classmethod) else attr.fget if kind is property else attr
        )
        if type(func) is types.FunctionType and func.__globals__ is namespace:
            found.append(func.__code__)
    return found


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names
