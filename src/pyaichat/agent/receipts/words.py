"""The words receipts read: how an answer names an aggregate, a direction, a comparison or a month, and how a
result's names (columns, variables, labels) become words an answer can use.

One vocabulary for both sides, so "averages" in an answer and ``.mean()`` in a result meet at ``mean``.
"""

from __future__ import annotations

import re
from functools import lru_cache

WORD = _WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*|\d[\d+%–-]*")
_SPLIT = re.compile(r"[^A-Za-z0-9%+]+")

# aggregate key -> the words (stems) an answer uses for it; multi-word phrases are matched on the text
AGGREGATES: dict[str, tuple[str, ...]] = {
    "mean": ("mean", "average", "avg", "typical", "typically"),
    "median": ("median", "50%"),
    "sum": ("total", "sum", "combined", "altogether", "together", "cumulative"),
    "count": ("count", "number", "many", "times", "tally"),
    "length": ("values", "value", "length", "entries", "items", "elements"),
    "rows": (
        "row",
        "record",
        "entry",
        "entries",
        "observation",
        "length",
        "len",
        "size",
        "big",
        "responses",
    ),
    "variables": ("variable",),
    "cols": ("column", "col", "field", "feature"),
    "max": (
        "max",
        "maximum",
        "highest",
        "largest",
        "biggest",
        "peak",
        "top",
        "most",
        "busiest",
        "warmest",
        "hottest",
        "best",
        "tallest",
        "record",
        "longest",
        "priciest",
        "leads",
        "high",
    ),
    "min": (
        "min",
        "minimum",
        "lowest",
        "smallest",
        "least",
        "fewest",
        "quietest",
        "coldest",
        "worst",
        "shortest",
        "sparsest",
        "low",
        "cheapest",
        "trails",
        "bottom",
    ),
    "std": ("std", "deviation", "sd", "spread", "vary", "varies", "variation", "volatility", "stdev"),
    "q25": ("25%", "quartile", "lower", "q1"),
    "q75": ("75%", "quartile", "upper", "q3"),
    "share": ("share", "proportion", "percent", "percentage", "fraction", "rate", "ratio", "%", "pct"),
    "change": (
        "change",
        "grew",
        "grow",
        "growth",
        "rose",
        "rise",
        "fell",
        "fall",
        "drop",
        "dropped",
        "up",
        "down",
        "increase",
        "decrease",
        "decline",
        "gain",
        "lost",
        "loss",
        "rebound",
        "jump",
        "dip",
        "dipped",
        "shrank",
        "shrink",
        "climb",
        "recover",
        "yoy",
        "mom",
    ),
    "diff": ("difference", "gap", "absolute", "pp", "ppt", "points", "pts"),
    "rel": ("lift", "relative", "uplift", "improve", "improvement"),
    "nunique": ("distinct", "unique", "different"),
    "ratio": ("weighted", "ratio", "rate", "per"),
    "partitions": ("partition",),
    "points": ("point", "pts", "marker"),
    "bars": ("bar", "bin", "bucket"),
    "value": (),
}
# a word of one aggregate that, near a number, rules another out ("median" is not the mean); a superlative
# beside a row label picks the row ("the cheapest at 12.94 on average"), it does not rule its mean out
EXCLUSIVE = frozenset({"mean", "median", "sum", "max", "min", "std", "q25", "q75", "nunique"})
SUPERLATIVES = frozenset({"max", "min"})
COMPATIBLE = {
    "mean": frozenset({"ratio"}),
    "ratio": frozenset({"mean"}),
}  # a total over a total is an average
NEGATIONS = frozenset(["not", "no", "never", "don't", "doesn't", "won't", "wouldn't", "non"])
LABEL_VERBS = frozenset(
    ["chose", "choose", "gave", "give", "rated", "rate", "picked", "selected", "scored", "with"]
)
# "from X to Y": the ends of a range
RANGE_WORDS = {"from": ("minimum", "first", "start"), "to": ("maximum", "last", "end")}
# where in a series a value sits, as an answer says it beside a number (made.py gives a result's the same
# words): the first day's value is not the last day's, the final week's not the previous one's
POSITIONS = frozenset({"first", "start", "last", "final", "latest", "previou", "prior"})
# a scale word or unit after a number or in a header ("2.4M", "revenue (k$)"): what it multiplies by
SCALE_WORDS = {
    "k": 1e3,
    "thousand": 1e3,
    "thousands": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "millions": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "billions": 1e9,
}
WEIGHTED = frozenset({"weight", "weighted"})  # a weighted mean is not the plain one

