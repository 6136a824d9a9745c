"""What the preview cannot see, and says (issue 40, point 4): environment variables, attributes of the
session's modules and classes, threads and tasks that outlive the run, what the walls refused even where the
code caught it, and code that tampers with Python or with the preview itself — said in one line per kind, and
to the agent with only the names its code spells out. Every preview leaves the session and the disk as they
were (``Fixture.preview`` checks)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Any

import httpx  # noqa: F401  (loaded in the process, as the REPL loads it for the assistant)
import numpy as np
import pandas as pd
import pytest

import pyaichat
from pyaichat.capabilities.sandbox import confine, preview_code
from pyaichat.capabilities.sandbox.isolation import fork_available
from pyaichat.capabilities.sandbox.preview import Preview
from pyaichat.capabilities.sandbox.unseen import Unseen
from pyaichat.configuration.config import Config
from readonly_breaks import PROCESS_PROPOSALS

pytestmark = pytest.mark.skipif(
    not (fork_available() and confine.probe().complete), reason="no Landlock + seccomp here: no preview"
)

SETUP = """
import json
import os
import threading
import numpy as np
import pandas as pd

class Account:
    def total(self):
        return 1

df = pd.DataFrame({"a": [1, 2, 3]})
items = [1, 2, 3]
acct = Account()
"""
SESSION_VARIABLE = "PYAICHAT_PREVIEW_TEST_VAR"


class Fixture:
    def __init__(self, tmp: Path) -> None:
        self.session = pyaichat.Session()
        self.config = Config(audit=False, tool_timeout=3.0)
        assert self.session.run(SETUP).ok
        self.tmp = tmp
        self.file = tmp / "kept.txt"
        self.file.write_text("kept")
        os.chmod(self.file, 0o644)

    def state(self) -> Any:
        ns = self.session.namespace
        stat = self.file.stat()
        return (
            sorted(ns),
            list(ns["items"]),
            pd.DataFrame.__repr__,
            np.mean,
            json.dumps,
            ns["Account"].total,
            os.environ.get(SESSION_VARIABLE),
            "X_SET_BY_PREVIEW" in os.environ,
            (stat.st_mode, stat.st_mtime_ns),
            sorted(p.name for p in self.tmp.iterdir()),
        )

    def preview(self, code: str) -> Preview:
        before = self.state()
        found = preview_code(self.config, self.session.namespace, code)
        assert self.state() == before, "the preview changed the session or the disk"
        again = Preview.from_dict(json.loads(json.dumps(found.to_dict())))  # a kernel sends it as JSON
        assert again == found
        return found


@pytest.fixture
def fx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fixture:
    monkeypatch.setenv(SESSION_VARIABLE, "kept")
    return Fixture(tmp_path)


def text(found: Preview) -> str:
    return "\n".join(line for _, line in found.lines())


# -- the environment ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "code", ['os.environ["X_SET_BY_PREVIEW"] = "1"', 'os.putenv("X_SET_BY_PREVIEW", "1")']
)
def test_setting_an_environment_variable_is_said(fx: Fixture, code: str) -> None:
    found = fx.preview(code)
    assert found.status == "previewed" and found.ok
    assert "  sets the environment variable X_SET_BY_PREVIEW: what that changes is not previewed" in text(
        found
    )


def test_removing_one_of_the_sessions_variables_is_said_and_works_as_it_would(fx: Fixture) -> None:
    """The child runs without the session's environment (no secret in it): removing a variable the session
    has must not fail there with a KeyError the real run would not raise."""
    found = fx.preview(f'del os.environ["{SESSION_VARIABLE}"]\ny = 1')
    assert found.ok and found.error is None, found
    assert f"removes the environment variable {SESSION_VARIABLE}: what that changes" in text(found)


def test_reading_a_variable_the_preview_runs_without_is_said(fx: Fixture) -> None:
    found = fx.preview(f'value = os.environ["{SESSION_VARIABLE}"]')
    assert f"reads the environment variable {SESSION_VARIABLE}, which the preview runs without" in text(found)
    assert found.status == "incomplete"  # the KeyError is the preview's, not the code's
    quiet = fx.preview("home = os.path.expanduser('~')")  # a library reading HOME says nothing of the code
    assert "environment" not in text(quiet) and quiet.status == "previewed"


# -- attributes of the session's modules and classes -------------------------------------------------------
@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("pd.DataFrame.__repr__ = lambda self: 'hidden'", "pd.DataFrame.__repr__"),
        ("setattr(np, 'mean', lambda *a, **k: 0)", "np.mean"),
        ("Account.total = lambda self: 2", "Account.total"),
    ],
)
def test_replacing_an_attribute_of_a_module_or_class_is_said(fx: Fixture, code: str, name: str) -> None:
    found = fx.preview(code)
    assert found.status == "previewed"
    assert f"  replaces {name}: every later use sees that, which is not previewed" in text(found)


def test_an_attribute_added_to_a_class_of_a_value_is_said(fx: Fixture) -> None:
    found = fx.preview("type(acct).extra = 5\nimport numpy.polynomial")  # a submodule import is not a change
    lines = text(found)
    assert "adds Account.extra" in lines and "numpy" not in lines.split("new numpy")[0].replace("\n", " ")


def test_ordinary_code_has_no_unseen_lines(fx: Fixture) -> None:
    found = fx.preview("df = df[df.a > 1]\nitems.append(4)\nimport collections")
    assert found.status == "previewed" and not found.unseen
    assert [kind for kind, _ in found.lines()] == ["head", "in_place", "effect", "effect"]


# -- threads, timers and tasks that outlive the run -------------------------------------------------------
def test_a_thread_that_empties_a_list_four_seconds_later_is_said(fx: Fixture) -> None:
    code = (
        "import time\n"
        "def clear_later():\n"
        "    time.sleep(4)\n"
        "    items.clear()\n"
        "threading.Thread(target=clear_later, name='cleaner', daemon=True).start()"
    )
    found = fx.preview(code)
    said = "  starts a thread that keeps running (cleaner): what it does later is not previewed"
    assert said in text(found)
    assert found.status == "previewed" and "items" not in text(found)  # nothing yet: that is the point


def test_a_timer_is_said(fx: Fixture) -> None:
    found = fx.preview("threading.Timer(4, items.clear).start()")
    assert "starts a thread that keeps running (" in text(found) and ", a timer)" in text(found)


def test_a_task_on_the_running_event_loop_is_said(fx: Fixture) -> None:
    """A kernel runs cells inside its event loop: a task the code schedules there runs after the cell. The
    forked copy gets its loop back as the running one (asyncio forgets it in a new process)."""
    assert fx.session.run("import asyncio\nasync def later():\n    items.clear()").ok
    found: list[Preview] = []

    async def in_a_loop() -> None:
        found.append(fx.preview("task = asyncio.ensure_future(later())"))
        found.append(fx.preview("asyncio.get_running_loop().call_later(4, items.clear)"))

    asyncio.run(in_a_loop())
    assert found[0].ok and "schedules an asyncio task (later) on the running event loop" in text(found[0])
    assert found[1].ok and "schedules a callback on the running event loop" in text(found[1])


# -- the process's own state: working directory, exit functions, signal handlers ----------------------------
def test_changing_the_working_directory_is_said(fx: Fixture) -> None:
    """Every later relative path of the session would resolve elsewhere; the names do not show it."""
    found = fx.preview(f"os.chdir({str(fx.tmp)!r})")
    assert found.status == "previewed", found
    said = f"  changes the working directory to {fx.tmp}: every later relative path sees that, which is not"
    assert said in text(found)
    assert os.getcwd() != str(fx.tmp)  # only the walled copy moved


def test_a_function_run_when_the_session_ends_is_said(fx: Fixture) -> None:
    found = fx.preview("import atexit\natexit.register(items.clear)\natexit.register(print, 'bye')")
    said = "  registers 2 functions to run when the session ends (atexit): what they do then is not previewed"
    assert said in text(found)


def test_a_library_that_registers_an_exit_function_as_it_is_imported_is_not_blamed(fx: Fixture) -> None:
    """``multiprocessing.util`` registers its clean-up when first imported: ordinary, not the code's doing."""
    if "multiprocessing.util" in sys.modules:
        pytest.skip("multiprocessing.util is already imported in this process")
    found = fx.preview("import multiprocessing.util\nx = 1")
    assert "atexit" not in text(found), text(found)
    assert "registers a function" in text(fx.preview("import atexit\natexit.register(print)"))


