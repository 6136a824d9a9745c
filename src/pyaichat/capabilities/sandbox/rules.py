"""The allow- and deny-lists of the sandbox, in one place so they can be reviewed together.

Everything here is data. ``policy`` applies it at run time, ``compiler`` at compile time.
"""

from __future__ import annotations

import builtins

SANDBOX_FILENAME = "<sandbox>"  # the file name of compiled snippets (tracebacks, ``origin``)
SANDBOX_MODULE = "pyaichat_sandbox"  # ``__name__`` inside the sandbox, so ``__module__`` of its classes

# -- names that never resolve, whatever the object ---
# Frame, code, generator, coroutine and traceback internals (RestrictedPython's INSPECT_ATTRIBUTES and more):
# each one leads to f_globals / f_builtins and from there out of the sandbox.
INTERNALS = frozenset(
    {
        "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "cr_origin",
        "ag_frame", "ag_code", "ag_await", "f_back", "f_builtins", "f_code", "f_globals", "f_locals",
        "f_trace", "f_generator", "tb_frame", "tb_next", "co_code", "func_globals", "func_code",
        "im_func", "im_self", "mro", "with_traceback",
    }
)  # fmt: skip

# Reach files, pickle, raw memory, plotting back ends, global library state or user code by name.
IO_AND_STATE = frozenset(
    {
        "ctypes", "tofile", "fromfile", "memmap", "savefig", "plot", "hist", "boxplot",
        "style", "to_clipboard", "to_pickle", "read_pickle", "set_option", "reset_option", "option_context",
        "options", "show_versions", "show_config", "show_runtime", "register_dataframe_accessor",
        "register_series_accessor", "register_index_accessor", "getsource", "system", "popen", "environ",
        "getenv", "putenv", "load_module", "exec_module",
    }
)  # fmt: skip

# ``to_*`` methods that return data rather than writing somewhere. The string-producing ones are wrapped so
# that a path or buffer argument is refused (``df.to_csv()`` returns text; ``df.to_csv("f")`` writes a file).
SAFE_TO = frozenset(
    {
        "to_numpy", "to_list", "to_dict", "to_frame", "to_records", "to_period", "to_timestamp", "to_series",
        "to_flat_index", "to_pydatetime", "to_datetime64", "to_timedelta64", "to_tuples", "to_string",
        "to_json", "to_csv", "to_markdown", "to_html", "to_latex", "to_integral", "to_integral_value",
        "to_eng_string", "to_bytes", "to_offset", "to_native_types", "to_dense", "to_coo",
    }
)  # fmt: skip
TEXT_WRITERS = frozenset({"to_string", "to_json", "to_csv", "to_markdown", "to_html", "to_latex"})
PATH_KWARGS = frozenset({"buf", "path_or_buf", "path", "excel_writer", "file", "fname", "filepath_or_buffer"})

# pandas methods that accept a method *name* as a string and call it (``df.apply("to_csv", ...)``).
STRING_DISPATCH = frozenset({"apply", "agg", "aggregate", "transform", "pipe", "map", "applymap"})
EXPRESSION_METHODS = frozenset({"eval", "query"})

# -- in-process mode: methods that change the object they are called on ---
MUTATING_METHODS = frozenset(
    {
        "append", "extend", "insert", "remove", "pop", "popitem", "clear", "sort", "reverse", "update",
        "setdefault", "add", "discard", "difference_update", "intersection_update",
        "symmetric_difference_update", "fill", "put", "itemset", "resize", "setflags", "partition",
        "byteswap", "appendleft", "extendleft", "popleft", "rotate", "move_to_end", "subtract", "setfield",
        "set_names", "set_levels", "set_codes", "write", "writelines",
        "truncate", "seek", "send", "throw", "close",
    }
)  # fmt: skip

# -- modules ---
ALLOWED_MODULES = frozenset(
    {
        "math", "cmath", "statistics", "itertools", "functools", "operator", "collections", "collections.abc",
        "re", "json", "datetime", "decimal", "fractions", "random", "string", "textwrap", "copy", "heapq",
        "bisect", "numbers", "numpy", "numpy.linalg", "numpy.random", "numpy.fft", "numpy.ma",
        "numpy.polynomial", "numpy.char", "numpy.strings", "numpy.emath", "numpy.exceptions", "numpy.dtypes",
        "pandas", "pandas.api", "pandas.api.types", "pandas.arrays", "pandas.errors", "pandas.offsets",
        "pandas.tseries", "pandas.tseries.offsets",
    }
)  # fmt: skip

