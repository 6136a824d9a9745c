"""The preview's watch on what lies outside the session's names (``unseen``): made in the parent just before
``fork`` (``Watch(namespace)``), armed in the child just before the proposed code runs (``arm``), read right
after it (``collect``).

* Attributes replaced, added or deleted — on the session's modules (``pd``), its classes (``Account``), the
  classes of its values and their bases (``DataFrame``, ``NDFrame``), the classes its modules export
  (``pd.Series``), the standard library and pyaichat's own preview modules: ``dictwatch`` finds the dicts the
  run modified without reading the others. Replacing a function, class or module of the standard library
  (``json.dumps``, a built-in, ``os.fork``, an entry of ``sys.modules``) or of the preview, or setting a
  trace function, is tampering: ``collect`` puts all of it back *first*, so the report that follows — the
  effects, the result sent through the pipe — runs on Python's own functions, and says what was tampered with.
* What pyaichat's own modules hold in place — a list, dict, set or bytearray, one or two steps down
  (``redact._PATTERNS``, a masker's lists): ``watchheld``; any change is tampering, put back first.
  A module put in ``sys.modules`` without being imported (it shadows a later import) is tampering too.
* Environment variables set or removed, files written, the network reached, processes started: Python's
  audit hooks (PEP 578) see each attempt where the code makes it, whether the wall then refused it and
  whether the code caught the refusal or not. A hook cannot be removed; this process ends after the preview.
* Environment variables read: the child runs without the session's environment (``isolation`` drops it, so
  no secret is in it); ``os.environ`` answers from a store that notes each of the session's names the
  proposed code asks for and does not get.
* The process's working directory, its ``atexit`` functions (but those a library registers as the code
  imports it) and its signal handlers: compared with what they were before the run.
* Threads (and timers) still running after the run, tasks and callbacks queued on the running asyncio loop:
  compared with what was there before.

One module of ~460 lines on purpose: each watched thing is armed and collected as a pair around the same
fork, sharing the plan made before it (``_Plan``) and the one audit hook; split, a pair's two halves would sit
in different files.
"""

from __future__ import annotations

import builtins
import os
import sys
import threading
import types
from typing import Any

from . import dictwatch, interpreter, watchheld
from .unseen import (
    ADDED,
    AT_EXIT,
    CALLBACKS,
    CWD,
    DELETED,
    ENV_READ,
    ENV_REMOVED,
    ENV_SET,
    NETWORK,
    PROCESSES,
    REPLACED,
    SIGNALS,
    TAMPERED,
    TAMPERED_OURS,
    TASKS,
    THREADS,
    WRITES,
    Unseen,
)
from .watchlist import PYTHONS_OWN, Target, class_setter, dict_of, is_machinery, plumbing, targets

MAX_EVENTS = 4000  # audit events kept from one run
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
# audit event -> the positions of its arguments that are paths the code writes
_PATH_EVENTS = {
    "os.mkdir": (0,), "os.rmdir": (0,), "os.remove": (0,), "os.truncate": (0,), "os.chmod": (0,),
    "os.chown": (0,), "os.utime": (0,), "os.mkfifo": (0,), "os.mknod": (0,), "os.setxattr": (0,),
    "os.removexattr": (0,), "os.chflags": (0,), "os.lchflags": (0,), "os.rename": (0, 1), "os.link": (1,),
    "os.symlink": (1,), "shutil.copyfile": (1,), "shutil.copymode": (1,), "shutil.copystat": (1,),
    "shutil.copytree": (1,), "shutil.rmtree": (0,), "shutil.move": (0, 1), "tempfile.mkstemp": (0,),
    "tempfile.mkdtemp": (0,),
}  # fmt: skip
_NET_EVENTS = frozenset(("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex",
                         "socket.gethostbyaddr", "socket.connect", "socket.sendto", "socket.sendmsg",
                         "socket.bind"))  # fmt: skip
_PROC_EVENTS = frozenset(("os.system", "subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn",
                          "os.exec", "os.spawn", "os.startfile", "pty.spawn"))  # fmt: skip
