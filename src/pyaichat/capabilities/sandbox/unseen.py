"""What a preview could not see, as data and as the lines that say so.

A preview compares the session's names before and after the proposed code ran on a walled copy. Some of what
code does lies outside that view, and a list of changes that looks complete while it is not is worse than no
list: environment variables it sets or removes (or reads, which the walled copy runs without), attributes it
replaces of the modules and classes loaded (the session's, a library's such as ``httpx``: every later use
changes), the process's working directory, exit functions and signal handlers, interpreter state set by a
call (a timer, the recursion limit, a function to run at every fork, the umask, resource limits, hooks,
logging handlers, warning filters, ``sys.path``, pandas options: ``interpreter``), threads, timers and
asyncio tasks that outlive the run (what they do later never happens in the preview), and what the walls
refused — files it tried to write, the network it tried to reach, processes it tried to start (the real run
goes on differently from there). Code that tampers with Python itself or with pyaichat's own machinery
(``json.dumps``, a built-in, ``sys.modules``, a trace function, pyaichat's masking or preview) gets one plain
sentence, and the preview is marked incomplete.

``watch.Watch`` finds them in the child; ``Unseen`` holds them (JSON-serialisable, like the rest of a
``Preview``, so a kernel's helper sends it over the wire) and says them: one short line per kind for the
person (``lines``), and the same lines for the agent that proposed the code (``told``) — with only the names
its own code spells out, so that what the code computed from the session's data (a path, a variable's name)
is no channel back to an agent that may not see that data.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .interpreter import (
    ALARMS,
    AT_FORK,
    HOOKS,
    IMPORT_PATH,
    LATER,
    LIMITS,
    LOGGING,
    OPTIONS,
    RECURSION,
    SETTINGS,
    TAMPERED,
    TAMPERED_OURS,
    UMASK,
    WARNINGS,
)

MAX_ITEMS = 20  # names kept per kind (the count goes on)
SHOWN = 3  # names a line shows before "and N more"

ENV_SET, ENV_REMOVED, ENV_READ = "env_set", "env_removed", "env_read"
REPLACED, ADDED, DELETED = "replaced", "added", "deleted"  # attributes of the session's modules and classes
THREADS, TASKS, CALLBACKS = "threads", "tasks", "callbacks"
CWD, AT_EXIT, SIGNALS = "cwd", "at_exit", "signals"  # the process's own state
PROCESSES, WRITES, NETWORK = "processes", "writes", "network"
# TAMPERED, TAMPERED_OURS (``interpreter``): phrases, "replaces json.dumps"
# interpreter state set by a call (``interpreter``): alarms, the recursion limit, at-fork functions …
REFUSED = (PROCESSES, WRITES, NETWORK)
_ATTRIBUTE_VERBS = (("replaces", REPLACED), ("adds", ADDED), ("deletes", DELETED))


@dataclass
class Unseen:
    """What the preview could not see, by kind: ``found`` lists up to ``MAX_ITEMS`` names per kind, ``counts``
    how many there were (when that is more than the names listed, or when there are no names to list)."""

    found: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str, item: str) -> None:
        items = self.found.setdefault(kind, [])
        if item in items:
            return
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if len(items) < MAX_ITEMS:
            items.append(item)

    def count_only(self, kind: str, n: int) -> None:
        """``n`` more of ``kind`` with no name to list (a thread started without ``threading``)."""
        if n > 0:
            self.counts[kind] = self.counts.get(kind, 0) + n

    def discard(self, kind: str, item: str) -> None:
        items = self.found.get(kind, [])
        if item in items:
            items.remove(item)
            self.counts[kind] = self.counts.get(kind, 1) - 1

    def count(self, kind: str) -> int:
        return max(self.counts.get(kind, 0), len(self.found.get(kind, ())))

    def __bool__(self) -> bool:
        return any(self.count(kind) for kind in set(self.found) | set(self.counts))

    @property
    def tampered(self) -> bool:
        """The code tampers with Python itself or with the preview: its effects cannot be previewed."""
        return bool(self.count(TAMPERED) or self.count(TAMPERED_OURS))

    @property
    def refused(self) -> bool:
        """A wall refused something the code did: from there on the preview went another way than a run."""
        return any(self.count(kind) for kind in REFUSED)

    @classmethod
    def from_dict(cls, data: Any) -> Unseen:
        if not isinstance(data, dict):
            return cls()
        found = {str(k): [str(i) for i in v][:MAX_ITEMS] for k, v in (data.get("found") or {}).items()}
        counts = {str(k): int(v) for k, v in (data.get("counts") or {}).items()}
        return cls(found, counts)

    # -- words ---------------------------------------------------------------------------------------------
    def lines(self, shown: Callable[[str, str], bool] | None = None) -> list[str]:
        """One line per kind (without indent), the tampering sentence last. ``shown(kind, name)``: whether a
        name may be spelled out (the others are only counted)."""
        see = shown or (lambda kind, name: True)
        variable = "environment variable"
        both = bool(self._names(ENV_SET, see))  # "sets the environment variable A and removes B"
        removes = self._said("removes", ENV_REMOVED, variable, see, bare=both)
        env = _and([self._said("sets", ENV_SET, variable, see), removes])
        attrs = _and([self._said(verb, kind, "", see) for verb, kind in _ATTRIBUTE_VERBS])
        parts = [
            f"{env}: what that changes is not previewed" if env else "",
            f"{self._said('reads', ENV_READ, variable, see)}, which the preview runs without"
            if self.count(ENV_READ)
            else "",
            f"{attrs}: every later use sees that, which is not previewed" if attrs else "",
            *self._process(see),
            *self._interpreter(see),
            self._threads(see),
            self._queued(see),
            self._refused(PROCESSES, "start", see),
            self._refused(WRITES, "write", see),
            self._refused(NETWORK, "reach", see),
            self.tamper_sentence(),
        ]
        return [part for part in parts if part]

    def _process(self, see: Callable[[str, str], bool]) -> list[str]:
        """The process's own state, which every later input shares: its working directory, the functions it
        runs when it ends, its signal handlers (SIGINT's is Ctrl-C)."""
        cwd = self._names(CWD, see)
        exits, signals = self.count(AT_EXIT), self.count(SIGNALS)
        which = self._names(SIGNALS, see) or _count(signals, "signal")
        handlers, those = ("handler", "that signal") if signals == 1 else ("handlers", "those signals")
        parts = []
        if self.count(CWD):
            where = f" to {cwd}" if cwd else ""
            later = "every later relative path sees that, which is not previewed"
            parts.append(f"changes the working directory{where}: {later}")
        if exits:
            does = "it does" if exits == 1 else "they do"
            functions = _count(exits, "function")
            parts.append(
                f"registers {functions} to run when the session ends (atexit): what {does} then is not "
                "previewed"
            )
        if signals:
            parts.append(f"sets the {handlers} of {which}: what happens on {those} is not previewed")
        return parts

    def _interpreter(self, see: Callable[[str, str], bool]) -> list[str]:
        """Interpreter state set by a call (``interpreter``), one line per kind."""
        out = []
        for kind, named, bare, after in _STATE_LINES:
            n = self.count(kind)
            if n:
                names = self._names(kind, see)
                what = named.format(names) if names else bare.format(_count(n, "function"))
                out.append(f"{what}{after}")
        return out

    def _threads(self, see: Callable[[str, str], bool]) -> str:
        n = self.count(THREADS)
        which = _paren(self._names(THREADS, see))
        if n == 1:
            return f"starts a thread that keeps running{which}: what it does later is not previewed"
        return (
            f"starts {n} threads that keep running{which}: what they do later is not previewed" if n else ""
        )

    def _queued(self, see: Callable[[str, str], bool]) -> str:
        tasks, callbacks = self.count(TASKS), self.count(CALLBACKS)
        what = _and([
            _count(tasks, "asyncio task") + _paren(self._names(TASKS, see)) if tasks else "",
            _count(callbacks, "callback") if callbacks else "",
        ])  # fmt: skip
        return f"schedules {what} on the running event loop: what that does is not previewed" if what else ""

    def _refused(self, kind: str, verb: str, see: Callable[[str, str], bool]) -> str:
        n = self.count(kind)
        if not n:
            return ""
        names = self._names(kind, see)
        if kind == PROCESSES:
            what, after = _count(n, "process") + _paren(names), "what it would do"
        elif kind == WRITES:
            what, after = names or _count(n, "file"), "what it writes"
        else:  # the network: an attempt may have no address (a socket refused before it had one)
            what = names or (_count(n, "address") if self.found.get(NETWORK) else "the network")
            after = "what it sends or gets"
        return f"tried to {verb} {what}, which the preview refused: {after} is not previewed"

    def tamper_sentence(self) -> str:
        """The one sentence for code that tampers with Python itself or the preview ("" if it does not)."""
        python, ours = self.found.get(TAMPERED, []), self.found.get(TAMPERED_OURS, [])
        if not self.tampered:
            return ""
        phrases = (python + ours)[:SHOWN] or ["changes how Python works"]
        more = self.count(TAMPERED) + self.count(TAMPERED_OURS) - len(phrases)
        groups: dict[str, list[str]] = {}  # "replaces json.dumps", "replaces os.fork" -> replaces: [...]
        for phrase in phrases:
            verb, _, rest = phrase.partition(" ")
            groups.setdefault(verb, []).append(rest)
        what = "; ".join(f"{verb} {_and(rests)}" for verb, rests in groups.items())
        what += f" and {more} more" if more > 0 else ""
        owner = " and ".join(w for w, has in (("Python itself", python), ("pyaichat itself", ours)) if has)
        owner = owner or "Python itself"
        return (
            f"This code {what}, part of {owner}; its effects cannot be previewed — read it before you run it."
        )

    def told(self, source: str) -> str:
        """What the agent that proposed ``source`` is told ("" if nothing): the lines the person saw, with
        only the names ``source`` spells out."""
        words = set(re.findall(r"\w+", source))

        def literal(kind: str, name: str) -> bool:
            if kind in (TAMPERED, TAMPERED_OURS):
                return True  # phrases about Python's own functions, not about the session's data
            if kind == NETWORK:
                name = name.rsplit(":", 1)[0]
            return all(w in words for w in re.findall(r"\w+", name))

        lines = self.lines(literal)
        if not lines:
            return ""
        head = "The person's preview of this code could not see everything it does, and told them so:"
        return head + "".join(f"\n- {line}" for line in lines)

    def _names(self, kind: str, see: Callable[[str, str], bool]) -> str:
        """Up to ``SHOWN`` names of ``kind`` that may be named, then "and N more" ("" if none may be)."""
        named = [n for n in self.found.get(kind, ()) if see(kind, n)][:SHOWN]
        if not named:
            return ""
        more = self.count(kind) - len(named)
        return _and(named + ([f"{more} more"] if more > 0 else []))

    def _said(
        self, verb: str, kind: str, noun: str, see: Callable[[str, str], bool], bare: bool = False
    ) -> str:
        """'sets the environment variables A, B and 2 more', or 'sets 3 environment variables' when none may
        be named ('' when there are none); without a noun, or ``bare``, the names go alone ('replaces
        pd.DataFrame.x', '… and removes B')."""
        total = self.count(kind)
        if not total:
            return ""
        names = self._names(kind, see)
        if not names:
            return f"{verb} {_count(total, noun or 'attribute')}"
        label = f"the {noun if total == 1 else _plural(noun)} " if noun and not bare else ""
        return f"{verb} {label}{names}"


_NOT_PREVIEWED = ", which is not previewed"
_STATE_LINES = (  # (kind, with the names, without them, what follows)
    (ALARMS, "sets a timer ({})", "sets a timer",
     ": when it fires, its signal ends the session unless something handles it" + _NOT_PREVIEWED),
    (RECURSION, "sets the recursion limit to {}", "sets the recursion limit",
     ": later code that nests deeper fails" + _NOT_PREVIEWED),
    (AT_FORK, "registers {} to run at every fork", "registers {} to run at every fork",
     "; pyaichat's reads fork, so it would run on every read"),
    (UMASK, "sets the umask to {}", "sets the umask", ": every file created later gets it" + _NOT_PREVIEWED),
    (LIMITS, "sets the resource limit {}", "sets a resource limit",
     ": it holds for the rest of the session" + _NOT_PREVIEWED),
    (HOOKS, "replaces {}", "replaces a hook of the interpreter",
     ": every later error or echoed value goes through it" + _NOT_PREVIEWED),
    (LOGGING, "adds a logging handler ({})", "adds a logging handler",
     ": what it writes later is not previewed"),
    (WARNINGS, "changes the warning filters ({})", "changes the warning filters",
     ": later warnings show differently" + _NOT_PREVIEWED),
    (IMPORT_PATH, "changes sys.path ({})", "changes sys.path",
     ": later imports may find other modules" + _NOT_PREVIEWED),
    (OPTIONS, "sets pandas options ({})", "sets pandas options", ": later output changes" + _NOT_PREVIEWED),
    (SETTINGS, "changes {}", "changes a setting of the process",
     ": the rest of the session runs with it" + _NOT_PREVIEWED),
    (LATER, "registers functions Python calls later ({})", "registers functions Python calls later",
     ": what they do then is not previewed"),
)  # fmt: skip


def _plural(noun: str) -> str:
    return noun + ("es" if noun.endswith("s") else "s")


def _count(n: int, noun: str) -> str:
    """ "a file", "an address", "3 files"."""
    if n != 1:
        return f"{n} {_plural(noun)}"
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def _and(parts: list[str]) -> str:
    parts = [p for p in parts if p]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _paren(text: str) -> str:
    return f" ({text})" if text else ""
