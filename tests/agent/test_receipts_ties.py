"""What a number is tied to (issue 46): each missed wrong number, each false flag and each meaningless "found"
that an independent set of answers showed, checked against what the real capabilities return on a live
session (the corpus's sessions: ``receipts_corpus/sessions.json``).

Every test here failed on the first checker (a count before its noun never tied, another result's value
counted as found, a sign ignored, a swapped table passed, scale words ignored, small integers found in the
picture, code and list markers counted, "N of N found" in a turn where no tool ran)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyaichat.agent.calls import arg_summary
from pyaichat.agent.receipts import CONTRADICTED, NOT_FOUND, SUPPORTED, Evidence, Seen, check
from pyaichat.capabilities import call
from pyaichat.configuration.config import Config
from pyaichat.runtime.local import LocalRuntime
from pyaichat.session import Session
from pyaichat.untrusted import span

SESSIONS = json.loads((Path(__file__).parent / "receipts_corpus" / "sessions.json").read_text())
EXTRA = {
    # revenue in the millions, a quantity-weighted price, a share per region
    "big": (
        "import pandas as pd\n"
        "big = pd.DataFrame({'region': ['north', 'south', 'east', 'west'],"
        " 'revenue': [1204938.27, 301586.4, 870000.0, 635821.0], 'price': [12.5, 9.5, 14.0, 11.0],"
        " 'qty': [30, 70, 20, 50]})"
    ),
}


@pytest.fixture(scope="module")
def turn():
    """``turn(kind, *calls)``: the picture and the results of real calls on a live session of that kind, as
    the loop hands them to the receipts."""
    made: dict[str, Session] = {}

    def run(kind: str, *calls: tuple[str, dict]) -> Evidence:
        if kind not in made:
            session = Session(echo=lambda value: None)
            session.settings.replace(Config(audit=False, tool_timeout=30.0))  # tool timing is not tested here
            assert session.run({**SESSIONS, **{k: v for k, v in EXTRA.items()}}[kind]).ok
            made[kind] = session
        session = made[kind]
        evidence = Evidence(span(LocalRuntime(session).picture()))
        for name, args in calls:
            got = call(session, name, args)
            assert got.ok, got.error
            evidence.add(_seen(name, args, got.text))
        return evidence

    return run


def _seen(name: str, args: dict, text: str) -> Seen:
    shown = f"{name}({arg_summary(args)})"
    of = getattr(Seen, "of", None)  # the first checker's Seen took the expression only
    return of(name, args, shown, text) if of else Seen(shown, text, str(args.get("expr", "")))


def statuses(answer: str, evidence: Evidence, question: str = "") -> list[tuple[str, str]]:
    return [(r.number, r.status) for r in check(answer, evidence, question=question).receipts]


def e(expr: str) -> tuple[str, dict]:
    return ("eval_expr", {"expr": expr})


# -- misses: wrong numbers that passed without a ⚠ ----------------------------------------------------------
def test_a_count_before_its_noun_is_tied_to_the_row_count(turn):
    assert statuses("sales has 12 rows.", turn("sales", e("len(sales)"))) == [("12", CONTRADICTED)]
    assert statuses("sales has 10 rows.", turn("sales", e("len(sales)"))) == [("10", SUPPORTED)]


def test_another_results_value_is_no_support_for_the_value_the_sentence_names(turn):
    evidence = turn("sales", e("sales.groupby('region').price.mean()"), e("sales.price.mean()"))
    found = check("The average price is 12.75.", evidence)
    assert [(r.number, r.status, r.shown) for r in found.receipts] == [("12.75", CONTRADICTED, "11.974")]
    # the same value said of the region it belongs to is right
    assert statuses("The north region's average price is 12.75.", evidence) == [("12.75", SUPPORTED)]


def test_a_direction_word_checks_the_sign(turn):
    evidence = turn("daily", e("daily.visits.pct_change().round(4)"))
    # 2024-03-02: +12.5 %, 2024-03-03: −5.19 %
    assert statuses("On March 3 visits grew 5.19%.", evidence) == [
        ("March 3", SUPPORTED),
        ("5.19%", CONTRADICTED),
    ]
    assert statuses("On March 3 visits fell 5.19%.", evidence) == [
        ("March 3", SUPPORTED),
        ("5.19%", SUPPORTED),
    ]


def test_a_table_with_two_rows_swapped_is_caught(turn):
    evidence = turn("sales", e("sales.groupby('region').price.mean()"))
    swapped = "| region | mean price |\n|---|---|\n| north | 10.66 |\n| south | 12.75 |\n| east | 14.63 |"
    assert statuses(swapped, evidence) == [
        ("10.66", CONTRADICTED),
        ("12.75", CONTRADICTED),
        ("14.63", SUPPORTED),
    ]
    transposed = "| | north | south |\n|---|---|---|\n| mean price | 10.66 | 12.75 |"
    assert statuses(transposed, evidence) == [("10.66", CONTRADICTED), ("12.75", CONTRADICTED)]


def test_a_verb_names_the_aggregate(turn):
    evidence = turn("sales", e("sales.price.mean()"))
    assert statuses("price averages 13.2", evidence) == [("13.2", CONTRADICTED)]
    assert statuses("price averages 11.97", evidence) == [("11.97", SUPPORTED)]


def test_a_rate_said_as_a_percent_is_tied_to_its_group(turn):
    evidence = turn("abtest", e("rate_control"), e("rate_variant"))
    assert statuses("The variant converts at 5.1 %.", evidence) == [("5.1 %", CONTRADICTED)]
    assert statuses("The variant converts at 4.71 %.", evidence) == [("4.71 %", SUPPORTED)]


def test_a_total_in_prose_after_a_sql_query_is_tied_to_its_cell(turn):
    sql = "SELECT status, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY status"
    evidence = turn("orders", ("query_sql", {"connection": "con", "sql": sql}))
    # paid: 4 orders, 2191.25 in total; open: 1, 980.0; refunded: 1, 75.25
    assert statuses("Paid orders total $2,911.25 over 4 orders.", evidence) == [
        ("$2,911.25", CONTRADICTED),
        ("4", SUPPORTED),
    ]
    assert statuses("Paid orders total $2,191.25.", evidence) == [("$2,191.25", SUPPORTED)]


# -- false flags: right numbers that got a ⚠ -----------------------------------------------------------------
def test_scale_words_are_read(turn):
    evidence = turn("big", e("big.revenue.sum()"), e("big.groupby('region').revenue.sum()"))
    # 3,012,345.67 in all; south 301,586.4
    assert statuses("The total revenue is 3.01 million.", evidence) == [("3.01 million", SUPPORTED)]
    assert statuses("South brought in 0.3 million.", evidence) == [("0.3 million", SUPPORTED)]
    assert statuses("The total revenue is 3.9 million.", evidence) == [("3.9 million", CONTRADICTED)]


def test_a_percent_header_makes_its_cells_percentages(turn):
    evidence = turn("sales", e("sales.region.value_counts(normalize=True)"))
    table = "| region | share (%) |\n|---|---|\n| north | 30 |\n| south | 30 |\n| east | 20 |\n| west | 20 |"
    assert statuses(table, evidence) == [
        ("30", SUPPORTED),
        ("30", SUPPORTED),
        ("20", SUPPORTED),
        ("20", SUPPORTED),
    ]


def test_a_weighted_average_is_not_the_plain_mean(turn):
    evidence = turn("big", e("big.price.mean()"), e("(big.price * big.qty).sum() / big.qty.sum()"))
    found = check(
        "The average price weighted by quantity is 11.00; the plain average price is 11.75.", evidence
    )
    assert [r.status for r in found.receipts] == [SUPPORTED, SUPPORTED]
    # the model's own (right) weighted average, where the turn computed only the plain mean: not found, no ⚠
    found = check("The average price weighted by quantity is 11.00.", turn("big", e("big.price.mean()")))
    assert [r.status for r in found.receipts] == [NOT_FOUND]


# -- "found" that meant nothing ------------------------------------------------------------------------------
def test_a_small_integer_in_the_picture_is_not_support(turn):
    found = check("Sales has 3 rows and a mean price of about 7.", turn("sales"))
    assert [(r.number, r.status) for r in found.receipts] == [("3", CONTRADICTED), ("7", NOT_FOUND)]


def test_code_list_markers_and_versions_are_not_counted(turn):
    answer = (
        "1. Load it:\n\n```\nsales = pd.read_csv('s.csv', nrows=10)\nsales.head(3)\n```\n"
        "2. In pandas 2.2 (or Python 3.x) `sales.head(10)` shows (1) the first rows."
    )
    assert check(answer, turn("sales")).receipts == []


def test_a_turn_where_no_tool_ran_says_so(turn):
    found = check("sales has 10 rows and 4 columns.", turn("sales"))
    assert found.summary() == "receipts: no tool ran this turn · 2 of 2 numbers found in the session picture"
    with_tool = check("sales has 10 rows.", turn("sales", e("len(sales)")))
    assert with_tool.summary() == "receipts: 1 of 1 number found in this turn's results"


# -- what /receipts says -------------------------------------------------------------------------------------
def test_each_line_says_what_the_number_was_tied_to_and_why(turn):
    evidence = turn("sales", e("sales.groupby('region').price.mean()"), e("sales.price.mean()"))
    found = check(
        "The average price is 12.75; north averages 12.75. There are 3 cats. North is 0.78 above.", evidence
    )
    assert found.lines() == [
        (
            "⚠ 12.75",
            'mean of price = 11.974, not 12.75 · by "average", "price" · eval_expr(sales.price.mean())',
        ),
        (
            "✓ 12.75",
            'mean of price, north = 12.750000 · by "north", "averages" · '
            "eval_expr(sales.groupby('region')…",
        ),
        ("· 3", "not found · no result of this turn showed it"),
        ("· 0.78", 'not checked: a comparison ("above"), not a value a result states'),
    ]