_EVENTS = frozenset(("open", "os.putenv", "os.unsetenv", "sys.addaudithook", "socket.__new__",
                     *_PATH_EVENTS, *_NET_EVENTS, *_PROC_EVENTS))  # fmt: skip
_ENVIRON_FILES = ("<frozen os>", "<frozen _collections_abc>")  # where ``os.environ``'s own code runs


class Watch:
    """See the module's docstring. Made in the parent, where every object is warm (``Snapshot``'s reason)."""

    def __init__(self, namespace: dict[str, Any], plan: _Plan | None = None) -> None:
        _warm()
        found, held = (plan, []) if plan is not None else _with_held(_plan(namespace), namespace)
        self.targets, self.dicts, self.setters, self.modules, self.ours, self.index = found
        # pyaichat's lists, sets and bytearrays, with a copy to put back (``watchheld``)
        self.held = [(label, c, watchheld.copy(c)) for label, c in held]
        self.module_names = _module_names()
        self.options = interpreter.Options()  # before the tags are read: it notes itself in its class
        self.importers = interpreter.copy_importers()  # here, where they are warm
        self.watched = dictwatch.Watched(self.dicts)
        self.sys_modules = dictwatch.reader(sys.modules)
        self.env_reads: list[Any] = []
        self.env_store = _EnvStore.of(_env_names(), self.env_reads)
        asyncio = sys.modules.get("asyncio")
        self.loop = asyncio._get_running_loop() if asyncio is not None else None  # a kernel runs cells in one
        self.log: list[Any] = []
        self.budget = [0]
        self.at_fork = interpreter.AtFork()
        self.calls = interpreter.Calls()
        self.wrappers: set[int] = set()  # the watch's own functions put in place of Python's (``_own``)
        self.recursion = interpreter.RecursionLimit()
        # taken now: the code may replace them, and the first thing ``collect`` does is put the limit back
        self.recursion_limit, self.set_recursion_limit = sys.getrecursionlimit, sys.setrecursionlimit

    @classmethod
    def idle(cls) -> Watch:
        """A watch that looks at nothing (what to watch could not be found): the preview runs without it."""
        return cls({}, plan=([], [], [], [], [], {}))

    # -- in the child, before the code --------------------------------------------------------------------
    def arm(self) -> None:
        self.library_exits = _count_library_exits()  # the watch's own wrappers: part of the baseline
        touched = self._own("register_at_fork", self.at_fork.wrapper(), "os", "posix")
        touched += self._own("setrecursionlimit", self.recursion.wrapper(), "sys")
        touched += self._own("register", self.library_exits[1], "atexit")
        for module_name, attr, kind, said in interpreter.CALLED:
            if attr in vars(sys.modules.get(module_name, os)):
                touched += self._own(attr, self.calls.wrapper(module_name, attr, kind, said), module_name)
        self.readline = "readline" in sys.modules
        wrapped = [self.index[name] for name in touched if name in self.index]
        self.watched.start(self.ours + wrapped, keep=frozenset(wrapped))
        self.sys_modules_tag = self.sys_modules.value if self.sys_modules is not None else None
        self.threads = {threading.get_ident()}  # the only one a forked child has
        self.thread_count = _thread_count()
        self.trace, self.profile = sys.gettrace(), sys.getprofile()
        self.held_prints = [watchheld.fingerprint(c) for _, c, _ in self.held]
        self.tasks, self.queued = _loop_state(self.loop)
        self.process = _process_state()
        self.state = interpreter.State.take(self.options, self.importers)
        self._env_store()
        self.budget[0] = MAX_EVENTS
        want, budget, log, writing = _EVENTS, self.budget, self.log.append, _WRITE_FLAGS

        def hook(event: str, args: tuple[Any, ...]) -> None:
            # Nothing here looks up a global or a built-in: the code may have replaced them.
            if event in want and budget[0] > 0:
                if event == "open":
                    try:
                        if not args[2] & writing:
                            return
                    except:  # noqa: E722 (``except Exception`` would look the name up in builtins)
                        return
                budget[0] -= 1
                log((event, args))

        sys.addaudithook(hook)

    def _own(self, name: str, value: Any, *modules: str) -> list[str]:
        """``module.name = value`` for the watch's own wrapper, before the run's baseline is taken (the
        wrapper is no doing of the code); the modules written."""
        touched = []
        for module_name in modules:
            module = sys.modules.get(module_name)
            if module is None or name not in vars(module):
                continue
            vars(module)[name] = value
            self.wrappers.add(id(value))
            touched.append(module_name)
        return touched

    def _env_store(self) -> None:
        """``os.environ`` (empty here) answers from a store that notes the session's names the code reads."""
        store = self.env_store
        if store is None or not isinstance(getattr(os.environ, "_data", None), dict):
            return
        store.update(os.environ._data)  # type: ignore[attr-defined]  # os.environ's private store, watched on purpose
        os.environ._data = store  # type: ignore[attr-defined]  # os.environ's private store, watched on purpose
        environb = getattr(os, "environb", None)
        if environb is not None:
            environb._data = store

    # -- in the child, after the code ---------------------------------------------------------------------
    def collect(self) -> Unseen:
        """What the run did beyond the session's names. First of all, whatever it replaced of Python's own
        and of the preview's is put back, so that the rest of the preview runs on them."""
        self.budget[0] = 0  # what runs from here is the preview's own
        self.state.recursion_now, self.state.recursion_asked = self.recursion_limit(), self.recursion.asked
        self.set_recursion_limit(self.state.recursion)  # first: the code may have left too little
        watched = self.watched
        builtins_diff = None
        if self.targets and watched.first_moved():  # builtins (the first target), looking up no built-in
            builtins_diff = watched.diff(0)
            watched.restore(0, builtins_diff[0] + builtins_diff[2])
        found = Unseen()
        self._put_back(found, builtins_diff)
        self._threads_and_tasks(found)
        self._process_changes(found)
        for kind, what in self.state.changes():
            found.add(kind, what)
        for name in self.at_fork.names:
            found.add(interpreter.AT_FORK, name)
        for kind, what in self.calls.found:
            found.add(kind, what)
        if not self.readline and "readline" in sys.modules:
            found.add(interpreter.LATER, "readline's hooks (it loads readline: they cannot be read back)")
        self._events(found)
        for key in self.env_reads:
            found.add(ENV_READ, _text(key))
        return found

    def _put_back(self, found: Unseen, builtins_diff: tuple[list[str], list[str], list[str]] | None) -> None:
        watched = self.watched
        moved = [i for i in watched.all_moved() if i] + ([0] if builtins_diff is not None else [])
        for i in moved:
            target = self.targets[i]
            replaced, added, removed = builtins_diff if i == 0 else watched.diff(i)  # type: ignore[misc]  # the first diff is the builtins', of the same shape
            if target.owner == "session":
                module = isinstance(target.obj, types.ModuleType)
                now = watched.dicts[i]
                added = [k for k in added if not (module and plumbing(target.obj, k, now.get(k)))]
                for kind, keys in ((REPLACED, replaced), (ADDED, added), (DELETED, removed)):
                    for key in keys:
                        found.add(kind, f"{target.label}.{key}")
                watched.restore(i, replaced + added + removed, self.setters[i])
                continue
            if target.owner == "held":  # a dict pyaichat holds: any change (``watchheld``)
                if not (replaced or added or removed):
                    continue  # compared without a version tag: the same
                now = watched.dicts[i]
                filled = {key: now[key] for key in added}
                watched.restore(i, replaced + added + removed)
                cached = _CACHES.get(target.label)
                if cached is not None and not replaced and not removed:  # the watch's own cache, filled
                    again = cached()
                    if all(again(key) is value for key, value in filled.items()):
                        continue
                found.add(TAMPERED_OURS, f"changes {target.label}")
                continue
            before, now = watched.copies[i], watched.dicts[i]
            if target.owner == "ours":  # pyaichat's own: any change (its masking, sandbox, preview)
                module = isinstance(target.obj, types.ModuleType)
                gone = [
                    k
                    for k in replaced + removed + added
                    if not (plumbing(target.obj, k, now.get(k)) if module else k in PYTHONS_OWN)
                ]
            else:  # Python's or a library's: a function, class or module replaced or removed
                gone = [
                    k
                    for k in replaced + removed
                    if is_machinery(before.get(k))
                    and f"{target.label}.{k}" not in interpreter.HOOKS_SEEN
                    and id(now.get(k)) not in self.wrappers
                ]
            for key in gone:
                verb = "replaces" if key in before and key in now else "removes" if key in before else "adds"
                name = f"the built-in {key}" if target.obj is builtins else f"{target.label}.{key}"
                if target.owner == "library":
                    found.add(REPLACED if verb == "replaces" else DELETED, name)
                else:
                    found.add(TAMPERED_OURS if target.owner == "ours" else TAMPERED, f"{verb} {name}")
            watched.restore(i, gone, self.setters[i])
            if target.obj is builtins:
                for key in added:
                    found.add(ADDED, f"builtins.{key}")
        for (label, container, copied), before in zip(self.held, self.held_prints, strict=True):
            if watchheld.fingerprint(container) != before:
                found.add(TAMPERED_OURS, f"changes {label}")
                watchheld.put_back(container, copied)
        if self.sys_modules is None or self.sys_modules.value != self.sys_modules_tag:
            for name in [k for k in list(sys.modules) if k not in self.module_names]:
                if not _imported(name, sys.modules[name]):  # a module put there, not imported: it shadows
                    found.add(TAMPERED, f"adds sys.modules[{name!r}]")
                    del sys.modules[name]
            for name, target in self.modules:
                if sys.modules.get(name) is not target.obj:
                    verb = "replaces" if name in sys.modules else "removes"
                    where = TAMPERED_OURS if target.owner == "ours" else TAMPERED
                    found.add(where, f"{verb} sys.modules[{name!r}]")
                    sys.modules[name] = target.obj
        if sys.gettrace() is not self.trace:
            sys.settrace(self.trace)
            found.add(TAMPERED, "sets a trace function (sys.settrace)")
        if sys.getprofile() is not self.profile:
            sys.setprofile(self.profile)
            found.add(TAMPERED, "sets a profile function (sys.setprofile)")

    def _process_changes(self, found: Unseen) -> None:
        cwd, exits, handlers = self.process
        now_cwd, now_exits, now_handlers = _process_state()
        if now_cwd != cwd and now_cwd is not None:
            found.add(CWD, now_cwd)
        found.count_only(AT_EXIT, now_exits - exits - self.library_exits[0])
        for number, handler in now_handlers.items():
            if handler != handlers.get(number):
                found.add(SIGNALS, _signal_name(number))

    def _threads_and_tasks(self, found: Unseen) -> None:
        started = [t for t in threading.enumerate() if t.ident not in self.threads and t.is_alive()]
        for thread in started:
            timer = isinstance(thread, threading.Timer)
            found.add(THREADS, f"{thread.name}, a timer" if timer else thread.name)
        found.count_only(THREADS, _thread_count() - self.thread_count - len(started))
        if self.loop is None:
            return
        loop = self.loop
        new = [t for t in _all_tasks(loop) if id(t) not in self.tasks]
        for task in new:
            found.add(TASKS, getattr(task.get_coro(), "__qualname__", None) or task.get_name())
        ready, scheduled = self.queued
        queued = len(getattr(loop, "_ready", ())) - ready - len(new)  # a new task's first step is queued
        found.count_only(CALLBACKS, queued + len(getattr(loop, "_scheduled", ())) - scheduled)

    def _events(self, found: Unseen) -> None:
        env: dict[str, str] = {}
        reached, tried = [], False
        for event, args in self.log:
            try:
                if event == "open":
                    _write(found, args[0])
                elif event in _PATH_EVENTS:
                    for i in _PATH_EVENTS[event]:
                        _write(found, args[i] if i < len(args) else None)
                elif event == "os.putenv":
                    env[_text(args[0])] = ENV_SET
                elif event == "os.unsetenv":
                    env[_text(args[0])] = ENV_REMOVED
                elif event == "socket.__new__":
                    tried = True
                elif event in _NET_EVENTS:
                    reached.append(_address(event, args))
                elif event in _PROC_EVENTS:
                    found.add(PROCESSES, _command(event, args))
                elif event == "sys.addaudithook":
                    found.add(TAMPERED, "adds an audit hook (sys.addaudithook)")
            except Exception:  # an argument of an odd type: that event says nothing more
                continue
        for where in reached:
            found.add(NETWORK, where)
        if tried and not reached:
            found.count_only(NETWORK, 1)
        for name, kind in env.items():
            found.add(kind, name)


