"""The session's MCP servers as the assistant's tools: what each turn offers, and how a call of one runs.

A call runs at once only when ``trust.runs_without_asking``; every other call goes to the person first
(``approve``, through ``approval``: run, run with edited arguments, or no — the decision goes back to the
model). Every result is masked (pyaichat's rules and the servers' own ``env``/``headers`` values), cut to
``max_output_chars``, and recorded in the audit log like a capability call, with the server, the tool and the
person's decision. The settings are the question's own (``TurnTools.config``), not the ones the servers were
started with. A server's requests back during a call are answered by the turn's ``requests_back.Answerer``.

One module of ~450 lines on purpose: one call's life (approval, run, masking, bounds, audit) is one path
through ``ServerTools.run``, and each turn's view of it (``TurnTools``) only narrows what that path is given;
the parts it delegates (trust, offer, results, review, requests back) are modules of their own already.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..capabilities import audit
from ..capabilities.catalog import CapabilityResult, cap_text
from ..capabilities.redact import masker_for
from ..proposal import Decide
from .approval import AnswerQuestion, Sample, tool_proposal
from .connection import ServerProblem
from .manager import Manager
from .naming import offered_name
from .offer import DESCRIBE, SYSTEM_NOTE, OfferedTool, describe_schema, parameters
from .policy import DENY, refusal, verdict
from .requests_back import Answerer
from .results import convert
from .review import Reviews
from .status import status_lines

IMAGE_PRIVACY = ("sample", "full")  # privacy levels at which a tool's images may reach the model


class ServerTools:
    """The session's MCP servers as the assistant's tools (one per session, kept by the ``Assistant``)."""

    def __init__(
        self,
        config: Any,
        *,
        session: Any,
        manager: Manager | None = None,
        reviews: Reviews | None = None,
    ) -> None:
        self.config = config
        self.session = session  # whose calls the audit log records
        self.manager = manager or Manager.from_config(config)
        self.reviews = reviews or Reviews()  # pins, and what the person allowed beyond one call
        self.manager.on_listed = self.reviews.listed  # a server's first listing pins it on first use
        self._names: dict[tuple[str, str], str] = {}

    # -- the session ---------------------------------------------------------------------------------------
    def warm_up(self) -> None:
        self.manager.start()

    def close(self) -> None:
        self.manager.close()

    def mask(self, text: str, config: Any = None) -> str:
        """pyaichat's masking, and every value the servers were given in ``env``/``headers``."""
        for secret in self.manager.secrets():
            if secret in text:
                text = text.replace(secret, "<redacted MCP server secret>")
        return masker_for(config or self.config).mask_text(text)

    # -- a turn --------------------------------------------------------------------------------------------
    def for_turn(
        self,
        *,
        can_approve: bool,
        config: Any = None,
        approve: Decide | None = None,
        answer_question: AnswerQuestion | None = None,
        sample: Sample | None = None,
        tell: Callable[[str], None] | None = None,
    ) -> TurnTools:
        """The tools to offer now (started servers' only; servers still starting are waited for, each within
        its start deadline), and the failures not told yet; ``config``: this question's settings.
        ``approve``, ``answer_question`` and ``sample`` answer the servers' requests back during the turn
        (``None``: no one can)."""
        self.manager.wait()
        config = config or self.config
        say = tell or (lambda sentence: None)
        self.manager.revive()  # a server that crashed comes back on the next need, at most once a minute
        for line in self.manager.said():
            say(self.mask(line))
        offered: dict[str, OfferedTool] = {}
        withheld: dict[str, OfferedTool] = {}
        held: dict[str, str] = {}  # not offered: the name -> why
        ready = {s: c for s, c in self.manager.servers.items() if c.state == "ready" and c.launch is not None}
        review = approve if can_approve else None
        unaccepted_by = self.reviews.check_all(ready, review, say, self.mask)
        for server, conn in ready.items():
            unaccepted = unaccepted_by.get(server, set())
            for tool in conn.tools:
                name = self._name(server, tool.name)
                if tool.name in unaccepted:
                    why = (
                        "the MCP pins file cannot be read, and you have not accepted the tools as they are"
                        if self.reviews.pins.damaged is not None
                        else f"its definition changed since you first used the server {server!r}, and you "
                        "have not accepted the change"
                    )
                    held[name] = f"{name} is not offered: {why} (/tools review {server})."
                    continue
                found = verdict(
                    server, tool, conn.launch.read_only, config.mcp_tool_rules, self.reviews.allowed
                )
                if found.action == DENY:
                    held[name] = refusal(name, found)
                    continue
                entry = OfferedTool(name, server, tool, conn.launch.read_only, found)
                (offered if can_approve or entry.runs_at_once else withheld)[entry.name] = entry
        for line in self.reviews.allowed.news():  # a project's own file that was ignored, once
            say(line)
        answerer = self.answerer(
            config, approve=approve, answer_question=answer_question, sample=sample, tell=tell
        )
        turn = TurnTools(offered, self, can_approve, config, self.news(), withheld, answerer)
        turn.held = held
        return turn

    def restart(self, server: str) -> str:
        """``/tools restart NAME``: the one line that says how it went (masked)."""
        return self.mask(self.manager.restart(server))

    def review(self, server: str, approve: Decide | None, tell: Callable[[str], None]) -> None:
        """``/tools review NAME``: show the server's changed definitions again and ask to accept them."""
        self.manager.wait()
        conn = self.manager.servers.get(server)
        if conn is None:
            known = ", ".join(self.manager.servers) or "none"
            tell(f"There is no MCP server {server!r} (started: {known}).")
            return
        if conn.state != "ready" or conn.launch is None:
            tell(f"The MCP server {server!r} is {conn.state}; its tools can be reviewed once it runs.")
            return
        if self.reviews.pins.damaged is not None:  # one review for every server's tools
            ready = {s: c for s, c in self.manager.servers.items() if c.state == "ready" and c.launch}
            self.reviews.check_all(ready, approve, tell, self.mask, again=True)
            return
        self.reviews.check(server, conn, approve, tell, self.mask, again=True)

    def answerer(
        self,
        config: Any,
        *,
        approve: Decide | None = None,
        answer_question: AnswerQuestion | None = None,
        sample: Sample | None = None,
        tell: Callable[[str], None] | None = None,
    ) -> Answerer:
        """How a turn with ``config`` answers its servers' requests back (``requests_back``)."""

        def record(name: str, args: Any, **fields: Any) -> None:
            if config.audit:
                masked = self._masked_args(args, config)
                audit.record(self.session, name, masked, origin="assistant", **fields)

        return Answerer(
            model=config.model or "",
            config=config,
            mask=lambda value: self._masked_args(value, config),
            audit=record,
            approve=approve,
            answer_question=answer_question,
            sample=sample,
            tell=tell or (lambda sentence: None),
        )

    def news(self) -> list[str]:
        """Failures not told to the user yet, each once (masked)."""
        return [self.mask(sentence) for sentence in self.manager.news()]

    def _name(self, server: str, tool: str) -> str:
        key = (server, tool)
        if key not in self._names:
            self._names[key] = offered_name(server, tool, self._names.values())
        return self._names[key]

    # -- calls ---------------------------------------------------------------------------------------------
    def describe(
        self, offered: dict[str, OfferedTool], args: dict[str, Any], config: Any
    ) -> CapabilityResult:
        started = time.perf_counter()
        name = args.get("name") if isinstance(args, dict) else None
        entry = offered.get(name) if isinstance(name, str) else None
        if entry is None:
            known = ", ".join(offered) or "none"
            error = f"No tool named {name!r}; known: {known}."
            return self._audited(
                self._result(DESCRIBE, started, config, ok=False, error=error), args, {}, config
            )
        text = json.dumps(
            entry.full(lambda t: self.mask(t, config))["function"], ensure_ascii=False, indent=1
        )
        return self._audited(self._result(DESCRIBE, started, config, ok=True, text=text), args, {}, config)

    def run(
        self,
        entry: OfferedTool,
        args: dict[str, Any],
        config: Any = None,
        *,
        images: bool,
        approve: Decide | None,
        call_id: str = "",
        answer: Answerer | None = None,
    ) -> CapabilityResult:
        """Call ``entry`` with ``args``: at once when it may run without asking, else after ``approve``;
        ``answer`` answers the server's requests back meanwhile."""
        config = config or self.config
        extra: dict[str, Any] = {"server": entry.server, "tool": entry.tool.name}
        self.manager.settle(entry.server)
        conn = self.manager.servers.get(entry.server)
        if conn is not None and conn.state == "ready" and self.reviews.changed(entry.tool, conn):
            error = (
                f"{entry.name} was not sent: the MCP server {entry.server!r} changed its tools during this "
                f"session, and the user has not seen the change (/tools review {entry.server})."
            )
            started = time.perf_counter()
            return self._audited(
                self._result(entry.name, started, config, ok=False, error=error), args, extra, config
            )
        # decided again at the call: an allowance given earlier in this turn counts, and so does a rule
        rules, allowed = config.mcp_tool_rules, self.reviews.allowed
        found = verdict(entry.server, entry.tool, entry.read_only, rules, allowed)
        if found.action == DENY:
            started = time.perf_counter()
            error = refusal(entry.name, found)
            return self._audited(
                self._result(entry.name, started, config, ok=False, error=error), args, extra, config
            )
        entry = replace(entry, decided=found)
        if entry.runs_at_once:
            return self._audited(self._execute(entry, args, images, config, answer), args, extra, config)
        reason = entry.verdict.reason
        started = time.perf_counter()
        if approve is None:
            error = (
                f"{entry.name} needs the user's approval ({reason}), and no one can give it here "
                "(piped input); it did not run."
            )
            return self._audited(
                self._result(entry.name, started, config, ok=False, error=error), args, extra, config
            )
        done: list[tuple[dict[str, Any], CapabilityResult]] = []

        def run_it(arguments: dict[str, Any]) -> CapabilityResult:
            result = self._execute(entry, arguments, images, config, answer)
            done.append((arguments, result))
            return result

        proposal = tool_proposal(
            call_id=call_id,
            server=entry.server,
            name=entry.name,
            arguments=self._masked_args(args, config),
            description=self.mask(entry.description, config),
            reason=reason,
            run=run_it,
            scopes=entry.verdict.scopes,
        )
        outcome = approve(proposal)
        edited = outcome.status == "edited"
        extra["decision"] = "edited" if edited else ("run" if outcome.ran else "no")
        if outcome.ran and outcome.scope in ("session", "project"):
            extra["scope"] = outcome.scope
            line = self.reviews.allowed.allow(entry.server, entry.tool.name, outcome.scope)
            if answer is not None:
                answer.tell(line)
        if not outcome.ran:  # declined, unanswered, or it failed: what the model is told
            return self._audited(
                self._result(entry.name, started, config, ok=False, error=outcome.observation),
                args,
                extra,
                config,
            )
        if not done:  # the decider left the call to us
            run_it(outcome.arguments if outcome.arguments is not None else args)
        arguments, result = done[-1]
        if edited and result.ok:
            shown = json.dumps(self._masked_args(arguments, config), ensure_ascii=False)
            text, _ = self._bounded(
                f"(The user edited the arguments before running it: {shown})\n{result.text}", config
            )
            result = result.model_copy(update={"text": text})
        return self._audited(result, arguments, extra, config)

    def _execute(
        self,
        entry: OfferedTool,
        args: dict[str, Any],
        images: bool,
        config: Any,
        answer: Answerer | None = None,
    ) -> CapabilityResult:
        """The call itself: its result masked and bounded, or the sentence saying why it failed."""
        started = time.perf_counter()
        try:
            try:
                result = self.manager.call(entry.server, entry.tool.name, args, answer=answer)
            finally:
                for line in self.manager.said():  # restarted on this need: one line for the person
                    if answer is not None:
                        answer.tell(self.mask(line, config))
        except ServerProblem as exc:
            return self._result(entry.name, started, config, ok=False, error=str(exc))
        except Exception as exc:  # the server refused this call (bad arguments, say): the model may retry
            error = f"{entry.name} failed: {_short(exc)}"
            if entry.tool.input_schema.get("properties"):
                error += (
                    f"\nIts arguments: {json.dumps(parameters(entry.tool.input_schema), ensure_ascii=False)}"
                )
            return self._result(entry.name, started, config, ok=False, error=error)
        see = images and config.privacy in IMAGE_PRIVACY
        why = "this model cannot see images" if not images else f"privacy level {config.privacy!r}"
        converted = convert(result, images=see, why_no_images=why)
        if converted.is_error:
            return self._result(entry.name, started, config, ok=False, error=converted.text)
        return self._result(
            entry.name, started, config, ok=True, text=converted.text, images=converted.images
        )

    def _masked_args(self, args: Any, config: Any) -> Any:
        masker = masker_for(config)
        return json.loads(
            self.mask(json.dumps(masker.mask_value(args), ensure_ascii=False, default=str), config)
        )

    def _result(
        self,
        name: str,
        started: float,
        config: Any,
        *,
        ok: bool,
        text: str = "",
        error: str | None = None,
        images: Sequence[str] = (),
    ) -> CapabilityResult:
        text, cut = self._bounded(text, config)
        if error is not None:
            error, _ = self._bounded(error, config)
        return CapabilityResult(
            name=name,
            ok=ok,
            text=text,
            truncated=cut,
            error=error,
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
            images=tuple(images) if ok else (),
        )

    def _audited(
        self, result: CapabilityResult, args: Any, extra: dict[str, Any], config: Any
    ) -> CapabilityResult:
        if config.audit:
            audit.record_result(self.session, result, self._masked_args(args, config), **extra)
        return result

    def _bounded(self, text: str, config: Any) -> tuple[str, bool]:
        """``text`` masked and cut to ``max_output_chars`` (what is cut away is never masked: a tool may
        return megabytes)."""
        limit = config.max_output_chars
        unseen = max(len(text) - limit * 4, 0)
        return cap_text(self.mask(text[: limit * 4], config), limit, hidden=unseen)

    # -- /tools --------------------------------------------------------------------------------------------
    def status_lines(self, *, kernel: bool = False) -> list[str]:
        """One block per server for ``/tools``: state, tools (and which run at once), calls, last error."""
        return status_lines(
            self.manager,
            self.mask,
            kernel=kernel,
            decide=lambda server, tool, read_only: verdict(
                server, tool, read_only, self.config.mcp_tool_rules, self.reviews.allowed
            ),
            held=self.reviews.held,
        )


