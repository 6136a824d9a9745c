"""Escapes: every snippet here is refused (``ok=False``), reveals no secret and changes nothing.

The classes follow the published attacks on Python sandboxes: RestrictedPython advisories (format-string
attribute walks, ``string.Formatter``, generator ``gi_frame``, ``try/except*``, shadowed guard hooks through
positional-only parameters) and smolagents' LocalPythonExecutor CVEs (``getattr`` leakage to modules, class
hierarchy walks to ``subprocess``, dunder methods on defined classes), plus the library I/O of numpy/pandas.
"""

from __future__ import annotations

import pytest
from sbx_helpers import assert_unchanged, leaked, snapshot

from pyaichat.capabilities.sandbox.confine import probe

# (id, code, a fragment the error must contain — "" when any refusal will do)
ESCAPES: list[tuple[str, str, str]] = [
    # -- dunder / class-hierarchy walks (smolagents CVE-2025-9959 class) --
    (
        "subclasses",
        "().__class__.__bases__[0].__subclasses__()",
        "line 1, `().__class__`: private attributes",
    ),
    ("object-subclasses", "object.__subclasses__()", "private attributes"),
    ("mro-walk", "x = 1\nx.__class__.__mro__[-1]", "line 2"),
    ("computed-getattr", "getattr((), '__class__')", "private attributes"),
    ("computed-getattr-concat", "n = '_' + '_cla' + 'ss_' + '_'\ngetattr(1, n)", "line 2"),
    ("getattr-chr", "getattr(1, chr(95) * 2 + 'class' + chr(95) * 2)", "private"),
    ("hasattr-dunder", "hasattr(1, '__class__')", "private"),
    ("mro-method", "int.mro()", "leads out"),
    ("globals-of-function", "def f():\n    pass\nf.__globals__", "private"),
    ("lambda-code", "(lambda: 0).__code__", "private"),
    ("builtins-name", "__builtins__", "names starting with _"),
    ("import-dunder", "__import__('os')", "names starting with _"),
    ("bound-self", "[].append.__self__", "private"),
    ("reduce-ex", "(1).__reduce_ex__(2)", "private"),
    # -- frames via generators, coroutines, tracebacks, exceptions --
    ("gen-frame", "def g():\n    yield 1\nx = g()\nx.gi_frame.f_back.f_globals", "line 4"),
    ("genexp-frame-getattr", "g = (i for i in [1])\ngetattr(g, 'gi_frame')", "leads out"),
    ("gen-code", "g = (i for i in [1])\ngetattr(g, 'gi_code')", "leads out"),
    ("gen-yieldfrom", "def g():\n    yield from [1]\ngetattr(g(), 'gi_yieldfrom')", "leads out"),
    ("coroutine", "async def f():\n    pass\nf().cr_frame", "async"),
    ("await", "async def f():\n    await g()", "async"),
    ("traceback", "try:\n    1/0\nexcept Exception as e:\n    t = e.__traceback__", "line 4"),
    (
        "traceback-getattr",
        "try:\n    1/0\nexcept Exception as e:\n    getattr(e, '__traceback__')",
        "private",
    ),
    ("tb-frame-name", "try:\n    1/0\nexcept Exception as e:\n    getattr(e, 'with_traceback')", "leads out"),
    ("exception-context", "try:\n    1/0\nexcept Exception as e:\n    e.__context__", "private"),
    ("except-star", "try:\n    pass\nexcept* ValueError:\n    pass", "except*"),
    ("frame-attr-name", "x = 1\nx.f_globals", "leads out"),
    # -- format strings (RestrictedPython GHSA: str.format / string.Formatter field resolution) --
    ("format-walk", "'{0.__class__.__mro__}'.format(1)", "format fields"),
    ("format-item", "'{0[0]}'.format([1])", "format fields"),
    ("format-map", "'{x.__class__}'.format_map({'x': 1})", "format fields"),
    ("format-unbound", "str.format('{0.__class__}', 1)", "format fields"),
    ("format-nested-spec", "'{0:{1.__class__}}'.format(1, 2)", "format fields"),
    ("format-getattr", "f = getattr('{0.__class__}', 'format')\nf(1)", "format fields"),
    ("formatter", "import string\nstring.Formatter().format('{0.__class__}', 1)", "Formatter"),
    ("formatter-vformat", "import string\nF = string.Formatter\nF", "Formatter"),
    # -- builtins that must not exist --
    ("eval", "eval('1+1')", "eval() is not available"),
    ("exec", "exec('x = 1')", "exec() is not available"),
    ("compile", "compile('1', 'f', 'eval')", "compile() is not available"),
    ("open", "open('/etc/passwd').read()", "open() is not available"),
    ("globals", "globals()", "globals() is not available"),
    ("locals", "locals()", "locals() is not available"),
    ("vars", "vars(acct)", "vars() is not available"),
    ("vars-indirect", "f = vars\nf(acct)", "vars() is not available"),
    ("setattr", "setattr(acct, 'owner', 'eve')", "setattr() is not available"),
    ("delattr", "delattr(acct, 'owner')", "delattr() is not available"),
    ("breakpoint", "breakpoint()", "not available"),
    ("input", "input()", "not available"),
    ("help", "help(len)", "not available"),
    ("memoryview", "memoryview(b'abc')", "not available"),
    ("type3", "type('X', (), {})", "three arguments"),
    ("type3-metaclass", "t = type(int)\nt('X', (), {})", "three arguments"),
    ("type3-of-type", "meta = type(type(1))\nmeta('X', (), {})", "three arguments"),
    ("map-eval", "list(map(eval, ['1']))", "eval() is not available"),
    ("metaclass-kw", "class A(metaclass=type):\n    pass", "metaclass"),
    # -- guard hooks cannot be shadowed (GHSA-ffg3-p8fm-mjx2: positional-only parameters) --
    ("shadow-posonly", "def f(_getattr_=None, /):\n    return 1", "_"),
    ("shadow-assign", "_getattr_ = getattr", "names starting with _"),
    ("shadow-kwonly", "def f(*, _write_=None):\n    return 1", "_"),
    # -- class bodies and decorators --
    ("class-getattribute", "class A:\n    def __getattribute__(self, n):\n        return 1", "_"),
    ("class-slots", "class A:\n    __slots__ = ()", "_"),
    ("class-del", "class A:\n    def __del__(self):\n        pass", "_"),
    ("decorator-globals", "def deco(f):\n    return f.__globals__\n@deco\ndef g():\n    pass", "private"),
    # -- imports --
    ("import-os", "import os", "the module os is not available"),
    ("import-sys", "import sys", "module sys"),
    ("import-subprocess", "import subprocess", "module subprocess"),
    ("import-importlib", "import importlib", "module importlib"),
    ("import-builtins", "import builtins", "module builtins"),
    ("import-ctypes", "import ctypes", "module ctypes"),
    ("import-pickle", "import pickle", "module pickle"),
    ("import-inspect", "import inspect", "module inspect"),
    ("import-gc", "import gc", "module gc"),
    ("from-os", "from os import system", "module os"),
    ("import-os-path", "import os.path", "module os.path"),
    ("relative-import", "from . import x", "relative imports"),
    ("submodule-walk", "import json\njson.decoder", "module json.decoder"),
    ("submodule-re", "import re\nre.enum", "module enum"),
    # -- the user's own modules and functions --
    ("user-os-environ", "os.environ", "environ"),
    ("user-os-system", "os.system('true')", "not available"),
    ("user-os-getattr", "getattr(os, 'system')('true')", "not available"),
    ("user-shell-function", "shell('true')", "session's own function"),
    ("user-function-in-map", "list(map(shell, ['true']))", "session's own function"),
    ("user-method", "acct.total()", "session's own function"),
    # ... also when it sits in a container or an attribute of the user's object (a hole of the old guards)
    ("user-function-in-list", "funcs[1]('true')", "session's own function"),
    ("user-function-in-dict", "handlers['run']('true')", "session's own function"),
    ("user-function-iterated", "for f in funcs:\n    f('true')", "session's own function"),
    ("user-function-dict-get", "handlers.get('run')('true')", "session's own function"),
    ("user-function-in-attribute-list", "acct.callbacks[0]('true')", "session's own function"),
    ("user-property", "acct.balance", "property"),
    # -- library I/O and global state --
    ("np-load", "import numpy as np\nnp.load('/etc/passwd')", "numpy.load is not available"),
    ("np-fromfile", "import numpy as np\nnp.fromfile('/etc/passwd')", "not available"),
    ("np-loadtxt", "import numpy\nnumpy.loadtxt('/etc/passwd')", "not available"),
    ("np-genfromtxt", "from numpy import genfromtxt", "not available"),
    ("np-lib-npyio", "import numpy as np\nnp.lib.npyio", "not available"),
    ("np-ctypeslib", "import numpy as np\nnp.ctypeslib", "not available"),
    ("np-core", "import numpy as np\nnp.core", "not available"),
    ("arr-ctypes", "arr.ctypes.data", "not available"),
    ("arr-tofile", "arr.tofile('/tmp/pyaichat-sbx-x')", "not available"),
    ("arr-dumps", "arr.dumps()", "not available"),
    ("np-seterr", "import numpy as np\nnp.seterr(all='raise')", "global numpy state"),
    ("np-printoptions", "import numpy as np\nnp.set_printoptions(precision=1)", "not available"),
    ("pd-read-csv", "import pandas as pd\npd.read_csv('/etc/passwd')", "read_csv"),
    ("pd-read-pickle", "import pandas as pd\npd.read_pickle('/tmp/x')", "not available"),
    ("pd-io", "import pandas as pd\npd.io.common", "not available"),
    ("pd-compat-os", "import pandas as pd\npd.compat.os", "not available"),
    ("pd-eval", "import pandas as pd\npd.eval('1 + 1')", "not available"),
    ("pd-options", "import pandas as pd\npd.set_option('display.max_rows', 1)", "not available"),
    ("df-to-csv-path", "df.to_csv('/tmp/pyaichat-sbx.csv')", "cannot write to a file"),
    ("df-to-csv-kw", "df.to_csv(path_or_buf='/tmp/pyaichat-sbx.csv')", "cannot write to a file"),
    ("df-to-pickle", "df.to_pickle('/tmp/pyaichat-sbx.pkl')", "not available"),
    ("df-to-parquet", "df.to_parquet('/tmp/pyaichat-sbx.pq')", "not available"),
    ("df-to-clipboard", "df.to_clipboard()", "not available"),
    ("df-plot", "df.plot()", "not available"),
    ("df-style", "df.style", "not available"),
    ("df-apply-string", "df.apply('to_pickle', path='/tmp/x')", "not available"),
    ("df-agg-dunder", "df.agg('__class__')", "private"),
    ("df-query-at", "df.query('@lst')", "@names"),
    ("df-query-dunder", "df.query('sales.__class__')", "private"),
    ("df-eval-python", "df.eval('sales + 1', engine='python')", "engine='python'"),
    ("getattr-to-pickle", "getattr(df, 'to_pickle')('/tmp/x')", "not available"),
    ("operator-attrgetter", "import operator\noperator.attrgetter('__class__')(1)", "private"),
    ("operator-attrgetter-dotted", "import operator\noperator.attrgetter('real.__class__')(1)", "private"),
    ("operator-methodcaller", "import operator\noperator.methodcaller('__reduce_ex__', 2)(1)", "private"),
    ("operator-setitem", "import operator\noperator.setitem(lst, 0, 9)", "not available"),
    (
        "functools-reduce-getattr",
        "import functools\nfunctools.reduce(getattr, ['__class__', '__base__'], 1)",
        "private",
    ),
    ("functools-update-wrapper", "import functools\nfunctools.update_wrapper(helper, len)", "not available"),
    ("print-file", "print('x', file=acct)", "print(file=...)"),
    ("module-write", "import math\nmath.pi = 3", "modules cannot be changed"),
    ("class-write", "int.real = 1", "cannot be changed"),
    ("partial-getattr", "import functools\nfunctools.partial(getattr, 1)('__class__')", "private"),
    ("map-getattr", "list(map(getattr, [1], ['__class__']))", "private"),
    ("sorted-key-getattr", "sorted([1], key=lambda v: getattr(v, '__class__'))", "private"),
    ("df-apply-getattr", "df['units'].apply(lambda v: getattr(v, '__class__'))", "private"),
    ("fullwidth-attr", "x = 1\nx.\uff46_globals", "leads out"),
    (
        "attrerror-obj-module",
        "import math\ntry:\n    math.nope\nexcept AttributeError as e:\n    e.obj.environ",
        "",
    ),
    ("proxy-type", "import math\nP = type(math)\nP('os')", "module objects cannot be created"),
]


