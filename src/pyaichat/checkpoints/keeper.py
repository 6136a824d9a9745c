"""The live session's side of checkpoints: when a copy is taken, what each input did, ``/undo``, ``/redo``,
``/checkpoints``, and what a session resumed from a copy puts back together.

**When.** At the REPL loop's seam (``seam``: after an input is handled, before the next prompt — the main
thread, no event loop running) a copy is taken unless the newest one still holds the session as it is (nothing
ran since); when only the story changed since (the conversation, the history: an answer, a command), the
supervisor is given it instead (``carry``, typed-ahead keys left out), so that a crash finds it up to date
without another fork. ``changed``: state changed outside an input (``/resume`` of variables, a proposal
taken back): the newest copy no longer holds it and is let go. An input that changes the session
(``around``, wrapped by the runtime around each run: a Python input, an approved proposal, an outside agent's
approved code) uses that copy as the state before it; a second one without a seam between (two approved
proposals in one answer) takes its own copy first. Not while an outside agent's call runs (the copy would
take its half-done pipes: the input takes it instead, inside the gate), nor while a GPU context lives
(``copy.gpu_context``).

**Going back** (``undo``): the inputs from the chosen copy on are undone; what going back cannot undo is said
first, one sentence each; what continues (``carry``) is sent; this process stops serving over MCP (the
resumed one serves on, same address and token), then pauses — out of the terminal's group, ``SIGSTOP`` — until
``/redo`` (or it is let go when something new runs). **A resumed session** (``_resumed``) starts from the
copy's memory: the threads and helpers of the process that was forked are not there, so each part lets go
of what belonged to them (``services.revive``) and starts again when next needed; then what continues is
put in, the undone inputs marked, the assistant told, and the person told in one sentence.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal

from . import carry, effects, services
from .copy import Spawned, Taken, gpu_context, person_threads, supported, take
from .link import Link, LinkClosed
from .memory import size_text
from .resumed import Resumed

if TYPE_CHECKING:
    from .carry import Parts, PromptHistory

Level = Literal["info", "warning", "success"]  # a notice's
SOURCE_SHOWN = 40  # characters of an input quoted in a sentence
REPLY_WAIT = 10.0  # seconds the supervisor may take to answer


class Checkpoints:
    """Checkpoints of one session, in its live process (see the module's docstring). ``prompt``: the front
    end's history of typed lines; ``revive``: what the front end puts right in a resumed session (keys typed
    ahead in the process that was forked are not this one's)."""

    def __init__(
        self,
        ctrl: Parts,
        link: Link,
        pgid: int,
        *,
        prompt: PromptHistory | None = None,
        revive: Callable[[], None] | None = None,
    ) -> None:
        self.ctrl = ctrl
        self.link = link
        self.pgid = pgid
        self.prompt = prompt
        self._revive_front = revive
        self.fresh: int | None = None  # the copy that holds the session as it is now
        self.fresh_key: tuple[Any, ...] | None = None
        self.mine: set[int] = set()  # the copies this process forked (reaped here)
        self.copies: list[dict[str, Any]] = []  # {"pid", "before"}, oldest first: the supervisor's list
        self.windows: dict[int, effects.Window] = {}  # what the kernel counted for each input
        self.user_fds: dict[int, str] = {}  # descriptors the person's inputs opened
        self.undone_by_jump: set[int] = set()  # what /redo marks as done again
        self.redo_possible = False
        self.off: str | None = None if supported() else "this system has no fork()"
        self.memory: tuple[int, int] | None = None  # (bytes the copies hold, the budget)
        self.let_go: set[int] = set()  # inputs whose copies were let go
        self._notices: list[tuple[str, Level]] = []
        self._changes: dict[tuple[int, int], str] = {}
        self._back = 0  # how many inputs /undo can take back (the toolbar's, counted at the seam)
        self._ask_ids = iter(range(1, 1 << 62))
        self.ctrl.runtime.input_watch = self.around  # type: ignore[attr-defined]  # LocalRuntime's
        self.ctrl.runtime.state_changed = self.changed  # type: ignore[attr-defined]  # LocalRuntime's
        _watch_supervisor(link)

    # -- the seam ------------------------------------------------------------------------------------------
    def seam(self) -> None:
        """Between inputs (the REPL loop, main thread): take in what the supervisor said, and take a copy if
        the newest does not hold the session as it is. In a session resumed from that copy, this returns once
        the session is put back together (``_resumed``)."""
        try:
            self._seam()
        finally:
            self._back = len(self.undoable())

    def _seam(self) -> None:
        self._drain()
        self._reap()
        self._say()
        if self.fresh is None and not self.ctrl.runtime.history:
            return  # the session as it started: the first input takes its copy (the first prompt waits not)
        if not self._may_take():
            return
        key = self._key()
        if self.fresh is not None:  # nothing ran since it was taken: it holds the session's state
            if key != self.fresh_key:  # the story changed (an answer, a command): the supervisor keeps it
                blob = carry.gather(self.ctrl, self.prompt, {"windows": self.windows}, typed=False)
                self._send({"op": "story", "copy": self.fresh}, blob=blob)
                self.fresh_key = key
            return
        if self.ctrl.gate._calls:  # an outside call runs: the next input takes its copy, inside the gate
            return
        self._take(key)
        self._say()  # a session resumed from the copy says so now

    def changed(self) -> None:
        """The session's state changed outside an input (``/resume`` loaded variables): the newest copy no
        longer holds it, and is let go (the next seam takes another)."""
        if self.fresh is not None:
            self.copies = [c for c in self.copies if c["pid"] != self.fresh]
            self._send({"op": "release", "pids": [self.fresh]})
            self.fresh = None

    def prepare(self) -> None:
        """While the first prompt waits for the person: load what the first copy needs (``ipc``'s JSON)."""
        from .. import ipc  # noqa: F401  (the link's first message loads it otherwise)

    @contextlib.contextmanager
    def around(self, number: int, source: str) -> Iterator[None]:
        """Around one input that runs code (the runtime's ``input_watch``): the copy before it, and what the
        kernel counts for it."""
        if self.redo_possible:  # something new runs: where the person was before /undo is let go
            self.redo_possible = False
            self.undone_by_jump = set()
            self._send({"op": "forget_redo"})
        if self.fresh is None and self._may_take():
            self._take(self._key(), inside=True)
        copy, self.fresh = self.fresh, None
        for entry in self.copies:
            if entry["pid"] == copy and entry["before"] is None:
                entry["before"] = number
        self._send({"op": "running", "number": number, "source": source, "copy": copy})
        window = effects.Window.open(number, source)
        try:
            yield
        finally:
            window.close(ours=services.own_fds(self.ctrl))
            self.windows[number] = window
            self.user_fds.update(window.opened)
            self._send({"op": "ran", "number": number})

    def _may_take(self) -> bool:
        if self.link.closed:
            return False
        if self.off == "this system has no fork()":
            return False
        gpu = gpu_context()
        if gpu is not None:
            if self.off != gpu:
                self.off = gpu
                self._notice(
                    f"Checkpoints are off while {gpu} lives in the session: a copy of it could not use "
                    "the GPU. "
                    "/undo takes back approved proposals only until it ends.",
                    "warning",
                )
            return False
        if self.off is not None:
            self.off = None
            self._notice("Checkpoints are on again: the GPU context has ended.")
        return threading.current_thread() is threading.main_thread() and not _loop_running()

    def _take(self, key: tuple[Any, ...], *, inside: bool = False) -> None:
        try:
            result = take(
                self.link,
                children=self.mine,
                answer=self._answer,
                describe=self._describe,
                in_copy=lambda: services.in_copy(self.ctrl),
            )
        except (OSError, LinkClosed) as exc:
            self._notice(
                f"No checkpoint could be taken ({exc}); /undo cannot go back past this input.", "warning"
            )
            return
        if isinstance(result, Spawned):
            self._resumed(result)
            if inside:
                raise Resumed()
            return
        assert isinstance(result, Taken)
        old = self.fresh
        self.fresh, self.fresh_key = result.pid, key
        self.mine.add(result.pid)
        self.copies.append({"pid": result.pid, "before": None})
        if old is not None:
            self.copies = [c for c in self.copies if c["pid"] != old]
            self._send({"op": "release", "pids": [old]})

    def _key(self) -> tuple[Any, ...]:
        """What a copy must be taken again for: the session ran something, or its story changed."""
        ctrl = self.ctrl
        history = ctrl.runtime.history
        memory = ctrl.assistant._memory
        config = ctrl.settings.current()
        return (
            history[-1].number if history else 0,
            len(history),
            sum(1 for e in history if e.undone),
            len(memory.turns) if memory is not None else 0,
            len(ctrl.assistant.notes),
            ctrl.journal.state(),
            ctrl.mode,
            config.model,
            config.suggest_model,
            ctrl.resume_file.snapshot,
            services.serving(ctrl) is not None,
        )

    # -- what the supervisor says --------------------------------------------------------------------------
    def _drain(self) -> None:
        try:
            messages = self.link.poll()
        except LinkClosed:
            return
        for message in messages:
            self._told(message)

    def _told(self, message: dict[str, Any]) -> None:
        op = message.get("op")
        if op == "memory":
            self.memory = (int(message.get("used") or 0), int(message.get("budget") or 0))
        elif op == "released":
            pids = set(message.get("pids") or ())
            gone = [c for c in self.copies if c["pid"] in pids]
            self.copies = [c for c in self.copies if c["pid"] not in pids]
            if self.fresh in pids:
                self.fresh = None
            numbers = sorted(c["before"] for c in gone if c["before"] is not None)
            self.let_go.update(numbers)
            reach = min((c["before"] for c in self.copies if c["before"] is not None), default=None)
            if reach is not None:  # what inputs before the oldest copy did no /undo will ever say
                self.windows = {n: w for n, w in self.windows.items() if n >= reach}
            if not numbers:
                return
            which = _inputs(numbers).capitalize()
            theirs = "its checkpoint was" if len(numbers) == 1 else "their checkpoints were"
            if message.get("why") == "count":
                self._notice(
                    f"{which} can no longer be undone: {theirs} let go (at most {message.get('count')} "
                    "checkpoints are kept).",
                    "warning",
                )
            elif message.get("why") == "memory":
                self.memory = (int(message.get("used") or 0), int(message.get("budget") or 0))
                self._notice(
                    f"{which} can no longer be undone: {theirs} let go to keep the checkpoints within "
                    f"{size_text(self.memory[1])} (the checkpoint_memory setting).",
                    "warning",
                )
            else:
                self._notice(
                    f"{which} can no longer be undone: {theirs} ended (the system may have run short of "
                    "memory).",
                    "warning",
                )

    def _reap(self) -> None:
        for pid in list(self.mine):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self.mine.discard(pid)

    def _notice(self, text: str, level: Level = "info") -> None:
        self._notices.append((text, level))

    def _say(self) -> None:
        notices, self._notices = self._notices, []
        for text, level in notices:
            self.ctrl.notice(text, level)

    def _send(self, message: dict[str, Any], *, blob: bytes = b"") -> bool:
        try:
            self.link.send(message, blob=blob)
            return True
        except LinkClosed:
            return False

    def _request(
        self, message: dict[str, Any], replies: tuple[str, ...], *, blob: bytes = b""
    ) -> dict[str, Any]:
        """Send ``message`` and wait for the supervisor's answer (one of ``replies``); what else it says
        meanwhile is taken in as at the seam."""
        if not self._send(message, blob=blob):
            raise LinkClosed("The supervisor is gone.")
        deadline = time.monotonic() + REPLY_WAIT
        while True:
            reply = self.link.receive(timeout=max(deadline - time.monotonic(), 0.01))
            if reply.get("op") in replies and reply.get("id", message.get("id")) == message.get("id"):
                return reply
            self._told(reply)

    # -- /undo and /redo -----------------------------------------------------------------------------------
    def undoable(self) -> list[dict[str, Any]]:
        """The copies ``/undo`` can go back to, oldest first: each before an input not undone yet."""
        undone = {e.number for e in self.ctrl.runtime.history if e.undone}
        return [c for c in self.copies if c["before"] is not None and c["before"] not in undone]

    def undo(self, count: int) -> None:
        self._drain()
        if self.link.closed:
            self._fallback("Checkpoints stopped (the supervisor is gone).")
            return
        with contextlib.suppress(LinkClosed, TimeoutError):
            self._listing(measure=False)  # which copies stand: the budget's last measure is recent enough
        choices = self.undoable()
        if not choices:
            self._fallback(self._nothing_to_undo())
            return
        if count > len(choices):
            self.ctrl.notice(
                f"/undo can go back {_count(len(choices), 'input')} now, not {count}: {self._reach()}",
                "warning",
            )
            return
        target = choices[-count]
        first = target["before"]
        last = self.ctrl.runtime.last_input_number
        numbers = sorted(
            e.number for e in self.ctrl.runtime.history if first <= e.number <= last and not e.undone
        )
        sentences = [said for n in numbers for said in self._window_effects(n)]
        sentences += self._shared_since(target) + self._threads_left()
        for sentence in sentences:
            self.ctrl.notice(sentence, "warning")
        entry = next((e for e in self.ctrl.runtime.history if e.number == first), None)
        what = f" (`{_short(entry.source)}`)" if entry is not None else ""
        done = "input " + str(first) if len(numbers) <= 1 else f"inputs {first}–{numbers[-1]}"
        extra = {
            "windows": self.windows,
            "undone": numbers,
            "said": f"Back to before input {first}{what}: {done} undone. /redo returns to where you were.",
            "told": f"The user went back to before input {first} with /undo: {done} "
            "no longer had any effect on the session (their variables and changes are gone).",
        }
        self._jump({"op": "jump", "to": target["pid"]}, extra)

    def redo(self) -> None:
        self._drain()
        if not self.redo_possible:
            text = "Nothing to redo: /redo returns to where you were before /undo, while nothing new has run."
            self.ctrl.notice(text, "warning")
            return
        extra = {"windows": self.windows, "redone": sorted(self.undone_by_jump)}
        self._jump({"op": "redo"}, extra)

    def _jump(self, message: dict[str, Any], extra: dict[str, Any]) -> None:
        """Hand the session over (a jump to a copy, or back to the paused session) and pause or leave."""

        handover = services.quiesce(self.ctrl)
        extra = {**extra, "serving": handover}
        blob = carry.gather(self.ctrl, self.prompt, extra)
        try:
            reply = self._request(message, ("pause", "leave", "refused"), blob=blob)
        except (LinkClosed, TimeoutError) as exc:
            services.serve_on(self.ctrl, handover, None)
            self.ctrl.notice(f"Cannot go back: {exc}", "warning")
            return
        if reply["op"] == "refused":
            services.serve_on(self.ctrl, handover, None)
            self.ctrl.notice(str(reply.get("why") or "Cannot go back."), "warning")
            return
        if reply["op"] == "leave":
            services.leave()
        self._pause()

    def _pause(self) -> None:
        """Stop here, out of the terminal's group, until ``/redo`` (the supervisor continues this process and
        sends what continues) or until let go (killed)."""
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
        os.kill(os.getpid(), signal.SIGSTOP)
        while True:
            try:
                message = self.link.receive()
            except LinkClosed:
                os._exit(0)
            if message.get("op") == "resume":
                break
            self._told(message)
        with contextlib.suppress(OSError):
            os.setpgid(0, int(message.get("pgid") or self.pgid))
        parts = carry.unpack(message.get("_blob") or b"")
        self._put_in(parts)
        redone = set(parts.get("redone") or ())
        carry.mark(self.ctrl.runtime.history, redone, undone=False)
        for proposal in self.ctrl.journal.approved:
            if proposal.input_number in redone:
                proposal.undone = proposal.undone_after = None
        self.ctrl.assistant.tell(
            "The user went forward again with /redo: "
            f"{_inputs(sorted(redone))} stand again, as they were before the /undo."
        )
        self.redo_possible = False
        self.undone_by_jump = set()
        services.serve_on(self.ctrl, parts.get("serving"), None)
        with contextlib.suppress(LinkClosed, TimeoutError):
            self._listing(measure=False)  # copies were let go while this session was paused: not told
        if self.fresh not in {c["pid"] for c in self.copies}:
            self.fresh = None
        self.fresh_key = None  # the story changed: the next seam gives it to the supervisor
        stand = "stands" if len(redone) == 1 else "stand"
        self._notice(f"Back where you were: {_inputs(sorted(redone))} {stand} again.", "success")
        self._say()

    # -- a session resumed from a copy ---------------------------------------------------------------------
    def _resumed(self, spawned: Spawned) -> None:
        """In the process forked from a copy: put the session back together (see the module's docstring)."""

        self.link = spawned.link
        _watch_supervisor(spawned.link)
        message = spawned.message
        own = services.serving(self.ctrl)  # what the copy remembers: the session served then
        services.revive(self.ctrl)
        if self._revive_front is not None:
            with contextlib.suppress(Exception):
                self._revive_front()
        self.mine = set()
        self._changes = {}
        self.copies = [dict(c) for c in message.get("copies") or self.copies]
        self.fresh = spawned.copy_pid
        parts = carry.unpack(message.get("_blob") or b"")
        self._put_in(parts)
        lost = spawned.lost_threads
        serving = parts.get("serving") if "serving" in parts else own
        if message.get("why") == "crash":
            crash = message.get("crash") or {}
            note = self._crashed(crash)
            services.serve_on(self.ctrl, serving, f"{note} What you read of it before may have changed.")
        else:
            numbers = set(parts.get("undone") or ())
            carry.mark(self.ctrl.runtime.history, numbers, undone=True)
            for proposal in self.ctrl.journal.approved:
                if proposal.input_number in numbers and not proposal.undone:
                    proposal.undone = str(parts.get("said") or "undone")
                    proposal.undone_after = max(numbers)
            if parts.get("told"):
                self.ctrl.assistant.tell(str(parts["told"]))
            self.undone_by_jump = numbers
            self.redo_possible = True
            self._notice(str(parts.get("said") or "Back to an earlier checkpoint."), "success")
            note = f"The person took the session back with /undo: {_inputs(sorted(numbers))} undone."
            services.serve_on(self.ctrl, serving, f"{note} What you read of it before may have changed.")
        if lost:
            self._notice(
                f"Threads the session had then ({', '.join(lost)}) do not run here: a copy of a process "
                "keeps "
                "only its main thread.",
                "warning",
            )
        self.fresh_key = self._key()

    def _put_in(self, parts: dict[str, Any]) -> None:
        from ..modes import Mode  # (loaded by the controller)

        if "windows" in parts:
            self.windows = parts["windows"]
        carry.apply(self.ctrl, self.prompt, parts, mode_of=Mode)

    def _crashed(self, crash: dict[str, Any]) -> str:
        """The input that ended the session stays in the history, marked; the person and the assistant are
        told in one sentence. Returns that sentence."""
        from ..records import HistoryEntry  # loaded by the first input

        how = str(crash.get("how") or "an unknown cause")
        number, source = crash.get("number"), crash.get("source")
        session = getattr(self.ctrl.runtime, "session", None)
        if isinstance(number, int) and isinstance(source, str):
            sentence = (
                f"The session ended with {how} while running input {number} (`{_short(source)}`); it is "
                "back as "
                "it was before that input."
            )
            if session is not None and all(e.number != number for e in session.history):
                entry = HistoryEntry(number, source, False, "", 0.0, crashed=how)
                session.history.append(entry)
                session._counter = max(session._counter, number)
            if self.prompt is not None:
                lines = self.prompt.lines()
                if not lines or lines[0] != source:
                    self.prompt.replace([source, *lines])
            for copy in self.copies:
                if copy["before"] == number:
                    copy["before"] = None  # the copy holds the session before it: the next input's
        else:
            last = self.ctrl.runtime.last_input_number
            sentence = (
                f"The session ended with {how} at the prompt; it is back as it was after input {last}."
                if last
                else f"The session ended with {how} at the prompt; it is back as it was when it started."
            )
        self.ctrl.assistant.tell(sentence + " Nothing of that input's effects remains.")
        again = " Up-arrow brings the input back to edit." if self.ctrl.frontend.interactive else ""
        self._notice(sentence + again, "warning")
        return sentence

    # -- /checkpoints and the toolbar ------------------------------------------------------------------------
    def status(self) -> str | None:
        """For the toolbar (drawn at every key: counted at the seam, not here)."""
        if self.off is not None:
            return "undo: off"
        return f"undo: {self._back} back" if self._back else None

    def report(self) -> str:
        self._drain()
        if self.off is not None:
            return (
                f"Checkpoints are off while {self.off} lives in the session. /undo takes back approved "
                "proposals."
            )
        try:
            self._listing()
        except (LinkClosed, TimeoutError):
            return "Checkpoints stopped (the supervisor is gone); /undo takes back approved proposals only."
        choices = self.undoable()
        history = {e.number: e for e in self.ctrl.runtime.history}
        lines = [self._reach()]
        for i, copy in enumerate(choices):
            first = copy["before"]
            after = choices[i + 1] if i + 1 < len(choices) else None
            numbers = [n for n in sorted(history) if first <= n < (after["before"] if after else 1 << 62)]
            numbers = [n for n in numbers if not history[n].undone]
            entry = history.get(first)
            source = _short(entry.source) if entry is not None else "?"
            own = copy.get("own")
            size = f"  [{size_text(own)} of its own]" if own else ""
            lines.append(f"  [{first}] {source}{size}")
            changed = self._changed(copy, after, [history[n].source for n in numbers if n in history])
            lines.append(f"      {changed}")
            sentences = [said for n in numbers for said in self._window_effects(n)] + self._shared_since(copy)
            lines += [f"      ! {sentence}" for sentence in sentences]
        lines += [f"  ! {sentence}" for sentence in self._threads_left()]
        if self.let_go:
            lines.append(f"{_inputs(sorted(self.let_go)).capitalize()} can no longer be undone (let go).")
        lines.append(
            "/undo goes back one input, /undo N goes back N; /redo returns to where you were while "
            "nothing new "
            "has run."
        )
        return "\n".join(lines)

    def _listing(self, *, measure: bool = True) -> None:
        """The supervisor's list of copies (with each one's own memory and what it shares), as the mirror.
        ``measure``: the copies' memory measured now (``/checkpoints``; the kernel walks every copy's page
        tables, ~0.1 s with a few GB under load) rather than as last measured (``/undo``, ``/redo``)."""
        listing = self._request({"op": "list", "measure": measure}, ("list",))
        self.memory = (int(listing.get("used") or 0), int(listing.get("budget") or 0))
        self.copies = [dict(c) for c in listing.get("copies") or []]

    def _reach(self) -> str:
        choices = self.undoable()
        if not choices:
            head = "No input can be undone now."
        else:
            head = (
                f"/undo can go back {_count(len(choices), 'input')}, to before input {choices[0]['before']}."
            )
        if self.memory is not None and self.memory[1]:
            used, budget = self.memory
            head += f" The checkpoints hold {size_text(used)} of their own (budget {size_text(budget)})."
        return head

    def _nothing_to_undo(self) -> str:
        if self.let_go:
            gone = _inputs(sorted(self.let_go))
            return f"Nothing can be undone now: the checkpoints before {gone} were let go."
        return "Nothing to undo: no input has changed the session yet."

    def _fallback(self, why: str) -> None:
        """No checkpoint to go back to: the last approved proposal, taken back name by name, if there is one
        (one feature to the person: /undo takes back what it can)."""
        from ..errors import PyAIChatError  # loaded with the controller

        try:
            ok, text = self.ctrl.proposals.undo()
        except PyAIChatError:
            ok, text = False, ""
        if ok:
            self.changed()
        self.ctrl.notice(f"{why} {text}".strip() if ok else why, "success" if ok else "warning")

    # -- what each input changed, and what going back cannot undo --------------------------------------------
    def _changed(self, copy: dict[str, Any], after: dict[str, Any] | None, sources: list[str]) -> str:
        """What the inputs between ``copy`` and ``after`` (or now) did to the session's names, in undo's
        words (``persist.undo.Changes``), from fingerprints taken in the two processes."""
        from ..persist.undo import Changes  # with the first /checkpoints

        key = (copy["pid"], after["pid"] if after is not None else 0)
        if key in self._changes:
            return self._changes[key]
        try:
            before = self._ask(copy["pid"], sources)
            now = self._ask(after["pid"], sources) if after is not None else fingerprints(self.ctrl, sources)
        except (LinkClosed, TimeoutError, RuntimeError) as exc:
            return f"(what it changed cannot be told now: {exc})"
        changes = Changes(
            created=sorted(n for n in now if n not in before),
            deleted=sorted(n for n in before if n not in now),
            rebound=sorted(n for n in now if n in before and now[n][0] != before[n][0]),
            in_place=sorted(
                n for n in now if n in before and now[n][0] == before[n][0] and now[n][2] != before[n][2]
            ),
            unchecked=sorted(n for n in now if n in before and (now[n][3] or before[n][3])),
        )
        changes.unchecked = [n for n in changes.unchecked if n not in changes.in_place + changes.rebound]
        text = changes.text()
        if after is not None:
            self._changes[key] = text
        return text

    def _ask(self, pid: int, sources: list[str]) -> dict[str, Any]:
        ident = next(self._ask_ids)
        reply = self._request(
            {"op": "ask", "to": pid, "id": ident, "what": "fingerprints", "sources": sources}, ("answer",)
        )
        if reply.get("error"):
            raise RuntimeError(reply["error"])
        return dict(reply.get("names") or {})

    def _answer(self, message: dict[str, Any]) -> dict[str, Any]:
        """In a copy: the supervisor's question, answered from this copy's memory."""
        if message.get("what") == "fingerprints":
            return {"names": fingerprints(self.ctrl, list(message.get("sources") or []))}
        return {"error": f"unknown question {message.get('what')!r}"}

    def _describe(self) -> dict[str, Any]:
        """In a new copy: the state of the person's descriptors it shares with the live session."""
        return {"fds": effects.states(self.user_fds), "taken": time.time()}

    def _window_effects(self, number: int) -> list[str]:
        """What input ``number`` did that going back cannot undo, counted while it ran (``effects``)."""
        window = self.windows.get(number)
        if window is None:
            return []
        said = []
        if window.wrote:
            named = _files_named(window)
            where = f" ({', '.join(named)})" if named else ""
            said.append(
                f"Input {number} wrote {size_text(window.wrote)} to files{where}; going back does not "
                "take that "
                "back."
            )
        if window.children:
            said.append(
                f"Input {number} started other processes; going back does not stop them or undo what "
                "they did."
            )
        for fd, target in sorted(window.opened.items()):
            state = effects.fd_state(fd, target)
            if state is not None and state.get("kind") == "tcp" and state.get("peer"):
                said.append(
                    f"Input {number} opened a connection to {state['peer']}; what it sent stays sent."
                )
        return said

    def _shared_since(self, copy: dict[str, Any]) -> list[str]:
        """What the copy shares with this process and has moved since it was taken: a file's offset, a
        connection's traffic (``copy["fds"]``: their state then, as the copy told the supervisor)."""
        then = {(s["fd"], s["target"]): s for s in copy.get("fds") or []}
        said = []
        before = f"input {copy['before']}" if copy.get("before") is not None else "the next input"
        for state in effects.states(self.user_fds):
            old = then.get((state["fd"], state["target"]))
            if old is None:
                continue
            if "pos" in state and state.get("pos") != old.get("pos"):
                said.append(
                    f"The file {state['target']} (open since before {before}) was read or written "
                    "since: going "
                    f"back does not move it back (it stays at byte {state['pos']:,}, not "
                    f"{old.get('pos', 0):,})."
                )
            if state.get("kind") == "tcp" and state.get("counters") != old.get("counters"):
                said.append(
                    f"The connection to {state.get('peer', 'a server')} (open since before {before}) "
                    "was used "
                    "since: what it sent stays sent (a committed transaction stays committed), and "
                    "going back "
                    "leaves it out of step."
                )
        return said

    def _threads_left(self) -> list[str]:
        running = person_threads(threading.enumerate())
        if not running:
            return []
        return [
            f"Threads running now ({', '.join(running)}) do not run in a checkpoint: going back leaves "
            "them behind."
        ]

    # -- the end ---------------------------------------------------------------------------------------------
    def bye(self, code: int) -> None:
        """The session ends normally (``code``): the supervisor lets every copy go and exits the same way."""
        self._send({"op": "bye", "code": code})


def fingerprints(ctrl: Parts, sources: list[str]) -> dict[str, list[Any]]:
    """For the names the ``sources`` reach in the session: ``[id, type, digest of its fingerprint,
    unchecked]`` — comparable between the live session and a copy (forked processes keep addresses)."""
    from ..capabilities import layout  # with the first /checkpoints
    from ..persist.fingerprint import Context, fingerprint
    from ..persist.undo import reachable_names, tracked

    namespace = getattr(ctrl.runtime, "session", None)
    if namespace is None:
        return {}
    namespace = namespace.namespace
    names: set[str] = set()
    for source in sources:
        names |= reachable_names(source, namespace)
    ctx = Context(namespaces=layout.namespace_ids(namespace))
    found: dict[str, list[Any]] = {}
    for name in sorted(n for n in names if tracked(n) and n in namespace):
        value = namespace[name]
        ctx.unchecked = False
        fp = fingerprint(value, ctx)
        digest = _digest(fp) if fp is not None else None
        found[name] = [id(value), type(value).__name__, digest, ctx.unchecked]
    return found


def _digest(fp: Any) -> str:
    import hashlib  # with the first /checkpoints

    return hashlib.blake2b(repr(fp).encode(), digest_size=12).hexdigest()


def _files_named(window: effects.Window) -> list[str]:
    """Files the input names (string literals that are paths) that changed while it ran."""
    import ast  # with the first sentence about files

    try:
        tree = ast.parse(window.source)
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and 0 < len(node.value) < 300:
            try:
                changed = os.stat(node.value).st_mtime >= window.started - 1
            except (OSError, ValueError):
                continue
            if changed and node.value not in found:
                found.append(node.value)
    return found[:5]


def _watch_supervisor(link: Link) -> None:
    """A thread that ends this session if the supervisor ends (the shell then has its terminal back): it only
    waits for the link's end, reading nothing."""
    import select

    def watch() -> None:
        try:
            poller = select.poll()
            poller.register(link.fileno(), select.POLLRDHUP)
            while not link.closed:
                for _fd, event in poller.poll():
                    if event & (select.POLLRDHUP | select.POLLHUP) and not link.closed:
                        os.kill(os.getpid(), signal.SIGHUP)
                        return
        except (OSError, ValueError, AttributeError):
            return

    threading.Thread(target=watch, name="pyaichat-supervised", daemon=True).start()


def _loop_running() -> bool:
    import asyncio  # loaded: prompt_toolkit runs on it

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _short(source: str) -> str:
    text = " ".join(source.split())
    return text if len(text) <= SOURCE_SHOWN else text[: SOURCE_SHOWN - 1] + "…"


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _inputs(numbers: list[int]) -> str:
    if not numbers:
        return "no input"
    if len(numbers) == 1:
        return f"input {numbers[0]}"
    if numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"inputs {numbers[0]}–{numbers[-1]}"
    return "inputs " + ", ".join(map(str, numbers))
