"""Numbers as an answer writes them: the value (scale words, percent, sign), how precise it is, and which
numbers are no claim at all (code, list markers, versions, years, labels of a table's rows).

A number's tolerance is what its writer committed to: the value rounded *or truncated* at the last digit
written (``55.2`` for 55.24, ``2.40 million`` for 2,406,605), a round integer read to its last non-zero digit
with two significant digits kept (``10,000`` ≈ 9,500–10,499), a hedge ("about", "roughly") 5 % either side.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .words import HEDGE_PHRASES, HEDGES, MONTHS, VERSION_WORDS

_SCALES = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "mm": 1e6,
    "million": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "t": 1e12,
    "tn": 1e12,
    "trillion": 1e12,
}
# A number as written: a sign, a currency, digits (grouped by commas or not), decimals, an exponent, a scale
# (a letter right after the digits, or a word after a space), a percent. Not a piece of a word (``float64``,
# ``x2``, ``16px``), a time, a version (``3.12.1``, ``3.x``) or a path. The look-ahead for its first character
# comes first, before the look-behind: the engine then rejects most positions of the text on one character
# (the same matches, a third less time to scan an answer).
NUMBER = re.compile(
    r"(?=[-−+$€£.\d])(?=[-−+]?[$€£]?\.?\d)(?<![\w.\-/−+$€£:])(?P<sign>[-−+](?=[$€£]?\d|[$€£]?\.\d))?(?P<cur>[$€£])?"
    r"(?P<int>\d+(?:,\d{3})+|\d+)?(?P<frac>\.\d+)?(?:[eE](?P<exp>[-+]?\d+))?"
    r"(?P<scale>[kKMB]\b|m(?=\b)(?![²³])|mn\b|bn\b|tn\b|\s(?:thousand|million|billion|trillion|mn|bn)\b)?"
    r"(?P<pct>\s?%|\s?ppt?\b|\s(?:percent|pct|percentage[ -]points?)\b)?"
    r"(?![\w/]|:\d|\.\d|\.[A-Za-z]|,\d{3}|-\d|\+(?![\d$€£.]))"
)
_MONTH = (
    r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
DATE = re.compile(
    r"(?<![\w.])(?:(?P<iy>\d{4})-(?P<im>\d{2})(?:-(?P<id>\d{2}))?(?:[ T]\d{2}:\d{2}(?::\d{2})?)?"
    r"|(?P<d1>\d{1,2})(?:st|nd|rd|th)?\s+" + _MONTH.replace("mon", "m1") + r"\.?(?:,?\s+(?P<y1>\d{4}))?"
    r"|" + _MONTH.replace("mon", "m2") + r"\.?\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<y2>\d{4}))?"
    r"|(?P<sd>\d{1,2})/(?P<sm>\d{1,2})/(?P<sy>\d{4}))(?![\w/]|\.\d|,\d)",
    re.I,
)
_FENCE = re.compile(r"^([ \t]*)(```|~~~)([\w+-]*)[^\n]*\n(.*?)(?:^\1\2[ \t]*$|\Z)", re.M | re.S)
_HTML_CODE = re.compile(r"<(code|script|style|pre)\b[^>]*>.*?(?:</\1>|\Z)", re.S | re.I)
_SPAN = re.compile(r"`([^`\n]+)`")
_CODE_LINE = re.compile(
    r"^\s*(?:import |from \w+ import|def |class |for .* in |return\b|print\(|if .*:|#"
    r"|[\w.\[\]'\"]+\s*[-+*/]?=\s)"
    r"|\w\([^)]*\)\s*$|[{};]\s*$"
)
_CODE_LANGS = {
    "python",
    "py",
    "python3",
    "sql",
    "pycon",
    "ipython",
    "bash",
    "sh",
    "shell",
    "js",
    "javascript",
    "json",
    "html",
    "xml",
    "r",
    "julia",
    "console",
    "text",
}
LIST_MARKER = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?(?:\d{1,3}[.)]|\(\d{1,3}\))(?:[ \t]|$)", re.M)
_ISO_HINT = re.compile(r"\d{4}-\d\d")
_WORD_OR_DOT = re.compile(r"[\w.]")
_SLASH_HINT = re.compile(r"\d/\d")
_MONTH_HINTS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# read at a month's name found with str.find (one regex tried at every position of the text costs more than
# the rest of reading it): "May 17", "Jan. 3", "17th May"
_AFTER_MONTH = re.compile(r"[a-z]*\.?,? \d")
_BEFORE_MONTH = re.compile(r"\d(?:st|nd|rd|th)? $")
_BARE_VALUE = re.compile(r"\s*[-−+]?[$€£]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?\s?%?\.?\s*$")
_HEDGE_TAIL = " \t*_$€£(\"'"


@dataclass(slots=True)
class Written:
    """One number of the answer as its writer meant it."""

    text: str
    value: float  # with its scale applied; a percent in percent units (4.71 for "4.71%")
    tol: float  # how far the true value may be (rounded or truncated at the last digit)
    start: int
    end: int
    pct: bool = False
    pp: bool = False
    signed: int = 0  # +1 / -1 when a sign is written, else 0
    scale: float = 1.0
    sig: int = 1  # significant digits written
    date: tuple[int, int, int] | None = None  # (year or 0, month, day or 0)
    hedged: bool = False
    integer: bool = True

    def agrees(self, written: float, true: float, unit: float) -> bool:
        """``true`` is what this number, read as ``written`` to ``unit``, states: rounded or truncated at its
        last digit (5 % either side when hedged)."""
        return _close(written, true, unit, self.hedged)


def _close(written: float, true: float, unit: float, hedged: bool) -> bool:
    diff = abs(written - true)
    if diff <= unit * 0.5 * (1 + 1e-9) + 1e-12:
        return True
    # truncation: the true value has more digits after the written ones (2.406 → "2.40")
    if abs(true) >= abs(written) and (true >= 0) == (written >= 0) and diff < unit * (1 - 1e-12):
        return True
    if hedged and diff <= 0.05 * abs(true) + 1e-12:
        return True
    return abs(true) > 1e-300 and diff / abs(true) < 1e-12  # float noise past the 15th digit


def parse_number(m: re.Match[str], offset: int = 0) -> Written | None:
    """The number a ``NUMBER`` match writes: its value (scale applied), the unit of its last digit (an
    integer with trailing zeros read to its last non-zero digit, two significant digits kept), its sign and
    percent."""
    sign, _cur, whole, frac, exp_text, scale_text, pct = m.groups()
    if whole is None and frac is None:
        return None
    digits = whole.replace(",", "") if whole else "0"
    exp = int(exp_text) if exp_text else 0
    stripped = digits.lstrip("0") or "0"
    if frac:
        sig = len(stripped) + len(frac) - 1 if stripped != "0" else len(frac[1:].lstrip("0"))
        unit = 10.0 ** (exp - (len(frac) - 1))
        value = float(digits + frac)
    else:
        n = len(stripped)
        zeros = n - len(stripped.rstrip("0")) if n > 2 else 0
        keep = min(zeros, n - 2) if zeros else 0
        sig = n - keep
        unit = 10.0 ** (exp + keep)
        value = float(digits)
    if exp:
        value *= 10.0**exp
    scale = 1.0
    if scale_text:
        key = scale_text.strip()
        scale = 1e6 if key == "M" else 1e9 if key == "B" else _SCALES.get(key.lower(), 1.0)
    negative = sign is not None and sign != "+"
    raw = m.group(0)
    text = raw.strip()
    start = m.start() + offset
    return Written(  # in one call: an answer has a hundred numbers, setting fields one by one costs
        text,
        (-value if negative else value) * scale,
        unit * scale,
        start,
        start + len(raw.rstrip()),
        pct is not None,
        pct is not None and "%" not in pct and pct.strip() not in ("percent", "pct"),
        (-1 if negative else 1) if sign else 0,
        scale,
        max(sig, 1),
        None,
        False,
        not frac and not exp,
    )


def _date(m: re.Match[str]) -> tuple[int, int, int] | None:
    g = m.groupdict()
    try:
        if g["iy"]:
            return int(g["iy"]), int(g["im"]), int(g["id"] or 0)
        if g["m1"]:
            return (
                int(g["y1"] or 0),
                MONTHS[g["m1"].lower()[:3] if g["m1"].lower()[:3] != "sep" else "sep"],
                int(g["d1"]),
            )
        if g["m2"]:
            return int(g["y2"] or 0), MONTHS[g["m2"].lower()[:3]], int(g["d2"])
        if g["sd"]:
            return int(g["sy"]), int(g["sm"]), int(g["sd"])
    except (KeyError, ValueError):
        return None
    return None


def read(text: str) -> list[Written]:
    """Every number and date of ``text`` (no piece of a word, a time or a version), in order."""
    found: list[Written] = []
    taken: list[tuple[int, int]] = []
    if _may_hold_date(text):
        for m in DATE.finditer(text):
            date = _date(m)
            if date is None or not 1 <= date[1] <= 12 or date[2] > 31:
                continue
            if m.group("sd") and int(m.group("sm")) > 12 and int(m.group("sd")) <= 12:  # 05/17/2024
                date = (date[0], int(m.group("sd")), int(m.group("sm")))
            found.append(Written(m.group(0), 0.0, 0.0, m.start(), m.end(), date=date, sig=3))
            taken.append((m.start(), m.end()))
    if not taken:  # no date: every number as it comes
        return [num for num in map(parse_number, NUMBER.finditer(text)) if num is not None]
    k = 0
    for m in NUMBER.finditer(text):
        at = m.start()
        while k < len(taken) and taken[k][1] <= at:
            k += 1
        if k < len(taken) and taken[k][0] <= at:
            continue  # a piece of a date
        num = parse_number(m)
        if num is not None:
            found.append(num)
    found.sort(key=lambda w: w.start)
    return found


def _may_hold_date(text: str) -> bool:
    """A cheap look for what a date needs (``2024-05``, ``17/05``, a month's name), before the regex."""
    low = text.lower()
    # ``2024-05``: with a month's name anywhere (``ſep`` too, as DATE's case-insensitive match reads it), or a
    # real one, not the tail of a longer number (a table printed without spaces between its columns reads
    # ``16230-3175.41486``): with neither, DATE's scan of the whole text would find no date
    if (
        "-" in text
        and _ISO_HINT.search(text)
        and (any(month in low for month in _MONTH_HINTS) or "ſ" in low or _iso_date(text))
    ):
        return True
    if "/" in text and _SLASH_HINT.search(text):
        return True
    for month in _MONTH_HINTS:
        at = low.find(month)
        while at >= 0:
            if _AFTER_MONTH.match(low, at + 3) or _BEFORE_MONTH.search(low, max(0, at - 5), at):
                return True
            at = low.find(month, at + 3)
    return False


def _iso_date(text: str) -> bool:
    """``2024-05`` somewhere, not the tail of a longer number (no letter, digit or dot before it, as DATE
    reads it)."""
    m = _ISO_HINT.search(text)
    while m is not None:
        at = m.start()
        if not at or _WORD_OR_DOT.match(text, at - 1) is None:
            return True
        m = _ISO_HINT.search(text, at + 1)
    return False


def hedged(before: str) -> bool:
    """Does a hedge ("about", "roughly", "~", "close to") come right before a number?"""
    tail = before.rstrip(_HEDGE_TAIL)
    if tail.endswith(("~", "≈")):
        return True
    low = tail.lower()
    last = low.rsplit(None, 1)[-1] if low.strip() else ""
    return last in HEDGES or low.endswith(HEDGE_PHRASES)


def masked_code(answer: str, inline: bool = True) -> str:
    """``answer`` with code blanked out (same length, so positions hold): fenced blocks in a programming
    language or whose lines are code, ``<code>``/``<script>`` elements, and (``inline``) backticked spans that
    are not a bare value (``df.head(10)``, ``(1250, 5)``; `` `11.2` `` stays)."""
    return masked_both(answer)[0 if inline else 1]


def masked_both(answer: str) -> tuple[str, str]:
    """``masked_code`` both ways in one pass: numbers are read from the first (inline code blanked), words
    from the second (inline code kept, its backticks gone: `` `price` `` is a word of the answer)."""
    if "`" not in answer and "<" not in answer:
        return answer, answer
    cuts: list[tuple[int, int]] = []  # blanked in both
    for m in _FENCE.finditer(answer) if "```" in answer or "~~~" in answer else ():
        lang, body = m.group(3).lower(), m.group(4)
        lines = [line for line in body.splitlines() if line.strip()]
        code_lines = sum(1 for line in lines if _CODE_LINE.search(line))
        if lang in _CODE_LANGS or (lines and code_lines * 2 >= len(lines)):
            cuts.append((m.start(), m.end()))
        else:
            cuts.append((m.start(), m.start(4)))  # the fence line itself
    for m in _HTML_CODE.finditer(answer) if "<" in answer else ():
        cuts.append((m.start(), m.end()))
    numbers, words_ = list(answer), None
    for a, b in cuts:
        for i in range(a, b):
            if numbers[i] != "\n":
                numbers[i] = " "
    words_ = numbers[:]
    for m in _SPAN.finditer(answer):
        words_[m.start()] = words_[m.end() - 1] = " "
        if not _BARE_VALUE.match(m.group(1)):
            for i in range(m.start(1), m.end(1)):
                numbers[i] = " "
    return "".join(numbers), "".join(words_)


def code_spans(text: str) -> list[tuple[int, str]]:
    """The backticked spans of ``text``: where each starts, and its expression normalised (spaces gone, one
    kind of quote, ``df['a']`` as ``df.a``) to meet the expression a result evaluated."""
    return [(m.start(), norm_expr(m.group(1))) for m in _SPAN.finditer(text)]


def norm_expr(expr: str) -> str:
    expr = re.sub(r"\s+", "", expr).replace('"', "'")
    return re.sub(r"\['([A-Za-z_]\w*)'\]", r".\1", expr)


def list_marker_end(text: str, at: int) -> int:
    """Where the list marker of the line holding ``at`` ends (0 when the line has none)."""
    line_start = text.rfind("\n", 0, at) + 1
    m = LIST_MARKER.match(text, line_start)
    return m.end() if m else 0


def is_version(last_word: str) -> bool:
    """``Python 3.11``, ``pandas 2.2``, ``v1.2``: a number right after a program's name or ``version``."""
    return last_word.lower() in VERSION_WORDS


def is_year(num: Written) -> bool:
    return (
        1800 <= num.value <= 2100 and num.integer and num.scale == 1 and not num.pct and "," not in num.text
    )
