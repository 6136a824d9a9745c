"""An elicitation's form: the fields a server asks the person to fill in, and their typed answers as values.

The MCP specification restricts an elicitation's ``requestedSchema`` to an object of flat fields: text (with
``minLength``/``maxLength`` and the formats ``email``, ``uri``, ``date``, ``date-time``), numbers and integers
(``minimum``/``maximum``), yes-or-no, one choice of several (``enum``, with ``enumNames`` for labels, or
``oneOf`` of ``const``/``title``) and several choices (an ``array`` whose ``items`` are such a list,
``minItems``/``maxItems``). ``fields_of`` reads those into ``Field``s and refuses anything else in one
sentence (a nested object has no sensible one-line answer); ``Field.parse`` turns what the person typed into
the value the server expects, or raises ``FieldError`` with what is wrong, so a front end can ask again.
Plain classes, no front end code: every front end asks the same way, and the rules are tested here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..printable import printable

FORMATS = {
    "email": "an email address",
    "uri": "an address (https://…)",
    "date": "a date, YYYY-MM-DD",
    "date-time": "a date and time, YYYY-MM-DDTHH:MM",
}
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")
_YES = ("y", "yes", "true", "1")
# Words of a field that asks for a credential: pyaichat never asks for one, so such a field is flagged.
_CREDENTIAL = re.compile(
    r"\b(?:pass(?:word|wd|phrase|code)?s?|pwd|pins?|pin[ -]?code|tokens?|secrets?|credentials?|"
    r"(?:api|private|secret|access|license|ssh|encryption|recovery)[ _-]?keys?|otp|totp|2fa|mfa|"
    r"one[ -]time[ -](?:code|password)|(?:verification|security|auth(?:entication)?|sms|login)[ -]codes?|"
    r"cvv|cvc|seed[ -]phrase|recovery[ -](?:phrase|codes?))\b",
    re.IGNORECASE,
)
_NO = ("n", "no", "false", "0")
MAX_FIELDS = 50


class FormError(ValueError):
    """The server's schema is not one pyaichat can ask with; ``str()`` says why."""


class FieldError(ValueError):
    """What the person typed does not fit the field; ``str()`` says why, for them."""


class Skip:
    """An optional field the person left empty: it is left out of the answer."""

    def __repr__(self) -> str:
        return "SKIP"


SKIP = Skip()


@dataclass(frozen=True)
class Choice:
    value: str
    label: str


