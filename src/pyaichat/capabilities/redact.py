"""Secret masking: the one function every text bound for the LLM passes through.

Two kinds of rule (documented in the README, "Secrets"):

* **Secret-looking names.** A name is split into words (``snake_case``, ``camelCase``, dots, dashes); it is
  secret when a word is ``secret``, ``password``/``passwd``/``pwd``/``passphrase``, ``credential(s)``,
  ``auth``, ``authorization``, ``bearer``, ``cookie``…; when its *last* word is ``token``; or when its last
  word is ``key`` qualified by a credential word (``api_key``, ``private_key``, ``openai_key``,
  ``aws_access_key`` are secret; ``sort_key``, ``primary_key`` and a bare ``key`` are not). Near-misses such
  as ``token_count``, ``max_tokens``, ``keyboard`` and ``monkey`` stay visible. In text, ``name = 'value'`` /
  ``'name': 'value'`` pairs with a secret name have their value masked.
* **Credential-looking strings**, wherever they occur: OpenAI and Anthropic keys, AWS access key ids (and 40
  character secret keys in the same text), GitHub and Slack tokens, JWTs, PEM private key blocks, the password
  in ``scheme://user:password@host``, and the values of secret-named environment variables. A piece of a key
  that keeps its distinctive prefix (``sk-proj-`` and a few more characters, a slice of a longer string) is
  masked too.
* **The session's secret values**, wherever they occur: what sits under a secret name in the session (a
  variable, a dict key at any depth, a DataFrame column, an attribute) and the values of a copy of the
  environment, found by ``secret_values`` and handed here (``set_known_values``) — so a value that leaves by
  another road (``settings.get("api_key")``, ``df.iloc[0, 1]``, an exception message that quotes it) is masked
  by what it is, not by the name it was found under. A piece of one that keeps its first characters is
  masked too.

Replacements read ``<redacted …>`` so the model knows something was there without seeing it.

One module of ~480 lines on purpose: the three kinds of rule run as one ordered pass over a text (what one
rule masks, the next must not see again), and the names' rule is also the one ``secret_values`` and the
adapters ask; one file keeps the pass and its order in one place.
"""

from __future__ import annotations

import fnmatch
import functools
import itertools
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

REDACTED = "<redacted>"

# -- names ---------------------------------------------------------------------------------------------------
_ANYWHERE = frozenset(
    {
        "secret",
        "secrets",
        "password",
        "passwords",
        "passwd",
        "pwd",
        "passphrase",
        "credential",
        "credentials",
        "creds",
        "auth",
        "authorization",
        "bearer",
        "cookie",
        "cookies",
        "apikey",
        "apikeys",
        "accesskey",
        "secretkey",
        "privatekey",
        "authtoken",
        "accesstoken",
        "sessiontoken",
        "refreshtoken",
        "clientsecret",
        "dsn",
        "pw",  # pw_hash, hashed_pw, user_pw
        "passhash",
        "passwort",
        "kennwort",
        "ssn",
        "cvv",
        "cvc",
        "totp",  # totp_seed, totp_secret
    }
)
_ANYWHERE_PAIRS = frozenset({"recoverycode", "recoverycodes", "backupcode", "backupcodes"})  # two words
# Secret words outside ASCII, which the word split does not see: found anywhere in the lowered name.
_ANYWHERE_TEXT = ("пароль", "contraseña", "mot_de_passe")
_LAST_WORD = frozenset({"token", "pat"})
_KEY_WORDS = frozenset({"key", "keys"})
# Qualifiers that make ``<qualifier>_key`` a credential (``sort_key``, ``casted_key`` and a bare ``key`` are
# not).
_SECRET_KEY_QUALIFIERS = frozenset(
    {
        "api",
        "secret",
        "access",
        "private",
        "priv",
        "auth",
        "signing",
        "sign",
        "encryption",
        "enc",
        "crypt",
        "crypto",
        "client",
        "master",
        "license",
        "licence",
        "ssh",
        "gpg",
        "pgp",
        "rsa",
        "hmac",
        "jwt",
        "session",
        "app",
        "service",
        "account",
        "admin",
        "deploy",
        "root",
        "subscription",
        "developer",
        "dev",
        "prod",
        "live",
        "webhook",
        "openai",
        "anthropic",
        "aws",
        "gcp",
        "google",
        "gemini",
        "azure",
        "stripe",
        "github",
        "gitlab",
        "slack",
        "twilio",
        "sendgrid",
        "mistral",
        "groq",
        "cohere",
        "hf",
        "huggingface",
        "pinecone",
    }
)
_WORD_SPLIT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def name_words(name: str) -> list[str]:
    """Lower-case words of an identifier: ``OpenAIApiKey`` → ``['open', 'ai', 'api', 'key']``."""
    return [w.lower() for w in _WORD_SPLIT.findall(name)]