# the targets, their dicts, how to write each, the ``sys.modules`` entries watched, the indices of pyaichat's
# own targets and of the modules the watch itself wraps a function of (``Watch.arm``)
_Plan = tuple[
    list[Target], list[dict[str, Any]], list[Any], list[tuple[str, Target]], list[int], dict[str, int]
]
_WRAPPED = ("os", "posix", "sys", "atexit", "codecs", "_codecs", "copyreg", "readline", "gc", "mimetypes",
            "random", "numpy.random")  # fmt: skip
_plans: list[tuple[tuple[int, int | None, int | None], _Plan]] = []  # the last one, by what it depends on


def _plan(namespace: dict[str, Any]) -> _Plan:
    """What to watch in this session: the targets (builtins first), their dicts, how to write a class's dict,
    and the ``sys.modules`` entries by the key they are found under (``_io`` calls itself "io"). Made again
    only when a name of the session or an entry of ``sys.modules`` changed (their dicts' version tags)."""
    key = (id(namespace), dictwatch.tag(namespace), dictwatch.tag(sys.modules))
    if _plans and key[1] is not None and _plans[0][0] == key:
        return _plans[0][1]
    found = targets(namespace)
    setters = [class_setter(t.obj) if isinstance(t.obj, type) else None for t in found]
    modules = [t for t in found if type(t.obj) is types.ModuleType]
    keys = [(t.label if t.owner != "session" else t.obj.__name__, t) for t in modules]
    wrapped = {id(sys.modules.get(name)): name for name in _WRAPPED}
    plan = (
        found,
        [dict_of(t.obj) for t in found],
        setters,
        [(k, t) for k, t in keys if sys.modules.get(k) is t.obj],
        [i for i, t in enumerate(found) if t.owner == "ours"],
        {wrapped[id(t.obj)]: i for i, t in enumerate(found) if id(t.obj) in wrapped},
    )
    _plans[:] = [(key, plan)]
    return plan


