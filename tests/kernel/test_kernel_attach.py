"""Attaching to a real kernel and running Python mode in it (``--existing`` semantics)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kernel_process import attach, kernel_eval, start_kernel
from prompt_toolkit.document import Document

from pyaichat.configuration.config import Config
from pyaichat.repl.completion import MentionCompleter, RuntimeCompleter
from pyaichat.runtime import KernelUnavailable, connect
from pyaichat.runtime.kernel_connection import NOT_IPYTHON, not_installed

ROOT = Path(__file__).resolve().parents[2]


def test_run_streams_output_results_and_tracebacks(runtime, capsys):
    result = runtime.run(
        "import sys\nprint('to out'); print('to err', file=sys.stderr)\nsq = [i * i for i in range(4)]\nsq"
    )
    out, err = capsys.readouterr()
    assert "to out\n" in out and "[0, 1, 4, 9]" in out
    assert "to err" in err
    assert result.ok and isinstance(result.number, int) and result.number >= 1
    assert "[0, 1, 4, 9]" in result.output

    failed = runtime.run("sq[10]")
    out, err = capsys.readouterr()
    assert not failed.ok and failed.error is not None
    assert failed.error.type_name == "IndexError" and "out of range" in failed.error.message
    assert "IndexError" in err and "\x1b[" not in err  # no colour codes when not on a terminal
    assert failed.number == result.number + 1


def test_display_data_and_input(runtime, capsys, monkeypatch):
    runtime.run("from IPython.display import display\ndisplay({'a': 1})")
    assert "{'a': 1}" in capsys.readouterr().out

    monkeypatch.setattr(sys, "stdin", io.StringIO("Ada\n"))
    result = runtime.run("name = input('who? ')\nprint('hello', name)")
    out = capsys.readouterr().out
    assert result.ok
    assert "who? " in out and "hello Ada" in out
    assert kernel_eval(runtime, "name") == "'Ada'"


def test_completion_comes_from_the_kernel(runtime):
    runtime.run("kernel_only_value = {'k': 1}")
    found = runtime.complete("kernel_only_va", 14)
    assert "kernel_only_value" in [c.text for c in found] and {c.start for c in found} == {-14}
    got = [c.text for c in RuntimeCompleter(runtime).get_completions(Document("kernel_only_value.ke"), None)]
    assert "keys" in got
    mentions = list(MentionCompleter(runtime).get_completions(Document("why @kernel_on"), None))
    assert [(m.text, m.display_meta_text) for m in mentions] == [("kernel_only_value", "dict")]
    assert "kernel_only_value" not in globals() and ("kernel_only_value", "dict") in runtime.user_names()
    assert not {"In", "Out", "exit", "quit", "get_ipython"} & {name for name, _ in runtime.user_names()}


def test_helper_leaves_no_trace_in_the_users_namespace_or_history(shared_kernel, capsys):
    probe = attach(shared_kernel)  # attaching loads the helper; a second attach reuses it
    try:
        probe.run("before_names = set(dir())")
        count_before = probe.run("len(In)").output
        second = attach(shared_kernel)
        for name in ("get_type", "get_repr", "list_globals"):
            second.call(name, {} if name == "list_globals" else {"expr": "before_names"})
        second.picture()
        second.close()
        capsys.readouterr()
        probe.run("%who")
        who = capsys.readouterr().out
        assert "pyaichat" not in who and "comm" not in who.split()
        # IPython's own per-cell names (_7, _i8) come from our probe inputs; nothing else may appear
        probe.run("print(sorted(n for n in set(dir()) - before_names if not n.startswith('_')))")
        assert capsys.readouterr().out.strip() == "['before_names']"
        probe.run("print([n for n in dir() if 'pyaichat' in n.lower() or 'helper' in n.lower()])")
        assert capsys.readouterr().out.strip() == "[]"
        # the helper's load and its calls ran no numbered cell: only our own four inputs were added
        count_after = probe.run("len(In)").output
        assert int(count_after.split()[-1]) == int(count_before.split()[-1]) + 4
        assert "kernel_helper" not in kernel_eval(probe, "' '.join(In)")
    finally:
        probe.close()


def test_connection_file_rules_like_jupyter_console(shared_kernel, tmp_path, monkeypatch):
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    with pytest.raises(KernelUnavailable, match="No running kernel found"):
        connect.find_connection_file(None)
    older = runtime / "kernel-older.json"
    older.write_text(shared_kernel.connection_file.read_text())
    newer = runtime / "kernel-newer.json"
    newer.write_text(shared_kernel.connection_file.read_text())
    os.utime(older, (1, 1))
    assert connect.find_connection_file(None) == str(newer)  # no argument: the most recent one
    assert connect.find_connection_file("kernel-older.json") == str(older)  # a bare name: the runtime dir
    assert connect.find_connection_file(str(older)) == str(older)
    with pytest.raises(KernelUnavailable, match="No kernel connection file matches"):
        connect.find_connection_file("kernel-missing.json")
    runtime = connect.attach(None, Config(color=False))  # the newest file, as `jupyter console --existing`
    try:
        assert runtime.kernel.connection_file == str(newer)
        assert runtime.run("6 * 7").output.strip() == "42"
    finally:
        runtime.close()


def _pyaichat(args: list[str], stdin: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYAICHAT_", "OPENAI_"))}
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "pyaichat", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )


def test_piped_mode_runs_in_the_kernel(shared_kernel):
    script = "piped_x = 41\nprint(piped_x + 1)\nimport os\nos.getpid()\n/inspect piped_x\n"
    done = _pyaichat(["--existing", str(shared_kernel.connection_file)], script)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "42" in lines
    assert str(shared_kernel.proc.pid) in lines  # the code ran in the kernel's process
    assert "piped_x: int" in done.stdout
    assert "\x1b[" not in done.stdout and "Traceback" not in done.stderr


def test_piped_cell_magic_runs_in_the_kernel_with_its_body(shared_kernel):
    script = "%%capture captured\nprint('inside')\nprint('the cell')\n\nprint(captured.stdout.split())\n"
    done = _pyaichat(["--existing", str(shared_kernel.connection_file)], script)
    assert done.returncode == 0, done.stderr
    assert "['inside', 'the', 'cell']" in done.stdout.splitlines()
    assert "Error" not in done.stdout and "Traceback" not in done.stderr


def test_missing_kernel_is_one_sentence(tmp_path):
    done = _pyaichat(
        ["--existing", str(tmp_path / "nope.json")], "1\n", {"JUPYTER_RUNTIME_DIR": str(tmp_path)}
    )
    assert done.returncode == 1
    assert done.stderr.strip().startswith("pyaichat: No kernel connection file matches")
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    done = _pyaichat(["--kernel", "no-such-kernelspec"], "1\n")
    assert done.returncode == 1 and "There is no kernel named 'no-such-kernelspec'" in done.stderr
    assert "Traceback" not in done.stderr


def test_kernel_without_pyaichat_gets_one_sentence_and_python_still_runs(tmp_path, capsys):
    shadow = tmp_path / "shadow" / "pyaichat"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'pyaichat'\", name='pyaichat')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(shadow.parent)}
    kernel = start_kernel(tmp_path, env=env)
    try:
        runtime = attach(kernel)
        try:
            said = not_installed()
            # this checkout is installed from its clone (pip install -e): the hint installs the clone there
            assert "`<kernel python> -m pip install -e '" in said and "pip install pyaichat" not in said
            assert runtime.kernel.helper_problem == said
            result = runtime.call("get_type", {"expr": "x"})
            assert not result.ok and result.error == said
            assert said in runtime.picture()
            assert runtime.run("print(40 + 2)").ok
            assert "42" in capsys.readouterr().out
        finally:
            runtime.close()
    finally:
        kernel.kill()


def test_a_kernel_that_is_not_ipython_gets_one_sentence(runtime):
    runtime.kernel.kernel_info = {"language_info": {"name": "R"}, "implementation": "IRkernel"}
    runtime.kernel.load_helper()
    assert runtime.kernel.helper_problem == NOT_IPYTHON
    result = runtime.call("list_globals", {})
    assert not result.ok and result.error == NOT_IPYTHON


def test_kernel_flag_starts_a_kernel_and_shuts_it_down_at_exit():
    done = _pyaichat(["--kernel"], "import os\nprint('pid', os.getpid())\n/last_error\n")
    assert done.returncode == 0, done.stderr
    pid = int(next(line for line in done.stdout.splitlines() if line.startswith("pid ")).split()[1])
    assert "No exception has been raised" in done.stdout
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the kernel pyaichat started is still running after pyaichat exited")


def test_exit_in_the_kernel_ends_pyaichat_as_in_jupyter_console(kernel):
    # exit(keep_kernel=True) detaches and leaves the kernel running; plain exit() also ends the kernel
    script = "print('before')\nexit(keep_kernel=True)\nprint('after')\n"
    done = _pyaichat(["--existing", str(kernel.connection_file)], script)
    assert done.returncode == 0, done.stderr
    assert "before" in done.stdout and "after" not in done.stdout
    runtime = attach(kernel)
    try:
        assert runtime.run("print('still', 'here')").output == "still here\n"
    finally:
        runtime.close()
    done = _pyaichat(["--existing", str(kernel.connection_file)], "exit()\nprint('after')\n")
    assert done.returncode == 0 and "after" not in done.stdout, done.stderr
    kernel.proc.wait(20)


def test_a_different_pyaichat_in_the_kernel_gets_one_sentence(runtime, monkeypatch):
    import pyaichat.runtime.kernel_connection as connection_module

    monkeypatch.setattr(connection_module, "PROTOCOL", connection_module.PROTOCOL + 1)
    runtime.kernel.load_helper()
    assert "install the same version in the kernel's environment" in (runtime.kernel.helper_problem or "")
    result = runtime.call("get_type", {"expr": "x"})
    assert not result.ok and result.error == runtime.kernel.helper_problem
