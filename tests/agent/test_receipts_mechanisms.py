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


# -- values told apart by their names: the word beside the number picks one ---------------------------------
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