# Behind the kernel wall (fork mode, Landlock + seccomp) the session's own functions, methods and properties
# may run: these end harmless there instead of refused; test_kernel_walls.py shows what stops them.
RUN_BEHIND_THE_WALL = {
    "shell('true')",
    "list(map(shell, ['true']))",
    "acct.total()",
    "acct.balance",
    "funcs[1]('true')",
    "handlers['run']('true')",
    "for f in funcs:\n    f('true')",
    "handlers.get('run')('true')",
    "acct.callbacks[0]('true')",
}


def walled(mode: str) -> bool:
    return mode == "fork" and probe().complete


@pytest.mark.parametrize(("code", "fragment"), [c[1:] for c in ESCAPES], ids=[c[0] for c in ESCAPES])
def test_escape_is_refused(run, session, mode: str, code: str, fragment: str) -> None:
    before = snapshot(session)
    result = run(code)
    if walled(mode) and code in RUN_BEHIND_THE_WALL:
        assert not leaked(result)
        assert_unchanged(session, before)
        return
    assert not result.ok, f"ran: {result.text!r}"
    assert result.error
    assert fragment in result.error, result.error
    assert "Traceback" not in result.error
    assert not leaked(result)
    assert_unchanged(session, before)


def test_denial_names_line_and_segment(run) -> None:
    result = run("a = 1\nb = 2\nobj = acct\nobj.__class__")
    assert result.error == "line 4, `obj.__class__`: private attributes are not available in the sandbox"


