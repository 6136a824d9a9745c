"""An elicitation's form: every kind of field the MCP specification allows, read from a server's schema (the
one the reference ``server-everything`` sends, field for field), and what a person types made into the value
the server expects — or one sentence saying what is wrong."""

from __future__ import annotations

import pytest

from pyaichat.mcptools.form import SKIP, FieldError, FormError, fields_of

# The schema server-everything's trigger-elicitation-request sends (its tools/trigger-elicitation-request.js).
EVERYTHING = {
    "type": "object",
    "properties": {
        "name": {"title": "String", "type": "string", "description": "Your full, legal name"},
        "check": {"title": "Boolean", "type": "boolean", "description": "Agree to the terms and conditions"},
        "firstLine": {
            "title": "String with default",
            "type": "string",
            "default": "It was a dark and stormy night.",
        },
        "email": {"title": "String with email format", "type": "string", "format": "email"},
        "homepage": {"type": "string", "format": "uri", "title": "String with uri format"},
        "birthdate": {"title": "String with date format", "type": "string", "format": "date"},
        "integer": {"title": "Integer", "type": "integer", "minimum": 1, "maximum": 100, "default": 42},
        "number": {"title": "Number", "type": "number", "minimum": 0, "maximum": 1000, "default": 3.14},
        "untitledSingleSelectEnum": {
            "type": "string",
            "enum": ["Monica", "Rachel", "Joey", "Chandler", "Ross", "Phoebe"],
            "default": "Monica",
        },
        "untitledMultipleSelectEnum": {
            "type": "array",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["Guitar", "Piano", "Violin", "Drums", "Bass"]},
            "default": ["Guitar"],
        },
        "titledSingleSelectEnum": {
            "type": "string",
            "oneOf": [
                {"const": "hero-1", "title": "Superman"},
                {"const": "hero-2", "title": "Green Lantern"},
                {"const": "hero-3", "title": "Wonder Woman"},
            ],
            "default": "hero-1",
        },
        "titledMultipleSelectEnum": {
            "type": "array",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "fish-1", "title": "Tuna"},
                    {"const": "fish-2", "title": "Salmon"},
                    {"const": "fish-3", "title": "Trout"},
                ]
            },
            "default": ["fish-1"],
        },
        "legacyTitledEnum": {
            "type": "string",
            "enum": ["pet-1", "pet-2", "pet-3", "pet-4", "pet-5"],
            "enumNames": ["Cats", "Dogs", "Birds", "Fish", "Reptiles"],
            "default": "pet-1",
        },
    },
    "required": ["name"],
}


@pytest.fixture
def form() -> dict:
    return {f.name: f for f in fields_of(EVERYTHING)}


def test_every_kind_of_field_is_read_with_its_hint_and_default(form) -> None:
    kinds = {name: f.kind for name, f in form.items()}
    assert kinds == {
        "name": "string",
        "check": "boolean",
        "firstLine": "string",
        "email": "string",
        "homepage": "string",
        "birthdate": "string",
        "integer": "integer",
        "number": "number",
        "untitledSingleSelectEnum": "choice",
        "untitledMultipleSelectEnum": "choices",
        "titledSingleSelectEnum": "choice",
        "titledMultipleSelectEnum": "choices",
        "legacyTitledEnum": "choice",
    }
    assert [n for n, f in form.items() if f.required] == ["name"]
    assert form["integer"].hint() == "an integer from 1 to 100" and form["integer"].default_text() == "42"
    assert form["number"].default_text() == "3.14" and form["check"].hint() == "yes or no"
    assert form["email"].hint() == "an email address" and form["birthdate"].hint() == "a date, YYYY-MM-DD"
    assert form["titledSingleSelectEnum"].hint() == "one of: 1 Superman, 2 Green Lantern, 3 Wonder Woman"
    assert form["titledSingleSelectEnum"].default_text() == "Superman"
    assert (
        form["titledMultipleSelectEnum"].hint()
        == "one or more of: 1 Tuna, 2 Salmon, 3 Trout (1 to 3 choices)"
    )
    assert form["titledMultipleSelectEnum"].default_text() == "Tuna"
    assert form["legacyTitledEnum"].default_text() == "Cats"
    assert (
        form["name"].label == "String"
        and form["untitledSingleSelectEnum"].label == "untitledSingleSelectEnum"
    )


