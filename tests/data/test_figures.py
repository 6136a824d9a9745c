"""get_figure: open matplotlib figures as text, a PNG only when asked for at ``sample`` and above, and the
figures left exactly as they were."""

from __future__ import annotations

import base64

import pytest

from pyaichat.capabilities import call
from pyaichat.configuration.config import Config
from pyaichat.session import Session

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")
np = pytest.importorskip("numpy")


@pytest.fixture(autouse=True)
def _no_figures():
    plt.close("all")
    yield
    plt.close("all")


def fingerprint(fig) -> tuple:
    """What a user would notice changing: data, limits, labels, size, dpi, canvas, the current figure."""
    axes = []
    for ax in fig.axes:
        lines = tuple(
            (tuple(np.asarray(ln.get_xdata(), float)), tuple(np.asarray(ln.get_ydata(), float)))
            for ln in ax.lines
        )
        axes.append((ax.get_xlim(), ax.get_ylim(), ax.get_title(), ax.get_xlabel(), ax.get_yscale(), lines))
    return (tuple(axes), tuple(fig.get_size_inches()), fig.dpi, id(fig.canvas), plt.gcf().number)


def make_session(**values) -> Session:
    session = Session(dict(values))
    session.settings.replace(Config(audit=False))
    return session


def test_why_is_my_plot_empty_and_why_are_my_bars_stacked():
    fig, (top, bottom) = plt.subplots(2, 1, num="sales")
    top.plot(np.arange(12), np.arange(12) ** 2, label="north")
    top.plot([], [], label="south")
    top.set_xlim(100, 200)
    top.set_title("Revenue")
    top.set_xlabel("month")
    top.legend()
    bottom.bar(["a", "b", "c"], [1, 2, 3], label="2023")
    bottom.bar(["a", "b", "c"], [2, 2, 2], bottom=[1, 2, 3], label="2024")
    empty = plt.figure()
    empty.add_subplot()
    before = fingerprint(fig)
    text = call(make_session(), "get_figure", {}).text
    assert "Figure 1 'sales': 6.4×4.8 in at 100 dpi, 2 axes" in text
    assert "title 'Revenue'; x 'month' linear [100, 200]" in text
    assert "'north': 12 points" in text and "x 0…11, y 0…121" in text
    assert "note: all data of line 'north' lies outside the view limits" in text
    assert "note: line 'south' has no data" in text
    assert "legend: 'north', 'south'" in text
    assert "'2024': 3 vertical bars, sizes 2…2, starting at 1…3 (stacked on other bars)" in text
    assert "they are stacked" in text
    assert "Figure 2: " in text and "note: nothing is drawn on this axes" in text
    assert fingerprint(fig) == before


def test_a_log_scale_hiding_values_and_images_and_colour_bars():
    _fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [-1, 10, 100], label="growth")
    ax.set_yscale("log")
    fig2, ax2 = plt.subplots()
    im = ax2.imshow(np.arange(100.0).reshape(10, 10), cmap="magma")
    fig2.colorbar(im, label="density")
    text = call(make_session(), "get_figure", {}).text
    assert "line 'growth' has 1 values ≤ 0, which a log y scale hides" in text
    assert "image (10, 10), cmap magma, values 0…99" in text
    assert "colour bar 'density', range 0…99" in text


def test_a_figure_can_be_picked_by_number_label_or_variable():
    _fig, ax = plt.subplots(num="first")
    ax.plot([1, 2])
    fig2 = plt.figure(num="second")
    session = make_session(f=fig2, ax=ax)
    assert call(session, "get_figure", {"figure": "second"}).text.startswith("Figure 2 'second'")
    assert call(session, "get_figure", {"figure": "1"}).text.startswith("Figure 1 'first'")
    assert call(session, "get_figure", {"figure": "ax"}).text.startswith("axes: ")
    missing = call(session, "get_figure", {"figure": "7"})
    assert not missing.ok and "No open figure has number 7" in missing.error


def test_a_png_only_when_asked_for_and_values_are_allowed():
    fig, ax = plt.subplots(figsize=(20, 10))
    ax.plot([1, 3, 2])
    before = fingerprint(fig)
    session = make_session()
    assert call(session, "get_figure", {}).images == ()
    result = call(session, "get_figure", {}, images=True)
    (url,) = result.images
    png = base64.b64decode(url.removeprefix("data:image/png;base64,"))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert max(width, height) <= 1024 and width > height
    assert "(a PNG of this figure is attached)" in result.text
    schema = call(session, "get_figure", {}, config=Config(audit=False, privacy="schema"), images=True)
    assert schema.ok and schema.images == () and "[" not in schema.text  # no limits, no ranges: no values
    assert fingerprint(fig) == before


def test_the_session_picture_names_the_open_figures():
    from pyaichat.capabilities.picture import session_picture

    fig, ax = plt.subplots(num="sales")
    ax.plot([1, 2])
    plt.figure()
    session = make_session(fig=fig)
    picture = session_picture(session, session.config)
    assert "fig: matplotlib Figure 'sales' 6.4×4.8 in, 1 axes" in picture
    assert "Open figures (matplotlib): 1 'sales' (1 axes), 2 (0 axes) — get_figure describes them" in picture
    plt.close("all")
    assert "Open figures" not in session_picture(session, session.config)


def test_an_untitled_axes_reads_as_such_in_the_session_picture():
    _, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    listed = call(make_session(ax=ax), "list_globals", {})
    assert "ax: matplotlib Axes: untitled, 1 line (get_figure describes it)" in listed.text
    described = call(make_session(), "get_figure", {})
    assert "axes 1: untitled; x" in described.text
