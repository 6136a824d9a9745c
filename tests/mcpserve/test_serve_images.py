"""Figures for outside agents: ``get_figure`` sends the plot as MCP image content only where the privacy level
shows values, and the images of one result together stay within what a client can hold (one PNG of 70–100k
characters overflows clients today)."""

from __future__ import annotations

import base64
import io

import anyio
import mcp.types as types
import pytest
from serve_helpers import Served, http_client

from pyaichat.configuration.config import Config
from pyaichat.mcpserve.backend import LocalBackend, to_wire
from pyaichat.mcpserve.face import to_result
from pyaichat.mcpserve.gate import SessionGate
from pyaichat.mcpserve.images import MAX_CHARS
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session

pytest.importorskip("matplotlib")
Image = pytest.importorskip("PIL.Image")

# Plots at a high resolution: each PNG is over the bound before it is scaled down; dense scatter plots
# compress badly, so four of them cannot all be made to fit at a readable size.
FIGURES = (
    "import matplotlib\n"
    "matplotlib.use('Agg')\n"
    "import matplotlib.pyplot as plt\n"
    "import numpy as np\n"
    "plt.close('all')\n"
    "rng = np.random.default_rng(0)\n"
    "x = np.linspace(0, 20, 2000)\n"
    "for i in range({n}):\n"
    "    fig, ax = plt.subplots(figsize=(12, 8), dpi=150)\n"
    "    {draw}\n"
    "    ax.set_title(f'noise {{i}}')\n"
)
SCATTER = "ax.scatter(rng.random(4000), rng.random(4000), c=rng.random(4000))"
LINES = "ax.plot(x, np.sin(x + i))"


def figure_result(privacy: str, n: int, draw: str = SCATTER) -> types.CallToolResult:
    session = Session(config=Config(privacy=privacy, audit=False))
    assert session.run(FIGURES.format(n=n, draw=draw)).ok
    gate = SessionGate()
    gate.attach()
    backend = LocalBackend(LocalRuntime(session), gate)
    result = backend.call("get_figure", {}, backend.clients.seen("k", "agent", "test"))
    assert result.ok, result
    return to_result(to_wire(result))


def images(result: types.CallToolResult) -> list[str]:
    return [c.data for c in result.content if isinstance(c, types.ImageContent)]


@pytest.mark.parametrize("privacy", ["names", "schema"])
def test_no_image_leaves_where_the_privacy_level_hides_values(privacy: str) -> None:
    session = Session(config=Config(privacy=privacy, audit=False))
    assert session.run(FIGURES.format(n=1, draw=SCATTER)).ok
    gate = SessionGate()
    gate.attach()
    backend = LocalBackend(LocalRuntime(session), gate)
    result = backend.call("get_figure", {}, backend.clients.seen("k", "agent", "test"))
    assert result.images == () and images(to_result(to_wire(result))) == []


def test_four_large_figures_fit_one_result_together() -> None:
    result = figure_result("sample", 4, LINES)
    sent = images(result)
    assert len(sent) == 4  # all four, each smaller ...
    assert sum(len(data) for data in sent) <= MAX_CHARS  # ... so that together they fit
    for data in sent:
        picture = Image.open(io.BytesIO(base64.b64decode(data)))
        assert picture.format == "PNG" and min(picture.size) >= 160  # still a readable plot
    assert "left out" not in result.content[0].text


def test_figures_that_cannot_all_fit_readable_are_fewer_and_the_text_says_so() -> None:
    result = figure_result("sample", 4, SCATTER)
    sent = images(result)
    assert 1 <= len(sent) < 4 and sum(len(data) for data in sent) <= MAX_CHARS
    for data in sent:
        assert min(Image.open(io.BytesIO(base64.b64decode(data))).size) >= 160
    left = 4 - len(sent)
    note = f"({left} figure image{'s' if left > 1 else ''} left out to keep this result small enough"
    assert note in result.content[0].text and "pass figure to get one at a time" in result.content[0].text


def test_one_figure_through_a_real_client_is_an_image_within_the_bound(tmp_path) -> None:
    served = Served(tmp_path / "state", FIGURES.format(n=1, draw=SCATTER))
    try:

        async def agent() -> types.CallToolResult:
            async with http_client(served.url, served.token, "cursor") as client:
                return await client.call_tool("get_figure", {})

        result = anyio.run(agent)
    finally:
        served.stop()
    sent = images(result)
    assert not result.is_error and "noise 0" in result.content[0].text
    assert len(sent) == 1 and len(sent[0]) <= MAX_CHARS
    assert result.content[1].mime_type == "image/png"
