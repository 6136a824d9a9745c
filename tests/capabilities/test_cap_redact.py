"""Secret masking: realistic credentials of each kind are masked; near-misses stay visible."""

from __future__ import annotations

import pytest
from cap_helpers import make_session, tool

from pyaichat.capabilities.redact import Masker, is_secret_name, mask
from pyaichat.configuration.config import Config

# Realistic-looking but fake credentials, assembled so no scanner mistakes this file for a leak.
OPENAI = "sk-" + "proj-" + "Zx9Qw3Er7Ty1Ui5Op0As4Df8Gh2Jk6Lz"
OPENAI_LEGACY = "sk-" + "T3BlbkFJ" + "a1B2c3D4e5F6g7H8i9J0k1L2"
ANTHROPIC = "sk-" + "ant-api03-" + "Qm7Rn2Sp9Tt4Uv8Wx1Yz6Ab3Cd5Ef0Gh-AAAA"
AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0" + "123456789_abcdefghijklmnopqrstuvwxyzABCDEF"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0"
    + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN RSA "
    + "PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM\nq4GJb1Uu7lYd\n-----END RSA PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("secret", "label"),
    [
        (OPENAI, "<redacted openai key>"),
        (OPENAI_LEGACY, "<redacted openai key>"),
        (ANTHROPIC, "<redacted anthropic key>"),
        (AWS_ID, "<redacted aws access key id>"),
        (GITHUB, "<redacted github token>"),
        (GITHUB_PAT, "<redacted github token>"),
        (SLACK, "<redacted slack token>"),
        (JWT, "<redacted jwt>"),
        (PEM, "<redacted private key>"),
    ],
)
@pytest.mark.parametrize(
    "wrap", ["{}", "value={!r}", "['a', {{'k': {!r}}}]", "Error: bad credential {} given"]
)
def test_credential_strings_are_masked_wherever_they_occur(secret, label, wrap):
    text = wrap.format(secret)
    masked = mask(text)
    assert secret not in masked
    assert label in masked


def test_a_pem_block_in_a_repr_with_escaped_newlines_is_masked_even_when_cut():
    text = repr(PEM)[:60]  # a truncated repr: no END line
    assert "MIIEpAIBAAKCAQEA" not in mask(text)


def test_aws_secret_key_next_to_its_access_key_id():
    text = f"aws_access_key_id={AWS_ID}\nkey2 {AWS_SECRET}"
    masked = mask(text)
    assert AWS_SECRET not in masked and "<redacted aws secret key>" in masked
    assert AWS_SECRET in mask(f"unrelated {AWS_SECRET}")  # 40 characters alone are not enough


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "postgres://bob:hunter2@db.example.com:5432/sales",
            "postgres://bob:<redacted password>@db.example.com",
        ),
        ("https://user:p%40ss@example.org/x", "https://user:<redacted password>@example.org/x"),
    ],
)
def test_only_the_password_of_a_url_is_masked(url, expected):
    assert expected in mask(url)


@pytest.mark.parametrize(
    "name",
    [
        "api_key",
        "OPENAI_API_KEY",
        "apiKey",
        "password",
        "db_passwd",
        "pwd",
        "secret",
        "client_secret",
        "access_token",
        "token",
        "GITHUB_TOKEN",
        "credentials",
        "auth",
        "auth_header",
        "aws_secret_access_key",
        "private_key",
        "passphrase",
        # the second red team of query_sql: names that held a secret and passed
        "pw",
        "pw_hash",
        "hashed_pw",
        "passhash",
        "totp_seed",
        "recovery_codes",
        "user_backup_codes",
        "passwort",
        "пароль",
        "ssn",
        "cvv",
    ],
)
def test_secret_looking_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "token_count",
        "max_tokens",
        "tokens",
        "keyboard",
        "monkey",
        "key",
        "keys",
        "sort_key",
        "primary_key",
        "author",
        "authors",
        "passenger",
        "secretary_name",
        "donkey",
        "n_keys",
        "tokenizer",
    ],
)
def test_near_misses_stay_visible(name):
    assert not is_secret_name(name)


def test_secret_named_values_in_text_are_masked_but_near_misses_are_not():
    text = (
        "api_key = 'abc123xyz'; token_count = 5; {'password': 'hunter2', 'max_tokens': 100}; password=letmein"
    )
    masked = mask(text)
    for secret in ("abc123xyz", "hunter2", "letmein"):
        assert secret not in masked
    assert "token_count = 5" in masked and "'max_tokens': 100" in masked


def test_values_of_secret_named_environment_variables_are_masked(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "plain-looking-value-42")
    monkeypatch.setenv("HOMEPAGE_COLOR", "blue-sky-value")
    masked = mask("token plain-looking-value-42 and blue-sky-value")
    assert "plain-looking-value-42" not in masked and "blue-sky-value" in masked


def test_a_changed_secret_environment_value_is_masked_at_once(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "first-value-0001")
    assert "first-value-0001" not in mask("x first-value-0001")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "other-value-0002")  # same variables, same count: a new value
    assert "other-value-0002" not in mask("x other-value-0002")


def test_masker_from_config_adds_names_and_patterns():
    masker = Masker.from_config(
        Config(secret_names=["acct_*", "pin"], secret_patterns=[r"CUST-\d{6}", "[bad"])
    )
    assert masker.is_secret_name("acct_number") and masker.is_secret_name("PIN")
    assert not masker.is_secret_name("account")
    out = masker.mask_text("CUST-123456 acct_number='9876' literal [bad here")
    assert "CUST-123456" not in out and "9876" not in out and "[bad" not in out