def _user_code() -> Any:
    from ..deadline import is_user_code  # loaded by the watch already

    return is_user_code


# pyaichat's caches the watch itself fills during the run (``is_user_code``, asked by its wrappers): an entry
# added is the watch's own when the function it caches gives that value again
_CACHES = {"pyaichat.capabilities.deadline._user_code": _user_code}
_plan_ids: list[Any] = []  # the last plan, pyaichat's modules in it and the ids of its dicts
_held_plans: list[Any] = []  # the last plan with pyaichat's dicts added: (what it depends on, the plan)


def _with_held(plan: _Plan, namespace: dict[str, Any]) -> tuple[_Plan, list[tuple[str, Any]]]:
    """``plan`` with the dicts pyaichat's modules hold added as targets of their own (``held``), and the
    other containers they hold. The same plan object while neither changed (``dictwatch.Watched`` then reads
    the tags in one pass). The session's own namespace is never one of them, wherever pyaichat holds it (a
    kernel helper's ``session.namespace``, IPython's ``user_ns``): its names are what the preview reports."""
    targets, dicts = plan[0], plan[1]
    if not _plan_ids or _plan_ids[0] is not plan:  # the plan's modules and dicts, once per plan
        ours = [(t.label, t.obj) for t in targets if t.owner == "ours" and type(t.obj) is types.ModuleType]
        _plan_ids[:] = [plan, ours, {id(d) for d in dicts}]
    found = watchheld.held(_plan_ids[1], _plan_ids[2], namespace)
    held = [(label, c) for label, c in found if isinstance(c, dict)]
    others = [(label, c) for label, c in found if not isinstance(c, dict)]
    key = (id(plan), tuple(id(c) for _, c in held))
    if _held_plans and _held_plans[0][0] == key and _held_plans[0][1] is plan:
        return _held_plans[0][2], others
    first = len(targets)
    extended = (
        targets + [Target(label, d, "held") for label, d in held],
        dicts + [d for _, d in held],
        plan[2] + [None] * len(held),
        plan[3],
        plan[4] + list(range(first, first + len(held))),
        plan[5],
    )
    _held_plans[:] = [(key, plan, extended)]
    return extended, others


