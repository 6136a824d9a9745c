"""``literal_tags``: a model's HTML-like tags are shown as written by a Markdown renderer; code is untouched.

Each case is rendered the way rich renders an answer (markdown-it with HTML on, the CommonMark preset) before
and after: after, no token is HTML (nothing is hidden), every code block and code span is byte for byte what
the model wrote, and the text the person reads holds every tag.
"""

from __future__ import annotations

import io

import pytest
from markdown_it import MarkdownIt
from rich.console import Console

from pyaichat.literal_tags import literal_tags
from pyaichat.repl.render import answer_markdown

CASES = [
    "The answer is <data>42</data> rows.",
    "<data>\nmerged has 0 rows because the keys differ.\n</data>\n\nSo fix the keys.",
    '<data source="df">\nid,name\n1,Ann\n</data>',
    "It says <redacted openai key> where the key was.",
    "An unclosed <data> swallows\n\nthe next paragraph, and <div>\nthis one too.",
    "<!-- a comment --> and <?php ?> and <![CDATA[x]]> and <!DOCTYPE html>",
    "- first <b>bold</b>\n- second\n\n  <data>in the item</data>",
    "| col | value |\n|---|---|\n| <x> | 1 |",
    "> quoted <data>here</data>",
]
CODE = [
    "Run `df[df.x < 3]` then `<data>` stays.",
    "```html\n<div>kept</div>\n```\nafter <data>",
    "~~~\n<data>\n~~~",
    "Text\n\n    <indented code>\n\nand <data>.",
    "``code with ` and <b>`` then <b>",
    "  ```python\n  if a <b:\n  ```\n<data>",
]


def html_tokens(text: str) -> list[str]:
    found = []
    for token in MarkdownIt("commonmark").enable("table").parse(text):
        if token.type == "html_block":
            found.append(token.content)
        for child in token.children or []:
            if child.type == "html_inline":
                found.append(child.content)
    return found


def code_of(text: str) -> list[str]:
    found = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type in ("fence", "code_block"):
            found.append(token.content)
        for child in token.children or []:
            if child.type == "code_inline":
                found.append(child.content)
    return found


def shown(text: str) -> str:
    out = io.StringIO()
    Console(file=out, width=200, no_color=True).print(answer_markdown(text))
    return out.getvalue()


@pytest.mark.parametrize("text", CASES + CODE)
def test_nothing_is_html_any_more_and_code_is_untouched(text: str) -> None:
    escaped = literal_tags(text)
    assert html_tokens(escaped) == []
    assert code_of(escaped) == code_of(text)


@pytest.mark.parametrize("text", CASES)
def test_the_person_reads_every_tag(text: str) -> None:
    assert html_tokens(text), "the case must hide something without literal_tags"
    screen = " ".join(shown(text).split())
    for tag in ("<data>", "</data>", "<redacted openai key>", "<div>", "<!-- a comment -->", "<x>", "<b>"):
        if tag in text:
            assert tag in screen, (tag, screen)


def test_text_without_tags_comes_back_as_it_was() -> None:
    for text in ("x < 3 and y > 2", "a <3 b", "see <https://example.org> or <ann@example.org>", "no tags"):
        assert literal_tags(text) == text
    assert literal_tags("already \\<data> escaped") == "already \\<data> escaped"
