"""Receipts (``agent.receipts``): which numbers are read, how they match at the answer's precision, what is
tied to a result (and so can be contradicted), and how every front end, ``/receipts``, the journal and
``/save`` show them."""

from __future__ import annotations

import io

import pytest

from pyaichat.agent.events import ReceiptsEvent
from pyaichat.agent.receipts import CONTRADICTED, NOT_FOUND, SUPPORTED, Seen, check, numbers_in
from pyaichat.commands import dispatch
from pyaichat.piped import PlainFrontEnd

MEAN = Seen("eval_expr(df.price.mean())", "float64 11.2", "df.price.mean()")
ROWS = Seen("eval_expr(len(df))", "int\n1200", "len(df)")
SHARE = Seen("eval_expr((df.price > 12).mean())", "float64 0.125", "(df.price > 12).mean()")
TABLE = Seen(
    "eval_expr(df.describe())",
    "rows:\n          price        qty\ncount  10.00000  10.000000\nmean   11.97400   4.400000\n"
    "max    15.00000   8.000000",
    "df.describe()",
)


def statuses(answer: str, *seen: Seen, question: str = "", picture: str = "") -> list[tuple[str, str]]:
    return [(r.number, r.status) for r in check(answer, list(seen), picture, question).receipts]


def test_number_tokens_of_every_written_form():
    text = (
        "-3.5%, 1,234.5 and 1.2e-3; 0.59 percentage points; (12,) $491.43. | 7 | 2.4M, 3.01 million, 48.2bn"
    )
    found = numbers_in(text)
    assert [n.text for n in found] == [
        "-3.5%", "1,234.5", "1.2e-3", "0.59 percentage points", "12", "$491.43", "7", "2.4M", "3.01 million",
        "48.2bn",
    ]  # fmt: skip
    assert [n.value for n in found[-3:]] == [2.4e6, 3.01e6, 48.2e9]
    assert found[3].pp and found[0].pct and not found[0].pp


def test_dates_are_read_as_days():
    found = numbers_in("peaked on 17 May 2024, on May 17 and 2024-05-17 04:00 or 17/05/2024; jan 56.3k")
    assert [n.date for n in found[:4]] == [(2024, 5, 17), (0, 5, 17), (2024, 5, 17), (2024, 5, 17)]
    assert (found[4].text, found[4].date) == ("56.3k", None)


def test_pieces_of_words_dates_times_and_versions_are_not_numbers():
    assert numbers_in("float64 x2 utf-8 10:30 python 3.12.1 0x7fcc 6th 2D 16px 3.x") == []


def test_equal_at_the_answers_precision_and_ratios_as_percentages():
    assert statuses("The mean price is about 11, or 11.20 exactly; 1,200 rows.", MEAN, ROWS) == [
        ("11", SUPPORTED),
        ("11.20", SUPPORTED),
        ("1,200", SUPPORTED),
    ]
    # an 11 that no word ties to the mean is not "found" (an 11 is found anywhere); an 11.20 is not by chance
    assert statuses("About 11, or 11.20 exactly.", MEAN) == [("11", NOT_FOUND), ("11.20", SUPPORTED)]
    assert statuses("12.5% of prices are above 12.", SHARE, question="above 12?") == [("12.5%", SUPPORTED)]
    change = Seen("eval_expr(df.price.diff().iloc[-1])", "float64 -3.2", "df.price.diff().iloc[-1]")
    assert statuses("The price fell by 3.2, a change of -3.2.", change) == [
        ("3.2", SUPPORTED),
        ("-3.2", SUPPORTED),
    ]
    assert statuses("The price rose by 3.2.", change) == [("3.2", CONTRADICTED)]
    assert statuses("11.3 and 1,250", MEAN, ROWS) == [("11.3", NOT_FOUND), ("1,250", NOT_FOUND)]


def test_trivial_numbers_are_left_out():
    answer = (
        "1. In 2023 the mean was 11.2\n2) see `df.head(10)`\n\n```python\ndf.price.mean() * 100\n```\n"
        "Asked about 7 things."
    )
    assert statuses(answer, MEAN, question="the 7 things?") == [("11.2", SUPPORTED)]