_names_seen: list[Any] = [None, frozenset()]  # (sys.modules' tag, its keys)


def _module_names() -> frozenset[Any]:
    """The names in ``sys.modules`` before the run: a name the run adds without importing it shadows one."""
    tag = dictwatch.tag(sys.modules)
    if tag is None or tag != _names_seen[0]:
        _names_seen[:] = [tag, frozenset(sys.modules)]
    return _names_seen[1]


_SPEC = type(sys.__spec__)  # importlib's ModuleSpec


def _imported(name: str, module: Any) -> bool:
    """Whether ``module`` came through the import system as ``name`` (a spec of that name, with a loader)."""
    if type(module) is not types.ModuleType:
        return False
    spec = vars(module).get("__spec__")
    return type(spec) is _SPEC and spec.name == name and spec.loader is not None


def _warm() -> None:
    """What the child would otherwise do first, done here: the first call of ``is_user_code`` fills a cache of
    pyaichat's (a change to its module the run would be blamed for, and work in the child)."""
    from ..deadline import is_user_code  # deadline loads the workers: with the first preview

    is_user_code(__file__)


_env_seen: list[Any] = [None, frozenset()]  # (os.environ's store's tag, its names)


def _env_names() -> frozenset[Any]:
    """The names of the session's environment variables (never their values)."""
    data = getattr(os.environ, "_data", None)
    if not isinstance(data, dict):
        return frozenset()
    tag = dictwatch.tag(data)
    if tag is None or tag != _env_seen[0]:
        _env_seen[:] = [tag, frozenset(data)]
    return _env_seen[1]


