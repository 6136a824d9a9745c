"""Adapters as a declared protocol: the built-in ones and a third party's, found by the module of a value's
type, registered in the one registry, with the entry-point group ``pyaichat.adapters`` for libraries that
describe their own types.

``tests/plugin_pkg`` (installed with ``pip install -e ./tests/plugin_pkg``) is a real distribution holding a
stand-in library, ``demo_sensors``, and the adapter that describes it, ``demo_sensors_pyaichat``, declared
under the entry-point name ``demo_sensors``. The adapters that misbehave are declared here, for made-up
modules, and removed again after each test.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import time
import types
from importlib.metadata import EntryPoint, PackageNotFoundError, distribution
from typing import Any

import pytest
from cap_helpers import make_session

from pyaichat.assemble import assemble
from pyaichat.capabilities import call, variable_lines
from pyaichat.capabilities.adapters import (
    ADAPTERS,
    SAMPLE,
    Adapter,
    DatabaseAdapter,
    adapter_for,
    lookup,
    plugins,
)
from pyaichat.capabilities.picture import session_picture
from pyaichat.capabilities.summary import describe, one_line, type_details
from pyaichat.configuration.config import Config
from pyaichat.piped import PlainFrontEnd
from pyaichat.runtime import LocalRuntime

LEVELS = ("names", "schema", "sample", "full")


@pytest.fixture(scope="module")
def sensors():
    try:
        distribution("pyaichat-demo-plugin")
    except PackageNotFoundError:
        pytest.fail("The test plugin is not installed: run  pip install -e ./tests/plugin_pkg")
    import demo_sensors

    return demo_sensors


@pytest.fixture
def roomy_picture(monkeypatch: pytest.MonkeyPatch) -> None:
    """The picture's asks in the walled child get seconds instead of its 45 ms: these tests check what the
    asks answer, not how fast a loaded machine forks."""
    monkeypatch.setattr(variable_lines, "ASK_BUDGET", 10.0)


def placed(monkeypatch: pytest.MonkeyPatch, name: str, module: str, **namespace: Any) -> type:
    """A class named ``name`` in a module ``module`` that is loaded (``sys.modules``) and holds it: a
    library's class, which an adapter describes (one that only says ``__module__`` is nobody's)."""
    cls = type(name, (), {"__module__": module, **namespace})
    loaded = sys.modules.get(module) or types.ModuleType(module)
    monkeypatch.setitem(sys.modules, module, loaded)
    monkeypatch.setattr(loaded, name, cls, raising=False)
    return cls


@pytest.fixture
def fake_library(monkeypatch: pytest.MonkeyPatch):
    """``make(module, adapter)``: a class of a loaded module ``module`` and ``adapter`` declared for it as a
    plugin; every declaration, cached look-up and reported problem is undone afterwards."""
    lookup.all_entries()
    saved = {reg: dict(reg.entries) for reg in (ADAPTERS, lookup.PLUGIN_ADAPTERS)}
    saved_problems = list(lookup.problems)

    def make(module: str, adapter: Adapter | str | None, source: str = "plugin fake-dist") -> type:
        cls = placed(monkeypatch, "Thing", module, __init__=_init)
        if adapter is not None:
            lookup.declare(module, adapter, source)
        return cls

    yield make
    for reg, entries in saved.items():
        reg.entries.clear()
        reg.entries.update(entries)
    lookup.problems[:] = saved_problems
    lookup._by_type.clear()


def _init(self, **attrs: Any) -> None:
    self.__dict__.update(attrs)


def session_with(**values: Any):
    session = make_session()
    session.namespace.update(values)
    return session


# -- the protocol --------------------------------------------------------------------------------------------
def test_every_builtin_adapter_is_declared_and_follows_the_protocol():
    ADAPTERS.load()
    builtin = [entry for entry in ADAPTERS.all() if entry.builtin]
    assert {e.module for e in builtin} >= {
        "pandas", "numpy", "polars", "pyarrow", "xarray", "dask", "pyspark", "ibis", "torch", "jax",
        "scipy", "sqlite3", "duckdb", "sqlalchemy", "psycopg", "matplotlib",
    }  # fmt: skip
    for entry in builtin:
        assert isinstance(entry.adapter(), Adapter), entry
    databases = {e.module for e in builtin if isinstance(e.adapter(), DatabaseAdapter)}
    assert databases == {"sqlite3", "_sqlite3", "duckdb", "_duckdb", "sqlalchemy", "psycopg"}


def test_each_operation_is_optional_and_a_database_adapter_must_say_what_it_reads():
    class OnlyALine(Adapter):
        def one_line(self, value: Any, lvl: int) -> str | None:
            return "a thing"

    adapter = OnlyALine()
    assert adapter.details(object(), SAMPLE) is None and adapter.describe(object(), SAMPLE) is None
    with pytest.raises(TypeError, match="abstract"):
        DatabaseAdapter()  # type: ignore[abstract]


def test_an_adapter_with_only_one_line_leaves_the_rest_to_the_generic_description(fake_library):
    class OnlyALine(Adapter):
        def one_line(self, value: Any, lvl: int) -> str | None:
            return "Thing, described by its library"

    thing = fake_library("fake_lib_partial", OnlyALine())(size=3)
    assert one_line(thing) == "Thing, described by its library"
    assert "attributes: size=3" in describe(thing)  # the generic description
    assert type_details(thing, "sample") == []


def test_a_type_is_found_by_its_module_or_a_package_above_it(fake_library, monkeypatch):
    adapter = Adapter()
    fake_library("fake_pkg_x.sub", adapter)
    deep = placed(monkeypatch, "Deep", "fake_pkg_x.sub.inner")
    other = placed(monkeypatch, "Other", "fake_pkg_x.elsewhere")
    assert adapter_for(deep()) is adapter and adapter_for(other()) is None


def test_a_class_that_only_names_a_library_module_gets_no_adapter(fake_library):
    """``__module__`` is the class's own to set: a class the module does not hold is not the library's."""
    adapter = Adapter()
    fake_library("fake_pkg_y", adapter)
    impostor = type("Impostor", (), {"__module__": "fake_pkg_y"})
    assert adapter_for(impostor()) is None


def test_a_metaclass_hash_or_eq_never_runs_when_an_adapter_is_looked_up():
    """The cache is keyed by the type's id (a weak-keyed dict hashed the class and compared it with ``==``,
    and a metaclass of the session's defines both)."""
    ran: list[str] = []

    class Meta(type):
        def __hash__(cls) -> int:
            ran.append("__hash__")
            return 1

        def __eq__(cls, other: object) -> bool:
            ran.append("__eq__")
            return cls is other

    kinds = [Meta(f"K{i}", (), {}) for i in range(3)]
    for kind in kinds * 2:
        assert lookup.entry_for(kind()) is None
    assert ran == []