UP = frozenset(
    [
        "rose",
        "rise",
        "rises",
        "rising",
        "grew",
        "grow",
        "grows",
        "growing",
        "growth",
        "up",
        "increased",
        "increase",
        "increases",
        "increasing",
        "gained",
        "gain",
        "gains",
        "climbed",
        "climb",
        "climbs",
        "jumped",
        "jump",
        "jumps",
        "rebounded",
        "rebound",
        "rebounds",
        "improved",
        "improves",
        "improve",
        "higher",
        "better",
        "lifted",
        "lifts",
        "recovered",
        "recover",
        "boosted",
        "added",
        "warmed",
        "warmer",
        "hotter",
    ]
)
DOWN = frozenset(
    [
        "fell",
        "fall",
        "falls",
        "falling",
        "dropped",
        "drop",
        "drops",
        "dropping",
        "down",
        "decreased",
        "decrease",
        "decreases",
        "decreasing",
        "declined",
        "decline",
        "declines",
        "declining",
        "lost",
        "lose",
        "loses",
        "loss",
        "shrank",
        "shrink",
        "shrinks",
        "dipped",
        "dip",
        "dips",
        "slipped",
        "slid",
        "worse",
        "lower",
        "cut",
        "cuts",
        "eased",
        "eases",
        "negative",
        "deficit",
        "minus",
        "losing",
        "cooled",
        "cooler",
        "colder",
    ]
)
# after a number, a direction only as a noun or a comparative ("a 7.6 % drop", "19.8 % lower"); a verb after
# it is the sentence's ("4,088 mm fell")
DIRECTION_AFTER_UP = frozenset(["increase", "rise", "gain", "growth", "jump", "higher", "up", "uplift"])
DIRECTION_AFTER_DOWN = frozenset(
    ["drop", "decline", "decrease", "fall", "loss", "dip", "lower", "down", "cut"]
)
# words that make a number a bound, a comparison or a derived figure, not a value a result states
BOUNDS = frozenset(
    [
        "above",
        "below",
        "over",
        "under",
        "more",
        "less",
        "fewer",
        "than",
        "beyond",
        "within",
        "exceed",
        "exceeds",
        "exceeded",
        "threshold",
    ]
)
COMPARATIVE_AFTER = frozenset(
    [
        "above",
        "below",
        "more",
        "less",
        "fewer",
        "higher",
        "lower",
        "ahead",
        "behind",
        "than",
        "apart",
        "cheaper",
        "dearer",
        "larger",
        "smaller",
        "bigger",
        "warmer",
        "colder",
        "drier",
        "wetter",
        "longer",
        "shorter",
    ]
)
RATE_AFTER = frozenset(["per", "each", "apiece"])
DERIVED_BEFORE = frozenset(["range", "difference", "gap", "spread", "delta"])  # "a range of 33.6"
# a row named after these is what the number is compared with, not what it is of ("rose 27 % on March")
BASES = frozenset(["on", "than", "vs", "versus", "from", "against", "compared", "over"])
OVERALL = frozenset(["overall", "all", "whole", "entire", "combined", "altogether"])  # no one row's value
NUMBER_WORDS = {
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "solo": "1",
}
HEDGES = frozenset(
    [
        "about",
        "around",
        "roughly",
        "approximately",
        "approx",
        "nearly",
        "almost",
        "circa",
        "some",
        "approaching",
        "~",
    ]
)
HEDGE_PHRASES = ("close to", "just over", "just under", "just below", "just above", "on the order of")
HYPOTHETICAL = frozenset(
    ["could", "would", "should", "might", "try", "suppose", "consider", "say", "if", "e.g", "eg", "example"]
)
VERSION_WORDS = frozenset(
    [
        "python",
        "pandas",
        "numpy",
        "polars",
        "dask",
        "version",
        "v",
        "release",
        "py",
        "matplotlib",
        "scipy",
        "sqlite",
        "postgres",
        "postgresql",
        "duckdb",
        "pyarrow",
        "arrow",
        "ipython",
        "jupyter",
        "java",
        "node",
    ]
)
MONTHS = {
    "jan": 1,
    "january": 1,
    "feb": 2,
    "february": 2,
    "mar": 3,
    "march": 3,
    "apr": 4,
    "april": 4,
    "may": 5,
    "jun": 6,
    "june": 6,
    "jul": 7,
    "july": 7,
    "aug": 8,
    "august": 8,
    "sep": 9,
    "sept": 9,
    "september": 9,
    "oct": 10,
    "october": 10,
    "nov": 11,
    "november": 11,
    "dec": 12,
    "december": 12,
}
MONTH_WORDS = {
    1: "january",
    2: "february",
    3: "march",
    4: "april",
    5: "may",
    6: "june",
    7: "july",
    8: "august",
    9: "september",
    10: "october",
    11: "november",
    12: "december",
}
# words of data names that answers write differently
SYNONYMS: dict[str, tuple[str, ...]] = {
    "temp": ("temperature", "degrees", "warm", "warmer", "hot", "cold", "colder"),
    "qty": ("quantity", "quantities", "units"),
    "rain": ("rainfall", "wet", "wettest", "precipitation"),
    "mm": ("rain", "rainfall"),
    "km": ("distance", "kilometres", "kilometers"),
    "usd": ("dollars", "$"),
    "pct": ("percent", "share", "%"),
    "nps": ("promoter", "net"),
    "p": ("pvalue", "p-value", "significant", "significance"),
    "visits": ("traffic", "visitors"),
    "signups": ("signup", "sign", "registrations"),
    "revenue": ("sales", "income", "earn", "earns", "turnover", "brought", "brings", "money"),
    "amount": ("value", "spend", "spent"),
    "fare": ("price", "cost", "paid", "fares"),
    "price": ("cost", "paid", "dear", "cheap", "expensive", "pricey", "priciest"),
    "employees": ("staff", "headcount", "people", "workers", "employ", "employs"),
    "conversions": ("convert", "converted", "converts", "conversion"),
    "rate": ("convert", "converts", "conversion"),
    "recommend": ("recommend", "promoter"),
    "satisfaction": ("satisfied", "score", "scores", "happy", "rate", "rating"),
    "rating": ("star", "stars", "score", "rate", "rated"),
    "growth": (
        "grew",
        "grow",
        "rose",
        "fell",
        "shrank",
        "change",
        "yoy",
        "declined",
        "dropped",
        "up",
        "down",
    ),
    "margin": ("profit", "profitable", "profitability"),
    "humidity": ("humid", "moisture", "dry", "drier"),
    "passengers": ("riders", "people", "persons", "solo"),
    "distance": ("km", "far", "kilometres"),
    "text": ("review", "reviews"),
    "len": ("length", "long", "characters", "chars"),
    "count": ("number", "many", "times"),
    "proportion": ("share", "percent", "%", "fraction"),
    "customers": ("clients", "buyers", "customer"),
}


