"""Long command output laid out for a screen of any width (``events.row_lines`` and ``events.text_lines``):
nothing runs into its neighbour, and a wrapped line never goes back to column 0."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pyaichat.agent.events import PageEvent, PageSection, row_lines, text_lines

words = st.text(alphabet="abcdefghij", min_size=1, max_size=12)
sentences = st.lists(words, min_size=1, max_size=40).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.tuples(st.lists(words, min_size=1, max_size=5).map(" ".join), sentences), min_size=1),
    width=st.integers(min_value=20, max_value=160),
)
def test_rows_fit_the_width_and_descriptions_stay_in_their_column(rows, width):
    lines = row_lines(rows, width)
    column = len(lines[0][0]) if lines[0][1] else len(lines[1][0])
    for left, right in lines:
        if right:  # a piece of a description: in the description column, never past the edge
            assert len(left) == column and len(left + right) <= max(width, column + 12)
        else:  # a term alone on its line: indented
            assert left.startswith("  ") and left.strip()
    again = " ".join(right for _, right in lines if right)
    assert again.split() == " ".join(text for _, text in rows).split()  # every word, in order


def test_a_usage_too_wide_for_the_column_gets_its_own_line():
    rows = [
        ("/py", "Switch to Python mode."),
        ("/snapshot [--include-secrets] [file]", "Save the variables."),
    ]
    assert row_lines(rows, 100) == [
        ("  /py".ljust(30), "Switch to Python mode."),
        ("  /snapshot [--include-secrets] [file]", ""),
        (" " * 30, "Save the variables."),
    ]
    # a narrow screen: every description under its term
    assert row_lines(rows, 44) == [
        ("  /py", ""),
        ("      ", "Switch to Python mode."),
        ("  /snapshot [--include-secrets] [file]", ""),
        ("      ", "Save the variables."),
    ]


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.tuples(st.integers(min_value=0, max_value=6), sentences), min_size=1, max_size=8),
    width=st.integers(min_value=20, max_value=160),
)
def test_text_lines_go_on_under_their_own_indent(lines, width):
    text = "\n".join(" " * indent + body for indent, body in lines)
    out: list[str] = []
    for indent, body in lines:  # each line on its own: the whole is their sum
        mine = text_lines(" " * indent + body, width)
        assert mine[0].startswith(" " * indent) and mine[0][indent] != " "
        for line in mine[1:]:  # two columns further in than the line it goes on
            assert line.startswith(" " * (indent + 2)) and line[indent + 2] != " "
        assert " ".join(mine).split() == body.split()
        assert all(len(line) <= width for line in mine)  # no word here is longer than 12 letters
        out += mine
    assert text_lines(text, width) == out


def test_a_page_in_plain_text_wraps_its_text_under_the_indent():
    page = PageEvent(sections=[PageSection(title="Walls:", text="  " + "wall " * 30)])
    assert page.plain_text(width=40).splitlines() == [
        "Walls:",
        "  wall wall wall wall wall wall wall",
        "    wall wall wall wall wall wall wall",
        "    wall wall wall wall wall wall wall",
        "    wall wall wall wall wall wall wall",
        "    wall wall",
    ]
