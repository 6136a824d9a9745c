"""Helpers of the adversarial suite: a realistic session, snapshots of its data, and the leak check.

The namespace holds what a data scientist's session holds: a DataFrame, an array, a list, nested dicts, a user
class instance with a property, the user's own functions, ``import os`` and a secret.
"""

from __future__ import annotations

import copy
import os
from typing import Any

import pyaichat
from pyaichat.capabilities import CapabilityResult
from pyaichat.capabilities.sandbox.isolation import fork_available
from pyaichat.configuration.config import Config

SECRET = "sk-proj-T0pS3cretValue1234567890abcdefXYZ"
ENV_CANARY = "canary-env-7f3a9c2e5b1d"
MODES = ["fork", "inprocess"] if fork_available() else ["inprocess"]

SETUP = f"""
import os
import pandas as pd
import numpy as np

df = pd.DataFrame({{"city": ["Oslo", "Lima", "Pune", "Oslo"], "sales": [10.0, 20.5, 7.25, 3.0],
                    "units": [1, 4, 2, 8]}})
arr = np.arange(10)
lst = [3, 1, 2]
d = {{"k": 1, "inner": [1, 2], "nested": {{"x": 1}}}}
s = {{1, 2}}
cfg = {{"host": "db.local", "api_key": "{SECRET}", "db": {{"password": "hunter2-hunter2"}}}}
OPENAI_API_KEY = "{SECRET}"
label = "plain text"


class Account:
    def __init__(self):
        self.owner = "ada"
        self.items = [1, 2]

    @property
    def balance(self):
        return 42

    def total(self):
        return sum(self.items)


acct = Account()


def helper(x):
    return x * 2


def shell(cmd):
    return os.system(cmd)


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def norm(self):
        return (self.x**2 + self.y**2) ** 0.5


point = Point(3, 4)
funcs = [helper, shell]
handlers = {{"run": shell, "double": helper}}
acct.callbacks = [shell]
"""


def make_session(mode: str, **config: Any) -> pyaichat.Session:
    session = pyaichat.Session()
    session.settings.replace(Config(sandbox_isolation=mode, audit=False, **config))
    result = session.run(SETUP)
    assert result.ok, result.error
    return session


def snapshot(session: pyaichat.Session) -> dict[str, Any]:
    """Deep copies of the user's data, to compare after a run."""
    ns = session.namespace
    return {
        "df": ns["df"].copy(deep=True),
        "df_columns": list(ns["df"].columns),
        "df_index_name": ns["df"].index.name,
        "arr": ns["arr"].copy(),
        "lst": list(ns["lst"]),
        "d": copy.deepcopy(ns["d"]),
        "s": set(ns["s"]),
        "cfg": copy.deepcopy(ns["cfg"]),
        "acct": (ns["acct"].owner, list(ns["acct"].items), dict(vars(ns["acct"]))),
        "names": sorted(ns),
        "env": dict(os.environ),
    }


def assert_unchanged(session: pyaichat.Session, before: dict[str, Any]) -> None:
    ns = session.namespace
    assert ns["df"].equals(before["df"])
    assert list(ns["df"].columns) == before["df_columns"]
    assert ns["df"].index.name == before["df_index_name"]
    assert (ns["arr"] == before["arr"]).all() and ns["arr"].shape == before["arr"].shape
    assert ns["lst"] == before["lst"]
    assert ns["d"] == before["d"]
    assert ns["s"] == before["s"]
    assert ns["cfg"] == before["cfg"]
    assert (ns["acct"].owner, list(ns["acct"].items), dict(vars(ns["acct"]))) == before["acct"]
    assert sorted(ns) == before["names"]
    assert dict(os.environ) == before["env"]


def leaked(result: CapabilityResult) -> bool:
    """Did any secret (or its reverse) reach the text the assistant would see?"""
    blob = (result.text or "") + (result.error or "")
    needles = [SECRET, SECRET[::-1], ENV_CANARY, ENV_CANARY[::-1], "hunter2-hunter2", SECRET[8:24]]
    return any(n in blob for n in needles)