@functools.lru_cache(maxsize=8192)
def _default_secret_name(name: str) -> bool:
    lowered = name.lower()
    if any(w in lowered for w in _ANYWHERE_TEXT):
        return True
    words = name_words(name)
    if not words:
        return False
    if any(w in _ANYWHERE for w in words):
        return True
    if any(a + b in _ANYWHERE_PAIRS for a, b in itertools.pairwise(words)):  # user_recovery_codes
        return True
    if "".join(words) in _ANYWHERE:  # apiKey, AuthToken, …
        return True
    last = words[-1]
    if last in _LAST_WORD:
        return True
    if last in _KEY_WORDS and len(words) >= 2:
        return any(w in _SECRET_KEY_QUALIFIERS for w in words[:-1])
    return False


# -- credential-looking strings ------------------------------------------------------------------------------
_B64_BODY = r"(?:[A-Za-z0-9+/=\s]|\\n)*"
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|"
            + _B64_BODY
            + ")"
        ),
        "<redacted private key>",
    ),
    (re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}"), "<redacted anthropic key>"),
    (re.compile(r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}"), "<redacted openai key>"),
    (
        re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"),
        "<redacted aws access key id>",
    ),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}"), "<redacted github token>"),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"), "<redacted github token>"),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"), "<redacted slack token>"),
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}"), "<redacted jwt>"),
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9_\-.=+/]{16,}"), "Bearer <redacted token>"),
]
# A credential cut short by a display — ours end a cut with "…", pandas and numpy with "..." — is too short
# for the patterns above, yet its first characters are the secret's: before a cut mark, each kind is masked
# from its first few characters on.
_CUT_MARK = re.compile(r"""['"]?(?:…|\.\.\.)""")
_BEFORE_CUT = r"""(?=['"]?(?:…|\.\.\.))"""
_CUT_KINDS = [  # each kind from its first characters on, in one pass
    (r"\bsk-ant-[A-Za-z0-9_\-]{2,}", "<redacted anthropic key>"),
    (r"\bsk-[A-Za-z0-9_\-]{2,}", "<redacted openai key>"),
    (r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{2,}", "<redacted aws access key id>"),
    (r"\bgithub_pat_[A-Za-z0-9_]{2,}", "<redacted github token>"),
    (r"\bgh[pousr]_[A-Za-z0-9]{2,}", "<redacted github token>"),
    (r"\bxox[abprs]-[A-Za-z0-9\-]{2,}", "<redacted slack token>"),
    (r"\beyJ[A-Za-z0-9_\-.]{2,}", "<redacted jwt>"),
    (r"\b(?i:bearer)\s+[A-Za-z0-9_\-.=+/]{4,}", "Bearer <redacted token>"),
]
# A piece of a key (a slice of a longer string) that keeps a prefix no ordinary text has, with a few more
# characters: ``note[10:30]`` of a string holding an OpenAI key is ``sk-proj-zyxw98765432``.
_PIECES = [
    (re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{6,}"), "<redacted anthropic key>"),
    (re.compile(r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{6,}"), "<redacted openai key>"),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{6,}"), "<redacted github token>"),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{10,}"), "<redacted github token>"),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{8,}"), "<redacted slack token>"),
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{8,}"), "<redacted aws access key id>"),
]
# What each pattern above (and the pieces) starts with, as plain text: a text holding none of these cannot
# match any of them, and ``in`` finds a literal in a fraction of one pattern's scan (15 scans were ~45 µs of
# every tool result's masking). Kept beside the patterns; a test checks each pattern's own prefix is here.
_CREDENTIAL_HINTS = (
    "-----BEGIN ",
    "sk-",
    *("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"),
    "github_pat_",
    *(f"gh{c}_" for c in "pousr"),
    *(f"xox{c}-" for c in "abprs"),
    "eyJ",
)


