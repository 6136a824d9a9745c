"""Legitimate analysis snippets keep working, in both isolation modes, with the values a person expects."""

from __future__ import annotations

import pytest
from sbx_helpers import assert_unchanged, snapshot

from pyaichat.capabilities.sandbox.confine import probe

LEGIT: list[tuple[str, str, str]] = [
    ("describe", "import pandas as pd\nprint(df.describe().loc['mean', 'sales'])", "10.1875"),
    ("groupby", "print(df.groupby('city')['sales'].sum().to_dict())", "'Oslo': 13.0"),
    (
        "merge-copies",
        "import pandas as pd\nother = pd.DataFrame({'city': ['Oslo', 'Lima'], 'country': ['NO', 'PE']})\n"
        "m = df.merge(other, on='city', how='left')\nprint(m.shape, m['country'].isna().sum())",
        "(4, 4) 1",
    ),
    (
        "missing-share",
        "shares = {c: float(df[c].isna().mean()) for c in df.columns}\nprint(shares)",
        "'sales': 0.0",
    ),
    ("boolean-filter", "print(len(df[df['sales'] > 5]))", "3"),
    ("comprehension", "print([x * x for x in lst if x > 1])", "[9, 4]"),
    ("dict-comprehension", "print({k: len(str(v)) for k, v in d.items()})", "'k': 1"),
    ("set-ops", "print(sorted(s | {3}))", "[1, 2, 3]"),
    (
        "local-function",
        "def norm(v):\n    return v / max(lst)\nprint([round(norm(v), 2) for v in lst])",
        "[1.0, 0.33, 0.67]",
    ),
    (
        "local-class",
        "class Box:\n    def __init__(self, v):\n        self.v = v\n    def double(self):\n"
        "        return Box(self.v * 2)\nprint(Box(21).double().v)",
        "42",
    ),
    (
        "local-class-eq",
        "class P:\n    def __init__(self, x):\n        self.x = x\n    def __eq__(self, o):\n"
        "        return self.x == o.x\nprint(P(1) == P(1))",
        "True",
    ),
    (
        "try-except",
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    print('caught', type(e).__name__)",
        "caught ZeroDivisionError",
    ),
    ("raise-own", "try:\n    raise ValueError('bad')\nexcept ValueError as e:\n    print(e.args[0])", "bad"),
    (
        "fstring-spec",
        "v = 1234.5678\nprint(f'{v:,.2f} {v:>12.1f} {0.25:.0%} {lst!r}')",
        "1,234.57       1234.6 25% [3, 1, 2]",
    ),
    ("format-method", "print('{:>6.2f}|{name}'.format(3.14159, name='pi'))", "  3.14|pi"),
    (
        "numpy-reductions",
        "import numpy as np\nprint(int(arr.sum()), float(np.mean(arr)), arr.reshape(2, 5).max(axis=1))",
        "45 4.5 [4 9]",
    ),
    ("numpy-linalg", "import numpy as np\nprint(np.linalg.det(np.eye(3)))", "1.0"),
    (
        "numpy-random-private",
        "import numpy as np\nr = np.random.default_rng(0)\nprint(r.integers(0, 10, 3).shape)",
        "(3,)",
    ),
    ("math", "import math\nprint(math.sqrt(16), math.factorial(10), math.pi > 3)", "4.0 3628800 True"),
    ("statistics", "import statistics\nprint(statistics.median(lst))", "2"),
    (
        "itertools",
        "import itertools\nprint(list(itertools.combinations(lst, 2)))",
        "[(3, 1), (3, 2), (1, 2)]",
    ),
    (
        "itertools-count-bounded",
        "import itertools\nprint(list(itertools.islice(itertools.count(5), 3)))",
        "[5, 6, 7]",
    ),
    ("functools", "from functools import reduce\nprint(reduce(lambda a, b: a * b, lst))", "6"),
    (
        "operator-getters",
        "import operator\nrows = [{'a': 2}, {'a': 1}]\nprint(sorted(rows, key=operator.itemgetter('a')))\n"
        "print(operator.attrgetter('real')(5))",
        "[{'a': 1}, {'a': 2}]",
    ),
    (
        "collections",
        "from collections import Counter, defaultdict\nc = Counter(df['city'])\ndd = defaultdict(list)\n"
        "dd['x'].append(1)\nprint(c.most_common(1), dict(dd))",
        "[('Oslo', 2)] {'x': [1]}",
    ),
    ("re", "import re\nprint(re.findall(r'\\d+', 'a1b22c333'))", "['1', '22', '333']"),
    (
        "json",
        "import json\nprint(json.dumps({'b': 1, 'a': [1, 2]}, sort_keys=True))",
        '{"a": [1, 2], "b": 1}',
    ),
    (
        "datetime",
        "import datetime\nprint(datetime.date(2024, 1, 31) + datetime.timedelta(days=1))",
        "2024-02-01",
    ),
    (
        "decimal-fractions",
        "from decimal import Decimal\nfrom fractions import Fraction\nprint(Decimal('0.1') + Decimal('0.2'), Fraction(1, 3) * 3)",  # noqa: E501
        "0.3 1",
    ),
    (
        "random-seeded",
        "import random\nrandom.seed(1)\nx = [random.randint(1, 6) for _ in range(3)]\nprint(len(x))",
        "3",
    ),
    (
        "string-textwrap",
        "import string, textwrap\nprint(string.ascii_lowercase[:3], textwrap.shorten('a b c d e f', 7))",
        "abc a [...]",
    ),
    (
        "sorting-keys",
        "words = ['pear', 'Fig', 'apple']\nprint(sorted(words, key=str.lower), max(words, key=len))",
        "['apple', 'Fig', 'pear'] apple",
    ),
    (
        "unpacking",
        "a, (b, c), *rest = [1, (2, 3), 4, 5]\nfor k, v in {'x': 1}.items():\n    pass\nprint(a, b, c, rest, k, v)",  # noqa: E501
        "1 2 3 [4, 5] x 1",
    ),
    ("while-loop", "n, total = 0, 0\nwhile n < 100:\n    n += 1\n    total += n\nprint(total)", "5050"),
    (
        "generators",
        "def gen(k):\n    for i in range(k):\n        yield i * i\nprint(sum(gen(10)), next(iter(gen(3))))",
        "285 0",
    ),
    (
        "string-processing",
        "text = 'The quick brown fox'\nprint(' '.join(w[::-1].upper() for w in text.split()), text.count('o'))",  # noqa: E501
        "EHT KCIUQ NWORB XOF 2",
    ),
    (
        "getattr-public",
        "print(getattr(df, 'shape'), hasattr(lst, 'append'), getattr(acct, 'missing', 'dflt'))",
        "(4, 3) True dflt",
    ),
    ("user-data-attrs", "print(acct.owner, acct.items)", "ada [1, 2]"),
    (
        "type-and-isinstance",
        "import pandas as pd\nprint(type(df).__name__, isinstance(df, pd.DataFrame), type(1) is int)",
        "DataFrame True True",
    ),
    ("last-expression", "x = 40\nx + 2", "42"),
    ("pivot", "print(df.pivot_table(index='city', values='units', aggfunc='sum').loc['Oslo', 'units'])", "9"),
    ("apply-lambda", "print(df['sales'].apply(lambda v: v * 2).tolist())", "[20.0, 41.0, 14.5, 6.0]"),
    ("agg-strings", "print(df.agg({'sales': 'sum', 'units': 'max'}).to_dict())", "'units': 8"),
    ("query", "print(len(df.query('units > 1 and sales < 20')))", "2"),
    ("to-csv-text", "print(df.head(1).to_csv(index=False).splitlines()[0])", "city,sales,units"),
    (
        "assign-copy",
        "print(df.assign(ratio=df['sales'] / df['units'])['ratio'].round(2).tolist())",
        "[10.0, 5.12, 3.62, 0.38]",
    ),
    (
        "nonlocal-free",
        "def outer():\n    acc = []\n    def add(v):\n        acc.append(v)\n    add(1)\n    return acc\nprint(outer())",  # noqa: E501
        "[1]",
    ),
    ("print-sep-end", "print(1, 2, sep='-', end='!\\n')", "1-2!"),
    ("bytes-small", "print(bytes(3), bytearray(b'ab').upper())", "b'\\x00\\x00\\x00' bytearray(b'AB')"),
    # A string result reads as text, in both modes.
    ("string-result-text", "df.to_string()", "city  sales  units\n0"),
    (
        "string-report-text",
        "'\\n'.join(f'{c}: {v:.1f}' for c, v in df.groupby('city')['sales'].sum().items())",
        "Lima: 20.5\nOslo: 13.0",
    ),
    (
        "copy-module",
        "import copy\nc = copy.deepcopy(d)\nc['inner'].append(9)\nprint(c['inner'], d['inner'])",
        "[1, 2, 9] [1, 2]",
    ),
]


