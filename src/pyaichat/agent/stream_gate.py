"""Which streamed text can be shown at once, and which must wait because it may turn out to be a tool call.

A model that calls tools in text (the text protocol's blocks, or a format it was trained on) streams the call
like any prose; the user should see the prose and never the call. ``StreamGate`` releases text as soon as it
cannot be part of a call and holds back the rest until the reply says what it is.
"""

from __future__ import annotations

from .textcalls import pythonic_calls, recover_calls
from .textproto import OPEN_TAGS


class StreamGate:
    """Lets streamed text through as soon as it cannot be (part of) a tool call.

    A reply whose first characters could open a JSON tool call (``{`` or a code fence) is held until it is
    clearly prose or the reply ends. Each new line is looked at as it starts: a line that opens a call in one
    of the formats local models write (``<tool_call>``, ``[TOOL_CALLS]``, ```` ```tool_code ````, a known
    tool's name followed by ``(``, a JSON object) is held until it is complete, and once it is known to be
    a call nothing more of this reply is shown. With ``tags=True`` (text protocol) text from a possible
    ``<tool``/``<python`` opening on is held too, wherever it starts.
    """

    def __init__(self, tags: bool, tool_params: dict[str, list[str]] | None = None) -> None:
        self.tags = tags
        self.params = tool_params or {}
        self.buffer = ""
        self.shown = 0  # characters of ``buffer`` already released
        self.decided_prose = False
        self.closed = False  # a tool call has started: nothing more of this reply is shown

    def feed(self, piece: str) -> str:
        self.buffer += piece
        if self.closed:
            return ""
        if not self.decided_prose:
            head = self.buffer.lstrip()
            if not head or _maybe_json_call(head):
                return ""
            self.decided_prose = True
        limit = self._line_limit()
        if self.tags and not self.closed:
            tag_at = _first_tag(self.buffer, self.shown)
            if tag_at is not None and tag_at < limit:
                self.closed = True
                limit = tag_at
            elif tag_at is None:
                limit = min(limit, _safe_end(self.buffer, self.shown))
        out = self.buffer[self.shown : limit]
        self.shown = max(self.shown, limit)
        return out

    def _line_limit(self) -> int:
        """How far the text can be released: up to the first line that is (or may become) a tool call."""
        buf, pos = self.buffer, self.shown
        while pos < len(buf):
            line_start = buf.rfind("\n", 0, pos) + 1
            newline = buf.find("\n", pos)
            if line_start < pos:  # inside a line already judged prose
                if newline < 0:
                    return len(buf)
                pos = newline + 1
                continue
            line = buf[pos : newline if newline >= 0 else len(buf)]
            verdict = self._judge(line, complete=newline >= 0)
            if verdict == "call":
                self.closed = True
                return pos
            if verdict == "hold":
                return pos
            pos = newline + 1 if newline >= 0 else len(buf)
        return pos

    def _judge(self, line: str, *, complete: bool) -> str:
        """ "call", "hold" (cannot tell yet) or "prose" for a line of the reply."""
        s = line.lstrip()
        if any(s.startswith(m) for m in _CALL_MARKERS):
            return "call"
        if not complete and any(m.startswith(s) for m in _CALL_MARKERS):
            return "hold"
        for name in self.params:
            for opening in (name + "(", "[" + name + "(", "`" + name + "("):
                if s.startswith(opening):
                    if not complete:
                        return "hold"
                    return "call" if pythonic_calls(s, self.params) else "prose"
                if not complete and opening.startswith(s):
                    return "hold"
        if s.startswith("{") and self.params:
            if not complete:
                return "hold"
            return "call" if recover_calls(s, self.params).calls else "prose"
        return "prose"

    def rest(self) -> str:
        """Text not yet released (call when the reply has ended and is known to be an answer)."""
        out = self.buffer[self.shown :]
        self.shown = len(self.buffer)
        return out


_CALL_MARKERS = ("<tool_call>", "[TOOL_CALLS]", "```tool_code", "<|python_tag|>")


def _maybe_json_call(head: str) -> bool:
    if head.startswith("{"):
        return True
    if head.startswith("`"):
        if len(head) < 3 or ("\n" not in head and len(head) < 12):
            return True  # too early to know the fence's language
        first_line = head.split("\n", 1)[0].strip("`").strip().lower()
        if first_line not in ("", "json", "tool", "tool_call"):
            return False
        after = head.split("\n", 1)[1].lstrip() if "\n" in head else ""
        return not after or after.startswith("{")
    return False


def _first_tag(text: str, start: int) -> int | None:
    hits = [i for i in (text.find(tag, start) for tag in OPEN_TAGS) if i >= 0]
    return min(hits) if hits else None


def _safe_end(text: str, start: int) -> int:
    """Release up to a trailing ``<…`` that could still grow into ``<tool`` or ``<python``."""
    cut = text.rfind("<", start)
    if cut < 0:
        return len(text)
    tail = text[cut:]
    if any(tag.startswith(tail) for tag in OPEN_TAGS):
        return cut
    return len(text)