def test_a_value_in_backticks_is_a_claim():
    assert statuses("The mean is `11.2`.", MEAN) == [("11.2", SUPPORTED)]


def test_a_misreported_mean_by_expression_or_by_words_is_contradicted():
    for answer in ("`df.price.mean()` is 12.5.", "The mean of price is 12.5.", "Average `price`: 12.5"):
        found = check(answer, [MEAN])
        assert [(r.number, r.status, r.shown) for r in found.receipts] == [("12.5", CONTRADICTED, "11.2")]
        assert found.warnings() == [
            "12.5 in the answer differs from what eval_expr(df.price.mean()) returned: 11.2"
        ]
        assert found.summary() == "receipts: 0 of 1 number found in this turn's results · 1 contradicted"


def test_a_misreported_count_and_percentage_are_contradicted():
    assert statuses("`len(df)` is 1,100, so 1,100 rows.", ROWS)[0] == ("1,100", CONTRADICTED)
    assert statuses("`(df.price > 12).mean()` gives 15%.", SHARE) == [("15%", CONTRADICTED)]


def test_a_sentence_that_states_the_value_somewhere_is_not_contradicted():
    # the first number after the mention is a count: the sentence still reports the mean right
    assert statuses("The mean of price over 9 rows is 11.2.", MEAN) == [("9", NOT_FOUND), ("11.2", SUPPORTED)]


def test_quantities_named_before_their_values_are_paired_in_order():
    other = Seen("eval_expr(df.qty.mean())", "float64 4.4", "df.qty.mean()")
    assert statuses("`df.price.mean()` and `df.qty.mean()` are 11.2 and 4.4.", MEAN, other) == [
        ("11.2", SUPPORTED),
        ("4.4", SUPPORTED),
    ]
    assert statuses("`df.price.mean()` and `df.qty.mean()` are 4.4 and 11.2.", MEAN, other) == [
        ("4.4", CONTRADICTED),
        ("11.2", CONTRADICTED),
    ]


def test_a_number_never_tied_to_a_quantity_is_only_not_found():
    assert statuses("Prices rose by 12.5 last year.", MEAN) == [("12.5", NOT_FOUND)]


def test_a_misreported_table_cell_is_contradicted_even_when_it_matches_elsewhere():
    answer = "| stat | price | qty |\n|---|---|---|\n| mean | 11.97 | 4.4 |\n| max | 15 | 9 |"
    found = check(answer, [TABLE])
    assert [(r.number, r.status) for r in found.receipts] == [
        ("11.97", SUPPORTED),
        ("4.4", SUPPORTED),
        ("15", SUPPORTED),
        ("9", CONTRADICTED),  # 9 is 9.x of no cell: max qty is 8
    ]
    assert found.receipts[3].shown == "8.000000"


def test_lines_for_receipts_say_what_each_number_was_tied_to_and_why():
    found = check("The mean of price is 12.5. There are 1,200 rows and 3 cats.", [MEAN, ROWS])
    assert found.lines() == [
        ("⚠ 12.5", 'mean of price = 11.2, not 12.5 · by "mean", "price" · eval_expr(df.price.mean())'),
        ("✓ 1,200", 'rows of df = 1200 · by "rows" · eval_expr(len(df))'),
        ("· 3", "not found · no result of this turn showed it"),
    ]


def test_the_session_picture_counts_as_a_source():
    found = check("df has 20 rows.", [], picture="df: DataFrame 20×4: age float64")
    assert [(r.number, r.status, r.source) for r in found.receipts] == [
        ("20", SUPPORTED, "the session picture")
    ]
    assert found.summary() == "receipts: no tool ran this turn · 1 of 1 number found in the session picture"


