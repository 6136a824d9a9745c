"""``printable``: every character that could drive a terminal or disguise text is made visible."""

from __future__ import annotations

import sys
import unicodedata

from pyaichat.printable import printable, printable_data


def test_escape_sequences_become_visible_text():
    assert printable("\x1b[2K\r\x1b[32mok\x1b[0m") == "␛[2K␍␛[32mok␛[0m"
    assert printable("\x1b]8;;https://evil\x1b\\x\x1b]8;;\x1b\\") == "␛]8;;https://evil␛\\x␛]8;;␛\\"
    assert printable("\x9b2J \x07 \x7f") == "⟨U+009B⟩2J ␇ ␡"
    assert printable("a\u202eb\u200bc\U000e0041") == "a⟨U+202E⟩b⟨U+200B⟩c⟨U+E0041⟩"


def test_ordinary_text_is_unchanged():
    text = "Tabs\tand\nnewlines, ünïcödé, 中文, emoji 👨\u200d👩\u200d👧, a ZWNJ in می\u200cخواهم"
    assert printable(text) is text
    assert printable("windows\r\nline ends\r\n") == "windows\nline ends\n"


def test_every_control_and_format_character_is_caught():
    """The hand-written ranges match Unicode's categories Cc and Cf (less ZWNJ/ZWJ), plus Zl and Zp."""
    missed = []
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        category = unicodedata.category(ch)
        unsafe = (category == "Cc" and ch not in "\n\t") or category in ("Zl", "Zp")
        unsafe = unsafe or (category == "Cf" and ch not in "\u200c\u200d")
        if unsafe and printable(ch) == ch:
            missed.append(hex(code))
    assert missed == []


def test_events_and_nested_data_are_cleaned_without_copying_clean_ones():
    from pyaichat.agent.events import QuestionEvent

    event = QuestionEvent(
        call_id="1", source="evil", message="\x1b]0;t\x07hi", fields=[("pw\x1b[8m", "text")]
    )
    cleaned = printable_data(event)
    assert cleaned.message == "␛]0;t␇hi" and cleaned.fields == [("pw␛[8m", "text")]
    clean = QuestionEvent(call_id="1", source="s", message="plain")
    assert printable_data(clean) is clean


def test_a_proposal_on_its_panel_is_cleaned_and_the_proposal_itself_left_as_it_is():
    from pyaichat.agent.events import ApprovalRequiredEvent
    from pyaichat.proposal import Proposal

    proposal = Proposal.of_code("x = 1  # \x1b[2K", "Tidy\x1b]8;;evil\x07 up.", source="evil\u202eagent")
    cleaned = printable_data(ApprovalRequiredEvent(proposal=proposal)).proposal
    assert cleaned.code == "x = 1  # ␛[2K" and cleaned.explanation == "Tidy␛]8;;evil␇ up."
    assert cleaned.source == "evil⟨U+202E⟩agent" and cleaned.call_id == proposal.call_id
    assert proposal.code == "x = 1  # \x1b[2K"  # the proposal that runs is the one proposed
