"""The person's review of what their MCP servers offer: pinned definitions checked at each listing, the
changed ones shown as a short diff and accepted or refused (``pins``), and what they allowed beyond one call
(``allowances``). One per session, kept by ``tools.ServerTools``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..proposal import ASSISTANT, Decide, Proposal
from .allowances import Allowances
from .pins import Pins, compare, definition, digest, entry_key

CANNOT_ASK = "pyaichat cannot ask you here (piped input or a notebook)"


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
        current = {tool.name: definition(tool) for tool in conn.tools}
        stamp = digest(current)
        if not again and self._seen.get(server) == stamp:
            return self.held.get(server, set())
        self._seen[server] = stamp
        launch = conn.launch  # what the client declares changes what a server lists: part of the entry
        declared = "".join(f" +{kind}" for kind in ("sampling", "elicitation") if getattr(launch, kind, None))
        key = entry_key(launch.name, launch.where() + declared)
        known = self.pins.known(key)
        if self.pins.problem:
            tell(self.pins.problem)
            self.pins.problem = None
        if known is None:  # first use: trust it as it is now
            self.pins.pin(key, current)
            self.held.pop(server, None)
            return set()
        drift = compare(server, known, current)
        if not drift.held:
            if drift.removed:
                self.pins.pin(key, current, names=drift.removed)
                tell(f"The MCP server {server!r} no longer offers {', '.join(sorted(drift.removed))}.")
            elif again:
                tell(f"The tools of the MCP server {server!r} are as you accepted them; nothing to review.")
            self.held.pop(server, None)
            return set()
        lines = [mask(line) for line in drift.lines(current)]
        accepted = self._ask(server, lines, approve, tell) if approve is not None else None
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

    def changed(self, tool: Any, conn: Any) -> bool:
        """True when ``conn`` now lists ``tool`` (as offered this turn) differently, or not at all: the
        server said its tools changed during the turn, and the person has not seen it."""
        now = next((t for t in getattr(conn, "tools", ()) if t.name == tool.name), None)
        return now is None or digest(definition(now)) != digest(definition(tool))

    def _ask(
        self, server: str, lines: list[str], approve: Decide, tell: Callable[[str], None]
    ) -> bool | None:
        """The person's answer on the panel: True accepted, False refused, ``None`` no one could answer."""
        proposal = Proposal.of_tool(
            f"review {server}",
            {},
            lambda _arguments: "accepted",
            source=ASSISTANT,
            explanation="\n".join(lines),
            title=f"The MCP server {server!r} changed its tools",
            choices="accept",
        )
        outcome = approve(proposal)
        if outcome.status == "not_asked":
            return None
        return outcome.ran
