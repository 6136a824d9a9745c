"""The mechanisms that tie a number to the value its words name (issue 46), each on results as the tools print
them (no live session: the text of the result is what the receipts read): percentage points as a difference of
two rates, a count before its noun, a direction checking a sign, a percent of a ratio.

Each test failed on the checker before these mechanisms (the wrong number passed without a ⚠)."""

from __future__ import annotations

from pyaichat.agent.receipts import CONTRADICTED, NOT_FOUND, SUPPORTED, Evidence, Seen, check


def _evidence(*results: tuple[str, str]) -> Evidence:
    """An ``Evidence`` of ``eval_expr`` results: (expression, the text the tool printed)."""
    evidence = Evidence()
    for expr, text in results:
        evidence.add(Seen.of("eval_expr", {"expr": expr}, f"eval_expr({expr})", text))
    return evidence


def statuses(answer: str, evidence: Evidence) -> list[tuple[str, str]]:
    return [(r.number, r.status) for r in check(answer, evidence).receipts]


LIFT = (
    ("rate_variant - rate_control", "float64 0.004946546944306365"),
    ("rate_variant / rate_control - 1", "float64 0.10501097902838263"),
)


# -- percentage points: a difference of two percentages ------------------------------------------------------
def test_points_written_against_the_number_are_read():
    """ "0.59pp" (no space) and "0.59 ppt" are percentage points, not a bare 0.59 nor nothing."""
    evidence = _evidence(*LIFT)
    assert statuses("The difference is 0.59pp.", evidence) == [("0.59pp", CONTRADICTED)]
    assert statuses("The difference is 0.49pp.", evidence) == [("0.49pp", SUPPORTED)]
    assert statuses("The lift is 0.59 ppt.", evidence) == [("0.59 ppt", CONTRADICTED)]


def test_points_are_the_difference_not_the_relative_lift():
    """ "Lift: 0.59 pts" names the lift, but points are the absolute difference (0.49 pp), not the 10.5 %."""
    evidence = _evidence(*LIFT)
    (wrong,) = check("Lift: 0.59 pts.", evidence).receipts
    assert (wrong.status, wrong.tied) == (CONTRADICTED, "rate_variant - rate_control")
    assert statuses("Lift: 0.49 pts.", evidence) == [("0.49", SUPPORTED)]


def test_points_said_as_a_comparison_state_the_difference():
    """ "ahead by 0.59 pp", "a gap of 0.59 pp": a comparison that *is* the difference the results show."""
    evidence = _evidence(*LIFT)
    assert statuses("The variant is ahead by 0.59 percentage points.", evidence) == [
        ("0.59 percentage points", CONTRADICTED)
    ]
    assert statuses("Variant beats control by 0.59 pp.", evidence) == [("0.59 pp", CONTRADICTED)]
    assert statuses("Variant beats control by 0.49 pp.", evidence) == [("0.49 pp", SUPPORTED)]
    assert statuses("The gap is 0.59 pp.", evidence) == [("0.59 pp", CONTRADICTED)]


def test_points_compared_with_rates_alone_are_not_judged():
    """(A guard, not a bug of the old checker.) Only the two rates shown: "0.7 pp higher" is the model's own
    arithmetic, not found (never a ⚠)."""
    evidence = _evidence(
        ("rate_control", "float64 0.04710504549214227"), ("rate_variant", "float64 0.052051592436448635")
    )
    assert statuses("The variant's rate is 0.7 pp higher than control.", evidence) == [("0.7 pp", NOT_FOUND)]


# -- values told apart by their names: the word beside the number picks one ----------------------------------
RATES = (
    ("rate_control", "float64 0.04710504549214227"),
    ("rate_variant", "float64 0.052051592436448635"),
)


def test_swapped_rates_of_two_named_values_are_caught():
    """Both are a "conversion rate"; "control" beside 5.2 % names ``rate_control`` (4.71 %), not the variant's
    5.21 % that the number equals."""
    evidence = _evidence(*RATES)
    assert statuses("Conversion: control 5.2%, variant 4.7%.", evidence) == [
        ("5.2%", CONTRADICTED),
        ("4.7%", CONTRADICTED),
    ]
    assert statuses("Control converts at 5.21% and the variant at 4.71%.", evidence) == [
        ("5.21%", CONTRADICTED),
        ("4.71%", CONTRADICTED),
    ]
    assert statuses("Conversion: control 4.7%, variant 5.2%.", evidence) == [
        ("4.7%", SUPPORTED),
        ("5.2%", SUPPORTED),
    ]


def test_a_value_named_by_both_names_is_not_ruled_out():
    """(A guard for the rule above.) A ratio of signups to visits is named by both words: "signup rate"
    still names it."""
    evidence = _evidence(
        ("signups.sum() / visits.sum()", "float64 0.021703032907336377"), ("signups.sum()", "int64 8182")
    )
    assert statuses("The signup rate is 21.7%.", evidence) == [("21.7%", CONTRADICTED)]
    assert statuses("The signup rate is 2.17%.", evidence) == [("2.17%", SUPPORTED)]


