"""Secrets: nothing from ``os.environ`` and no secret-named value reaches the assistant, by any path."""

from __future__ import annotations

import os

import pytest
from sbx_helpers import SECRET, leaked

ENV_PATHS = [
    "os.environ",
    "os.environ['SANDBOX_TEST_CANARY']",
    "os.getenv('SANDBOX_TEST_CANARY')",
    "dict(os.environ)",
    "getattr(os, 'environ')",
    "import os as o\no.environ",
    "import pandas as pd\npd.io.common.os.environ",
    "import pandas as pd\npd.compat.os",
    "import numpy as np\nnp.lib.format.os",
    "import json\njson.codecs",
    "import random\nrandom.os",
    "import collections\ncollections.abc.os",
    "import datetime\ndatetime.sys",
    "try:\n    os.environ\nexcept Exception as e:\n    e.args",
    "df.apply('environ')",
]


@pytest.mark.parametrize("code", ENV_PATHS)
def test_environment_is_unreachable(run, code: str) -> None:
    result = run(code)
    assert not leaked(result)
    assert "HOME" not in (result.text or "")


@pytest.mark.parametrize(
    "code",
    [
        "OPENAI_API_KEY",
        "print(OPENAI_API_KEY)",
        "OPENAI_API_KEY[::-1]",
        "''.join(reversed(OPENAI_API_KEY))",
        "[ord(c) for c in OPENAI_API_KEY]",
        "cfg['api_key']",
        "cfg['api_key'][::-1]",
        "cfg.get('api_key')[::-1]",
        "[v[::-1] for v in cfg.values() if isinstance(v, str)]",
        "str(cfg)[::-1]",
        "k = 'api' + '_key'\ncfg[k][::-1]",
        "cfg['db']['password'][::-1]",
        "import json\njson.dumps(cfg)[::-1]",
        "acct.api_key",
    ],
)
def test_secret_variables_do_not_leak(run, code: str) -> None:
    result = run(code)
    assert not leaked(result), result.text or result.error


def test_secret_variable_is_named_as_hidden(run) -> None:
    result = run("print(OPENAI_API_KEY)")
    assert result.ok
    assert "looks like a secret" in result.text
    assert SECRET not in result.text


def test_plain_entries_of_a_dict_with_secrets_stay_readable(run) -> None:
    result = run("print(cfg['host'], sorted(cfg))")
    assert result.ok
    assert "db.local" in result.text


def test_eval_expr_never_shows_a_secret(ev) -> None:
    for expr in ("OPENAI_API_KEY", "cfg['api_key']", "cfg", "os.environ", "OPENAI_API_KEY[::-1]"):
        assert not leaked(ev(expr)), expr


def test_forked_child_has_an_empty_environment() -> None:
    from pyaichat.capabilities.sandbox.isolation import fork_available, run_forked

    if not fork_available():
        pytest.skip("no fork here")
    os.environ["SANDBOX_CHILD_CANARY"] = "present"
    try:
        result = run_forked(lambda: {"ok": True, "env": dict(os.environ)}, 2.0)
    finally:
        del os.environ["SANDBOX_CHILD_CANARY"]
    assert result["env"] == {}
