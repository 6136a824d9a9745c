"""For ``benchmarks/mcp.py --in-process`` only: ``python -m pyaichat`` with the MCP SDK's HTTP server on a
thread of the REPL (``benchmarks/inprocess.py``), when ``PYAICHAT_BENCH_IN_PROCESS`` names what to move."""

import os
import sys

_what = os.environ.get("PYAICHAT_BENCH_IN_PROCESS")
if _what:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import inprocess

    inprocess.patch(_what)
