"""``/status`` in a kernel session over ZMQ (``--existing``): which kernel, and a request's round trip."""

from __future__ import annotations

from fakes.recorder import Recorder
from pyaichat.assemble import assemble


def test_status_names_the_kernel_and_the_helpers_round_trip(runtime) -> None:
    front = Recorder()
    ctrl = assemble(runtime, front)
    ctrl.handle("/status")
    before = front.of("notice")[-1].text.splitlines()
    assert before[0].startswith("attached to kernel-test.json (python 3")
    assert before[1] == "Link: ZMQ; a request to pyaichat's helper in the kernel: none yet."
    runtime.call("get_type", {"expr": "len"})
    ctrl.handle("/status")
    after = front.of("notice")[-1].text.splitlines()
    assert after[1].startswith("Link: ZMQ; a request to pyaichat's helper in the kernel: ")
    assert after[1].endswith(" ms (median of 1).")
    assert after[2].startswith("Model: ")