class _EnvStore(dict[str, Any]):  # a dict of whatever os.environ stores
    """``os.environ``'s store in the child: empty (no secret in it), but it notes the session's variables the
    proposed code asks for, and removing one of them works as it would in the session."""

    __slots__ = ("gone", "names", "reads")
    names: frozenset[Any]
    reads: list[Any]
    gone: set[Any]

    @classmethod
    def of(cls, names: frozenset[Any], reads: list[Any]) -> _EnvStore:
        store = cls()
        store.names, store.reads, store.gone = names, reads, set()
        return store

    def __missing__(self, key: Any) -> Any:
        if key in self.names and key not in self.gone and key not in self.reads and _asked_by_user():
            self.reads.append(key)
        raise KeyError(key)

    def __delitem__(self, key: Any) -> None:
        if key not in self and key in self.names and key not in self.gone:
            self.gone.add(key)  # the session has it: the real run removes it without an error
            return
        dict.__delitem__(self, key)


def _asked_by_user() -> bool:
    """Whether the code asking ``os.environ`` is the session's or the proposal's own (not a library's: they
    read variables such as ``HOME`` on their own, and say nothing about the proposal)."""
    from ..deadline import is_user_code  # deadline loads the workers: only in the preview's child

    frame: types.FrameType | None = sys._getframe(2)
    for _ in range(8):
        if frame is None:
            return False
        name = frame.f_code.co_filename
        if name not in _ENVIRON_FILES and not name.endswith(("/os.py", "/_collections_abc.py")):
            return is_user_code(name)
        frame = frame.f_back
    return False


# -- reading the events ----------------------------------------------------------------------------------
def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return str(value)


def _write(found: Unseen, path: Any) -> None:
    if path is None or isinstance(path, int):
        return  # a descriptor: what it is was decided when it was opened
    text = os.path.abspath(_text(os.fspath(path)))
    if text != os.devnull:
        found.add(WRITES, text)