# -- directions: the word says the change's sign -------------------------------------------------------------
TREND = (
    "d = readings.set_index('time').temp_c.resample('D').mean()\n"
    "print(round(d.iloc[0], 2), round(d.iloc[-1], 2))\nprint(round(d.iloc[-1] - d.iloc[0], 2))"
)


def _trend() -> Evidence:
    evidence = Evidence()
    evidence.add(Seen.of("run_python", {"code": TREND}, "run_python(d = …)", "22.09 22.49\n0.41\n"))
    return evidence


def test_a_direction_names_the_change_even_when_its_aggregate_is_beside_it():
    """ "The daily mean fell 0.41": a change of the mean (+0.41), so "fell" is a wrong sign, "rose" right."""
    assert statuses("The daily mean fell 0.41 °C over the two weeks.", _trend()) == [("0.41", CONTRADICTED)]
    assert statuses("The daily mean rose 0.41 °C over the two weeks.", _trend()) == [("0.41", SUPPORTED)]


def test_a_direction_alone_names_the_change():
    """ "It cooled by 0.41 °C": no other word names the change; the direction does, and its sign is wrong."""
    assert statuses("It cooled by 0.41 °C.", _trend()) == [("0.41", CONTRADICTED)]
    assert statuses("It warmed by 0.41 °C.", _trend()) == [("0.41", SUPPORTED)]
    assert statuses("The mean went from 22.09 to 22.49, a 0.4 °C decrease.", _trend())[-1] == (
        "0.4",
        CONTRADICTED,
    )


def test_a_share_of_the_time_past_a_threshold_is_a_value_not_a_bound():
    """ "above the threshold 4.5 % of the time": the threshold is the bound, the 4.5 % a share the turn showed
    (3.47 %); "over 4 % of readings" stays a bound."""
    evidence = _evidence(
        ("(readings.temp_c > threshold).sum()", "int64 35"),
        ("(readings.temp_c > threshold).mean()", "float64 0.034722222222222224"),
    )
    assert statuses("It was above the threshold 4.5% of the time.", evidence) == [("4.5%", CONTRADICTED)]
    assert statuses("It was above the threshold 3.5% of the time.", evidence) == [("3.5%", SUPPORTED)]
    assert statuses("Over 4% of readings were above the threshold.", evidence) != [("4%", CONTRADICTED)]


# -- counts before their noun --------------------------------------------------------------------------------
def test_a_count_before_the_noun_its_rows_are_is_a_count_of_rows():
    """ "holds 100,000 orders, one per row": the noun is what each row is, the count the rows' (10,000);
    "6 columns" beside it stays a count of columns."""
    evidence = _evidence(("len(sales)", "int\n10000"))
    assert statuses("Your DataFrame holds **100,000 orders**, one per row.", evidence) == [
        ("100,000", CONTRADICTED)
    ]
    assert statuses("Your DataFrame holds **10,000 orders**, one per row.", evidence) == [
        ("10,000", SUPPORTED)
    ]


def test_a_row_labelled_by_a_country_code_is_named_by_the_country():
    """A SQL result's rows "US", "JP": "Japan has 3 customers" names the JP row (2 customers)."""
    evidence = Evidence()
    sql = (
        "SELECT c.country, ROUND(SUM(o.amount), 2) AS revenue, COUNT(DISTINCT c.id) AS customers"
        " FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.country ORDER BY revenue DESC"
    )
    text = (
        "4 rows; read-only\ncountry  revenue  customers\nUS       37007.5  4\nJP       26824.9  2\n"
        "UK       22065.5  2\nDE       16332.5  2"
    )
    evidence.add(Seen.of("query_sql", {"connection": "con", "sql": sql}, "query_sql(…)", text))
    assert statuses("Japan has 3 customers.", evidence) == [("3", CONTRADICTED)]
    assert statuses("Germany brought in $26,824.90.", evidence) == [("$26,824.90", CONTRADICTED)]
    assert statuses("Japan has 2 customers.", evidence) == [("2", SUPPORTED)]


def test_a_row_named_after_the_last_number_of_its_clause():
    """ "(33 %) come from the north": the row is named after the number (the north's share is 29.96 %); with
    another number after it, the words after are that one's."""
    evidence = _evidence(
        (
            "sales.region.value_counts(normalize=True)",
            "Series 'proportion': 4 values, dtype float64, index Index\nregion\nnorth    0.2996\n"
            "east     0.2536\nsouth    0.2508\nwest     0.1960",
        )
    )
    assert statuses("about a third of orders (33%) come from the north", evidence) == [("33%", CONTRADICTED)]
    assert statuses("about 30% of orders come from the north", evidence) == [("30%", SUPPORTED)]
    assert statuses("Most orders, 30.0%, come from the north, and 19.6% from the west.", evidence) == [
        ("30.0%", SUPPORTED),
        ("19.6%", SUPPORTED),
    ]


def test_a_count_after_the_rows_is_not_a_count_of_rows():
    """(A guard for the rule above.) "1,200 rows and 3 cats": the rows are the 1,200's, the 3 counts cats."""
    evidence = _evidence(("len(df)", "int\n1200"))
    assert statuses("There are 1,200 rows and 3 cats.", evidence) == [("1,200", SUPPORTED), ("3", NOT_FOUND)]