STEMS = _STEMS = {}  # type: dict[str, str]


def stem(word: str) -> str:
    """A crude stem, enough to meet a result's names: lower case, no possessive, no plural, no ``-e``, ``-ed``
    or ``-ing`` ("orders" → "order", "averages" and "averaged" → "averag", "readings" → "read"); a number
    word is its digits ("four passengers": the row labelled 4)."""
    known = _STEMS.get(word)
    if known is not None:
        return known
    w = word.lower()
    if w.endswith(("'s", "\u2019s")):
        w = w[:-2]
    if w in NUMBER_WORDS:
        w = NUMBER_WORDS[w]
    else:
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        if len(w) > 4 and w.endswith("e"):
            w = w[:-1]
        if len(w) > 5 and w.endswith("ed"):
            w = w[:-2]
        if len(w) > 5 and w.endswith("ing"):
            w = w[:-3]
    if len(_STEMS) < 50_000:  # words of answers and results: a bounded memo
        _STEMS[word] = w
    return w


def _stems(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset(stem(n) for n in names)


AGG_STEMS: dict[str, frozenset[str]] = {key: _stems(names) for key, names in AGGREGATES.items()}
SYNONYM_STEMS: dict[str, frozenset[str]] = {stem(key): _stems(names) for key, names in SYNONYMS.items()}
UP_STEMS = _stems(tuple(UP))
DOWN_STEMS = _stems(tuple(DOWN))
AFTER_UP_STEMS = _stems(tuple(DIRECTION_AFTER_UP))
AFTER_DOWN_STEMS = _stems(tuple(DIRECTION_AFTER_DOWN))
BOUND_STEMS = _stems(tuple(BOUNDS))
COMPARATIVE_STEMS = _stems(tuple(COMPARATIVE_AFTER))
RATE_STEMS = _stems(tuple(RATE_AFTER))
DERIVED_STEMS = _stems(tuple(DERIVED_BEFORE))
BASE_STEMS = _stems(tuple(BASES))
OVERALL_STEMS = _stems(tuple(OVERALL))


@lru_cache(maxsize=2048)
def _words(text: str) -> tuple[str, ...]:
    get = _STEMS.get
    return tuple(get(w) or stem(w) for w in _WORD.findall(text))


_ACRONYM = re.compile(r"\b([A-Z])[a-z]+ ([A-Z])[a-z]+(?: ([A-Z])[a-z]+)?(?: ([A-Z])[a-z]+)?")


def acronyms(text: str) -> list[str]:
    """The initials of capitalised names in ``text`` ("Net Promoter Score" → nps), as words."""
    return ["".join(g for g in m.groups() if g).lower() for m in _ACRONYM.finditer(text)]


def words(text: str) -> list[str]:
    """The stems of ``text``'s words (numbers with a ``%`` or a range such as ``18-29`` kept as written)."""
    return list(_words(text))


def spellings(text: str) -> dict[str, str]:
    """Each stem of ``text`` and the word it was written as (for saying which words tied a number)."""
    return {stem(w): w.lower() for w in _WORD.findall(text)}


@lru_cache(maxsize=4096)
def name_words(name: str) -> frozenset[str]:
    """The words of a data name (a column, a variable, a label): ``temp_c`` → temp, c, temp_c; with the words
    answers use for them (``qty`` → quantity, unit)."""
    name = name.strip().strip("'\"`").lower()
    parts = [p for p in _SPLIT.split(name) if p]
    # a one-letter part says nothing ("temp_c": the °C of an answer is no word of it); a one-letter name does
    out = {stem(p) for i, p in enumerate(parts) if len(p) > 1 or i == 0}
    if len(parts) > 1:
        out.add(name)
    # camelCase and joined words are left as they are: a label such as "north" or "18-29" is itself
    for p in list(out):
        out.update(SYNONYM_STEMS.get(p, ()))
    return frozenset(out)


# a row labelled by a country's ISO code is written by its name ("JP": "Japan has 2 customers")
COUNTRY_CODES: dict[str, tuple[str, ...]] = {
    "us": ("america", "american", "usa"),
    "uk": ("britain", "british", "england", "kingdom"),
    "gb": ("britain", "british", "england", "kingdom"),
    "de": ("germany", "german"),
    "fr": ("france", "french"),
    "jp": ("japan", "japanese"),
    "it": ("italy", "italian"),
    "es": ("spain", "spanish"),
    "nl": ("netherlands", "dutch", "holland"),
    "ca": ("canada", "canadian"),
    "au": ("australia", "australian"),
    "br": ("brazil", "brazilian"),
    "mx": ("mexico", "mexican"),
    "cn": ("china", "chinese"),
    "in": ("india", "indian"),
    "kr": ("korea", "korean"),
    "se": ("sweden", "swedish"),
    "ch": ("switzerland", "swiss"),
    "pl": ("poland", "polish"),
    "ie": ("ireland", "irish"),
}


def label_key(label: str) -> str:
    """A row or column label as matched: lower case, inner spaces single, quotes and markup gone."""
    return " ".join(label.strip().strip("`*_'\"").lower().split())


def aggregate_of(stems: set[str] | frozenset[str]) -> set[str]:
    """The aggregate keys the words name."""
    return {key for key, names in AGG_STEMS.items() if not names.isdisjoint(stems)}
