"""Which of many dicts a run changed, found without touching what they hold.

A preview must notice a proposal that replaces ``pd.DataFrame.__repr__`` or ``json.dumps``: a change to the
``__dict__`` of a class or a module, not to any name in the session. Comparing every such dict entry by entry
in the forked child after the run would take each value's reference count, a write, so a copy-on-write fault
per page of objects — about 4 ms for the few thousand attributes of numpy's and pandas' main classes. CPython
keeps a version tag in every dict (``ma_version_tag``, PEP 509, 3.6–3.13) that changes whenever the dict is
modified: reading it is a read of the dict object's own memory, no reference taken. So the tags are read in
the parent just before ``fork`` and again in the child after the run, and only a dict whose tag moved is
compared entry by entry against a copy made in the parent (kept between previews while the tag stays put).

Where the tag cannot be read — Python 3.14 dropped it, another interpreter, a debug build — ``TAGS`` is False
and every dict is compared; the result is the same, it only costs more.
"""

from __future__ import annotations

import operator
import sys
import types
from collections.abc import Callable
from typing import Any

from ..version_tag import offset as _tag_offset

TAGS = bool(_tag_offset())
_value = operator.attrgetter("value")
_COPIES_KEPT = 65_536  # dicts kept, with their copy, between previews

# id(dict) -> [the dict, a reader of its tag (a ctypes object made once), its tag when copied, the copy]:
# kept between previews, so a preview in a session that did not change any of them copies nothing
_known: dict[int, list[Any]] = {}
# the last list watched, with its tag reader, the tags when copied and the copies: the next preview of a
# session that changed nothing reads the tags in one pass and touches no entry (after ``fork`` each object
# touched is a copy-on-write fault)
_last: tuple[list[dict[str, Any]], Tags, list[Any], list[dict[str, Any]]] | None = None


def _entry(d: dict[str, Any]) -> list[Any]:
    found = _known.get(id(d))
    if found is not None and found[0] is d:
        return found
    if len(_known) > _COPIES_KEPT:
        _known.clear()
    reader = None
    if TAGS:
        import ctypes  # as above

        reader = ctypes.c_uint64.from_address(id(d) + _tag_offset())
    found = _known[id(d)] = [d, reader, None, None]
    return found


def tag(d: dict[str, Any]) -> int | None:
    """``d``'s version tag now (None where tags cannot be read): equal tags, the same contents."""
    return _entry(d)[1].value if TAGS else None


def reader(d: dict[str, Any]) -> Any:
    """An object whose ``value`` is ``d``'s version tag (None where tags cannot be read)."""
    return _entry(d)[1] if TAGS else None