# Names refused on a module, with the reason shown to the assistant.
MODULE_BLOCKS: dict[str, dict[str, str]] = {
    "numpy": {
        **dict.fromkeys(
            ["load", "save", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt", "fromfile",
             "fromregex", "memmap", "DataSource", "tofile"],
            "it reads or writes files",
        ),
        **dict.fromkeys(["ctypeslib", "lib", "core", "testing", "distutils", "f2py", "rec", "typing"],
                        "it reaches file, memory or build internals"),
        **dict.fromkeys(
            ["set_printoptions", "printoptions", "seterr", "seterrcall", "setbufsize", "set_string_function",
             "info", "source", "who", "get_include"],
            "it changes or prints global numpy state",
        ),
    },
    "numpy.random": dict.fromkeys(["seed", "set_state"], "it changes the global random state"),
    "pandas": {
        **dict.fromkeys(["io", "ExcelWriter", "ExcelFile", "HDFStore", "plotting", "compat", "core", "util",
                         "testing", "eval"], "it reaches file I/O, plotting or pandas internals"),
    },
    "string": {"Formatter": "string.Formatter can read attributes through format fields"},
    "operator": dict.fromkeys(
        ["setitem", "delitem", "iadd", "iand", "iconcat", "ifloordiv", "ilshift", "imod", "imul", "imatmul",
         "ior", "ipow", "irshift", "isub", "itruediv", "ixor"],
        "it changes objects in place",
    ),
    "functools": dict.fromkeys(["update_wrapper", "wraps"], "it writes attributes of other objects"),
    "random": {},
    "json": {},
    "copy": {},
}  # fmt: skip

# Module roots whose objects (functions, instances) are never handed to sandboxed code, even when the user's
# namespace holds them (``from os import environ``, ``get_ipython``, an open file).
DANGEROUS_ROOTS = frozenset(
    {
        "os", "posix", "nt", "posixpath", "ntpath", "sys", "subprocess", "shutil", "socket", "_socket", "io",
        "_io", "pathlib", "importlib", "ctypes", "_ctypes", "pickle", "_pickle", "marshal",
        "inspect", "gc", "code", "codeop", "pty", "signal", "threading", "_thread", "multiprocessing",
        "asyncio", "tempfile", "glob", "fcntl", "mmap", "resource", "select", "selectors", "ssl", "http",
        "urllib", "requests", "httpx", "aiohttp", "IPython", "ipykernel", "traitlets", "prompt_toolkit",
        "pyaichat", "litellm", "openai", "anthropic", "RestrictedPython", "runpy", "webbrowser", "zipimport",
        "pydoc", "site", "sysconfig", "dbm", "sqlite3", "shelve", "smtplib", "ftplib", "telnetlib",
        "logging", "atexit", "opcode", "dis", "tracemalloc", "faulthandler",
        "pdb", "bdb", "linecache", "tokenize",
    }
)  # fmt: skip

# Builtins the sandbox never offers; each gets a placeholder that explains itself when called.
FORBIDDEN_BUILTINS = {
    "open": "it reads and writes files",
    "exec": "it runs unchecked code",
    "eval": "it runs unchecked code",
    "compile": "it makes unchecked code",
    "globals": "it exposes the namespace",
    "locals": "it exposes the namespace",
    "vars": "it exposes object internals",
    "setattr": "it changes objects",
    "delattr": "it changes objects",
    "input": "it waits for the terminal",
    "breakpoint": "it starts a debugger",
    "help": "it starts the help system",
    "memoryview": "it exposes raw memory",
    "exit": "it ends the process",
    "quit": "it ends the process",
    "copyright": "it is not needed",
    "credits": "it is not needed",
    "license": "it is not needed",
    "aiter": "async code is not supported",
    "anext": "async code is not supported",
}

# numpy objects only: ``ndarray.dump(s)`` pickles (``json.dumps`` stays available).
# ``ndarray.data`` is a raw writable buffer of the array (and so of the user's array).
NUMPY_OBJECT_BLOCKS = frozenset({"dump", "dumps", "data"})

# Dunder attributes that are plain strings and often useful (``type(e).__name__``); every other is refused.
SAFE_DUNDERS = frozenset({"__name__", "__qualname__", "__doc__"})

# Behind the kernel wall (fork mode, Landlock + seccomp): the ordinary protocol methods a snippet's own class
# may define. Not the ones that change how attributes, classes, pickling or finalisation work
# (``__getattr__``, ``__getattribute__``, ``__setattr__``, ``__del__``, ``__init_subclass__``, ``__reduce__``,
# ``__get__``, …).
DUNDER_METHODS = frozenset(
    {
        "__init__", "__repr__", "__str__", "__format__", "__len__", "__length_hint__", "__iter__", "__next__",
        "__reversed__", "__contains__", "__getitem__", "__setitem__", "__delitem__", "__missing__", "__eq__",
        "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__call__", "__enter__",
        "__exit__", "__neg__", "__pos__", "__abs__", "__invert__", "__int__", "__float__", "__complex__",
        "__index__", "__round__", "__trunc__", "__floor__", "__ceil__",
        *(f"__{p}{op}__" for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod",
                                     "pow", "lshift", "rshift", "and", "or", "xor") for p in ("", "r", "i")),
    }
)  # fmt: skip

PRIVATE_MESSAGE = "private attributes are not available in the sandbox"

# Builtins that must never reach sandboxed code, even through a user variable or a module member.
UNSAFE_BUILTIN_IDS = frozenset(
    id(getattr(builtins, n))
    for n in ("open", "exec", "eval", "compile", "__import__", "globals", "locals", "vars", "setattr",
              "delattr", "getattr", "input", "breakpoint", "help")
    if hasattr(builtins, n)
)  # fmt: skip
