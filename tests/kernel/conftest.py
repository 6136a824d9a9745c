"""Fixtures over real ipykernel processes (``kernel_process``) for the kernel-runtime tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernel_process import Kernel, attach, start_kernel

from pyaichat.runtime.kernel import KernelRuntime


@pytest.fixture(scope="module")
def shared_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    """One kernel for the tests that do not break it."""
    kernel = start_kernel(tmp_path_factory.mktemp("kernel"))
    yield kernel
    kernel.kill()


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[Kernel]:
    """A kernel of the test's own (for tests that kill, restart or interrupt it)."""
    k = start_kernel(tmp_path)
    yield k
    k.kill()


@pytest.fixture
def runtime(shared_kernel: Kernel) -> Iterator[KernelRuntime]:
    s = attach(shared_kernel)
    yield s
    s.close()
