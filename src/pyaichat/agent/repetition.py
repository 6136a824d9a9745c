"""Notices a streamed reply that has fallen into a loop, so the loop can cut it after a few repeats.

Small local models at temperature 0 often repeat one sentence until the token cap or the turn deadline
("The type of the variable `df` is `NoneType`." a hundred times). Three signals, all cheap per streamed piece:

- the same line (four words or more) appearing ``LINE_REPEATS`` times in the reply;
- the reply's tail being one run of words repeated back to back: a period of ``n`` words repeated at least
  ``max(4, ceil(24 / n))`` times (so "no no no" is not a loop, but 24 of them are);
- a sentence of prose said again in other words ``SENTENCE_REPEATS`` times: "I apologize for the confusion.
  … I apologize for any confusion caused. … I'm sorry for the confusion." — no line and no run of words
  repeats exactly, so the two rules above let 709 tokens (25 s) of such an apology through. Two sentences are
  near copies when most of their words are the same (``NEAR``) and none of the words that differ carries
  information: a number, a code span, a quoted name, a name (a capital past the first word). So "The column
  `a` has 3 missing values. The column `b` has 0 missing values." is an enumeration, not a loop; and table
  rows, list items, headings and code are never compared (they repeat their shape by nature). A sentence is
  compared with those of the last ``RECENT_SENTENCES`` only (a loop comes back soon), so a long answer costs
  time in proportion to its length.

Digits are folded to ``0`` first for the first two rules, so a loop that counts ("Step 1 … Step 2 …") is
still one loop — except in table rows and code, whose lines differ by their numbers (a table by month is no
loop). ``cut`` is where the useful text ends: just after the first occurrence of what repeats (for near
copies: just before the first of them, so one whole round of a loop of several sentences stays).
Measured with ``benchmarks/repetition.py`` on ``tests/agent/repetition_corpus.py``.
"""

from __future__ import annotations

import re
from collections import Counter

