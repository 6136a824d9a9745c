"""Replies for the repetition guard: loops as small models fall into them, and answers that repeat their
shape because that is what they are (tables, lists, enumerations, code). Used by ``test_agent_repetition`` and
``benchmarks/repetition.py``.

The loops follow what was seen: issue 50's apology (709 tokens, 25 s, with SmolLM2 behind llama.cpp) said
the same thing in other words, sentence after sentence, on one line; SmolLM2-135M restates a type or a total
with its words shuffled. None of them repeats a line or a run of words exactly.
"""

from __future__ import annotations

import itertools


def _cycle(sentences: list[str], words: int = 520) -> str:
    """The sentences over and over, as a model's stream (spaces between them, no newline), about ``words``
    long (~700 tokens)."""
    out: list[str] = []
    for sentence in itertools.cycle(sentences):
        out.append(sentence)
        if sum(len(s.split()) for s in out) >= words:
            return " ".join(out)
    raise AssertionError("unreachable")


APOLOGY = _cycle(
    [
        "I apologize for the confusion.",
        "It seems that the variable `prices` is not defined in your session.",
        "I apologize for any confusion caused by my previous response.",
        "It appears that the variable `prices` does not exist in the session.",
        "I'm sorry for the confusion in my previous answer.",
        "It looks like the variable `prices` is not defined in the current session.",
        "I apologize for the misunderstanding in my previous response.",
        "It seems that there is no variable named `prices` in your session.",
    ]
)
TYPE_RESTATED = _cycle(
    [
        "The type of the DataFrame is a Python Dataframe.",
        "In Python, the type of the data frame `df` is a DataFrame object.",
        "The type of the DataFrame `df` is a Python DataFrame object.",
        "So the data frame is a Python DataFrame, which is the type of `df`.",
    ]
)
TOTAL_RESTATED = _cycle(
    [
        "The total price is 4.0, which is the sum of 1.5 and 2.5.",
        "So the total of the prices is 4.0, the sum of 1.5 and 2.5.",
        "Therefore the total price is 4.0, as the sum of 1.5 and 2.5.",
    ]
)
LINE_BY_LINE = "\n".join(
    _cycle(
        [
            "I cannot access the file data.csv from here, sorry.",
            "Sorry, I am not able to read the file data.csv from here.",
            "Unfortunately I cannot open the file data.csv from here.",
        ]
    ).split(". ")
)
CHECK_AGAIN = _cycle(
    [
        "Let me check the value of `df` again to be sure.",
        "I will look at the value of `df` once more to be sure.",
        "Let me check `df` again to make sure of its value.",
    ]
)
# name: (the loop, how it starts: the text the guard must keep whole)
LOOPS = {
    "apology on one line (issue 50)": (APOLOGY, APOLOGY.split(" I apologize for the misunderstanding")[0]),
    "a type restated": (TYPE_RESTATED, "The type of the DataFrame is a Python Dataframe."),
    "a total restated": (TOTAL_RESTATED, "The total price is 4.0, which is the sum of 1.5 and 2.5."),
    "a refusal, line by line": (LINE_BY_LINE, "I cannot access the file data.csv from here, sorry"),
    "checking again": (CHECK_AGAIN, "Let me check the value of `df` again to be sure."),
}

LEGIT = {
    "a table": "Here are the totals by region:\n\n| region | revenue | orders |\n|---|---|---|\n"
    + "".join(f"| {r} | {n * 10} | {n} |\n" for n, r in enumerate(["north", "south", "east", "west"] * 6))
    + "\nThe north leads.",
    "a list of columns": "The frame has these columns:\n\n"
    + "".join(
        f"- `{c}`: the {c} of each order, stored as {t}.\n"
        for c, t in [
            ("price", "float64"),
            ("city", "object"),
            ("qty", "int64"),
            ("date", "datetime64"),
            ("region", "category"),
            ("discount", "float64"),
        ]
    )
    + "\nAll of them are filled.",
    "an enumeration with code spans": " ".join(
        f"The column `{c}` has {n} missing values in the data."
        for c, n in zip("abcdefg", [3, 0, 12, 1, 0, 7, 2], strict=True)
    ),
    "an enumeration with numbers": " ".join(
        f"Sales in {m} were {n} units, as the report says."
        for m, n in [("January", 120), ("February", 95), ("March", 130), ("April", 101), ("May", 99)]
    ),
    "an enumeration of names": " ".join(
        f"The city of {c} is the capital and the largest city of {k}."
        for c, k in [("Oslo", "Norway"), ("Lima", "Peru"), ("Bern", "Switzerland"), ("Lisbon", "Portugal")]
    ),
    "steps": "To fix it:\n\n1. Convert the key with `df['id'] = df['id'].astype(int)`.\n"
    "2. Convert the other key with `other['id'] = other['id'].astype(int)`.\n"
    "3. Merge again with `df.merge(other, on='id')`.\n4. Check the result with `len(merged)`.\n",
    "code": "```python\n"
    + "".join(
        f"total_{n} = df[df.month == {n}].price.sum()\nprint('month {n}:', total_{n})\n" for n in range(1, 13)
    )
    + "```\nThat prints each month's total.",
    "a careful explanation": (
        "`merged` is empty because the keys never match. `df.id` holds strings such as '00042', "
        "while `other.id` holds integers such as 42. A merge compares the values as they are, so '00042' "
        "and 42 are different keys. Convert one side before merging, for example with "
        "`df['id'].astype(int)`. After that the merge finds 3 matching rows. The same mismatch would break "
        "a join in SQL too."
    ),
    "a summary that restates once": (
        "The total price is 4.0. It is the sum of the two prices, 1.5 and 2.5. In short, the total price of "
        "the items is 4.0."
    ),
}