def _short(exc: BaseException) -> str:
    text = " ".join(str(getattr(exc, "message", "") or exc).split())
    return text[:300] or type(exc).__name__


@dataclass
class TurnTools:
    """The MCP tools of one turn: both forms, ``describe_tool``, and how calls of them run."""

    offered: dict[str, OfferedTool]
    servers: ServerTools
    can_approve: bool
    config: Any  # this question's settings (masking, bounds, privacy, audit)
    news: list[str] = field(default_factory=list)
    withheld: dict[str, OfferedTool] = field(default_factory=dict)  # need approval, and no one can give it
    answerer: Answerer | None = None  # the servers' requests back during this turn
    held: dict[str, str] = field(default_factory=dict)  # not offered (denied, or changed and not accepted)

    def schemas(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
        mask = self.mask
        tools = list(self.offered.values())
        return [t.full(mask) for t in tools], [t.brief(mask) for t in tools], describe_schema()

    def handles(self, name: str) -> bool:
        return name == DESCRIBE or name in self.offered or name in self.withheld or name in self.held

    def mask(self, text: str) -> str:
        return self.servers.mask(text, self.config)

    def unknown(self, name: str, ours: Sequence[str]) -> str:
        """What the model is told of a tool it was not offered: why, when it names a server that is not
        running; else every tool it was offered this turn (ours, the servers', ``describe_tool``)."""
        server = name.split("__", 1)[0] if "__" in name else ""
        conn = self.servers.manager.servers.get(server)
        if conn is not None and conn.state != "ready":
            why = conn.error or f"the MCP server {server!r} is {conn.state}"
            return self.mask(f"{name} is not available: {why}")
        offered = [*ours, *self.offered, *([DESCRIBE] if self.offered else [])]
        return f"There is no tool named {name!r}. The tools offered to you: {', '.join(offered) or 'none'}."

    def system_note(self) -> str:
        """What the system prompt says about these tools (only when some are offered)."""
        return SYSTEM_NOTE

    def run(
        self, name: str, args: dict[str, Any], *, images: bool, approve: Decide | None, call_id: str = ""
    ) -> CapabilityResult:
        """One call of an MCP tool (or of ``describe_tool``); never raises except for Ctrl-C."""
        if name == DESCRIBE:
            return self.servers.describe(self.offered, args, self.config)
        if name in self.held:  # denied by a rule, or changed and not accepted: never sent
            return CapabilityResult(name=name, ok=False, error=self.held[name])
        if name in self.withheld:  # the model guessed a tool it was not offered: it needs the person
            approve = None
        entry = self.offered.get(name) or self.withheld[name]
        return self.servers.run(
            entry,
            args,
            self.config,
            images=images,
            approve=approve,
            call_id=call_id,
            answer=self.answerer,
        )
