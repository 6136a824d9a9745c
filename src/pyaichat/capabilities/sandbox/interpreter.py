"""Interpreter state a proposal sets by calling a function, for the preview's watch (``watch``): an alarm or
interval timer, the recursion limit, a function to run at every fork, the umask, resource limits, the hooks
every later error or echoed value goes through, logging handlers, warning filters, ``sys.path``, pandas
options; and, one line of ``PROBES`` each, the import machinery, the REPL's input and output, functions Python
calls later and process-wide settings (the locale, the decimal context …). None of it is a name of the
session, and each changes what every later input does.

In the preview's child: ``State.take()`` just before the code runs, ``State.changes()`` right after, which
also puts back what the preview's own report needs (the recursion limit, resource limits, a timer that would
ring during the report). What can be read back is compared — so a call through a function the session bound
long ago (``from signal import alarm``) is seen too; ``os.register_at_fork``, which has nothing to read back,
is wrapped for the run (``AtFork``), as are the few others of the kind (``CALLED``).
"""

from __future__ import annotations

import operator
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import version_tag
from . import dictwatch

ALARMS, RECURSION, AT_FORK, UMASK = "alarms", "recursion", "at_fork", "umask"
SETTINGS, LATER = "settings", "later"  # process-wide settings; functions Python calls later (``PROBES``)
TAMPERED, TAMPERED_OURS = "tampered", "tampered_ours"  # phrases: "replaces json.dumps" (``unseen``)
LIMITS, HOOKS, LOGGING, WARNINGS, IMPORT_PATH, OPTIONS = (
    "limits",
    "hooks",
    "logging",
    "warning_filters",
    "import_path",
    "options",
)
KINDS = (ALARMS, RECURSION, AT_FORK, UMASK, LIMITS, HOOKS, LOGGING, WARNINGS, IMPORT_PATH, OPTIONS, SETTINGS,
         LATER)  # fmt: skip
_TIMERS = (("ITIMER_REAL", "SIGALRM"), ("ITIMER_VIRTUAL", "SIGVTALRM"), ("ITIMER_PROF", "SIGPROF"))
_LIMITS = ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_DATA", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_NPROC",
           "RLIMIT_STACK", "RLIMIT_CORE", "RLIMIT_MEMLOCK")  # fmt: skip
HOOK_NAMES = (("sys", "excepthook"), ("sys", "displayhook"), ("sys", "unraisablehook"),
              ("threading", "excepthook"))  # fmt: skip
HOOKS_SEEN = frozenset(f"{module}.{attr}" for module, attr in HOOK_NAMES)  # a line of their own