def test_capabilities_hide_secret_variables_but_keep_near_misses_and_a_key_column(tool=tool):
    session = make_session(
        "import pandas as pd\n"
        f"api_key = {OPENAI!r}\n"
        "db_password = 'hunter2-but-longer'\n"
        "token_count = 5\n"
        "max_tokens = 100\n"
        "df = pd.DataFrame({'key': ['k1', 'k2'], 'value': [1, 2]})\n"
        f"conn = 'postgres://bob:hunter2@db/x'\n"
        f"config = {{'service': 'x', 'token': {GITHUB!r}}}\n"
    )
    listing = tool(session, "list_globals").text
    assert OPENAI not in listing and "hunter2" not in listing and GITHUB not in listing
    assert "token_count: int 5" in listing and "max_tokens: int 100" in listing
    for expr in ("api_key", "db_password", "config", "config['token']", "conn"):
        text = tool(session, "get_repr", expr=expr).text
        assert OPENAI not in text and "hunter2" not in text and GITHUB not in text, expr
    frame = tool(session, "get_repr", expr="df").text
    assert "k1" in frame and "key" in frame


def test_masking_is_idempotent_and_leaves_plain_text_alone():
    plain = "DataFrame 3×2: a int64, b object\n[1, 2, 3]"
    assert mask(plain) == plain
    once = mask(f"{OPENAI} {JWT}")
    assert mask(once) == once


def test_path_valued_environment_variables_are_not_treated_as_secrets(monkeypatch, tmp_path):
    monkeypatch.setenv("PWD", str(tmp_path))
    monkeypatch.setenv("DB_PASSWORD_FILE", str(tmp_path))
    assert mask(f"File {tmp_path}/data.csv") == f"File {tmp_path}/data.csv"


# Each credential with the length of its public prefix (the part every such credential starts with).
CUT_SECRETS = [
    (OPENAI, len("sk-proj-")),
    (OPENAI_LEGACY, len("sk-")),
    (ANTHROPIC, len("sk-ant-")),
    (AWS_ID, len("AKIA")),
    (GITHUB, len("ghp_")),
    (GITHUB_PAT, len("github_pat_")),
    (SLACK, len("xoxb-")),
    (JWT, len("eyJ")),
]


@pytest.mark.parametrize(("secret", "public"), CUT_SECRETS)
@pytest.mark.parametrize("more", [2, 5, 9])
@pytest.mark.parametrize(
    "display",
    [
        "note: str, 83 chars: 'deploy with {}'…",  # our one-line summary of a long string
        "{{'k': 'deploy with {}'…(+24 more)}}",  # a container's item cut by our summary
        "0    deploy with {}...",  # a cell pandas cut (max_colwidth)
        "['{}'...]",  # numpy
        "[3] db = connect({}…",  # an input line cut in the session picture
    ],
)
def test_a_credential_cut_short_by_a_display_is_masked(secret, public, more, display):
    """A display that cuts a long value leaves only the credential's first characters, too few for its
    pattern, but still the secret's: before a cut mark they are masked too."""
    shown = secret[: public + more]
    masked = mask(display.format(shown))
    assert shown not in masked, masked
    assert "deploy with" in masked or "db = connect(" in masked or masked.startswith(("0", "["))


def test_a_secret_value_cut_before_its_closing_quote_is_masked(monkeypatch):
    assert "hunter2-Zq8" not in mask("[3] db_password = 'hunter2-Zq8…")
    assert "hunter2-Zq8" not in mask("{'password': \"hunter2-Zq8...")
    monkeypatch.setenv("DEPLOY_SECRET", "plain-looking-value-42")
    masked = mask("x: str, 60 chars: 'and then plain-looki'…")
    assert "plain-looki" not in masked and "and then" in masked


def test_text_cut_short_with_no_secret_in_it_is_left_alone():
    for text in ("a long note that goes on and on…", "0    the skies were grey...", "ask-me-anything…"):
        assert mask(text) == text


def _credential_samples() -> list[str]:
    """One text per alternative each credential pattern starts with (every AWS prefix, every GitHub and Slack
    kind), whole and as a piece, bare and inside a line of ordinary text."""
    body = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    samples = [OPENAI, OPENAI_LEGACY, ANTHROPIC, GITHUB_PAT, JWT, PEM, "Bearer " + body, "BEARER " + body]
    samples += [prefix + "IOSFODNN7EXAMPLE" for prefix in ("AKIA", "ASIA", "AGPA", "AIDA", "AROA")]
    samples += [prefix + "IOSFODNN7EXAMPLE" for prefix in ("ANPA", "ANVA", "AIPA")]
    samples += [f"gh{kind}_{body}" for kind in "pousr"]
    samples += [f"xox{kind}-123456789012-{body}" for kind in "abprs"]
    samples += ["sk-svcacct-" + body, "sk-admin-" + body, "sk-None-" + body]
    samples += ["-----BEGIN PRIVATE KEY-----\nMII"]
    pieces = [sample[:18] for sample in samples]
    return [text for sample in samples + pieces for text in (sample, f"note: the value was {sample} here")]


def test_the_credential_hints_cover_every_pattern() -> None:
    """Masking skips the credential patterns for a text holding none of their prefixes (a tool result's
    common case): each pattern that matches a text must find its prefix among the hints."""
    from pyaichat.capabilities import redact

    patterns = [pattern for pattern, _ in redact._PATTERNS + redact._PIECES]
    for text in _credential_samples():
        matched = [pattern.pattern for pattern in patterns if pattern.search(text)]
        if matched:
            assert redact._may_hold_credential(text), (text, matched)
    for pattern in patterns:  # every pattern is exercised by a sample above
        assert any(pattern.search(text) for text in _credential_samples()), pattern.pattern
    plain = "df: DataFrame\nmodule: pandas\nshape: 100,000 rows × 5 columns\n  a: int64"
    assert not redact._may_hold_credential(plain)
    assert mask(plain) == plain