@dataclass(frozen=True)
class Field:
    """One field of the form (``kind``: string, number, integer, boolean, choice or choices)."""

    name: str
    kind: str
    title: str = ""
    description: str = ""
    required: bool = False
    default: Any = None
    choices: tuple[Choice, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str = ""

    @property
    def label(self) -> str:
        """The field as shown: its title, else its name (the key of the answer, kept as the server wrote it,
        shown with its control characters made visible)."""
        return self.title or printable(self.name)

    @property
    def asks_for_secret(self) -> bool:
        """Whether the field looks like it asks for a password, token, key, PIN, 2FA code …: the front end
        warns that pyaichat never asks for one, and neither echoes nor repeats what is typed."""
        from ..capabilities.redact import is_secret_name  # redact: with the first elicitation

        words = " ".join((self.name.replace("_", " "), self.title, self.description))
        return is_secret_name(self.name) or bool(_CREDENTIAL.search(words))

    def hint(self) -> str:
        """What kind of answer it takes, in a few words (``an integer from 1 to 100``, ``yes or no``)."""
        if self.kind == "boolean":
            return "yes or no"
        if self.kind in ("choice", "choices"):
            listed = ", ".join(f"{n} {c.label}" for n, c in enumerate(self.choices, 1))
            many = "one or more of" if self.kind == "choices" else "one of"
            counted = _count_range(self.min_length, self.max_length, "choice")
            return f"{many}: {listed}" + (f" ({counted})" if counted else "")
        if self.kind in ("number", "integer"):
            what = "an integer" if self.kind == "integer" else "a number"
            if self.minimum is not None and self.maximum is not None:
                return f"{what} from {_num(self.minimum)} to {_num(self.maximum)}"
            if self.minimum is not None:
                return f"{what}, at least {_num(self.minimum)}"
            if self.maximum is not None:
                return f"{what}, at most {_num(self.maximum)}"
            return what
        what = FORMATS.get(self.format, "text")
        counted = _count_range(self.min_length, self.max_length, "character")
        return f"{what}, {counted}" if counted else what

    def default_text(self) -> str:
        """The default as the person would type it (what their input starts with)."""
        value = self.default
        if value is None:
            return ""
        if self.kind == "boolean":
            return "yes" if value is True else "no" if value is False else ""
        if self.kind == "choice":
            return self._label_of(value)
        if self.kind == "choices" and isinstance(value, list):
            return ", ".join(self._label_of(v) for v in value)
        if self.kind in ("number", "integer") and isinstance(value, (int, float)):
            return _num(value)
        return str(value)

    def parse(self, text: str) -> Any:
        """The value for ``text`` (``SKIP`` for an optional field left empty); ``FieldError`` says why
        not."""
        text = text.strip()
        if not text:
            if self.required:
                raise FieldError(f"{self.label} needs an answer.")
            return SKIP
        if self.kind == "boolean":
            if text.lower() in _YES:
                return True
            if text.lower() in _NO:
                return False
            raise FieldError("Answer yes or no.")
        if self.kind == "choice":
            return self._choice(text)
        if self.kind == "choices":
            picked = []
            for part in (p.strip() for p in text.split(",")):
                if part and (value := self._choice(part)) not in picked:
                    picked.append(value)
            low, high = self.min_length, self.max_length
            if (low is not None and len(picked) < low) or (high is not None and len(picked) > high):
                raise FieldError(f"Choose {_count_range(low, high, 'choice')}.")
            return picked
        if self.kind in ("number", "integer"):
            return self._number(text)
        return self._string(text)

    # -- the kinds -------------------------------------------------------------------------------------------
    def _choice(self, text: str) -> str:
        if text.isdigit() and 1 <= int(text) <= len(self.choices):
            return self.choices[int(text) - 1].value
        for choice in self.choices:
            if text == choice.value or text.lower() == choice.label.lower():
                return choice.value
        raise FieldError(f"{text!r} is not one of the choices; type its number (1–{len(self.choices)}).")

    def _label_of(self, value: Any) -> str:
        return next((c.label for c in self.choices if c.value == value), str(value))

    def _number(self, text: str) -> int | float:
        try:
            value: int | float = int(text) if self.kind == "integer" else float(text)
        except ValueError:
            raise FieldError(f"{text!r} is not {self.hint().split(',')[0]}.") from None
        if value != value or value in (float("inf"), float("-inf")):
            raise FieldError("Type a finite number.")
        if (self.minimum is not None and value < self.minimum) or (
            self.maximum is not None and value > self.maximum
        ):
            raise FieldError(f"Type {self.hint()}.")
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
            return int(value) if self.kind == "integer" else value
        return value

    def _string(self, text: str) -> str:
        low, high = self.min_length, self.max_length
        if (low is not None and len(text) < low) or (high is not None and len(text) > high):
            raise FieldError(f"Type {_count_range(low, high, 'character')}.")
        ok = True
        if self.format == "email":
            ok = bool(_EMAIL.match(text))
        elif self.format == "uri":
            ok = bool(_URI.match(text))
        elif self.format in ("date", "date-time"):
            import datetime as dt  # only for a date field

            try:
                (dt.date if self.format == "date" else dt.datetime).fromisoformat(text)
            except ValueError:
                ok = False
        if not ok:
            raise FieldError(f"Type {FORMATS[self.format]}.")
        return text


# -- the schema ----------------------------------------------------------------------------------------------
def fields_of(schema: Any) -> tuple[Field, ...]:
    """The form of ``requestedSchema``; ``FormError`` when it is not one pyaichat can ask with."""
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        raise FormError("its requestedSchema is not an object of fields")
    properties = schema.get("properties") or {}
    if not isinstance(properties, Mapping) or len(properties) > MAX_FIELDS:
        raise FormError(f"its requestedSchema should list at most {MAX_FIELDS} fields under properties")
    required = set(schema.get("required") or ())
    return tuple(_field(str(name), prop, name in required) for name, prop in properties.items())


def _field(name: str, prop: Any, required: bool) -> Field:
    if not isinstance(prop, Mapping):
        raise FormError(f"its field {name!r} is not a schema")
    kind = prop.get("type")

    def field(**kind_of: Any) -> Field:  # what every field has, and ``kind_of`` its kind's parts
        return Field(
            name=name,
            title=_text(prop.get("title")),
            description=_text(prop.get("description")),
            required=required,
            default=prop.get("default"),
            **kind_of,
        )

    choices = _choices(prop)
    if choices:
        return field(kind="choice", choices=choices)
    if kind == "array":
        items = _choices(prop.get("items") or {})
        if not items:
            raise FormError(f"its field {name!r} is a list of something other than choices")
        return field(
            kind="choices",
            choices=items,
            min_length=_int(prop.get("minItems")),
            max_length=_int(prop.get("maxItems")),
        )
    if kind in ("number", "integer"):
        return field(kind=kind, minimum=_float(prop.get("minimum")), maximum=_float(prop.get("maximum")))
    if kind == "boolean":
        return field(kind="boolean")
    if kind == "string":
        fmt = prop.get("format") or ""
        return field(
            kind="string",
            min_length=_int(prop.get("minLength")),
            max_length=_int(prop.get("maxLength")),
            format=fmt if fmt in FORMATS else "",
        )
    raise FormError(f"its field {name!r} is of a type pyaichat cannot ask for ({kind!r})")


def _choices(prop: Any) -> tuple[Choice, ...]:
    """A field's choices: ``enum`` (labels from ``enumNames``), or ``oneOf``/``anyOf`` of ``const``s."""
    if not isinstance(prop, Mapping):
        return ()
    enum = prop.get("enum")
    if isinstance(enum, list) and enum:
        names = prop.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(enum) else enum
        return tuple(Choice(str(v), _text(str(label))) for v, label in zip(enum, labels, strict=True))
    options = prop.get("oneOf") or prop.get("anyOf")
    consts = isinstance(options, list) and all(isinstance(o, Mapping) and "const" in o for o in options)
    if consts and options:
        return tuple(Choice(str(o["const"]), _text(str(o.get("title") or o["const"]))) for o in options)
    return ()


def _text(value: Any) -> str:
    """A server's words, made safe to print (no terminal control characters)."""
    return printable(value.strip()) if isinstance(value, str) else ""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _count_range(low: int | None, high: int | None, unit: str) -> str:
    def units(n: int) -> str:
        return f"{n} {unit}" + ("" if n == 1 else "s")

    if low is not None and high is not None:
        return units(low) if low == high else f"{low} to {units(high)}"
    if low is not None:
        return f"at least {units(low)}"
    if high is not None:
        return f"at most {units(high)}"
    return ""