def test_a_signal_handler_is_said_and_named_only_where_the_code_names_it(fx: Fixture) -> None:
    """Replacing SIGINT's handler takes Ctrl-C away from the session."""
    found = fx.preview("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)")
    assert "  sets the handler of SIGINT: what happens on that signal is not previewed" in text(found)
    assert "- sets the handler of SIGINT" in found.told("import signal\nsignal.signal(signal.SIGINT, 1)")
    assert "- sets the handler of a signal:" in found.told("import signal\nsignal.signal(2, 1)")


# -- what the walls refused ---------------------------------------------------------------------------------
def test_a_refused_write_the_code_caught_is_said_and_the_preview_is_incomplete(fx: Fixture) -> None:
    target = fx.tmp / "out.csv"
    found = fx.preview(f"try:\n    df.to_csv({str(target)!r})\nexcept OSError:\n    pass\ndone = True")
    assert found.status == "incomplete" and found.ok
    assert text(found).startswith("Incomplete preview (ran on a walled copy")
    assert f"  tried to write {target}, which the preview refused: what it writes is not previewed" in text(
        found
    )


def test_a_write_the_person_could_not_make_either_is_the_codes_own_error(
    fx: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = fx.tmp / "locked.txt"
    locked.write_text("x")
    real = os.access
    # (``os.access`` answers for the person; as root it would say yes to any file)
    monkeypatch.setattr(os, "access", lambda path, mode: real(path, mode) and str(path) != str(locked))
    found = fx.preview(f"try:\n    open({str(locked)!r}, 'w')\nexcept OSError:\n    pass")
    assert found.status == "previewed" and "tried to write" not in text(found)
    found = fx.preview(f"open({str(locked)!r}, 'w')")
    assert found.status == "previewed" and found.reason is None and found.error.startswith("PermissionError")


@pytest.mark.parametrize(
    ("code", "what"),
    [
        ("os.chmod({path!r}, 0o600)", "mode"),
        ("os.utime({path!r}, (0, 0))", "times"),
        ("os.setxattr({path!r}, 'user.note', b'x')", "extended attribute"),
    ],
)
def test_a_files_mode_times_and_attributes_stay_as_they_were(fx: Fixture, code: str, what: str) -> None:
    """Landlock has no right for these; the seccomp filter refuses them (the real file changed before)."""
    found = fx.preview(code.format(path=str(fx.file)))  # ``Fixture.preview`` checks mode and times
    assert found.status == "incomplete", (what, found)
    assert f"The code writes {fx.file}, which a preview never does" in (found.reason or ""), (what, found)
    assert not os.listxattr(fx.file)


def test_network_the_code_caught_is_said_with_its_address(fx: Fixture) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        connect = f"socket.create_connection(('127.0.0.1', {port}))"
        code = f"import socket\ntry:\n    {connect}\nexcept OSError:\n    pass"
        found = fx.preview(code)
    finally:
        server.close()
    assert found.status == "incomplete"
    assert f"  tried to reach 127.0.0.1:{port}, which the preview refused" in text(found)


def test_a_process_is_said(fx: Fixture) -> None:
    found = fx.preview("import subprocess\ntry:\n    subprocess.run(['ls', '-l'])\nexcept OSError:\n    pass")
    assert "  tried to start a process (ls -l), which the preview refused" in text(found)
    raised = fx.preview("import subprocess\nsubprocess.run(['ls', '-l'])")
    assert raised.reason == (
        "The code starts a process (ls -l), which a preview never does; the preview stopped there."
    )
    quiet = fx.preview("rc = os.system('true')")  # no exception at all, only a return code
    assert quiet.status == "incomplete" and "tried to start a process (true)" in text(quiet)


# -- tampering with Python itself or the preview --------------------------------------------------------
TAMPERING = [
    ("json.dumps = lambda *a, **k: 'forged'", "replaces json.dumps, part of Python itself"),
    ("import pickle\npickle.dumps = None", "replaces pickle.dumps, part of Python itself"),
    ("os.fork = None", "replaces os.fork, part of Python itself"),
    ("import sys\nsys.modules['json'] = None", "replaces sys.modules['json'], part of Python itself"),
    ("import builtins\nbuiltins.len = lambda x: 0", "replaces the built-in len, part of Python itself"),
    (
        "import sys\nsys.settrace(lambda *a: None)",
        "sets a trace function (sys.settrace), part of Python itself",
    ),
    (
        "json.encoder.c_make_encoder = None\njson.JSONEncoder.encode = lambda self, o: 'x'",
        "replaces json.encoder.c_make_encoder and json.JSONEncoder.encode, part of Python itself",
    ),
    (
        "import pyaichat.capabilities.sandbox.effects as e\ne.Snapshot.effects = lambda *a, **k: []",
        "replaces pyaichat.capabilities.sandbox.effects.Snapshot.effects, part of pyaichat itself",
    ),
]


@pytest.mark.parametrize(("code", "said"), TAMPERING)
def test_tampering_is_one_sentence_and_the_preview_still_reports(fx: Fixture, code: str, said: str) -> None:
    found = fx.preview(code + "\nitems.append(4)")
    assert found.status == "incomplete", found
    kind, sentence = found.lines()[1]
    assert kind == "tampered" and sentence == (
        f"  This code {said}; its effects cannot be previewed — read it before you run it."
    )
    # what was replaced is put back before the report: the effects are still right
    grew = "  changes items in place: list of 3 items → list of 4 items — /undo cannot take this back"
    assert grew in text(found)


# -- issue 44 point 5: the whole process, and the interpreter state a call sets ----------------------------
@pytest.mark.parametrize(
    ("code", "said"), PROCESS_PROPOSALS, ids=[c.splitlines()[-1][:40] for c, _ in PROCESS_PROPOSALS]
)
def test_what_a_proposal_does_to_the_whole_process_is_said(fx: Fixture, code: str, said: str) -> None:
    """The review's six proposals, each previewed before as "new module" only: pyaichat's masking turned off,
    a delayed logging file, an alarm, the recursion limit, a function run at every fork (pyaichat's reads
    fork), the assistant's HTTP client patched. Each gets its line (tampering with pyaichat: the sentence
    and an incomplete preview), and the session is as it was (``Fixture.preview``)."""
    found = fx.preview(code)
    shown = text(found)
    assert said in shown, shown
    assert (found.status == "incomplete") == ("part of pyaichat itself" in said), found


INTERPRETER_STATE = [
    (
        "import signal\nsignal.setitimer(signal.ITIMER_REAL, 30, 5)",
        "sets a timer (SIGALRM in 30 s, then every 5 s)",
    ),
    ("from os import umask\numask(0o077)", "sets the umask to 0077: every file created later gets it"),
    (
        "import resource\nsoft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (20, hard))",
        "sets the resource limit RLIMIT_NOFILE to 20",
    ),
    ("import sys\nsys.excepthook = print", "replaces sys.excepthook: every later error"),
    ("import sys\nsys.displayhook = print", "replaces sys.displayhook"),
    ("import threading\nthreading.excepthook = print", "replaces threading.excepthook"),
    (
        "import warnings\nwarnings.simplefilter('ignore', FutureWarning)",
        "changes the warning filters (ignore FutureWarning)",
    ),
    ("import sys\nsys.path.insert(0, '/tmp/elsewhere')", "changes sys.path (/tmp/elsewhere): later imports"),
    ("pd.set_option('display.max_rows', 5)", "sets pandas options (display.max_rows): later output changes"),
    (
        "import logging\nlogging.getLogger('audit.later').addHandler(logging.StreamHandler())",
        "adds a logging handler (StreamHandler on the audit.later logger)",
    ),
]


@pytest.mark.parametrize(
    ("code", "said"), INTERPRETER_STATE, ids=[c.splitlines()[-1][:40] for c, _ in INTERPRETER_STATE]
)
def test_interpreter_state_set_by_a_call_is_said(fx: Fixture, code: str, said: str) -> None:
    found = fx.preview(code + "\nitems.append(4)")
    shown = text(found)
    assert said in shown and "changes items in place" in shown, shown  # and the report still came
    assert found.status == "previewed", found


def test_a_limit_too_low_for_the_report_is_put_back_first(fx: Fixture) -> None:
    """The recursion limit the code leaves would stop the preview's own report: it is read and put back
    first, so the report comes and says it."""
    code = (  # just above the depth the code runs at: the report runs deeper
        "import sys\nlimit = 10\nwhile True:\n    try:\n        sys.setrecursionlimit(limit)\n        break\n"
        "    except RecursionError:\n        limit += 5\nitems.append(4)"
    )
    found = fx.preview(code)
    assert "sets the recursion limit to" in text(found) and "changes items in place" in text(found), found


def test_tampering_with_the_sandbox_or_the_masking_is_named(fx: Fixture) -> None:
    for code, said in [
        (
            "import pyaichat.capabilities.sandbox.scrub as s\ns.apply = lambda places: None",
            "replaces pyaichat.capabilities.sandbox.scrub.apply",
        ),
        (
            "import pyaichat.capabilities.redact as r\nr.MIN_KNOWN = 10 ** 9",
            "replaces pyaichat.capabilities.redact.MIN_KNOWN",
        ),
    ]:
        found = fx.preview(code)
        assert found.status == "incomplete" and f"This code {said}, part of pyaichat itself" in text(found), (
            found
        )


def test_what_the_process_does_on_its_own_is_not_the_codes(fx: Fixture) -> None:
    """Importing and using libraries, logging a line, reading options: nothing of it is said."""
    found = fx.preview(
        "import logging, decimal, httpx\nlogging.getLogger('x').info('hello')\n"
        "rows = pd.get_option('display.max_rows')\nclient = httpx.URL('http://x')"
    )
    assert found.status == "previewed" and not found.unseen, text(found)


# every descriptor the child may hold (the report's pipe keeps its number from a parent that may hold many)
EVERY_FD = "import resource\nfor fd in range(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0]):"
EACH_FD = "    try:\n        {}\n    except OSError:\n        pass"


def test_closing_the_report_channel_is_tampering_not_a_glitch(fx: Fixture) -> None:
    found = fx.preview(f"{EVERY_FD}\n{EACH_FD.format('os.close(fd)')}")
    assert found.status == "incomplete" and found.lines()[1] == (
        "tampered",
        "  This code closes the channel the preview reports through, part of pyaichat itself; its effects "
        "cannot be previewed — read it before you run it.",
    )


def test_writing_into_the_report_channel_is_tampering_and_the_report_still_comes(fx: Fixture) -> None:
    junk = "os.write(fd, b'{}')"
    found = fx.preview(f"{EVERY_FD}\n{EACH_FD.format(junk)}\nz = 1")
    assert found.status == "incomplete"
    assert "writes into the channel the preview reports through" in text(found)
    assert "  new z: int" in text(found)


# -- bounded lines, and what the agent is told --------------------------------------------------------------
def test_lists_are_bounded(fx: Fixture) -> None:
    code = "\n".join(f"os.environ['X{i}'] = '1'" for i in range(30))
    line = next(line for line in text(fx.preview(code)).splitlines() if "environment" in line)
    assert line == (
        "  sets the environment variables X0, X1, X2 and 27 more: what that changes is not previewed"
    )


def test_the_agent_is_told_only_names_its_code_spells_out(fx: Fixture) -> None:
    """A name the code computed from the session's data (here a column's value) is counted, not named: the
    preview is no channel from the data to an agent that may not see it."""
    fx.session.namespace["cities"] = pd.DataFrame({"name": ["Zanzibar"]})
    code = "os.environ[cities.name[0]] = '1'\nos.environ['DEBUG'] = '1'\nopen('/tmp/' + cities.name[0], 'w')"
    found = fx.preview(code)
    assert "Zanzibar" in text(found)  # the person sees their own data
    told = found.told(code)
    assert "Zanzibar" not in told
    assert told == (
        "The person's preview of this code could not see everything it does, and told them so:\n"
        "- sets the environment variables DEBUG and 1 more: what that changes is not previewed"
    )


def test_unseen_from_bad_json_is_empty() -> None:
    assert not Unseen.from_dict(None) and not Unseen.from_dict({"found": {}, "counts": {}})


def test_a_library_thread_started_before_the_preview_is_not_blamed(fx: Fixture) -> None:
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, daemon=True)
    worker.start()
    try:
        found = fx.preview("x = 1")
    finally:
        stop.set()
        worker.join(5)
    assert not found.unseen and found.status == "previewed"


