"""Context: the system prompt (from a wheel too), the bounded picture, pins, memory and masking."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from fakes.sent import approx_tokens
from pyaichat.agent.assistant import Front
from pyaichat.agent.context import (
    load_system_prompt,
    make_masker,
    mask_messages,
    pinned_names,
)
from pyaichat.capabilities.picture import MAX_VARS, session_picture

ROOT = Path(__file__).resolve().parents[2]


def sent_text(request: dict) -> str:
    """Everything a request told the model (system prompt, session picture, question)."""
    return "\n".join(str(m.get("content")) for m in request["messages"])


def test_system_prompt_comes_from_prompts_folder():
    text = load_system_prompt()
    assert text == (ROOT / "prompts" / "system.md").read_text(encoding="utf-8")
    assert "propose_code" in text and "run_python" in text


@pytest.mark.e2e
def test_system_prompt_reaches_an_installed_wheel(tmp_path):
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(ROOT)],
        capture_output=True,
        text=True,
    )
    if build.returncode != 0:
        pytest.skip(f"cannot build a wheel here (no hatchling?): {build.stderr.strip()[-200:]}")
    (wheel,) = (tmp_path / "dist").glob("pyaichat-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        assert "pyaichat/prompts/system.md" in zf.namelist()
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
    )
    code = (
        "import pyaichat, sys; from pyaichat.agent.context import load_system_prompt; "
        "assert pyaichat.__file__.startswith(sys.argv[1]), pyaichat.__file__; "
        "print(load_system_prompt(), end='')"
    )
    out = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            f"import sys; sys.path.insert(0, {str(target)!r}); " + code,
            str(target),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == (ROOT / "prompts" / "system.md").read_text(encoding="utf-8")


def test_picture_lists_variables_inputs_and_the_last_error(session):
    session.run("import pandas as pd")
    session.run("df = pd.DataFrame({'id': ['1', '2'], 'v': [1, 2]})\nother = pd.DataFrame({'id': [1, 2]})")
    session.run("merged = df.merge(other, on='id')")
    text = session_picture(session, session.config)
    assert "df: DataFrame 2×2" in text
    assert "[3] merged = df.merge(other, on='id')  → ✗ ValueError" in text
    assert "Last error (input [3]): ValueError" in text
    assert "failing expression: df.merge(other, on='id')" in text


def test_picture_is_bounded_for_many_variables_and_big_data(session):
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    for i in range(10_000):
        session.namespace[f"v{i}"] = i
    session.namespace["big"] = pd.DataFrame({"a": np.zeros(1_000_000), "b": np.ones(1_000_000)})
    text = session_picture(session, session.config)
    assert approx_tokens(text) <= 2000
    assert f"… and {10_001 - MAX_VARS:,} more" in text
    assert "big: DataFrame 1,000,000×2" in text  # most recently defined names come first


def test_picture_hides_values_of_secret_names(assistant, fake, session):
    session.run("api_token = 'abc123abc123'\npassword = 'hunter2'")
    assert "api_token: <redacted" in session_picture(session, session.config)
    fake.text("ok")
    assistant.ask("what is set?", Front(lambda e: None, lambda e: None))
    system = sent_text(fake.requests[0])
    assert "abc123abc123" not in system and "hunter2" not in system
    assert "api_token: <redacted" in system


def test_pinned_names():
    assert pinned_names("why is @merged empty? compare @df.id and @merged, not me@host") == [
        "merged",
        "df.id",
    ]


def test_pinned_variable_summary_is_in_the_turn_context(assistant, fake, session):
    session.run("merged = [1, 2, 3]")
    fake.text("ok")
    assistant.ask("why @merged?", Front(lambda e: None, lambda e: None))
    system = sent_text(fake.requests[0])
    assert "## Pinned by the user\n### merged\n" in system and "[1, 2, 3]" in system


def test_mask_messages_masks_content_and_tool_arguments():
    mask = make_masker(None)
    msgs = [
        {"role": "user", "content": "key sk-proj-abcdefghijklmnopqrstuvwxyz0123"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "1",
                    "function": {
                        "name": "eval_expr",
                        "arguments": '{"expr": "\'sk-proj-abcdefghijklmnopqrstuvwxyz0123\'"}',
                    },
                }
            ],
        },
    ]
    out = mask_messages(msgs, mask)
    assert "abcdefghijklmnopqrstuvwxyz0123" not in str(out)
    assert "abcdefghijklmnopqrstuvwxyz0123" in str(msgs)  # the originals are untouched


def test_mask_messages_masks_the_text_parts_of_a_message_and_leaves_images_alone():
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    msgs = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "sk-proj-abcdefghijklmnopqrstuvwxyz0123"}, image],
        }
    ]
    (out,) = mask_messages(msgs, make_masker(None))
    assert "abcdefghijklmnopqrstuvwxyz0123" not in out["content"][0]["text"]
    assert out["content"][1] == image


def test_a_new_last_error_is_marked_as_new(assistant, fake, session):
    session.run("1 / 0")
    fake.text("a").text("b").text("c")
    for question in ("one", "two"):
        assistant.ask(question, Front(lambda e: None, lambda e: None))
    session.run("[][1]")
    assistant.ask("three", Front(lambda e: None, lambda e: None))
    systems = [sent_text(r) for r in fake.requests]
    assert "Last error (input [1]): ZeroDivisionError" in systems[0]
    assert "Last error (input [1]): ZeroDivisionError" in systems[1]
    assert "Last error (input [2], new since the previous question): IndexError" in systems[2]


def test_library_frames_in_the_picture_show_the_package_path_only(session):
    pd = pytest.importorskip("pandas")
    session.namespace["pd"] = pd
    session.run("pd.DataFrame({'a': [1]})['nope']")
    text = session_picture(session, session.config)
    assert "pandas/core/" in text and "site-packages" not in text
