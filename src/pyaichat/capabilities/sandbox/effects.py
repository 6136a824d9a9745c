"""What a run did to a namespace: the names it created, rebound or deleted, and the objects it changed in
place — each with a one-line, value-free description before and after (type, shape, dtypes, size).

Around the proposed code (``preview``): ``Snapshot`` is taken just before ``fork`` — for every name, the
object itself (kept alive, so its identity and its memory stay its own), its ``Form`` and the address ranges
of its data buffers (``forms``) — and ``Snapshot.effects`` compares in the child, after the run:

* identity: a name bound to another object was rebound; names that appear or vanish were created or deleted;
* structure, compared as a cheap fingerprint (``Form.inner``) made of lengths, shapes, dtypes, column names,
  and the identities of elements, attribute values, index and block arrays — a list that grew, a frame that
  lost a column, an attribute rebound, a dict entry replaced, nested up to ``forms.MAX_DEPTH`` levels;
* data: the pages of every buffer (numpy arrays, the blocks of a pandas frame, a ``bytearray``, a tensor) the
  child wrote, read back from the copy-on-write faults in ``/proc/self/pagemap`` (``pages``) — no hashing of
  gigabytes; the few bytes that share a page with other memory (the edges of a buffer, small buffers) are
  hashed before and after.

The bounds (names, items, depth, buffers) keep a snapshot of a session with 10,000 variables to a few tens of
milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import layout
from .forms import IMMUTABLE, Buffer, Form, Former, digest, size_text
from .pages import PAGE, Pages

MAX_NAMES = 20_000
# The REPL's own names: ``_`` and friends change with every echoed value, the rest is the module's plumbing.
SKIPPED = frozenset({"_", "__", "___", "__builtins__", "__name__", "__doc__", "__package__", "__loader__",
                     "__spec__", "__annotations__", "__file__", "__cached__",
                     "__warningregistry__"})  # fmt: skip


@dataclass
class _Look:
    obj: Any
    form: Form | None  # None: an immutable object, described only if it is reported
    buffers: list[Buffer]


@dataclass
class Effect:
    """One change a run made: ``change`` is ``created``, ``rebound``, ``deleted`` or ``changed`` (in place:
    it cannot be undone by rebinding the name)."""

    name: str
    change: str
    before: str | None
    after: str | None
    detail: str = ""


class Snapshot:
    """The namespace just before the run (see the module's docstring): taken in the parent, where every object
    is warm, just before ``fork`` — in a fresh child each object first touched costs a copy-on-write fault —
    and compared in the child after the run."""

    def __init__(self, namespace: Mapping[str, Any]) -> None:
        self.former = Former(layout.namespace_ids(namespace))
        self.pinned: list[Any] = []
        self.looks: dict[str, _Look] = {}
        for name in list(namespace)[:MAX_NAMES]:
            if name in SKIPPED:
                continue
            obj = namespace[name]
            if issubclass(type(obj), IMMUTABLE):  # most of a large namespace: nothing to compare but identity
                self.looks[name] = _Look(obj, None, [])
                continue
            form, buffers = self.former.look(obj, self.pinned)
            self.looks[name] = _Look(obj, form, buffers)

    def effects(
        self,
        namespace: Mapping[str, Any],
        pages: Pages,
        sealed: list[tuple[int, int]] = (),  # type: ignore[assignment]  # an empty tuple default, never mutated
        files: list[tuple[int, int, str]] = (),  # type: ignore[assignment]  # an empty tuple default, never mutated
    ) -> list[Effect]:
        """In the child, after the run. ``pages``: its pagemap; ``sealed``: memory it must not read (shared
        memory it could not keep); ``files``: memory that is a file's (a real run's writes reach the file)."""
        found: list[Effect] = []
        for name, look in self.looks.items():
            before = look.form or self._form(look.obj)
            if name not in namespace:
                found.append(Effect(name, "deleted", before.line(), None))
                continue
            obj = namespace[name]
            if obj is not look.obj:
                found.append(Effect(name, "rebound", before.line(), self._form(obj).line()))
                continue
            changed = self._changed(look, pages, sealed, files) if look.form is not None else None
            if changed is not None:
                found.append(Effect(name, "changed", before.line(), self._form(obj).line(), changed))
        for name in list(namespace)[:MAX_NAMES]:
            if name not in self.looks and name not in SKIPPED:
                found.append(Effect(name, "created", None, self._form(namespace[name]).line()))
        order = {"changed": 0, "rebound": 1, "deleted": 2, "created": 3}
        return sorted(found, key=lambda e: (order[e.change], e.name))

    def _form(self, obj: Any) -> Form:
        return self.former.look(obj, [], buffers=False)[0]

    def _changed(
        self, look: _Look, pages: Pages, sealed: list[tuple[int, int]], files: list[tuple[int, int, str]]
    ) -> str | None:
        """How ``look``'s object changed in place, or None. Buffers are read only when the structure is the
        same (the same arrays, at the same addresses): a buffer the code replaced may be gone."""
        if self._form(look.obj).inner != look.form.inner:  # type: ignore[union-attr]  # a look with a form always has an object form
            return "changed in place"
        written = 0
        touched: list[Buffer] = []
        for buf in look.buffers:
            if any(buf.start < hi and lo < buf.end for lo, hi in sealed):
                continue
            count = pages.written(buf.start, buf.end)
            if count or any(digest(lo, hi) != known for lo, hi, known in buf.edges):
                written += count
                touched.append(buf)
        if not touched:
            return None
        detail = "data written in place" + (f" (about {size_text(written * PAGE)})" if written else "")
        paths = sorted({path for buf in touched for lo, hi, path in files if buf.start < hi and lo < buf.end})
        if paths:
            detail += f"; the memory is the file {', '.join(paths)}: running the code writes the file"
        return detail