# -- through the controller (a scripted in-process model) ---------------------------------------------------
def ask_mean(ctrl, fake, session, answer: str) -> None:
    session.run("import pandas as pd\ndf = pd.DataFrame({'price': [10.5, 11.25, 12.0, 11.05]})")
    fake.tool("eval_expr", {"expr": "df.price.mean()"}).text(answer)
    ctrl.ask("what is the mean price?")


def test_an_answer_is_followed_by_its_receipts(ctrl, recorder, fake, session):
    ask_mean(ctrl, fake, session, "The mean of `price` is 12.5 over 4 rows.")
    kinds = [e.type for e in recorder.events]
    assert kinds.index("receipts") == kinds.index("answer") + 1
    (event,) = recorder.of("receipts")
    assert event.summary == "receipts: 1 of 2 numbers found in this turn's results · 1 contradicted"
    assert event.warnings == [
        "12.5 in the answer differs from what eval_expr(df.price.mean()) returned: 11.2"
    ]
    recorder.events.clear()
    dispatch(ctrl, "/receipts")
    (page,) = recorder.of("page")
    assert page.sections[0].title == event.summary
    assert page.sections[0].rows == [
        ("⚠ 12.5", 'mean of price = 11.2, not 12.5 · by "mean", "price" · eval_expr(df.price.mean())'),
        ("✓ 4", 'rows of df = 4 · by "rows" · the session picture'),
    ]
    turn = ctrl.journal.turns[-1]
    assert turn.receipts == f"{event.summary}\nwarning: {event.warnings[0]}"


def test_receipts_can_be_turned_off(ctrl, recorder, fake, session):
    session.settings.replace(session.settings.current().replace(receipts=False))
    ask_mean(ctrl, fake, session, "The mean of `price` is 12.5.")
    assert recorder.of("receipts") == []
    assert ctrl.journal.turns[-1].receipts is None
    recorder.events.clear()
    dispatch(ctrl, "/receipts")
    assert recorder.of("notice")[0].text == "No receipts to show: receipts are off (receipts = false)."


def test_an_answer_without_numbers_has_no_receipts_line(ctrl, recorder, fake, session):
    ask_mean(ctrl, fake, session, "It is about eleven.")
    assert recorder.of("receipts") == []
    recorder.events.clear()
    dispatch(ctrl, "/receipts")
    assert recorder.of("notice")[0].text == "The last answer states no number to check."


def test_save_writes_the_receipts_as_a_comment_and_the_warning_as_a_line(
    ctrl, recorder, fake, session, tmp_path
):
    ask_mean(ctrl, fake, session, "The mean of `price` is 12.5.")
    for name in ("t.md", "t.py"):
        dispatch(ctrl, f"/save {tmp_path / name}")
        text = (tmp_path / name).read_text()
        assert "<!-- receipts: 0 of 1 number found in this turn's results · 1 contradicted -->" in text
        assert "_⚠ 12.5 in the answer differs from what eval_expr(df.price.mean()) returned: 11.2_" in text


# -- the front ends ---------------------------------------------------------------------------------------
EVENT = ReceiptsEvent(
    summary="receipts: 1 of 2 numbers found in this turn's results · 1 contradicted",
    warnings=["12.5 in the answer differs from what eval_expr(df.price.mean()) returned: 11.2"],
)


def test_piped_mode_prints_the_warning_then_the_status_line():
    out = io.StringIO()
    PlainFrontEnd(out).emit(EVENT)
    assert out.getvalue().splitlines() == [
        "Warning: 12.5 in the answer differs from what eval_expr(df.price.mean()) returned: 11.2",
        "receipts: 1 of 2 numbers found in this turn's results · 1 contradicted",
    ]


def test_the_terminal_shows_the_warning_and_the_status_line():
    from rich.console import Console

    from pyaichat.repl.render import RichRenderer

    out = io.StringIO()
    RichRenderer(Console(file=out, width=120, no_color=True, highlight=False)).render(EVENT)
    assert out.getvalue().splitlines() == [
        "⚠ 12.5 in the answer differs from what eval_expr(df.price.mean()) returned: 11.2",
        "receipts: 1 of 2 numbers found in this turn's results · 1 contradicted (/receipts)",
    ]