LINE_REPEATS = 4
MIN_LINE_WORDS = 4
MIN_REPEATED_WORDS = 24
MIN_PERIOD_REPEATS = 4
MAX_PERIOD_WORDS = 60
CHECK_EVERY = 40  # characters of new text between checks of the word-period rule
SENTENCE_REPEATS = 3  # a sentence and two near copies of it
MIN_SENTENCE_WORDS = 5
NEAR = 0.7  # share of the words two sentences have in common (weighted Jaccard) that makes them near copies
RECENT_SENTENCES = 24  # a sentence is compared with the families of this many sentences before it
# each period of words rule 2 looks for, with how many words its repeats span
_PERIODS = [
    (n, n * max(MIN_PERIOD_REPEATS, -(-MIN_REPEATED_WORDS // n))) for n in range(1, MAX_PERIOD_WORDS + 1)
]
_WORD = re.compile(r"\S+")
_DIGITS = re.compile(r"\d+")
# where a sentence ends: its closing mark (and quotes or brackets after it) before a space, or a line's end
_SENTENCE_END = re.compile(r"[.!?]+[\"'”’)\]*_]*(?=\s)|\n")
# lines whose sentences repeat their shape by nature: table rows, list items, headings, indented code
_STRUCTURE = re.compile(r"\s*(?:\||[-*+•]\s|\d+[.)]\s|#)| {4}|\t")
_FENCE = re.compile(r"\s*(?:```|~~~)")
_PUNCTUATION = re.compile(r"[^\w'’]+")

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
        self._in_code = False  # inside a fenced code block (as far as whole lines tell)
        self._words: list[str] = []  # the reply's whole words as rule 2 compares them (digits folded outside
        self._ends: list[int] = []  # tables and code), and where each ends in ``text``
        self._words_end = 0  # ``text[:_words_end]`` is in ``_words``
        self._sentence_start = 0
        self._families: list[_Family] = []  # sentences of prose, each with its near copies so far

    def feed(self, piece: str) -> bool:
        if self.looping or not piece:
            return self.looping
        self.text += piece
        self._scan_lines()
        if not self.looping:
            self._scan_sentences()
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
            fence = _FENCE.match(line) is not None
            if fence:
                self._in_code = not self._in_code
            # a table's rows and code differ by their numbers: the same line only when it is the very same
            exact = (self._in_code and not fence) or line.lstrip().startswith("|")
            words = [w.lower() if exact else _norm(w) for w in _WORD.findall(line)]
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
        self._take_words()
        words, total = self._words, len(self._words)
        for period, span in _PERIODS:
            if span > total:
                break
            if words[-1] != words[-1 - period]:  # most periods fail on the last word: no slices for them
                continue
            tail = words[total - span :]
            if tail[:-period] == tail[period:]:
                start = total - span
                while start > 0 and words[start - 1] == words[start - 1 + period]:
                    start -= 1  # the loop began earlier than the checked tail
                self._found(self._ends[start + period - 1])  # the end of the first copy's last word
                return

    def _take_words(self) -> None:
        """Add the words completed since the last check (up to the last space) to ``_words``, each folded
        unless its line is a table row or code (known at the line's start: its ``|``, or an open fence)."""
        done = self._words_end
        last_space = max(self.text.rfind(" "), self.text.rfind("\n"), self.text.rfind("\t"))
        if last_space < done:
            return
        for line in re.finditer(r"[^\n]*\n?", self.text[done : last_space + 1]):
            if not line.group():
                break
            line_start = self.text.rfind("\n", 0, done + line.start()) + 1
            exact = self._in_code or self.text[line_start : line_start + 80].lstrip().startswith("|")
            for word in _WORD.finditer(line.group()):
                self._words.append(word.group().lower() if exact else _norm(word.group()))
                self._ends.append(done + line.start() + word.end())
        self._words_end = last_space + 1

    # -- rule 3: a sentence of prose said again in other words ---------------------------------------------
    def _scan_sentences(self) -> None:
        while not self.looping:
            found = _SENTENCE_END.search(self.text, self._sentence_start)
            if found is None:
                return
            start, end = self._sentence_start, found.end()
            self._sentence_start = end
            line_start = self.text.rfind("\n", 0, start) + 1
            if (
                self._in_code
                or _STRUCTURE.match(self.text, line_start)
                or _FENCE.match(self.text, line_start)
            ):
                continue
            sentence = _Sentence(self.text[start:end], start)
            if len(sentence.words) < MIN_SENTENCE_WORDS:
                continue
            recent = self._families[-RECENT_SENTENCES:]  # a loop comes back soon; a long answer stays linear
            family = next((f for f in reversed(recent) if f.first.near(sentence)), None)
            if family is None:
                self._families.append(_Family(sentence))
                continue
            self._families.remove(family)  # the latest copy keeps it among the recent ones
            self._families.append(family)
            family.copies.append(sentence)
            if len(family.copies) + 1 >= SENTENCE_REPEATS:
                self._found(family.copies[0].start)

    def _found(self, cut: int) -> None:
        self.looping = True
        self.cut = cut


class _Sentence:
    """A sentence as the near-copy rule compares it: its words folded (case, digits, punctuation) and, apart,
    what it says exactly (its numbers, code spans, quoted names and names: a capital past the first word)."""

    __slots__ = ("exact", "size", "start", "words")

    def __init__(self, text: str, start: int) -> None:
        self.start = start
        plain = [_PUNCTUATION.sub("", w).strip("'’") for w in _WORD.findall(text.replace("`", " "))]
        self.words = Counter(_DIGITS.sub("0", w.lower()) for w in plain if w)
        self.size = sum(self.words.values())
        numbers = {w for w in plain if any(ch.isdigit() for ch in w)}
        names = {w.lower() for w in plain[1:] if w[:1].isupper() and w not in _PRONOUNS}  # not the first word
        self.exact = {m.group(0).lower() for m in _MARKED.finditer(text)} | numbers | names

    def near(self, other: _Sentence) -> bool:
        """Most words shared, and the same numbers, code spans and names."""
        small, large = sorted((self.size, other.size))
        if self.exact != other.exact or small < NEAR * large:  # a sentence much longer cannot be a copy
            return False
        theirs = other.words
        shared = sum(min(count, theirs[word]) for word, count in self.words.items() if word in theirs)
        return shared >= NEAR * (self.size + other.size - shared)  # shared / all the words of both


class _Family:
    __slots__ = ("copies", "first")

    def __init__(self, first: _Sentence) -> None:
        self.first = first
        self.copies: list[_Sentence] = []


_MARKED = re.compile(r"`[^`]+`|\"[^\"]+\"|“[^”]+”")
_PRONOUNS = frozenset({"I", "I'm", "I’m", "I'll", "I’ll", "I've", "I’ve", "I'd", "I’d"})