def _address(event: str, args: tuple[Any, ...]) -> str:
    if event == "socket.getaddrinfo":
        host, port = args[0], args[1]
        return _text(host) + (f":{_text(port)}" if port not in (None, 0, "") else "")
    if event.startswith("socket.gethostby"):
        return _text(args[0])
    address = args[1]  # connect, sendto, sendmsg, bind: (socket, address)
    return f"{address[0]}:{address[1]}" if isinstance(address, tuple) else _text(address)


def _command(event: str, args: tuple[Any, ...]) -> str:
    """The command a process would have run, short: ``ls -l``."""
    if event in ("os.fork", "os.forkpty"):
        return "a fork of the session"
    if event == "os.system":
        argv: Any = args[0]
    elif event == "subprocess.Popen":
        argv = args[1] if args[1] is not None else args[0]
    elif event in ("os.posix_spawn", "os.exec", "pty.spawn"):
        argv = args[1] if event != "pty.spawn" else args[0]
    else:  # os.spawn (mode, path, args, env), os.startfile (path, …)
        argv = args[2] if event == "os.spawn" else args[0]
    if isinstance(argv, (list, tuple)):
        argv = " ".join(_text(os.fspath(a) if isinstance(a, os.PathLike) else a) for a in argv)
    text = " ".join(_text(argv).split())
    return text if len(text) <= 60 else text[:57] + "…"


# -- the process's own state -------------------------------------------------------------------------------
def _process_state() -> tuple[str | None, int, dict[int, Any]]:
    """The working directory, how many ``atexit`` functions there are, and the Python-level signal handlers
    (tens of microseconds: ``_signal.getsignal`` reads the interpreter's table, no system call, and skips the
    enum conversion that makes ``signal.getsignal`` ten times slower)."""
    import _signal  # in the preview's child, before and after the run
    import atexit

    try:
        cwd: str | None = os.getcwd()
    except OSError:  # the directory is gone
        cwd = None
    count = getattr(atexit, "_ncallbacks", None)
    exits = int(count()) if count is not None else 0
    handlers = {}
    for number in _SIGNALS:
        try:
            handlers[number] = _signal.getsignal(number)
        except (ValueError, OSError):
            continue
    return cwd, exits, handlers


def _count_library_exits() -> list[Any]:
    """``atexit.register`` made to count the functions a library registers (``multiprocessing.util`` does
    as the code first imports it): those are no doing of the proposed code. The count is ``[n]``."""
    import atexit  # in the preview's child

    from ..deadline import is_user_code

    counted: list[Any] = [0]
    original = atexit.register

    def register(func: Any, *args: Any, **kwargs: Any) -> Any:
        if not is_user_code(sys._getframe(1).f_code.co_filename):
            counted[0] += 1
        return original(func, *args, **kwargs)

    counted.append(register)  # installed by ``Watch.arm`` (this process ends after the preview)
    return counted


def _signal_name(number: int) -> str:
    import signal  # only to name a handler the code set

    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _signal_numbers() -> tuple[int, ...]:
    import signal  # in the preview's child

    return tuple(int(s) for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP))


_SIGNALS = _signal_numbers()


# -- threads and the event loop --------------------------------------------------------------------------
def _thread_count() -> int:
    import _thread  # in the preview's child

    count = getattr(_thread, "_count", None)
    return int(count()) if count is not None else 0


def _loop_state(loop: Any) -> tuple[set[int], tuple[int, int]]:
    """``loop`` (the asyncio loop the session's code runs in, or None) made this thread's running loop again —
    asyncio forgets it in a forked process, where code that schedules a task would fail instead — with its
    tasks and queues as they are."""
    if loop is None:
        return set(), (0, 0)
    sys.modules["asyncio"]._set_running_loop(loop)
    tasks = {id(t) for t in _all_tasks(loop)}
    return tasks, (len(getattr(loop, "_ready", ())), len(getattr(loop, "_scheduled", ())))


def _all_tasks(loop: Any) -> list[Any]:
    asyncio = sys.modules["asyncio"]
    try:
        return list(asyncio.all_tasks(loop))
    except RuntimeError:  # the set changed while being read
        return []