# -- a third party's adapter, installed --------------------------------------------------------------------
def test_the_installed_distribution_declares_the_adapter_entry_point(sensors):
    eps = [ep for ep in distribution("pyaichat-demo-plugin").entry_points if ep.group == plugins.GROUP]
    assert [(ep.name, ep.value) for ep in eps] == [("demo_sensors", "demo_sensors_pyaichat:SensorAdapter")]
    entry = lookup.entry_for(sensors.Sensor("s", "°C"))
    assert entry is not None and entry.source == "plugin pyaichat-demo-plugin"


def test_a_library_describes_its_own_objects_by_metadata_and_privacy_level(sensors, roomy_picture):
    probe = sensors.Sensor("probe-7", "°C", [20.5, 21.0, 21.25])
    session = session_with(probe=probe)
    for privacy in LEVELS:
        config = Config(audit=False, privacy=privacy)
        listed = call(session, "list_globals", {}, config=config)
        shown = call(session, "get_repr", {"expr": "probe"}, config=config)
        kind = call(session, "get_type", {"expr": "probe"}, config=config)
        assert listed.ok and shown.ok and kind.ok
        if privacy == "names":
            assert "Sensor: 3 readings" not in listed.text + shown.text + kind.text
            continue
        assert "probe: Sensor" in listed.text and "3 readings in °C" in listed.text
        assert "readings: 3 (held by the handle" in kind.text
        if privacy == "schema":  # no value: not even the name
            assert "probe-7" not in listed.text + shown.text and "21.25" not in shown.text
        else:
            assert "Sensor 'probe-7': 3 readings in °C" in shown.text
            assert "latest reading: 21.25" in shown.text
    picture = session_picture(session, Config(audit=False))
    assert "probe: Sensor 'probe-7': 3 readings in °C" in picture
    assert probe.round_trips == 0  # its __len__ and __repr__ (a device round trip) never ran