class Tags:
    """The version tags of a list of dicts, read in one pass: with numpy loaded, one gather over a read-only
    view of this process's memory (thousands of dicts — every module and class loaded — in a fraction of a
    millisecond, no Python object touched, so no copy-on-write fault in the child); else one ctypes reader per
    dict. The dicts must stay alive while it is used (the watch holds them)."""

    def __init__(self, dicts: list[dict[str, Any]]) -> None:
        import ctypes  # with the first preview

        offset = _tag_offset()
        self.addresses = [id(d) + offset for d in dicts]
        self.gather: tuple[Any, Any, Any] | None = None
        np = sys.modules.get("numpy")
        if np is not None and self.addresses:
            base = min(self.addresses)
            count = (max(self.addresses) - base) // 8 + 1
            interface = {"data": (base, True), "shape": (count,), "typestr": "<u8", "version": 3}
            memory = np.asarray(types.SimpleNamespace(__array_interface__=interface))
            index = np.fromiter(((a - base) // 8 for a in self.addresses), dtype=np.intp, count=len(dicts))
            order = np.argsort(index)  # read in address order: after ``fork`` each page is a page walk
            self.gather = (memory, index[order], order)
            self.readers: list[Any] = []
        else:
            self.readers = [_entry(d)[1] for d in dicts]
        self.first = ctypes.c_uint64.from_address(self.addresses[0]) if self.addresses else None

    def read(self) -> Any:
        """The tags now: an array (with numpy) or a list, index for index with the dicts."""
        if self.gather is not None:
            memory, index, order = self.gather
            tags = sys.modules["numpy"].empty(len(index), dtype=memory.dtype)
            tags[order] = memory[index]
            return tags
        return list(map(_value, self.readers))

    def differ(self, a: Any, b: Any) -> list[int]:
        """The indices where two reads differ."""
        if self.gather is not None:
            return sys.modules["numpy"].flatnonzero(a != b).tolist()
        return [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]


GONE = object()  # ``restore``: the key was not there before the run


class Watched:
    """A list of dicts as they are now (in the parent, before ``fork``); in the child, after the run,
    ``moved`` says which of them it modified, ``diff`` how, and ``restore`` puts them back."""

    def __init__(self, dicts: list[dict[str, Any]]) -> None:
        global _last
        self.dicts = dicts
        self.copies: list[dict[str, Any]] | _Copies
        if not TAGS:  # every dict is compared: a copy of each, made again when the preview starts (``start``)
            self.tags, self.copies, self.reader = [None] * len(dicts), [_copy(d) for d in dicts], None
            return
        last = _last
        if last is not None and last[0] is dicts:  # the same plan as the last preview: the same dicts
            tags, copies = last[1], last[3]
            now = tags.read()
            stale = tags.differ(now, last[2])
        else:  # another plan: most of its dicts were copied for an earlier one (``_known``)
            tags = Tags(dicts)
            now = tags.read()
            entries = [_entry(d) for d in dicts]
            copies = [e[3] for e in entries]
            stale = [i for i, e in enumerate(entries) if e[3] is None or e[2] != now[i]]
        for i in stale:
            entry = _entry(dicts[i])
            entry[2], entry[3] = now[i], dicts[i].copy()
            copies[i] = entry[3]
        self.reader, self.tags, self.copies = tags, now, copies
        _last = (dicts, tags, now, copies)

    def start(self, fresh: list[int] | None = None, keep: frozenset[int] = frozenset()) -> None:
        """In the child, just before the run: the tags to compare with, and a new copy of each dict that
        changed since its copy was made (``fork``'s own handlers rebind a few module globals, such as
        ``threading``'s locks; the child's own setup sets a few of pyaichat's): that is not the run's doing.
        ``keep``: dicts whose copy stays as it was although they changed (the watch's own wrappers, which
        ``diff`` is not asked about; a copy of ``os``'s dict would fault on every page its functions sit
        on). Without tags, the dicts ``fresh`` lists are copied again (the others are compared with the
        copies made before ``fork``)."""
        if self.reader is not None:
            now = self.reader.read()
            changed = [i for i in self.reader.differ(now, self.tags) if i not in keep]
            self.tags = now
        else:
            changed = fresh or []
        if changed:  # a new list: iterating the old one would fault on a page per copy
            self.copies = _Copies(self.copies, {i: self.dicts[i].copy() for i in changed})

    def first_moved(self) -> bool:
        """Whether the first dict's tag (builtins') moved since ``start`` (always True without tags), read
        with a ctypes reader: it looks up no built-in, and runs before the built-ins the code may have
        replaced are put back."""
        first = self.reader.first if self.reader is not None else None
        return first is None or first.value != self.tags[0]

    def all_moved(self) -> list[int]:
        """The indices of the dicts whose tag moved (all of them without tags)."""
        if self.reader is None:
            return list(range(len(self.dicts)))
        return self.reader.differ(self.reader.read(), self.tags)

    def diff(self, i: int) -> tuple[list[str], list[str], list[str]]:
        """(replaced, added, removed) keys of dict ``i``: an entry is replaced when it holds another object.
        Looks up no built-in (see ``moved``)."""
        before, now = self.copies[i], self.dicts[i]
        replaced = [k for k, v in before.items() if k in now and now[k] is not v]
        removed = [k for k in before if k not in now]
        added = [k for k in now if k not in before]
        return replaced, added, removed

    def restore(self, i: int, keys: list[str], setter: Callable[[str, Any], None] | None = None) -> None:
        """Put back what ``keys`` of dict ``i`` held before the run (a key it did not hold is removed);
        ``setter(key, value)`` for a class's dict, which only ``type.__setattr__`` may write (``value`` is
        ``GONE`` to delete). Looks up no built-in (see ``moved``)."""
        before, now = self.copies[i], self.dicts[i]
        for key in keys:
            value = before.get(key, GONE)
            if setter is not None:
                setter(key, value)
            elif value is GONE:
                now.pop(key, None)
            else:
                now[key] = value


def _copy(d: dict[str, Any]) -> dict[str, Any]:
    return d.copy()


class _Copies:
    """The parent's list of copies with a few replaced (in the child, at ``start``), read by index."""

    def __init__(self, base: Any, replaced: dict[int, dict[str, Any]]) -> None:
        self.base, self.replaced = base, replaced

    def __getitem__(self, i: int) -> dict[str, Any]:
        found = self.replaced.get(i)
        return found if found is not None else self.base[i]