@dataclass
class State:
    """What the interpreter's state was when the code started (``take``)."""

    timers: dict[str, tuple[float, float]] = field(default_factory=dict)
    recursion: int = 0
    umask: int | None = None
    limits: dict[str, tuple[int, int]] = field(default_factory=dict)
    hooks: dict[str, Any] = field(default_factory=dict)
    handlers: dict[str, tuple[int, ...]] = field(default_factory=dict)
    filters: tuple[Any, ...] = ()
    path: tuple[str, ...] = ()
    options: Options | None = None
    recursion_now: int | None = None  # the limit the code left, read (and put back) first thing after it
    recursion_asked: int | None = None  # the limit it asked for (``RecursionLimit``), if lower
    probes: list[Any] = field(default_factory=list)  # ``PROBES`` read, index for index
    importers: tuple[list[Any], list[Any], dict[Any, Any]] = field(default_factory=lambda: ([], [], {}))
    cache_tag: int | None = None  # ``sys.path_importer_cache``'s version tag

    @classmethod
    def take(cls, options: Options | None = None, importers: Any = None) -> State:
        """``options``: pandas' options as the parent read them before ``fork`` (``Options``); ``importers``:
        ``sys.meta_path``, ``sys.path_hooks`` and ``sys.path_importer_cache`` copied there (``importers``)."""
        signal: Any = sys.modules.get("signal")
        timers = {}
        for name, _ in _TIMERS:
            which = getattr(signal, name, None)
            if which is not None:
                timers[name] = signal.getitimer(which)
        return cls(
            timers,
            sys.getrecursionlimit(),
            _umask(),
            _limits(),
            _hooks(),
            _handlers(),
            _filters(),
            tuple(map(str, sys.path)),
            options,
            probes=[_read(probe) for probe in PROBES],
            importers=importers if importers is not None else copy_importers(),
            cache_tag=version_tag.peek(sys.path_importer_cache),
        )

    def changes(self) -> list[tuple[str, str]]:
        """``(kind, what)`` for each change since ``take``; what the preview's report needs is put back."""
        out: list[tuple[str, str]] = []
        signal: Any = sys.modules.get("signal")
        for name, signal_name in _TIMERS:
            which = getattr(signal, name, None)
            if which is None:
                continue
            now = signal.getitimer(which)
            if now != self.timers.get(name) and now[0] > 0:
                every = f", then every {now[1]:g} s" if now[1] else ""
                out.append((ALARMS, f"{signal_name} in {now[0]:.0f} s{every}"))
                signal.setitimer(which, *self.timers.get(name, (0.0, 0.0)))  # not during the report
        limit = self.recursion_now if self.recursion_now is not None else sys.getrecursionlimit()
        limit = self.recursion_asked if self.recursion_asked is not None else limit
        if limit != self.recursion:
            out.append((RECURSION, str(limit)))
            sys.setrecursionlimit(self.recursion)
        umask = _umask()
        if umask is not None and umask != self.umask:
            out.append((UMASK, f"{umask:04o}"))
        resource: Any = sys.modules.get("resource")
        for name, now in _limits().items():
            if now != self.limits.get(name):
                out.append((LIMITS, f"{name} to {_limit(now[0])}"))
                try:
                    resource.setrlimit(getattr(resource, name), (min(self.limits[name][0], now[1]), now[1]))
                except (ValueError, OSError, KeyError):
                    pass
        for name, hook in _hooks().items():
            if hook is not self.hooks.get(name):
                out.append((HOOKS, name))
        for logger, handlers in _handlers().items():
            before = set(self.handlers.get(logger, ()))
            for handler in handlers:
                if handler not in before:
                    out.append((LOGGING, _handler_text(logger, handler)))
        filters = _filters()
        if filters != self.filters:
            added = [f for f in filters if f not in self.filters]
            out.append((WARNINGS, ", ".join(_filter_text(f) for f in added[:3]) or "filters removed"))
        path = tuple(map(str, sys.path))
        if path != self.path:
            added = [p for p in path if p not in self.path]
            out.append((IMPORT_PATH, ", ".join(added[:3]) or "reordered or shortened"))
        for key in self.options.changed() if self.options is not None else ():
            out.append((OPTIONS, key))
        for probe, before in zip(PROBES, self.probes, strict=True):
            kind, what, _, moved, baseline = probe
            now = _read(probe)
            if before is _UNLOADED and baseline is not None and now is not _UNLOADED:
                before = baseline()  # the module was loaded by the code: compared with what it starts with
            if before is not _UNLOADED and now is not _UNLOADED and moved(before, now):
                out.append((kind, what))
        meta_path, path_hooks, cache = self.importers  # put back: the report that follows imports
        now_cache, tag = sys.path_importer_cache, version_tag.peek(sys.path_importer_cache)
        changed = tag is None or tag != self.cache_tag
        if changed and any(now_cache.get(k, _UNLOADED) is not v for k, v in cache.items()):
            out.append((TAMPERED, "changes sys.path_importer_cache"))  # new entries are the import system's
        sys.meta_path[:], sys.path_hooks[:] = meta_path, path_hooks
        now_cache.clear()
        now_cache.update(cache)
        return out


_UNLOADED = object()  # a probe of a module that is not loaded


def _read(probe: Probe) -> Any:
    """A probe's value now: plain values only (ints, strings, tuples, bytes), so comparing runs no code of
    the session; an error reading it is a value too (``repr`` of its type)."""
    try:
        return probe[2]()
    except _Unloaded:
        return _UNLOADED
    except Exception as exc:
        return ("unreadable", type(exc).__name__)