def test_what_a_third_party_adapter_says_is_masked_like_everything_else(sensors):
    key = "sk-proj-" + "a1B2c3D4" * 5
    session = session_with(leaky=sensors.Sensor(key, "V", [1.0]))
    for name, args in (("list_globals", {}), ("get_repr", {"expr": "leaky"})):
        result = call(session, name, args)
        assert result.ok and "Sensor" in result.text
        assert key not in result.text and "<redacted" in result.text


def test_plugins_are_read_and_imported_only_for_a_type_no_builtin_adapter_knows():
    """Values of the standard library, of the user's own classes and of libraries with a built-in adapter
    never cost the scan of the installed distributions (``importlib.metadata``); the plugin's adapter is
    imported with the first value of its type, and nothing else with it."""
    code = textwrap.dedent(
        """
        import sys
        from pyaichat.capabilities.summary import describe, one_line
        import collections, datetime, numpy
        class Mine: pass
        for value in (1, [1], collections.OrderedDict(), datetime.date.today(), Mine(), numpy.arange(3)):
            one_line(value); describe(value)
        before = sorted(m for m in ("importlib.metadata", "demo_sensors_pyaichat") if m in sys.modules)
        import demo_sensors
        line = one_line(demo_sensors.Sensor("s", "°C", [1.0]))
        heavy = sorted(m for m in ("pydantic", "pyaichat_demo_plugin", "pandas") if m in sys.modules)
        print(before, "demo_sensors_pyaichat" in sys.modules, heavy, line)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] True [] Sensor 's': 1 readings in °C"


def tools_command(out: io.StringIO) -> None:
    """``/tools`` in a session as the command line builds it, printed on ``out``."""
    runtime = LocalRuntime(make_session())
    assemble(runtime, PlainFrontEnd(out=out)).handle("/tools")


def test_tools_lists_the_plugin_adapters(sensors):
    out = io.StringIO()
    tools_command(out)
    assert "demo_sensors  [plugin pyaichat-demo-plugin]" in out.getvalue()


# -- a third party's adapter that misbehaves -----------------------------------------------------------------
class Raising(Adapter):
    def one_line(self, value: Any, lvl: int) -> str | None:
        raise ValueError("broken adapter")

    def details(self, value: Any, lvl: int) -> list[str] | None:
        raise ValueError("broken adapter")

    def describe(self, value: Any, lvl: int) -> str | None:
        raise SystemExit(3)  # not even this escapes


def test_a_failing_adapter_leaves_the_generic_description_with_one_note(fake_library, roomy_picture):
    thing = fake_library("fake_lib_raising", Raising())(rows=5)
    session = session_with(thing=thing)
    for name in ("list_globals", "get_type", "get_repr"):
        result = call(session, name, {} if name == "list_globals" else {"expr": "thing"})
        assert result.ok, result.error
        assert "[fake-dist adapter raised" in result.text and "generic summary]" in result.text
    assert "attributes: rows=5" in call(session, "get_repr", {"expr": "thing"}).text
    assert "thing: fake_lib_raising.Thing object [fake-dist adapter raised ValueError" in session_picture(
        session, Config(audit=False)
    )
    assert one_line([thing]).startswith("list, 1 item: [<fake_lib_raising.Thing object>]")  # nested: quiet
    out = io.StringIO()
    tools_command(out)
    assert "! The adapter for fake_lib_raising (plugin fake-dist) raised ValueError" in out.getvalue()


class Slow(Adapter):
    def __init__(self) -> None:
        self.calls = 0

    def one_line(self, value: Any, lvl: int) -> str | None:
        self.calls += 1
        time.sleep(1.0)  # a library call stuck in C: it cannot be interrupted, only not waited for
        return "too late"


def test_a_slow_adapter_is_not_waited_for_in_the_picture_nor_asked_again(fake_library):
    slow = Slow()
    thing = fake_library("fake_lib_slow", slow)()
    started = time.perf_counter()
    first = one_line(thing)
    assert time.perf_counter() - started < 0.5
    assert first.startswith("fake_lib_slow.Thing object [fake-dist adapter took too long")
    again = one_line(thing)
    assert "was too slow for it before" in again and slow.calls == 1
    assert any("fake_lib_slow" in p and "took over 25 ms" in p for p in lookup.problems)


class WrongAnswers(Adapter):
    def one_line(self, value: Any, lvl: int) -> str | None:
        return 42  # type: ignore[return-value]

    def details(self, value: Any, lvl: int) -> list[str] | None:
        return "not a list"  # type: ignore[return-value]

    def describe(self, value: Any, lvl: int) -> str | None:
        return "x" * 10_000_000


def test_answers_of_the_wrong_type_or_size_are_not_passed_on(fake_library):
    thing = fake_library("fake_lib_wrong", WrongAnswers())()
    assert "[fake-dist adapter answered int, not text; generic summary]" in one_line(thing, width=200)
    assert type_details(thing, "sample") == [
        "[fake-dist adapter answered str, not a list of lines; generic summary]"
    ]
    result = call(session_with(thing=thing), "get_repr", {"expr": "thing"})
    assert result.ok and len(result.text) <= 4000 and result.text.endswith("…")


def test_a_plugin_cannot_replace_a_builtin_adapter_and_a_broken_one_is_reported(fake_library, monkeypatch):
    pd = pytest.importorskip("pandas")
    pandas_adapter = adapter_for(pd.DataFrame())
    module = type(sys)("fake_adapter_module")
    module.NotAnAdapter = object  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_adapter_module", module)
    found = [
        EntryPoint("pandas", "fake_adapter_module:NotAnAdapter", plugins.GROUP),
        EntryPoint("fake_lib_broken", "fake_adapter_module:NotAnAdapter", plugins.GROUP),
        EntryPoint("fake_lib_missing", "no_such_module_x:Adapter", plugins.GROUP),
        EntryPoint("not a module!", "fake_adapter_module:NotAnAdapter", plugins.GROUP),
    ]
    monkeypatch.setattr(plugins, "installed_entry_points", lambda group: found)
    lookup.declare_plugins()
    assert adapter_for(pd.DataFrame()) is pandas_adapter
    broken = fake_library("fake_lib_broken", None)(n=1)
    missing = fake_library("fake_lib_missing", None)()
    assert one_line(broken, width=200) == (
        "fake_lib_broken.Thing object [fake_adapter_module adapter could not be loaded; generic summary]"
    )
    assert "could not be loaded" in one_line(missing)
    problems = "\n".join(lookup.problems)
    assert "The adapter for pandas from plugin fake_adapter_module was ignored" in problems
    assert "fake_adapter_module:NotAnAdapter is not an Adapter" in problems
    assert "ModuleNotFoundError" in problems and "'not a module!'" in problems


@pytest.mark.parametrize("isolation", ["fork", "inprocess"])
def test_what_run_python_returns_is_described_by_its_adapter_also_in_the_forked_child(sensors, isolation):
    if isolation == "fork" and not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    session = session_with(probe=sensors.Sensor("p", "V", [1.0, 2.0]))
    config = Config(audit=False, sandbox_isolation=isolation)
    # A third party's adapter is asked in the walled child; without one, the line is made from the type.
    listed = "probe: Sensor 'p'" if isolation == "fork" else "probe: demo_sensors.Sensor object"
    assert listed in call(session, "list_globals", {}, config=config).text  # workers now idle
    result = call(session, "run_python", {"code": "probe"}, config=config)
    assert result.ok, result.error
    assert result.text == "Sensor 'p': 2 readings in V\nlatest reading: 2.0 V"
    nested = call(session, "run_python", {"code": "[probe]"}, config=config)
    assert nested.ok and "[<Sensor 'p': 2 readings in V>]" in nested.text
    assert session.namespace["probe"].round_trips == 0


def test_a_bounded_call_works_in_a_forked_child_of_a_process_with_idle_workers():
    """A fork copies only the forking thread: the parent's idle workers are not in the child."""
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    from pyaichat.workers import within

    assert within(lambda: 1, 1.0) == 1  # leaves an idle worker behind in this process
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave without running anything of the test runner's
        try:
            answer = str(within(lambda: 2, 1.0)).encode()
        except BaseException as exc:
            answer = type(exc).__name__.encode()
        os.write(write, answer)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        answer = pipe.read()
    os.waitpid(pid, 0)
    assert answer == b"2"
