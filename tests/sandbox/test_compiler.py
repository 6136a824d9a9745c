"""Compile-time checks and rewrites (positions, size-checked operators, deadline ticks)."""

from __future__ import annotations

import pytest

from pyaichat.capabilities.sandbox import limits
from pyaichat.capabilities.sandbox.compiler import compile_snippet
from pyaichat.capabilities.sandbox.confine import Walls
from pyaichat.capabilities.sandbox.policy import IN_PROCESS, ForkedChild
from pyaichat.errors import SandboxViolation


def test_error_names_line_and_segment() -> None:
    with pytest.raises(SandboxViolation) as info:
        compile_snippet("a = 1\nb = a.__dict__")
    assert str(info.value) == "line 2, `a.__dict__`: private attributes are not available in the sandbox"


def test_syntax_error_is_plain() -> None:
    with pytest.raises(SandboxViolation) as info:
        compile_snippet("x = (")
    assert str(info.value).startswith("line 1")
    assert "syntax error" in str(info.value)


def test_used_names_and_imports() -> None:
    compiled = compile_snippet("import math\ny = df.a + math.pi")
    assert {"df", "math"} <= compiled.names
    assert compiled.imports == frozenset({"math"})
    assert compiled.has_result is False


def test_inprocess_code_has_ticks_and_checked_operators() -> None:
    """The policy chooses the compiler's dialect: deadline ticks in-process only."""
    code = "for i in x:\n    y = i * 2"
    names_fork = set(ForkedChild(Walls(0, False, ())).compile(code).code.co_names)
    names_inproc = set(IN_PROCESS.compile(code).code.co_names)
    assert "_mul_" in names_fork and "_tick_" not in names_fork
    assert {"_mul_", "_tick_"} <= names_inproc


def test_tick_raises_after_the_deadline() -> None:
    tick = limits.make_tick(0.0)
    with pytest.raises(limits.Deadline):
        tick()
    assert limits.make_tick(float("inf"))() is True


def test_checked_helpers_allow_normal_sizes() -> None:
    assert limits.mul("ab", 3) == "ababab"
    assert limits.mul(3, [0]) == [0, 0, 0]
    assert limits.pow_(2, 10) == 1024
    assert limits.pow_(2, 10, 1000) == 24
    assert limits.lshift(1, 8) == 256
    inplace = limits.make_inplace(lambda obj: False)
    mine = [1]
    assert inplace("+=", mine, [2]) is mine and mine == [1, 2]
    user = [1]
    rebound = limits.make_inplace(lambda obj: obj is user)("+=", user, [2])
    assert user == [1] and rebound == [1, 2]


def test_result_assignment_is_not_reachable_from_code() -> None:
    with pytest.raises(SandboxViolation) as info:
        compile_snippet("_result_ = 1")
    assert str(info.value) == "line 1, `_result_`: names starting with _ are not available in the sandbox"