class _Unloaded(Exception):
    pass


def _module(name: str) -> Any:
    module = sys.modules.get(name)
    if module is None:
        raise _Unloaded
    return module


def _ids(items: Any) -> tuple[int, ...]:
    """A container's contents by identity (no ``==`` of what it holds)."""
    return tuple(map(id, items))


def _pairs(d: dict[Any, Any]) -> frozenset[tuple[int, int]]:
    return frozenset((id(k), id(v)) for k, v in list(d.items()))


def _plain(value: Any) -> Any:
    """``value`` if it is a plain value, else its identity."""
    if type(value) in (int, float, str, bytes, bool, type(None)):
        return value
    if type(value) is tuple:
        return tuple(map(_plain, value))
    return ("object", id(value))


def _fd(fd: int) -> tuple[int, ...] | None:
    """What file descriptor ``fd`` is (None: closed): its file and its flags."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    import fcntl  # in the preview's child

    return (st.st_dev, st.st_ino, st.st_mode, st.st_rdev, fcntl.fcntl(fd, fcntl.F_GETFL))


def _stream(name: str) -> tuple[int, bool]:
    stream = getattr(sys, name, None)
    closed = getattr(stream, "closed", False)
    return id(stream), closed is True


def _locale() -> str:
    import _locale  # built in: no file is read

    return str(_locale.setlocale(_locale.LC_ALL))


def _decimal_context(context: Any = None) -> tuple[Any, ...]:
    decimal = _module("decimal")
    c = context if context is not None else decimal.getcontext()
    return (c.prec, c.rounding, c.Emin, c.Emax, c.capitals, c.clamp,
            tuple(sorted(k.__name__ for k, v in c.traps.items() if v)))  # fmt: skip


def _mimetypes() -> tuple[Any, ...]:
    mimetypes = _module("mimetypes")
    if not mimetypes.inited:
        raise _Unloaded  # its first use fills its tables (``add_type`` is wrapped: ``CALLED``)
    db = mimetypes._db
    maps = [*getattr(db, "types_map", ()), *getattr(db, "types_map_inv", ())]
    maps += [mimetypes.types_map, mimetypes.encodings_map, mimetypes.suffix_map]
    return (id(db), *(_contents(m) if type(m) is dict else id(m) for m in maps))


def _contents(d: dict[Any, Any]) -> Any:
    """A dict's contents: its version tag (a read of its own memory: mimetypes' tables hold thousands of
    entries, each a copy-on-write fault to touch in the child), else its entries by identity."""
    tag = version_tag.peek(d)
    return tag if tag is not None else _pairs(d)


def _differ(a: Any, b: Any) -> bool:
    return bool(a != b)


def _dropped(a: Any, b: Any) -> bool:
    """Entries there before that are gone or hold another object (new entries are the import system's)."""
    return not a <= b


def _added(a: Any, b: Any) -> bool:
    return not b <= a


# A probe: (kind, what it is called in the report, its reader, whether two reads differ, what a module the
# code loaded starts with — None: a module loaded by the code is not compared). Read in the child before and
# after the run (``State``); each is a line.
Probe = tuple[str, str, Callable[[], Any], Callable[[Any, Any], bool], Callable[[], Any] | None]
PROBES: tuple[Probe, ...] = (
    # the import machinery: every later import, pyaichat's own included, goes through it
    (TAMPERED, "changes sys.meta_path", lambda: _ids(sys.meta_path), _differ, None),
    (TAMPERED, "changes sys.path_hooks", lambda: _ids(sys.path_hooks), _differ, None),
    (TAMPERED, "sets a trace function for new threads (threading.settrace)",
     lambda: id(_module("threading")._trace_hook), _differ, None),
    (TAMPERED, "sets a profile function for new threads (threading.setprofile)",
     lambda: id(_module("threading")._profile_hook), _differ, None),
    # the REPL's input and output
    (TAMPERED_OURS, "replaces or closes sys.stdout", lambda: _stream("stdout"), _differ, None),
    (TAMPERED_OURS, "replaces or closes sys.stderr", lambda: _stream("stderr"), _differ, None),
    (TAMPERED_OURS, "replaces or closes sys.stdin", lambda: _stream("stdin"), _differ, None),
    (TAMPERED_OURS, "closes or redirects file descriptor 0 (input)", lambda: _fd(0), _differ, None),
    (TAMPERED_OURS, "closes or redirects file descriptor 1 (output)", lambda: _fd(1), _differ, None),
    (TAMPERED_OURS, "closes or redirects file descriptor 2 (errors)", lambda: _fd(2), _differ, None),
    (TAMPERED_OURS, "leaves the terminal's session (os.setsid)", lambda: os.getsid(0), _differ, None),
    # functions Python calls later
    (LATER, "gc.callbacks", lambda: _ids(_module("gc").callbacks), _differ, None),
    (LATER, "copyreg's pickling functions", lambda: _pairs(_module("copyreg").dispatch_table), _dropped,
     None),
    (LATER, "weakref.finalize", lambda: frozenset(_ids(_module("weakref").finalize._registry)), _added, None),
    # settings the rest of the session runs with
    (SETTINGS, "the locale", lambda: _locale(), _differ, None),
    (SETTINGS, "the decimal context", _decimal_context, _differ,
     lambda: _decimal_context(_module("decimal").DefaultContext)),
    (SETTINGS, "the default socket timeout", lambda: _module("_socket").getdefaulttimeout(), _differ,
     lambda: None),
    (SETTINGS, "the thread switch interval", sys.getswitchinterval, _differ, None),
    (SETTINGS, "the digit limit of int and str", lambda: sys.get_int_max_str_digits(), _differ, None),
    (SETTINGS, "the dlopen flags", lambda: sys.getdlopenflags(), _differ, None),
    (SETTINGS, "the garbage collector",
     lambda: (_module("gc").get_threshold(), _module("gc").get_freeze_count()),
     _differ, None),
    (SETTINGS, "numpy's error handling", lambda: tuple(sorted(_module("numpy").geterr().items())), _differ,
     lambda: (("divide", "warn"), ("invalid", "warn"), ("over", "warn"), ("under", "ignore"))),  # numpy's own
    (SETTINGS, "numpy's print options",
     lambda: tuple(sorted((k, _plain(v)) for k, v in _module("numpy").get_printoptions().items())), _differ,
     None),
    (SETTINGS, "mimetypes' types", _mimetypes, _differ, None),
    (SETTINGS, "logging.lastResort", lambda: id(_module("logging").lastResort), _differ, None),
    (SETTINGS, "the prompts (sys.ps1, sys.ps2)",
     lambda: (_plain(getattr(sys, "ps1", None)), _plain(getattr(sys, "ps2", None))), _differ, None),
    (SETTINGS, "tempfile.tempdir", lambda: _plain(_module("tempfile").tempdir), _differ, lambda: None),
)  # fmt: skip


def copy_importers() -> tuple[list[Any], list[Any], dict[Any, Any]]:
    """What the import machinery is now, to compare with and put back (``State``)."""
    return list(sys.meta_path), list(sys.path_hooks), dict(sys.path_importer_cache)


class Options:
    """pandas' options, read in the parent (where its objects are warm: in a fresh child each value touched
    takes a reference, a copy-on-write fault per page — about 16 ms for pandas' few hundred options), with the
    version tags of the dicts that hold them, so that after the run the child reads them again only where a
    tag moved (``pd.set_option`` writes into one of them). Read again in the parent only when a tag moved."""

    _last: Options | None = None

    def __init__(self) -> None:
        last = Options._last
        dicts = _option_dicts()
        self.tags = [dictwatch.tag(d) for d in dicts]
        self.dicts: list[dict[str, Any]]
        self.values: dict[str, Any]
        if (
            last is not None
            and len(last.dicts) == len(dicts)
            and all(map(operator.is_, last.dicts, dicts))
            and None not in self.tags
            and last.tags == self.tags
        ):
            self.dicts, self.values = last.dicts, last.values
        else:
            self.dicts, self.values = dicts, _options()
        Options._last = self

    def changed(self) -> list[str]:
        """The options whose value is not what it was (none when no tag moved)."""
        if None not in self.tags and [dictwatch.tag(d) for d in self.dicts] == self.tags:
            return []
        return [key for key, value in _options().items() if not _same(value, self.values.get(key, value))]


def _option_dicts() -> list[dict[str, Any]]:
    """The dicts that hold pandas' options: its ``_global_config`` and the dicts nested in it."""
    config = getattr(sys.modules.get("pandas._config.config"), "_global_config", None)
    found: list[dict[str, Any]] = []
    todo = [config] if type(config) is dict else []
    while todo and len(found) < 200:
        level = todo.pop()
        found.append(level)
        todo.extend(value for value in level.values() if type(value) is dict)
    return found


class RecursionLimit:
    """``sys.setrecursionlimit`` wrapped for the run: the preview runs the code deeper in the stack than the
    session runs an input (under the assistant's loop), so a limit the real run can set may be below the
    preview's depth and raise there. The limit asked for is noted (``asked``) and set, or, where it is below
    the depth the preview runs at, the lowest limit that depth allows."""

    def __init__(self) -> None:
        self.asked: int | None = None
        self.original = sys.setrecursionlimit

    def wrapper(self) -> Any:
        original, note = self.original, self

        def setrecursionlimit(limit: int) -> None:
            original(limit)  # the code's own errors (a limit below 1, not an int) as they would be
            note.asked = limit

        def lenient(limit: int) -> None:
            try:
                setrecursionlimit(limit)
            except RecursionError:  # too low for the preview's depth, not for the session's
                allowed = limit
                while True:
                    allowed += 10
                    try:
                        original(allowed)
                        break
                    except RecursionError:
                        continue
                note.asked = limit

        lenient.__name__ = lenient.__qualname__ = "setrecursionlimit"
        lenient.__doc__ = getattr(original, "__doc__", None)
        return lenient


class AtFork:
    """``os.register_at_fork`` wrapped for the run: each function registered is named (``names``)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.original = getattr(os, "register_at_fork", None)

    def wrapper(self) -> Any:
        original, names = self.original, self.names

        def register_at_fork(**kwargs: Any) -> None:
            for func in kwargs.values():
                try:
                    names.append(str(getattr(func, "__qualname__", None) or type(func).__name__)[:60])
                except Exception:
                    names.append("a function")
            return original(**kwargs)  # type: ignore[misc]  # os.register_at_fork is typed as returning nothing

        register_at_fork.__doc__ = getattr(original, "__doc__", None)
        return register_at_fork


def _dup2(args: tuple[Any, ...]) -> str | None:
    target = args[1] if len(args) > 1 else None
    return f"redirects file descriptor {target} (os.dup2)" if target in (0, 1, 2) else None


# functions with nothing to read back what they did (the preview's child has /dev/null on file descriptors 0
# to 2, so ``dup2(2, 1)`` changes nothing there): wrapped for the run, (module, name, kind, what a call did:
# a text, noted only when the session's or the proposal's code calls it — not a library as the code imports
# it — or a function of the call's arguments, None for a call that changes nothing of the kind)
Said = str | Callable[[tuple[Any, ...]], str | None]
CALLED: tuple[tuple[str, str, str, Said], ...] = (
    ("codecs", "register", LATER, "codecs.register"),
    ("_codecs", "register", LATER, "codecs.register"),
    ("copyreg", "pickle", LATER, "copyreg's pickling functions"),
    ("readline", "set_startup_hook", LATER, "readline.set_startup_hook"),
    ("readline", "set_pre_input_hook", LATER, "readline.set_pre_input_hook"),
    ("readline", "set_completer", LATER, "readline.set_completer"),
    ("readline", "set_completion_display_matches_hook", LATER, "readline's display hook"),
    ("gc", "disable", SETTINGS, "the garbage collector"),  # the preview's child runs with it off
    # the generators' state moves with every number drawn: only seeding it is a setting
    ("random", "seed", SETTINGS, "random's state"),
    ("random", "setstate", SETTINGS, "random's state"),
    ("numpy.random", "seed", SETTINGS, "numpy's random state"),
    ("numpy.random", "set_state", SETTINGS, "numpy's random state"),
    ("mimetypes", "add_type", SETTINGS, "mimetypes' types"),  # its first use fills its tables
    ("os", "dup2", TAMPERED_OURS, _dup2),
    ("posix", "dup2", TAMPERED_OURS, _dup2),
)


class Calls:
    """The functions of ``CALLED`` wrapped for the run: ``found`` holds (kind, what) for each call noted. A
    function the session bound long ago (``from codecs import register``) is not seen, as with ``AtFork``."""

    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []

    def wrapper(self, module: str, attr: str, kind: str, said: Said) -> Any:
        original, found = vars(sys.modules[module])[attr], self.found

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if not isinstance(said, str):
                what = said(args)
            else:
                from ..deadline import is_user_code  # loaded by the watch already

                what = said if is_user_code(sys._getframe(1).f_code.co_filename) else None
            if what is not None and (kind, what) not in found:
                found.append((kind, what))
            return original(*args, **kwargs)

        wrapped.__name__ = wrapped.__qualname__ = attr
        wrapped.__doc__ = getattr(original, "__doc__", None)
        return wrapped


def _umask() -> int | None:
    """The umask: set and put back at once (``/proc`` is behind the preview's wall)."""
    try:
        mask = os.umask(0o022)
        os.umask(mask)
    except OSError:
        return None
    return mask


def _limits() -> dict[str, tuple[int, int]]:
    resource: Any = sys.modules.get("resource")
    found = {}
    for name in _LIMITS:
        which = getattr(resource, name, None)
        if which is not None:
            try:
                found[name] = resource.getrlimit(which)
            except (ValueError, OSError):
                continue
    return found


def _limit(value: int) -> str:
    resource: Any = sys.modules.get("resource")
    return "unlimited" if value == getattr(resource, "RLIM_INFINITY", -1) else f"{value:,}"


def _hooks() -> dict[str, Any]:
    found = {}
    for module_name, attr in HOOK_NAMES:
        module = sys.modules.get(module_name)
        if module is not None and attr in vars(module):
            found[f"{module_name}.{attr}"] = vars(module)[attr]
    return found


def _handlers() -> dict[str, tuple[Any, ...]]:
    """Each logger's handlers (the root's as ``root``), for loggers that exist: a handler added to a logger
    that exists only after the code ran is found too (it is compared with none)."""
    logging = sys.modules.get("logging")
    if logging is None:
        return {}
    found = {"root": tuple(logging.root.handlers)}
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        handlers = getattr(logger, "handlers", None)
        if handlers:
            found[str(name)] = tuple(handlers)
    return found


def _handler_text(logger: str, handler: Any) -> str:
    where = getattr(handler, "baseFilename", None)
    what = type(handler).__name__ + (f" {where}" if where else "")
    return f"{what} on the {logger} logger" if logger != "root" else f"{what} on the root logger"


def _filters() -> tuple[Any, ...]:
    warnings = sys.modules.get("warnings")
    return tuple(getattr(warnings, "filters", ()))


def _filter_text(entry: Any) -> str:
    try:
        action, _, category, module, _ = entry
        what = getattr(category, "__name__", "warnings")
        return f"{action} {what}" + (f" from {module.pattern}" if module is not None else "")
    except (TypeError, ValueError, AttributeError):
        return "a filter"


def _options() -> dict[str, Any]:
    """pandas' options (``display.max_rows``), when pandas is loaded: read from its own dict of them."""
    config = getattr(sys.modules.get("pandas._config.config"), "_global_config", None)
    found: dict[str, Any] = {}
    todo = [("", config)] if type(config) is dict else []
    while todo and len(found) < 2000:
        prefix, level = todo.pop()
        for key, value in list(level.items()):
            if type(value) is dict:
                todo.append((f"{prefix}{key}.", value))
            else:
                found[f"{prefix}{key}"] = value
    return found


def _same(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are the same setting: the same object, or equal plain values (no other ``==`` runs)."""
    plain = (int, float, str, bool, type(None))
    return a is b or (type(a) in plain and type(a) is type(b) and a == b)
