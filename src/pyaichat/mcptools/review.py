"""The person's review of what their MCP servers offer: pinned definitions checked at each listing, the
changed ones shown as a short diff and accepted or refused (``pins``), and what they allowed beyond one call
(``allowances``). One per session, kept by ``tools.ServerTools``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..proposal import ASSISTANT, Decide, Proposal
from .allowances import Allowances
from .pins import ENTRY_CHANGED, Drift, Pins, claims, compare, definition, digest, entry_key

CANNOT_ASK = "pyaichat cannot ask you here (piped input or a notebook)"
DAMAGED = "\0damaged"  # ``_seen``'s key for the listing shown over a damaged pins file


def server_key(conn: Any) -> str:
    """The pins' key of a started server: what it runs (``ServerSpec.what_runs``), and what the client
    declares (which changes what a server lists)."""
    launch = conn.launch
    declared = "".join(f" +{kind}" for kind in ("sampling", "elicitation") if getattr(launch, kind, None))
    return entry_key(launch.name, launch.what_runs() + declared)


class Reviews:
    """Pins and allowances of one session (see the module docstring)."""

    def __init__(self, pins: Pins | None = None, allowed: Allowances | None = None) -> None:
        self._pins = pins
        self.allowed = allowed or Allowances()
        self.held: dict[str, set[str]] = {}  # server -> its tools not offered until the person accepts
        self._seen: dict[str, str] = {}  # server -> the hash of the listing checked last

    @property
    def pins(self) -> Pins:
        if self._pins is None:
            self._pins = Pins.default()
        return self._pins

    def listed(self, conn: Any) -> None:
        """``conn`` has listed its tools for the first time this session (on the manager's loop): a server
        used for the first time has them pinned now, as listed — what the model is offered later is compared
        with this. (Nothing is pinned over a pins file that cannot be read.)"""
        key = server_key(conn)
        if self.pins.damaged is None and self.pins.known(key) is None and not self.pins.others(key):
            self.pins.pin(key, {tool.name: definition(tool) for tool in conn.tools})

    def check_all(
        self,
        conns: Mapping[str, Any],
        approve: Decide | None,
        tell: Callable[[str], None],
        mask: Callable[[str], str],
        *,
        again: bool = False,
    ) -> dict[str, set[str]]:
        """``check`` for each of the started servers ``conns``; the tool names not to offer, by server. Over a
        pins file that cannot be read, every tool of every server is held until the person accepts them as
        they are now, all at once (``_start_again``)."""
        if self.pins.damaged is not None:
            return self._start_again(conns, approve, tell, mask, again=again)
        return {s: self.check(s, conn, approve, tell, mask, again=again) for s, conn in conns.items()}

    def check(
        self,
        server: str,
        conn: Any,
        approve: Decide | None,
        tell: Callable[[str], None],
        mask: Callable[[str], str],
        *,
        again: bool = False,
    ) -> set[str]:
        """Compare ``conn``'s listed tools with their pins (once per listing, unless ``again``); pin them on
        first use; on a change, show the diff and ask (``approve``; ``None``: no one can be asked). The tool
        names not to offer."""
        if self.pins.damaged is not None:  # nothing of it can be trusted, nor written over
            return self._start_again({server: conn}, approve, tell, mask, again=again)[server]
        current = {tool.name: definition(tool) for tool in conn.tools}
        stamp = digest(current)
        if not again and self._seen.get(server) == stamp:
            return self.held.get(server, set())
        self._seen[server] = stamp
        key = server_key(conn)
        known = self.pins.known(key)
        if known is None and self.pins.others(key):  # the same name runs something else now: all of it new
            drift = Drift(server, changed={name: [ENTRY_CHANGED] for name in current})
        elif known is None:  # first use: trust it as it is now
            self.pins.pin(key, current)
            self._tell_problem(tell)
            self.held.pop(server, None)
            return set()
        else:
            drift = compare(server, known, current)
        if not drift.held:
            if drift.removed:
                self.pins.pin(key, current, names=drift.removed)
                self._tell_problem(tell)
                tell(f"The MCP server {server!r} no longer offers {', '.join(sorted(drift.removed))}.")
            elif again:
                tell(f"The tools of the MCP server {server!r} are as you accepted them; nothing to review.")
            self.held.pop(server, None)
            return set()
        lines = [mask(line) for line in drift.lines(current)]
        title = f"The MCP server {server!r} changed its tools"
        accepted = self._ask(f"review {server}", title, lines, approve) if approve is not None else None
        if accepted is None:
            tell(
                "\n".join(
                    [
                        *lines,
                        f"{CANNOT_ASK}: review them in pyaichat in a terminal with /tools review {server}.",
                    ]
                )
            )
        if accepted:
            self.pins.pin(key, current, names=drift.held | set(drift.removed))
            self._tell_problem(tell)
            self.held.pop(server, None)
            names = ", ".join(sorted(drift.held))
            tell(f"Accepted: {names} of {server!r} are offered to the assistant again.")
            return set()
        self.held[server] = set(drift.held)
        if accepted is False:
            tell(
                f"The changed tools of {server!r} stay unoffered this session "
                f"(/tools review {server} asks again)."
            )
        return self.held[server]

    def _start_again(
        self,
        conns: Mapping[str, Any],
        approve: Decide | None,
        tell: Callable[[str], None],
        mask: Callable[[str], str],
        *,
        again: bool,
    ) -> dict[str, set[str]]:
        """The pins file cannot be read: nothing is offered until the person accepts the tools listed now,
        which then start a new pins file (the damaged one is kept beside it)."""
        current = {server: {t.name: definition(t) for t in conn.tools} for server, conn in conns.items()}
        stamp = digest(current)
        if not again and self._seen.get(DAMAGED) == stamp:
            return {server: self.held.get(server, set()) for server in conns}
        self._seen[DAMAGED] = stamp
        lines = [
            f"{self.pins.damaged}: no tool of any MCP server is offered until you accept them as they are.",
            "Accepting pins these in a new file (the damaged one is kept beside it; servers not running now "
            "are pinned as new when they next start):",
        ]
        for server, tools in current.items():
            listed = ", ".join(f"{name}{claims(tools[name])}" for name in sorted(tools)) or "no tools"
            lines.append(f"  {server}: {listed}")
        lines = [mask(line) for line in lines]
        title = "The MCP pins file cannot be read"
        accepted = self._ask("review MCP pins", title, lines, approve) if approve is not None else None
        if accepted:
            tell(self.pins.start_again({server_key(conns[s]): tools for s, tools in current.items()}))
            for server in conns:
                self.held.pop(server, None)
                self._seen[server] = digest(current[server])
            return {server: set() for server in conns}
        if accepted is None:
            tell(f"{lines[0]} {CANNOT_ASK}: review them in pyaichat in a terminal with /tools review NAME.")
        else:
            tell("The MCP tools stay unoffered this session (/tools review NAME asks again).")
        for server, tools in current.items():
            self.held[server] = set(tools)
        return {server: set(self.held[server]) for server in conns}

    def _tell_problem(self, tell: Callable[[str], None]) -> None:
        if self.pins.problem:
            tell(self.pins.problem)
            self.pins.problem = None

    def changed(self, tool: Any, conn: Any) -> bool:
        """True when ``conn`` now lists ``tool`` (as offered this turn) differently, or not at all: the
        server said its tools changed during the turn, and the person has not seen it."""
        now = next((t for t in getattr(conn, "tools", ()) if t.name == tool.name), None)
        return now is None or digest(definition(now)) != digest(definition(tool))

    def _ask(self, name: str, title: str, lines: list[str], approve: Decide) -> bool | None:
        """The person's answer on the panel: True accepted, False refused, ``None`` no one could answer."""
        proposal = Proposal.of_tool(
            name,
            {},
            lambda _arguments: "accepted",
            source=ASSISTANT,
            explanation="\n".join(lines),
            title=title,
            choices="accept",
        )
        outcome = approve(proposal)
        if outcome.status == "not_asked":
            return None
        return outcome.ran
