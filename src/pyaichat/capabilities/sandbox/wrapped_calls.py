"""Wrappers around callables the sandbox hands out: library functions that write into an argument
(in-process mode), capped math, pandas methods that take a path, an expression or a method name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...errors import SandboxViolation
from .modules import check_attr_name
from .rules import PATH_KWARGS

ARG_WRITERS_ROOTS = frozenset({"numpy", "pandas", "random", "heapq", "bisect"})
IN_PLACE_FIRST_ARG = frozenset(
    {"copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis", "shuffle", "heappush", "heappop",
     "heapify", "heapreplace", "heappushpop", "insort", "insort_left", "insort_right"}
)  # fmt: skip


def mutating_error(name: str) -> SandboxViolation:
    return SandboxViolation(
        f".{name}() would change the session's object; work on a copy (list(x), dict(x), x.copy())"
    )


def refuse_write(what: str) -> SandboxViolation:
    return SandboxViolation(f"{what} would change the session's object; work on a copy (x.copy())")


# The name of the first parameter of the functions in ``IN_PLACE_FIRST_ARG`` (``np.copyto(dst=a, src=…)``).
FIRST_ARG_NAMES = ("dst", "a", "arr", "x", "heap")


def arg_guard(func: Callable[..., Any], is_user: Callable[[Any], bool], first: bool) -> Callable[..., Any]:
    def guarded(*args: Any, **kwargs: Any) -> Any:
        out = kwargs.get("out")
        if out is not None and (is_user(out) or (isinstance(out, tuple) and any(map(is_user, out)))):
            raise refuse_write("out=")
        if first and (
            (args and is_user(args[0])) or any(is_user(kwargs[k]) for k in FIRST_ARG_NAMES if k in kwargs)
        ):
            raise refuse_write(f"{getattr(func, '__name__', 'this call')}()")
        return func(*args, **kwargs)

    guarded.__name__ = getattr(func, "__name__", "function")
    guarded.__doc__ = getattr(func, "__doc__", None)
    return guarded


class UfuncGuard:
    """A numpy ufunc whose ``out=`` and ``.at`` may not target the user's arrays (in-process mode)."""

    __slots__ = ("__is_user", "__ufunc")

    def __init__(self, ufunc: Any, is_user: Callable[[Any], bool]) -> None:
        self.__ufunc = ufunc
        self.__is_user = is_user

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return arg_guard(self.__ufunc, self.__is_user, False)(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        check_attr_name(name)
        value = getattr(self.__ufunc, name)
        return arg_guard(value, self.__is_user, name == "at") if callable(value) else value

    def __repr__(self) -> str:
        return repr(self.__ufunc)


def capped(func: Callable[..., Any], what: str, cap: int) -> Callable[..., Any]:
    def wrapper(*args: Any) -> Any:
        if args and isinstance(args[0], int) and args[0] > cap:
            raise SandboxViolation(f"{what}({args[0]:,}) is too large for the sandbox")
        return func(*args)

    wrapper.__name__ = getattr(func, "__name__", what)
    return wrapper


def iter_unpack(it: Any, spec: Any, _getiter: Any) -> Any:
    return iter(it)  # unpacking needs no guard of its own here: iteration hands out nothing new


def unpack(it: Any, spec: Any, _getiter: Any) -> Any:
    return it


def apply_call(func: Any, *args: Any, **kwargs: Any) -> Any:
    return func(*args, **kwargs)


def no_path(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if args or PATH_KWARGS & kwargs.keys():
            raise SandboxViolation(
                f".{name}() may only return text in the sandbox; it cannot write to a file"
            )
        return method(**kwargs)

    return wrapper


def checked_expression(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    def wrapper(expr: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(expr, str) or "@" in expr or "__" in expr or "._" in expr:
            raise SandboxViolation(
                f".{name}() expressions may not use @names or private attributes in the sandbox"
            )
        if kwargs.get("engine") == "python" or {"local_dict", "global_dict", "resolvers"} & kwargs.keys():
            raise SandboxViolation(f".{name}() with engine='python' or custom scopes is not available")
        return method(expr, *args, **kwargs)

    return wrapper


def checked_dispatch(
    method: Callable[..., Any], name: str, check: Callable[[str], None]
) -> Callable[..., Any]:
    """pandas resolves string arguments of ``apply``/``agg`` as method names: apply the attribute rules."""

    def scan(value: Any, depth: int = 0) -> None:
        if isinstance(value, str):
            check(value)
        elif depth < 2 and isinstance(value, (list, tuple)):
            for v in value:
                scan(v, depth + 1)
        elif depth < 2 and isinstance(value, dict):
            for v in value.values():
                scan(v, depth + 1)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for a in (*args, *kwargs.values()):
            scan(a)
        return method(*args, **kwargs)

    return wrapper


def no_inplace(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("inplace"):
            raise SandboxViolation(
                f".{name}(inplace=True) would change the session's object; drop inplace=True"
            )
        return method(*args, **kwargs)

    return wrapper
