"""Every place pyaichat reads the session's objects in the session's own process, each with the reason it
runs none of their code (issue 44, point 1). The set of reads is owned by ``capabilities.structural`` (and the
reader's ``expression.reader.IN_PROCESS``, the library table ``library_metadata.TABLE``): each entry point
below is exercised over issue 44's adversarial objects (``readonly_breaks.ISSUE_44``), whose hooks count
their calls in the session's process, and must leave every counter at zero and every object as it was.

A new in-process entry point belongs in ``ENTRY_POINTS``, with its reason."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import pytest

import pyaichat
from pyaichat.capabilities import call, layout, secret_values, structural
from pyaichat.capabilities.catalog import CapabilityContext
from pyaichat.capabilities.database_here import known_connection
from pyaichat.capabilities.expression import resolve
from pyaichat.capabilities.expression.reader import IN_PROCESS
from pyaichat.capabilities.library_metadata import TABLE
from pyaichat.capabilities.picture import session_picture
from pyaichat.capabilities.redact import masker_for
from pyaichat.capabilities.summary_here import here
from pyaichat.capabilities.variable_lines import line_here
from pyaichat.configuration.config import Config
from pyaichat.runtime.facts import suggestion_facts
from readonly_breaks import setup_source, state_source

ADVERSARIAL = ["layers", "stack", "peek", "framed", "loud", "counted", "counted_list", "keyed", "anchor_ref"]
EXPRESSIONS = [*ADVERSARIAL, *(f"{name}.x" for name in ADVERSARIAL), "keyed[1]", "counted.n", "stack[0]"]
INTROSPECTION = ("get_type", "get_repr", "get_dir", "get_doc")


def _each_value(session: pyaichat.Session, read: Callable[[Any], Any]) -> None:
    for name in ADVERSARIAL:
        try:
            read(session.namespace[name])
        except (structural.NotStructural, structural.NoAttribute):
            pass  # refusing to read is what a structural read does with code


# (entry point, why it runs none of the session's code, how to exercise it)
ENTRY_POINTS: list[tuple[str, str, Callable[[pyaichat.Session], Any]]] = [
    (
        "eval_expr's in-process tier",
        "structural reads and computations over plain values only (expression.reader.IN_PROCESS); anything "
        "else, and every description that needs an object's own code, goes to the walled child",
        lambda s: [call(s, "eval_expr", {"expr": e}) for e in EXPRESSIONS],
    ),
    (
        "the expr of get_type, get_repr, get_dir and get_doc",
        "the same reader (strict=False), and here() decides by structure whether the description is made "
        "in this process",
        lambda s: [call(s, tool, {"expr": e}) for tool in INTROSPECTION for e in ADVERSARIAL],
    ),
    (
        "an object a capability works with (query_sql's connection, get_figure)",
        "expression.resolve: a path read structurally, or refused",
        lambda s: [_resolve(s, e) for e in ADVERSARIAL],
    ),
    (
        "the session picture",
        "variable_lines: lines from structure, the rest asked in one walled child or made from the type",
        lambda s: session_picture(s, s.config),
    ),
    (
        "list_globals",
        "variable_lines, as the picture",
        lambda s: call(s, "list_globals", {}),
    ),
    (
        "the secret-values scan before every call",
        "secret_values walks builtin containers through their base type, objects through __dict__ and slots "
        "(a ChainMap through its maps), pandas/numpy through where they store their data",
        lambda s: secret_values.collect(s.namespace, masker_for(s.config).is_secret_name),
    ),
    (
        "summaries' and adapters' metadata reads",
        "summary_here.here and line_here: plain values, numpy's/pandas' metadata from their stores, library "
        "callables and classes; anything else is described from its type",
        lambda s: _each_value(s, lambda v: (here(v, "repr"), here(v, "type"), line_here(v, "sample", 100))),
    ),
    (
        "database connections' adapters (sqlite3, psycopg)",
        "database_here.known_connection: only the driver's exact class, immutable or with every function and "
        "property from the driver's own files; the adapter reads local metadata and opens its own read-only "
        "connection, and a forked child never uses the person's connection (its socket is shared)",
        lambda s: _each_value(s, lambda v: (known_connection(v), line_here(v, "schema", 100))),
    ),
    (
        "layout reads",
        "instance state through the type's own __dict__ descriptor and slots, builtin containers through "
        "their base type, the environment by dict.items",
        lambda s: _each_value(s, lambda v: (structural.instance_state(v), layout.is_environ(v))),
    ),
    (
        "suggestion facts",
        "paths resolved by structural.attribute, lines from line_here",
        lambda s: suggestion_facts(s.namespace, [], s.config, " ".join(f"{n}.x" for n in ADVERSARIAL)),
    ),
    (
        "get_last_exception",
        "locals described by line_here, chained messages only from Python's own exception classes' text",
        lambda s: (s.run("counted_list.pop(7)"), call(s, "get_last_exception", {})),
    ),
]


def _resolve(session: pyaichat.Session, expr: str) -> Any:
    try:
        return resolve(CapabilityContext(session, session.config), expr)
    except pyaichat.errors.CapabilityError:
        return None


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> pyaichat.Session:
    s = pyaichat.Session(config=Config(audit=False))
    result = s.run(setup_source(str(tmp_path_factory.mktemp("watched"))))
    assert result.ok, result.error and result.error.formatted
    return s


def test_the_in_process_set_is_declared_with_its_reasons() -> None:
    assert all(reason for reason in IN_PROCESS.values()) and all(reason for reason in TABLE.values())
    assert all(reason and len(reason) > 20 for _, reason, _ in ENTRY_POINTS)


@pytest.mark.parametrize(("name", "reason", "exercise"), ENTRY_POINTS, ids=[e[0] for e in ENTRY_POINTS])
def test_an_in_process_entry_point_runs_no_session_code(session, name: str, reason: str, exercise) -> None:
    before = eval(state_source(), session.namespace)
    exercise(session)
    gc.collect()  # a copy of the session's object made here would be finalised by now
    after = eval(state_source(), session.namespace)
    assert after == before, f"{name}: {reason}"
    calls = dict(session.namespace["CALLS"])
    assert not calls, f"{name} ran the session's code here: {calls}"