@pytest.mark.parametrize(("code", "expected"), [c[1:] for c in LEGIT], ids=[c[0] for c in LEGIT])
def test_legit_snippet_runs(run, code: str, expected: str) -> None:
    result = run(code)
    assert result.ok, result.error
    assert expected in result.text, result.text


# Refused while RestrictedPython was the only wall; with the kernel wall up (fork mode on Linux)
# they run. In-process mode keeps the old rules: the same snippets stay refused there.
LEGIT_WALLED: list[tuple[str, str, str]] = [
    ("user-function", "helper(21)", "42"),
    ("user-function-map", "print(list(map(helper, [1, 2])))", "[2, 4]"),
    ("user-function-in-containers", "print(funcs[0](21), handlers['double'](4))", "42 8"),
    ("user-function-apply", "print(df['units'].apply(helper).tolist())", "[2, 8, 4, 16]"),
    ("user-method", "acct.total()", "3"),
    ("user-method-getattr", "getattr(acct, 'total')()", "3"),
    ("user-property", "acct.balance", "42"),
    ("user-instance-method", "point.norm()", "5.0"),
    ("user-class-call", "Point(3, 4).norm()", "5.0"),
    (
        "user-class-sorted",
        "pts = [Point(1, 1), Point(0, 0)]\nprint([p.norm() for p in sorted(pts, key=Point.norm)])",
        "[0.0, 1.4142",
    ),
    (
        "local-class-augassign",
        "class Acc:\n    def __init__(self):\n        self.total = 0\n    def add(self, v):\n"
        "        self.total += v\na = Acc()\nfor v in lst:\n    a.add(v)\nprint(a.total)",
        "6",
    ),
    (
        "local-class-dunders",
        "class Bag:\n    def __init__(self, items):\n        self.items = list(items)\n"
        "    def __len__(self):\n        return len(self.items)\n    def __iter__(self):\n"
        "        return iter(self.items)\n    def __repr__(self):\n        return f'Bag({self.items})'\n"
        "    def __eq__(self, other):\n        return list(self) == list(other)\n"
        "    def __contains__(self, v):\n        return v in self.items\n"
        "b = Bag(lst)\nprint(len(b), list(b), repr(b), b == Bag([3, 1, 2]), 2 in b)",
        "3 [3, 1, 2] Bag([3, 1, 2]) True True",
    ),
    (
        "local-class-arith",
        "class V:\n    def __init__(self, x):\n        self.x = x\n    def __add__(self, o):\n"
        "        return V(self.x + o.x)\n    def __lt__(self, o):\n        return self.x < o.x\n"
        "    def __hash__(self):\n        return hash(self.x)\n    def __eq__(self, o):\n"
        "        return self.x == o.x\n    def __str__(self):\n        return f'V{self.x}'\n"
        "print(V(1) + V(2), min(V(5), V(3)), len({V(1), V(1)}))",
        "V3 V3 1",
    ),
    (
        "item-augassign",
        "counts = {}\nfor c in df['city']:\n    counts.setdefault(c, 0)\n    counts[c] += 1\nprint(counts)",
        "'Oslo': 2",
    ),
    (
        "local-subclass-super",
        "class A:\n    def __init__(self):\n        self.x = 1\nclass B(A):\n    def __init__(self):\n"
        "        super().__init__()\n        self.y = 2\nb = B()\nprint(b.x + b.y)",
        "3",
    ),
]


@pytest.mark.parametrize(
    ("code", "expected"), [c[1:] for c in LEGIT_WALLED], ids=[c[0] for c in LEGIT_WALLED]
)
def test_walled_legit_snippet(run, session, mode: str, code: str, expected: str) -> None:
    before = snapshot(session)
    result = run(code)
    if mode == "fork" and probe().complete:
        assert result.ok, result.error
        assert expected in result.text, result.text
    else:  # in-process (or no kernel wall): today's rules, exactly
        assert not result.ok, result.text
        assert result.error and "Traceback" not in result.error
    assert_unchanged(session, before)


def test_printed_output_and_last_value_are_told_apart(run) -> None:
    result = run("print('rows:', len(df))\n'done'")
    assert result.ok, result.error
    assert result.text == "rows: 4\n--- value of the last line ---\ndone"


def test_long_string_result_is_bounded_and_masked(run) -> None:
    secret = "sk-proj-" + "Q7w" * 15
    result = run(f"'{secret[:8]}' + '{secret[8:]}' + '\\n' + 'line\\n' * 5000")
    assert result.ok, result.error
    assert len(result.text) < 12_000 and "cut" in result.text
    assert secret not in result.text and "line\nline" in result.text
