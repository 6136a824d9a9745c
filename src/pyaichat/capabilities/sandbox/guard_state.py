"""The state of one run's guards, declared once: the guard mixins (``admission``, ``attributes``, ``writes``,
``module_guards``) derive from ``GuardState`` and ``guards.Guards`` assembles them into one dataclass."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .ownership import UserObjects

if TYPE_CHECKING:
    from .modules import ModuleProxy
    from .policy_base import SandboxPolicy


@dataclass
class GuardState:
    """What every guard of one run reads: the sandbox's policy (what differs between a forked child and this
    process), how secrets look, the deadline, and the run's own bookkeeping."""

    policy: SandboxPolicy
    is_secret_name: Callable[[str], bool]
    looks_secret: Callable[[str], bool]
    deadline: float
    user: UserObjects = field(default_factory=lambda: UserObjects(()))  # the session's objects (``Watch``)
    printed: list[str] = field(default_factory=list)
    printed_size: int = 0
    print_limit: int = 20_000
    print_truncated: bool = False
    _secret_keys: dict[str, bool] = field(default_factory=dict)
    _sandbox_types: set[type] = field(default_factory=set)
    _proxies: dict[str, ModuleProxy] = field(default_factory=dict)

    @property
    def walled(self) -> bool:
        """The kernel wall stands around this run: the session's own functions, methods and properties may
        run, since the wall, not the guards, stops what they could do."""
        return self.policy.walled

    def is_user(self, obj: Any) -> bool:
        """Is ``obj`` the session's (in-process: reachable from the user's variables the code names)?"""
        return obj in self.user