def test_an_odd_class_in_the_session_is_still_watched(fx: Fixture) -> None:
    """A metaclass that answers ``__dict__`` itself neither stops the preview nor hides the class."""
    odd = "class Meta(type):\n    @property\n    def __dict__(cls):\n        raise RuntimeError('no')\n"
    assert fx.session.run(odd + "class Odd(metaclass=Meta):\n    pass").ok
    found = fx.preview("Odd.extra = 1\ny = 2")
    assert found.ok and "  adds Odd.extra: every later use sees that, which is not previewed" in text(found)


def test_a_watch_that_breaks_in_the_child_says_so_and_the_preview_still_comes(
    fx: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyaichat.capabilities.sandbox.watch import Watch

    def broken(self: Watch) -> None:
        raise RuntimeError("what the code broke")

    monkeypatch.setattr(Watch, "collect", broken)  # forked with the child: it breaks there
    found = fx.preview("items.append(4)")
    assert found.status == "incomplete" and found.lines()[1] == (
        "tampered",
        "  This code changes how Python works, part of Python itself; its effects cannot be previewed — read "
        "it before you run it.",
    )
    assert "changes items in place" in text(found)


def test_without_dict_version_tags_every_watched_dict_is_compared(
    fx: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.14 dropped the tag (another interpreter may lack it): the same report, at a higher cost."""
    from pyaichat.capabilities.sandbox import dictwatch

    monkeypatch.setattr(dictwatch, "TAGS", False)
    monkeypatch.setattr(dictwatch, "_last", None)
    found = fx.preview("json.dumps = lambda *a, **k: '{}'\nAccount.total = lambda self: 2\nitems.append(4)")
    lines = text(found)
    assert found.status == "incomplete" and "This code replaces json.dumps, part of Python itself" in lines
    assert "  replaces Account.total: every later use sees that" in lines
    assert "changes items in place" in lines
    assert not fx.preview("y = 1").unseen


def test_a_write_a_c_library_makes_is_the_wall_too(fx: Fixture) -> None:
    """Arrow opens its files in C++ (no audit event, no ``filename`` on its error): the path it quotes."""
    pytest.importorskip("pyarrow")
    target = fx.tmp / "out.parquet"
    found = fx.preview(f"df.to_parquet({str(target)!r})")
    assert found.status == "incomplete" and not target.exists()
    assert found.reason == f"The code writes {target}, which a preview never does; the preview stopped there."


# -- red team (walled child), break 5: what a preview did not say ------------------------------------------
HELD = [  # pyaichat's own state changed in place: no module's dict changes
    (
        "import pyaichat.capabilities.redact as r\nr._PATTERNS.clear()",
        "pyaichat.capabilities.redact._PATTERNS",
    ),
    ("import pyaichat.capabilities.redact as r\nr._PIECES[0] = 'x'", "pyaichat.capabilities.redact._PIECES"),
    ("import pyaichat.capabilities.redact as r\nr._maskers.clear()", "pyaichat.capabilities.redact._maskers"),
    (  # an instance held at module level, one step down
        "import pyaichat.capabilities.redact as r\nnext(iter(r._maskers.values()))._env_values.clear()",
        "pyaichat.capabilities.redact._maskers[0]._env_values",
    ),
]


@pytest.mark.parametrize(("code", "said"), HELD, ids=[s.rsplit(".", 1)[-1] for _, s in HELD])
def test_pyaichats_state_changed_in_place_is_tampering(fx: Fixture, code: str, said: str) -> None:
    """``redact._PATTERNS.clear()`` turns masking off for the rest of the session after approval: named as
    tampering with pyaichat, and put back before the report (which the effects show still came)."""
    from pyaichat.capabilities import redact

    redact._maskers.clear()  # the default masker first in the table, as ``[0]`` says (other tests made more)
    redact.default_masker()._env_values.append("kept-value-of-the-test")  # a masker with a list to clear
    found = fx.preview(code + "\nitems.append(4)")
    shown = text(found)
    assert found.status == "incomplete" and f"changes {said}" in shown and "part of pyaichat itself" in shown
    assert "changes items in place" in shown
    quiet = fx.preview("import pyaichat.capabilities.redact as r\nn = len(r._PATTERNS)")
    assert not quiet.unseen, text(quiet)


BREAK_5 = [
    # the import machinery
    ("import sys\nclass F:\n    def find_spec(self, *a): return None\nsys.meta_path.insert(0, F())",
     "changes sys.meta_path, part of Python itself"),
    ("import sys\nsys.path_hooks.append(lambda p: None)", "changes sys.path_hooks, part of Python itself"),
    ("import sys\nsys.path_importer_cache.clear()", "changes sys.path_importer_cache"),
    ("import sys, types\nsys.modules['pyaichat_test_shadow'] = types.ModuleType('pyaichat_test_shadow')",
     "adds sys.modules['pyaichat_test_shadow'], part of Python itself"),
    # hooks that run later
    ("import threading\nthreading.settrace(lambda *a: None)", "sets a trace function for new threads"),
    ("import threading\nthreading.setprofile(lambda *a: None)", "sets a profile function for new threads"),
    ("import gc\ngc.callbacks.append(lambda *a: None)", "functions Python calls later (gc.callbacks)"),
    ("import codecs\ncodecs.register(lambda name: None)", "functions Python calls later (codecs.register)"),
    ("import copyreg\ncopyreg.pickle(complex, lambda c: (complex, (0, 0)))", "(copyreg's pickling"),
    ("import copyreg\ncopyreg.dispatch_table[complex] = lambda c: (complex, (0, 0))",
     "(copyreg's pickling functions)"),
    ("import readline\nreadline.set_startup_hook(lambda: None)", "functions Python calls later (readline"),
    ("import weakref\nweakref.finalize(acct, print, 'later')", "(weakref.finalize)"),
    # the REPL's input and output
    ("import sys, io\nsys.stdout = io.StringIO()", "replaces or closes sys.stdout, part of pyaichat itself"),
    ("import sys\ntry:\n    sys.stdin.close()\nexcept OSError:\n    pass", "replaces or closes sys.stdin"),
    ("os.close(0)", "closes or redirects file descriptor 0 (input)"),
    ("os.dup2(2, 1)", "redirects file descriptor 1 (os.dup2)"),
    ("os.setsid()", "leaves the terminal's session (os.setsid)"),
    # settings the rest of the session runs with
    ("import locale\nlocale.setlocale(locale.LC_NUMERIC, "
     "'C.UTF-8' if locale.setlocale(locale.LC_NUMERIC) == 'C' else 'C')",
     "changes the locale: the rest of the session runs with it"),
    ("import decimal\ndecimal.getcontext().prec = 3", "changes the decimal context"),
    ("import socket\nsocket.setdefaulttimeout(0.001)", "changes the default socket timeout"),
    ("import sys\nsys.setswitchinterval(1.0)", "changes the thread switch interval"),
    ("import sys\nsys.set_int_max_str_digits(700)", "changes the digit limit of int and str"),
    ("import sys\nsys.setdlopenflags(sys.getdlopenflags() ^ 0x100)", "changes the dlopen flags"),
    ("import gc\ngc.disable()", "changes the garbage collector"),
    ("import gc\ngc.set_threshold(5)", "changes the garbage collector"),
    ("import gc\ngc.freeze()", "changes the garbage collector"),
    ("import random\nrandom.seed(1)", "changes random's state"),
    ("np.seterr(all='raise')", "changes numpy's error handling"),
    ("np.set_printoptions(precision=1)", "changes numpy's print options"),
    ("np.random.seed(1)", "changes numpy's random state"),
    ("import mimetypes\nmimetypes.add_type('text/x-test', '.pyaichattest')", "changes mimetypes' types"),
    ("import logging\nlogging.lastResort = None", "changes logging.lastResort"),
    ("import sys\nsys.ps1 = '$ '", "changes the prompts"),
    ("import tempfile\ntempfile.tempdir = '/tmp/elsewhere'", "changes tempfile.tempdir"),
]  # fmt: skip


@pytest.mark.parametrize(("code", "said"), BREAK_5, ids=[c.splitlines()[-1][:40] for c, _ in BREAK_5])
def test_process_wide_state_a_proposal_changes_is_said(
    fx: Fixture, code: str, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import machinery, hooks Python runs later, the REPL's input and output, process-wide settings:
    each change gets its line (tampering: the sentence and an incomplete preview), and the report comes."""
    with open(os.devnull) as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)  # the REPL's, not pytest's stand-in
        found = fx.preview(code + "\nitems.append(4)")
    shown = text(found)
    assert said in shown and "changes items in place" in shown, shown
    tampering = "part of pyaichat itself" in shown or "part of Python itself" in shown
    assert (found.status == "incomplete") == tampering, found


def test_imports_and_ordinary_use_of_those_modules_say_nothing(fx: Fixture) -> None:
    """A module imported for real (not put in ``sys.modules``), a pickle, a decimal, a locale read."""
    found = fx.preview(
        "import colorsys, decimal, locale, pickle, random, mimetypes\nd = decimal.Decimal('1.5') * 2\n"
        "p = pickle.dumps([1, 2])\nr = random.Random(1).random()\nl = locale.getlocale()\n"
        "t = mimetypes.guess_type('a.csv')\nm = np.mean([1, 2])"
    )
    assert found.status == "previewed" and not found.unseen, text(found)