@pytest.mark.parametrize(
    ("field", "typed", "value"),
    [
        ("name", "  Ann Example ", "Ann Example"),
        ("check", "Yes", True),
        ("check", "n", False),
        ("firstLine", "", SKIP),
        ("email", "ann@example.org", "ann@example.org"),
        ("homepage", "https://ann.example.org", "https://ann.example.org"),
        ("birthdate", "1990-02-28", "1990-02-28"),
        ("integer", "7", 7),
        ("number", "12.5", 12.5),
        ("number", "12", 12.0),
        ("untitledSingleSelectEnum", "3", "Joey"),
        ("untitledSingleSelectEnum", "phoebe", "Phoebe"),
        ("titledSingleSelectEnum", "Wonder Woman", "hero-3"),
        ("titledSingleSelectEnum", "hero-2", "hero-2"),
        ("legacyTitledEnum", "dogs", "pet-2"),
        ("untitledMultipleSelectEnum", "1, Drums, 1", ["Guitar", "Drums"]),
        ("titledMultipleSelectEnum", "Salmon,3", ["fish-2", "fish-3"]),
    ],
)
def test_what_the_person_types_becomes_the_value_the_server_expects(form, field, typed, value) -> None:
    got = form[field].parse(typed)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    ("field", "typed", "sentence"),
    [
        ("name", "   ", "String needs an answer."),
        ("check", "maybe", "Answer yes or no."),
        ("email", "ann at example", "Type an email address."),
        ("homepage", "ann.example.org", "Type an address (https://…)."),
        ("birthdate", "28/02/1990", "Type a date, YYYY-MM-DD."),
        ("integer", "101", "Type an integer from 1 to 100."),
        ("integer", "7.5", "'7.5' is not an integer from 1 to 100."),
        ("number", "nan", "Type a finite number."),
        ("untitledSingleSelectEnum", "Janice", "'Janice' is not one of the choices; type its number (1–6)."),
        ("untitledSingleSelectEnum", "7", "'7' is not one of the choices; type its number (1–6)."),
        ("untitledMultipleSelectEnum", "1,2,3,4", "Choose 1 to 3 choices."),
    ],
)
def test_an_answer_that_does_not_fit_says_why_in_one_sentence(form, field, typed, sentence) -> None:
    with pytest.raises(FieldError) as caught:
        form[field].parse(typed)
    assert str(caught.value) == sentence


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "array"}, "its requestedSchema is not an object of fields"),
        ({"properties": {"a": {"type": "object"}}}, "its field 'a' is of a type pyaichat cannot ask for"),
        ({"properties": {"a": {"type": "array", "items": {"type": "string"}}}}, "list of something other"),
        ({"properties": {"a": "text"}}, "its field 'a' is not a schema"),
        ({"properties": {str(n): {"type": "string"} for n in range(51)}}, "at most 50 fields"),
    ],
)
def test_a_schema_pyaichat_cannot_ask_with_is_refused_in_one_sentence(schema, reason) -> None:
    with pytest.raises(FormError, match=reason):
        fields_of(schema)


def test_an_empty_form_is_a_plain_confirmation() -> None:
    assert fields_of({"type": "object", "properties": {}}) == ()
    assert fields_of({}) == ()


def test_fields_that_ask_for_credentials_are_known_and_server_words_are_printable():
    from pyaichat.mcptools.form import fields_of

    def field(name, **prop):
        return fields_of({"type": "object", "properties": {name: {"type": "string", **prop}}})[0]

    for name, prop in [
        ("session_password", {}),
        ("x", {"title": "pyaichat session password"}),
        ("code", {"title": "Your 2FA code"}),
        ("pin", {}),
        ("x", {"description": "your GitHub personal access token"}),
        ("api_key", {}),
        ("x", {"title": "Recovery phrase"}),
    ]:
        assert field(name, **prop).asks_for_secret, (name, prop)
    for name, prop in [
        ("warehouse", {}),
        ("days", {"title": "Days"}),
        ("sort_key", {}),
        ("x", {"title": "Spin"}),
    ]:
        assert not field(name, **prop).asks_for_secret, (name, prop)
    assert field("x", title="\x1b[2Kpyaichat\x07").title == "␛[2Kpyaichat␇"
