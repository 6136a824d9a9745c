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
