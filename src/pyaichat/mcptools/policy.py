"""The one decision of how a call of an MCP tool is handled — run at once, ask the person, or refuse — and
where that decision comes from (``/tools`` shows it per tool).

In this order, the first that applies decides:

1. a rule ``deny`` in ``mcp_tool_rules`` (deny always wins: over trust, over any allowance);
2. a rule ``ask`` (asks every time; the panel then offers no session or project scope);
3. a rule ``allow``;
4. the person allowed the tool for this session or for this project (``allowances``);
5. the server is marked ``trust = "read-only"`` and the tool claims ``readOnlyHint`` (``trust``);
6. otherwise it asks.

A tool whose definition changed since it was pinned is not offered at all until the person accepts the
change (``pins``), whatever this says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..configuration.mcp_tool_rules import ALLOW, ASK, DENY, Rules, matching
from .allowances import Allowances
from .trust import runs_without_asking, why_it_asks

RUN = "run"


@dataclass(frozen=True)
class Verdict:
    action: str  # "run" | "ask" | "deny"
    source: str  # where it comes from, short, for /tools
    scopes: bool = True  # the panel may offer "this session" / "this project"
    why: str = ""  # the panel's sentence on why it asks, when ``source`` is too short for it

    @property
    def reason(self) -> str:
        return self.why or self.source

    @property
    def runs_at_once(self) -> bool:
        return self.action == RUN


def verdict(server: str, tool: Any, read_only: bool, rules: Rules, allowances: Allowances | None) -> Verdict:
    """How a call of ``server``'s ``tool`` (an ``mcp_types.Tool``) is handled (see the module docstring)."""
    rule = matching(rules, server, tool.name)
    if rule is not None:
        pattern, said = rule
        where = f'rule "{pattern}" = "{said}" in mcp_tool_rules'
        if said == DENY:
            return Verdict(DENY, where, scopes=False)
        if said == ASK:
            return Verdict(ASK, where, scopes=False)
        if said == ALLOW:
            return Verdict(RUN, where)
    allowed = allowances.where(server, tool.name) if allowances is not None else None
    if allowed:
        return Verdict(RUN, allowed)
    if runs_without_asking(read_only, tool.annotations):
        return Verdict(RUN, 'trust = "read-only" and readOnlyHint')
    short = (
        'the default: the server is not trust = "read-only"'
        if not read_only
        else ("the default: the tool does not claim readOnlyHint alone")
    )
    return Verdict(ASK, short, why=why_it_asks(server, read_only, tool.annotations))


def refusal(name: str, found: Verdict) -> str:
    """What the model is told of a call a rule denies."""
    return f"{name} is denied by the user's configuration ({found.source}); it did not run. Do not call it."
