"""The repetition guard: loops are noticed within a few repeats, ordinary answers never are."""

from __future__ import annotations

import pytest
from repetition_corpus import LEGIT, LOOPS

from pyaichat.agent.repetition import RepetitionGuard


def stream(text: str, size: int = 7) -> RepetitionGuard:
    guard = RepetitionGuard()
    for start in range(0, len(text), size):
        if guard.feed(text[start : start + size]):
            break
    return guard


def test_the_same_sentence_over_and_over_is_cut_after_the_first_copy():
    line = "The type of the variable `df` is `NoneType`.\n"
    guard = stream("Let me see.\n" + line * 50)
    assert guard.looping
    assert len(guard.text) < len("Let me see.\n" + line * 5)  # noticed within a few repeats
    assert guard.kept() == "Let me see.\n" + line.strip()


def test_a_loop_without_newlines_is_noticed_too():
    guard = stream("Answer: " + "the revenue is highest in the north region, " * 40)
    assert guard.looping
    assert guard.kept().count("north region") == 1
    assert len(guard.text) < 400


def test_a_counting_loop_is_one_loop():
    text = "".join(f"Step {i}: check the value of df again.\n" for i in range(1, 60))
    guard = stream(text)
    assert guard.looping and guard.kept() == "Step 1: check the value of df again."


def test_one_word_repeated_needs_many_copies():
    assert not stream("no no no no no, that is wrong.").looping
    assert stream("no " * 40).looping


def test_ordinary_answers_are_not_loops():
    answer = (
        "`merged` is empty because `df.id` holds strings and `other.id` holds integers.\n\n"
        "| region | revenue |\n|---|---|\n| north | 10 |\n| south | 20 |\n| east | 5 |\n\n"
        "```python\nfor i in range(3):\n    print(i)\n    print(i)\n    print(i)\n    print(i)\n```\n"
        "Fix it with `df['id'] = df['id'].astype(int)` and merge again.\n"
    )
    guard = stream(answer * 1)
    assert not guard.looping and guard.kept() == answer


def test_short_repeated_lines_such_as_code_and_fences_are_not_loops():
    text = "    return None\n" * 8 + "```\n" * 8 + "|---|---|\n" * 8
    assert not stream(text).looping


@pytest.mark.parametrize("name", list(LOOPS))
def test_a_loop_said_in_other_words_is_cut_within_a_few_repeats_keeping_its_first_round(name: str) -> None:
    """Issue 50: a looping apology went on for 709 tokens (25 s): no line and no run of words repeated
    exactly. Each loop of the corpus is cut before half of it went by, keeping its first round whole."""
    text, start = LOOPS[name]
    guard = stream(text)
    assert guard.looping
    assert len(guard.text) < len(text) / 2
    assert guard.kept().startswith(start)


@pytest.mark.parametrize("name", list(LEGIT))
def test_answers_that_repeat_their_shape_are_kept_whole(name: str) -> None:
    """Tables (rows that differ by their numbers), lists, enumerations, steps and code repeat their shape
    because that is what they are."""
    guard = stream(LEGIT[name])
    assert not guard.looping, guard.kept()[-200:]
