"""A model's answer cut to what fits the cursor: code only, one line or the rest of the block, never prose."""

from __future__ import annotations

import pytest

from pyaichat.agent.suggest.fit import fit, wants_block


def test_a_completion_continues_the_line_and_stops_at_its_end() -> None:
    reply = '"net_revenue_eur"].sum()\nprint("done")'
    assert fit(reply, 'sales.groupby("region")[', block=False, echoes=False) == '"net_revenue_eur"].sum()'


def test_a_chat_answer_loses_its_fence_and_what_it_repeated() -> None:
    before = 'sales.groupby("region")['
    fenced = 'Here you go:\n```python\nsales.groupby("region")["net_revenue_eur"].sum()\n```\nHope it helps.'
    assert fit(fenced, before, block=False, echoes=True) == '"net_revenue_eur"].sum()'
    # the word being typed, repeated
    assert fit("groupby('region')", "sales.gro", block=False, echoes=True) == "upby('region')"
    # a completion model is never "de-echoed": its text continues the code as it is
    assert fit("groupby", "x = gro", block=False, echoes=False) == "groupby"


@pytest.mark.parametrize(
    "reply",
    [
        "This groups the sales by region and sums the revenue.",
        "I would use the groupby method here",
        "",
        "   \n",
    ],
)
def test_prose_and_nothing_show_nothing(reply: str) -> None:
    assert fit(reply, "total = sales.", block=False, echoes=True) == ""


def test_the_rest_of_a_block_stops_at_its_end_and_at_code_already_below() -> None:
    before = "for col in sales.columns:"
    reply = "\n    print(col, sales[col].dtype)\n    n += 1\nprint('after the loop')"
    assert fit(reply, before, block=True, echoes=False) == "\n    print(col, sales[col].dtype)\n    n += 1"
    # the code after the cursor already has the second line: the answer stops before repeating it
    after = "\n    n += 1"
    assert fit(reply, before, after, block=True, echoes=False) == "\n    print(col, sales[col].dtype)"


def test_a_block_is_wanted_after_a_colon_or_on_an_empty_line_inside_one() -> None:
    assert wants_block("for x in y:")
    assert wants_block("if ok:  # note")
    assert wants_block("for x in y:\n    ")
    assert not wants_block("x = 1")
    assert not wants_block("d = {'a':")  # a dict literal, not a block
    assert not wants_block("")


def test_an_answer_inside_a_string_is_let_through() -> None:
    assert fit('region")', 'sales.groupby("', block=False, echoes=False) == 'region")'