def test_runtime_denial_names_line_and_segment(run) -> None:
    result = run("x = 1\nname = '__' + 'class__'\ny = getattr(x, name)")
    assert result.error.startswith("line 3, `getattr(x, name)`:") or result.error.startswith("line 3,")
    assert "private attributes are not available" in result.error


@pytest.mark.parametrize(
    "expr",
    [
        "().__class__.__bases__[0].__subclasses__()",
        "getattr(1, '__class__')",
        "os.environ",
        "OPENAI_API_KEY",
        "cfg['api_key']",
        "'{0.__class__}'.format(1)",
        "shell('true')",
        "acct.balance",
        "(lambda: 0).__code__",
        "[x for x in ().__class__.__bases__]",
    ],
)
def test_eval_expr_escapes_are_refused(ev, session, mode: str, expr: str) -> None:
    before = snapshot(session)
    result = ev(expr)
    assert not leaked(result)
    if result.ok and walled(mode) and expr in RUN_BEHIND_THE_WALL:
        pass  # the session's own code ran behind the kernel wall: harmless, and nothing changed
    elif result.ok:  # a placeholder may be shown, never a value
        assert "hidden" in result.text or "not available" in result.text
    assert_unchanged(session, before)


def test_no_file_was_created(run, tmp_path) -> None:
    target = tmp_path / "escape.txt"
    for code in (
        f"df.to_csv({str(target)!r})",
        f"import numpy as np\nnp.save({str(target)!r}, arr)",
        f"arr.tofile({str(target)!r})",
        f"open({str(target)!r}, 'w')",
    ):
        assert not run(code).ok
    assert not target.exists()
