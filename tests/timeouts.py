"""How long a test waits for a process or a terminal before calling it hung.

Generous on purpose: on a loaded machine (two cores, other jobs beside the tests) a child can take most of a
minute to import litellm, and a wait that is too short fails a test that would have passed. These are hang
guards, never speed checks (benchmarks measure speed); pytest-timeout (300 s, in pyproject.toml) stops
anything truly stuck and prints where it was.
"""

HANG_GUARD = 240  # a whole ``python -m pyaichat`` run, or another child process
PTY_WAIT = 60  # one expected screen in a pty test
