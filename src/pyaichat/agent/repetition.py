"""Notices a streamed reply that has fallen into a loop, so the loop can cut it after a few repeats.

Small local models at temperature 0 often repeat one sentence until the token cap or the turn deadline
("The type of the variable `df` is `NoneType`." a hundred times). Two signals, both cheap per streamed piece:

- the same line (four words or more) appearing ``LINE_REPEATS`` times in the reply;
- the reply's tail being one run of words repeated back to back: a period of ``n`` words repeated at least
  ``max(4, ceil(24 / n))`` times (so "no no no" is not a loop, but 24 of them are).

Digits are folded to ``0`` first, so a loop that counts ("Step 1 … Step 2 …") is still one loop.
``cut`` is where the useful text ends: just after the first occurrence of what repeats.
"""

from __future__ import annotations

import re

LINE_REPEATS = 4
MIN_LINE_WORDS = 4
MIN_REPEATED_WORDS = 24
MIN_PERIOD_REPEATS = 4
MAX_PERIOD_WORDS = 60
CHECK_EVERY = 40  # characters of new text between checks of the word-period rule
_WORD = re.compile(r"\S+")
_DIGITS = re.compile(r"\d+")

LOOP_NOTE = "Stopped: the model kept repeating itself, so the rest of its reply was cut."


def _norm(word: str) -> str:
    return _DIGITS.sub("0", word.lower())


class RepetitionGuard:
    """Feed it streamed text; ``feed`` returns True once the reply is looping (and then stays True)."""

    def __init__(self) -> None:
        self.text = ""
        self.looping = False
        self.cut = 0  # characters of ``text`` worth keeping once a loop was found
        self._lines: dict[str, tuple[int, int]] = {}  # normalised line -> (count, end of its first copy)
        self._line_start = 0
        self._checked = 0

    def feed(self, piece: str) -> bool:
        if self.looping or not piece:
            return self.looping
        self.text += piece
        self._scan_lines()
        if not self.looping and len(self.text) - self._checked >= CHECK_EVERY:
            self._checked = len(self.text)
            self._scan_period()
        return self.looping

    def kept(self) -> str:
        """The reply up to where the repetition began (all of it when there is none)."""
        return self.text[: self.cut].rstrip() if self.looping else self.text

    # -- rule 1: the same line over and over -----------------------------------------------------------------
    def _scan_lines(self) -> None:
        while True:
            end = self.text.find("\n", self._line_start)
            if end < 0:
                return
            line = self.text[self._line_start : end]
            self._line_start = end + 1
            words = [_norm(w) for w in _WORD.findall(line)]
            if len(words) < MIN_LINE_WORDS:
                continue
            key = " ".join(words)
            count, first_end = self._lines.get(key, (0, end))
            self._lines[key] = (count + 1, first_end)
            if count + 1 >= LINE_REPEATS:
                self._found(first_end)
                return

    # -- rule 2: the tail is one run of words repeated back to back ----------------------------------------
    def _scan_period(self) -> None:
        matches = list(_WORD.finditer(self.text[-6000:]))
        offset = max(0, len(self.text) - 6000)
        words = [_norm(m.group()) for m in matches]
        total = len(words)
        for period in range(1, MAX_PERIOD_WORDS + 1):
            repeats = max(MIN_PERIOD_REPEATS, -(-MIN_REPEATED_WORDS // period))
            span = period * repeats
            if span > total:
                break
            tail = words[total - span :]
            if tail[:-period] == tail[period:]:
                start = total - span
                while start > 0 and words[start - 1] == words[start - 1 + period]:
                    start -= 1  # the loop began earlier than the checked tail
                first = matches[start + period - 1]  # last word of the first copy
                self._found(offset + first.end())
                return

    def _found(self, cut: int) -> None:
        self.looping = True
        self.cut = cut