def _may_hold_credential(text: str) -> bool:
    """Whether ``text`` holds the start of any credential pattern (``_PATTERNS``, ``_PIECES``): when not,
    none of them can match. ``bearer`` is matched in any case, as its pattern is."""
    return any(hint in text for hint in _CREDENTIAL_HINTS) or "bearer" in text.lower()


_CUT_CREDENTIAL = re.compile(
    "(?:" + "|".join(f"(?P<k{i}>{pattern})" for i, (pattern, _) in enumerate(_CUT_KINDS)) + ")" + _BEFORE_CUT
)
_CUT_LABELS = {f"k{i}": label for i, (_, label) in enumerate(_CUT_KINDS)}
_MIN_CUT = 6  # characters of a secret environment value before a cut mark that are masked
_AWS_ID = re.compile(r"<redacted aws access key id>")
_AWS_SECRET = re.compile(
    r"(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]*[0-9/+])(?=[A-Za-z0-9/+]*[a-z])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
)
_URL_PASSWORD = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@'\"<>]+:)([^\s@/'\"<>]+)(@)")
# ``name = 'value'``, ``'name': "value"``, ``name=value`` (the value is masked when ``name`` is
# secret-looking).
# A name starts where a word starts: tried inside a long run of word characters it would be re-scanned to the
# run's end from every position (a 4,000-character value took ~0.35 s to mask, 100,000 minutes).
_QUOTED_PAIR = re.compile(
    r"""(?P<q0>['"]?)(?<![\w.\-])(?P<name>[A-Za-z_][\w.\-]*)(?P=q0)(?P<sep>\s*[:=]\s*)(?P<q>['"])(?P<val>(?:\\.|(?!(?P=q)).)*)(?P=q)"""
)
# ``name = 'value…`` cut before its closing quote
_QUOTED_CUT = re.compile(
    r"""(?P<q0>['"]?)(?<![\w.\-])(?P<name>[A-Za-z_][\w.\-]*)(?P=q0)(?P<sep>\s*[:=]\s*)(?P<q>['"])(?P<val>(?:\\.|(?!(?P=q)).)*?)"""
    + _BEFORE_CUT
)
_BARE_PAIR = re.compile(
    r"""(?P<name>\b[A-Za-z_][\w\-]*)(?P<sep>\s*[:=]\s*)(?P<val>(?!<redacted)[^\s'",;&(){}\[\]<>]+)(?![\w.]*[(\[])"""
)
# Bare values that are type or dtype names (``password: object`` in a dtype listing), not secrets.
_TYPE_WORD = re.compile(
    r"^(?:u?int\d*|float\d*|complex\d*|object|str|string|bytes|bool|boolean|category|list|dict|tuple|set|"
    r"NoneType|property|datetime64\S*|timedelta64\S*)$"
)
_MIN_ENV_SECRET = 8
_NOT_SECRET_ENV = frozenset({"PWD", "OLDPWD", "XAUTHORITY", "SSH_AUTH_SOCK", "GPG_AGENT_INFO"})


def is_existing_path(value: str) -> bool:
    """An existing file or directory (``PWD=/home/ann``) is not a secret, whatever its variable is called."""
    try:
        return os.sep in value and os.path.exists(value)
    except (OSError, ValueError):
        return False