def test_a_notebook_shows_the_warning_and_the_status_line(capsys, monkeypatch):
    pytest.importorskip("IPython")
    from pyaichat.ipython import frontend
    from pyaichat.ipython.frontend import DisplayRenderer

    shown: list[dict[str, str]] = []  # a notebook's display bundles: the warning is bold Markdown
    monkeypatch.setattr(frontend, "display", lambda bundle, **kwargs: shown.append(bundle))
    DisplayRenderer().render(EVENT)
    warning = "⚠ 12.5 in the answer differs from what eval_expr(df.price.mean()) returned: 11.2"
    assert [bundle["text/plain"] for bundle in shown] == [warning]
    assert shown[0]["text/markdown"].startswith("**")
    assert capsys.readouterr().out.splitlines() == [  # the command as a notebook's cell types it
        "receipts: 1 of 2 numbers found in this turn's results · 1 contradicted (%ai /receipts)",
    ]


def test_several_quantities_in_one_sentence_each_take_the_numbers_after_them():
    other = Seen("eval_expr(df.qty.mean())", "float64 4.4", "df.qty.mean()")
    assert statuses("The mean of `price` is **12.5** over the 1,200 rows.", MEAN, ROWS) == [
        ("12.5", CONTRADICTED),
        ("1,200", SUPPORTED),
    ]
    assert statuses("`df.price.mean()` is 11.2 and `df.qty.mean()` is 4.9.", MEAN, other) == [
        ("11.2", SUPPORTED),
        ("4.9", CONTRADICTED),
    ]


WEEKS = Seen(
    "run_python(a = visits.iloc[-7:].sum() …)",
    "17911 17597 1.78",
    code="a = visits.iloc[-7:].sum()\nb = visits.iloc[-14:-7].sum()\n"
    "print(a, b, round((a - b) / b * 100, 2))",
)
DAYS = Seen(
    "run_python(d = readings.temp_c.resample('D').mean() …)",
    "22.09 22.49\n0.41",
    code="d = readings.set_index('time').temp_c.resample('D').mean()\n"
    "print(round(d.iloc[0], 2), round(d.iloc[-1], 2))\nprint(round(d.iloc[-1] - d.iloc[0], 2))",
)


def test_where_in_a_series_a_number_is_said_to_sit_names_its_value():
    # the previous week's total given for the final week's (each value was shown, under the other word)
    swapped = "The final week saw 17,597 visits against 17,911 in the previous one."
    assert statuses(swapped, WEEKS)[0] == ("17,597", CONTRADICTED)
    assert statuses("The final week saw 17,911 visits against 17,597 in the previous one.", WEEKS) == [
        ("17,911", SUPPORTED),
        ("17,597", SUPPORTED),
    ]
    # "from" is the first day's mean (not a minimum: the mean is named), and the last day's is not the first's
    wrong = "The daily mean temperature increased from 22.49 °C to 22.09 °C over the two weeks."
    assert statuses(wrong, DAYS) == [("22.49", CONTRADICTED), ("22.09", CONTRADICTED)]
    right = "The daily mean temperature increased from 22.09 °C to 22.49 °C over the two weeks."
    assert [s for _, s in statuses(right, DAYS)] == [SUPPORTED, SUPPORTED]


def test_up_to_starts_the_range_end_it_is_written_before():
    low = Seen("eval_expr(weather.temp.min())", "float64 -11.5", "weather.temp.min()")
    high = Seen("eval_expr(weather.temp.max())", "float64 22.1", "weather.temp.max()")
    # "°C to" is not the noun of the first number: "to" makes the second the maximum
    assert statuses("Temperatures ranged from -11.5 °C to 21.2 °C.", low, high) == [
        ("-11.5", SUPPORTED),
        ("21.2", CONTRADICTED),
    ]
    assert statuses("Temperatures ranged from -11.5 °C up to 22.1 °C.", low, high) == [
        ("-11.5", SUPPORTED),
        ("22.1", SUPPORTED),
    ]