def _compile_extra(patterns: Iterable[str]) -> list[re.Pattern[str]]:
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error:  # a bad regex in the config still masks the literal text
            compiled.append(re.compile(re.escape(pattern)))
    return compiled


@dataclass
class Masker:
    """Masks secrets in text. Build it with ``Masker.from_config(config)`` to add the user's names and
    patterns."""

    extra_names: list[str] = field(default_factory=list)
    extra_patterns: list[str] = field(default_factory=list)
    environ: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        self._names: dict[str, bool] = {}
        self._extra_names = [n.lower() for n in self.extra_names]
        self._extra = _compile_extra(self.extra_patterns)
        env = os.environ if self.environ is None else self.environ
        values = {
            v
            for k, v in env.items()
            if len(v) >= _MIN_ENV_SECRET
            and k not in _NOT_SECRET_ENV
            and self.is_secret_name(k)
            and not is_existing_path(v)
        }
        # Longest first, so a value that contains another is replaced whole.
        self._env_values = sorted(values, key=len, reverse=True)

    @classmethod
    def from_config(cls, config: Any) -> Masker:
        if config is None:
            return cls()
        return cls(list(config.secret_names), list(config.secret_patterns))

    def is_secret_name(self, name: str) -> bool:
        """True when ``name`` (a variable, attribute, key or column name) looks like it holds a secret.
        Remembered per name: the session's secret values are looked for under every name of a namespace
        of 10,000 variables after each input (``secret_values``)."""
        known = self._names.get(name) if type(name) is str else False
        if known is None:
            known = bool(name) and self._is_secret_name(name)
            if len(self._names) < 50_000:
                self._names[name] = known
        return known

    def _is_secret_name(self, name: str) -> bool:
        lowered = name.lower()
        if any(fnmatch.fnmatchcase(lowered, pat) or pat == lowered for pat in self._extra_names):
            return True
        return _default_secret_name(name)

    def revealed_values(self, text: str, min_length: int = 6) -> set[str]:
        """The values ``text`` itself binds to secret names (``db_password = "…"``, ``"api_key": "…"``): a
        file that masks the assignment must mask the same value wherever else it holds it (an error message
        that quotes it, a print). Shorter values than ``min_length`` are too likely to be ordinary text."""
        found: set[str] = set()
        for m in _QUOTED_PAIR.finditer(text or ""):
            value = m["val"]
            if (
                len(value) >= min_length
                and not value.startswith("<redacted")
                and self.is_secret_name(m["name"])
            ):
                found.add(value)
        return found

    def mask_text(self, text: str) -> str:
        """Replace every credential-looking string and every secret-named value in ``text``."""
        if not text:
            return text
        for value in self._env_values:
            if value in text:
                text = text.replace(value, "<redacted environment value>")
        if _known_values or _known_exact:
            text = _mask_known(text, _known_values)
        if _may_hold_credential(text):
            for pattern, replacement in _PATTERNS:
                text = pattern.sub(replacement, text)
            for pattern, replacement in _PIECES:
                text = pattern.sub(replacement, text)
        cut = "…" in text or "..." in text
        if cut:
            text = self._mask_cut(text)
        if _AWS_ID.search(text):
            text = _AWS_SECRET.sub("<redacted aws secret key>", text)
        if "://" in text:
            text = _URL_PASSWORD.sub(r"\1<redacted password>\3", text)
        if "'" in text or '"' in text:  # a quoted pair has quotes
            text = _QUOTED_PAIR.sub(self._mask_quoted, text)
        if cut:
            text = _QUOTED_CUT.sub(self._mask_quoted_cut, text)
        text = _BARE_PAIR.sub(self._mask_bare, text)
        for pattern in self._extra:
            text = pattern.sub("<redacted custom pattern>", text)
        return text

    def may_mask(self, text: str) -> bool:
        """A cheap necessary condition for ``mask_text(text) != text`` (False: masking leaves ``text`` as it
        is), for a walk that asks it of many short strings (``sandbox.secret_places``): each rule of
        ``mask_text`` needs one of these marks in the text to match anything."""
        if self._extra or _may_hold_credential(text) or "://" in text or "…" in text or "..." in text:
            return True
        if "=" in text or ":" in text or "'" in text or '"' in text:
            return True
        if any(value in text for value in self._env_values):
            return True
        return _known_heads is not None and _known_heads.search(text) is not None

    @property
    def environment_values(self) -> list[str]:
        """The values of this environment's secret-named variables (masked wherever they occur)."""
        return list(self._env_values)

    def mask_value(self, value: Any) -> Any:
        """Mask strings inside JSON-like data (for audit arguments and tool-call payloads)."""
        if isinstance(value, str):
            return self.mask_text(value)
        if isinstance(value, Mapping):
            return {
                k: (REDACTED if self.is_secret_name(str(k)) and v not in (None, "") else self.mask_value(v))
                for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            return [self.mask_value(v) for v in value]
        return value

    def _mask_quoted(self, m: re.Match[str]) -> str:
        if not self.is_secret_name(m["name"]) or not m["val"] or m["val"].startswith("<redacted"):
            return m.group(0)
        q0, q = m["q0"], m["q"]
        return f"{q0}{m['name']}{q0}{m['sep']}{q}{REDACTED}{q}"

    def _mask_quoted_cut(self, m: re.Match[str]) -> str:
        if not self.is_secret_name(m["name"]) or not m["val"] or m["val"].startswith("<redacted"):
            return m.group(0)
        return f"{m['q0']}{m['name']}{m['q0']}{m['sep']}{m['q']}{REDACTED}"

    def _mask_cut(self, text: str) -> str:
        """Credentials and secret environment values cut short by a display (``'sk-proj-Zq8v…``)."""
        text = _CUT_CREDENTIAL.sub(lambda m: _CUT_LABELS[m.lastgroup or ""], text)
        for value in self._env_values:  # where one's first characters run on into a cut mark
            head = value[:_MIN_CUT]
            at = text.find(head)
            while at >= 0:
                k = _MIN_CUT
                while k < len(value) and at + k < len(text) and text[at + k] == value[k]:
                    k += 1
                if _CUT_MARK.match(text, at + k):
                    text = text[:at] + "<redacted environment value>" + text[at + k :]
                at = text.find(head, at + 1)
        return text

    def _mask_bare(self, m: re.Match[str]) -> str:
        if not self.is_secret_name(m["name"]) or _TYPE_WORD.match(m["val"]):
            return m.group(0)
        return f"{m['name']}{m['sep']}{REDACTED}"


# -- the session's known secret values (``secret_values``) --------------------------------------------------
KNOWN_VALUE = "<redacted secret value>"
MIN_KNOWN = 6  # characters: a shorter value is too likely to be ordinary text to be masked wherever it occurs
_PREFIX = 10  # leading characters of a known value that, found in a text, mask the piece that follows
_known_values: tuple[str, ...] = ()
_known_exact: tuple[str, ...] = ()
_known_heads: re.Pattern[str] | None = None  # any known value's first characters (what ``_mask_known`` masks)
_known_all: tuple[str, ...] = ()
_known_set: frozenset[str] = frozenset()


def set_known_values(values: Iterable[str], exact: Iterable[str] = ()) -> None:
    """The session's secret values (``secret_values.refresh``) that every ``mask_text`` masks from now on:
    ``values`` wherever they or a piece with their first characters appear, ``exact`` (a copy of the
    environment's values) only whole. An existing file or directory is not a secret (``PWD``, a secret's
    file), whatever it was found under."""
    global _known_values, _known_exact, _known_heads, _known_all, _known_set
    kept = {v for v in values if isinstance(v, str) and len(v) >= MIN_KNOWN and not is_existing_path(v)}
    whole = {
        v for v in exact if isinstance(v, str) and len(v) >= _MIN_ENV_SECRET and not is_existing_path(v)
    } - kept
    _known_values = tuple(sorted(kept, key=len, reverse=True))  # a value that holds another goes whole
    _known_exact = tuple(sorted(whole, key=len, reverse=True))
    heads = {v[:_PREFIX] for v in _known_values} | set(_known_exact)
    ordered = sorted(heads, key=len, reverse=True)
    _known_heads = re.compile("|".join(map(re.escape, ordered))) if heads else None
    _known_all = tuple(sorted({*_known_values, *_known_exact}, key=len, reverse=True))
    _known_set = frozenset(kept | whole)


def forget_values() -> None:
    """In a forked child whose secrets were replaced (``sandbox.scrub``): no value is known any more. They
    were overwritten there with placeholders, and masking a placeholder as if it were a secret would hide the
    placeholder itself (what leaves the child is masked again, by value, in the session's process)."""
    set_known_values((), ())
    for masker in _maskers.values():
        masker._env_values = []
    _maskers.clear()


def known_values() -> tuple[str, ...]:
    """The session's secret values the masker knows now (``set_known_values``: both kinds), longest first; the
    same tuple until they change."""
    return _known_all


def is_known_value(text: str) -> bool:
    """``text`` is exactly one of the session's known secret values (a set look-up: for checking every item
    of a container, where masking each would cost too much)."""
    return text in _known_set


def mask_known(text: str) -> str:
    """Only the session's known secret values (and pieces of them) masked in ``text``: for text whose other
    parts were masked already, or will be on the way out (the session picture, in the session's process)."""
    return _mask_known(text, _known_values) if (_known_values or _known_exact) and text else text


def _mask_known(text: str, known: tuple[str, ...]) -> str:
    """Each known value, and a piece of one that keeps its first ``_PREFIX`` characters (a slice), masked;
    the environment's values only whole."""
    for value in _known_exact:
        if value in text:
            text = text.replace(value, KNOWN_VALUE)
    for value in known:
        if value in text:
            text = text.replace(value, KNOWN_VALUE)
    for value in known:
        if len(value) <= _PREFIX:
            continue
        head = value[:_PREFIX]
        at = text.find(head)
        while at >= 0:
            k = _PREFIX
            while k < len(value) and at + k < len(text) and text[at + k] == value[k]:
                k += 1
            text = text[:at] + KNOWN_VALUE + text[at + k :]
            at = text.find(head, at + len(KNOWN_VALUE))
    return text


def _environ_stamp() -> tuple[tuple[Any, Any], ...]:
    """The environment as it is now, exactly and cheaply: the raw mapping behind ``os.environ`` needs no
    decoding (a few µs instead of ~0.1 ms)."""
    data = getattr(os.environ, "_data", None)
    return tuple(data.items()) if isinstance(data, dict) else tuple(os.environ.items())


_maskers: dict[tuple[Any, ...], Masker] = {}


def masker_for(config: Any) -> Masker:
    """``Masker.from_config(config)``, reused until the secret settings or the environment change: building
    one scans the environment (~0.3 ms, more than a whole ``eval_expr`` may take), and every capability call
    and every request to the model needs one."""
    names = tuple(config.secret_names) if config is not None else ()
    patterns = tuple(config.secret_patterns) if config is not None else ()
    key = (names, patterns, _environ_stamp())
    found = _maskers.get(key)
    if found is None:
        if len(_maskers) >= 16:
            _maskers.clear()
        found = _maskers[key] = Masker(list(names), list(patterns))
    return found


def default_masker() -> Masker:
    """The masker with built-in rules only, rebuilt when the environment changes."""
    return masker_for(None)


def mask(text: str) -> str:
    """Mask ``text`` with the default rules (no user-configured extras)."""
    return default_masker().mask_text(text)


def is_secret_name(name: str) -> bool:
    return _default_secret_name(name) if isinstance(name, str) else False
