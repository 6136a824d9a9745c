"""``/suggest MODEL|off``, and the suggestions' quiet line in ``/trace`` and their tokens in ``/cost``."""

from __future__ import annotations

import time

from fakes.suggest_model import WAIT, Clock, Model, Screen
from pyaichat.agent.suggest import Suggester
from pyaichat.commands import dispatch, names
from pyaichat.errors import LLMServerError


def test_a_model_string_litellm_cannot_place_is_refused_by_suggest_as_by_model(ctrl, recorder):
    """Checked before anything is sent — /suggest with the helper process's litellm, /model with the
    assistant's — in the same sentence, and the setting stays as it was."""
    try:
        dispatch(ctrl, "/suggest foo")
        refused = recorder.of("notice")[-1]
        assert refused.level == "warning" and refused.text == (
            "pyaichat cannot tell which provider serves 'foo': use a litellm model string such as "
            "gpt-4o-mini, anthropic/<model>, ollama/<model> or openai/<model> with --api-base. Suggestions "
            "stay off."
        )
        assert ctrl.config.suggest_model is None and ctrl.suggester.helper.starts == 1
        dispatch(ctrl, "/model foo")
        said = recorder.of("notice")[-1].text
        assert said.startswith(refused.text.removesuffix(" Suggestions stay off."))
        assert said.endswith(" The model stays fake/model.") and ctrl.config.model == "fake/model"
        dispatch(ctrl, "/suggest ollama/qwen2.5-coder:1.5b")  # one litellm places: taken
        assert ctrl.config.suggest_model == "ollama/qwen2.5-coder:1.5b"
        dispatch(ctrl, "/suggest bar")
        assert recorder.of("notice")[-1].text.endswith("Suggestions stay with ollama/qwen2.5-coder:1.5b.")
    finally:
        ctrl.close()


def test_suggest_turns_them_on_says_where_the_keys_go_and_off(ctrl, recorder):
    assert "suggest" in names()
    dispatch(ctrl, "/suggest")
    assert recorder.of("notice")[-1].text.startswith("Suggestions are off.")
    dispatch(ctrl, "/suggest ollama/qwen2.5-coder:1.5b")
    assert ctrl.config.suggest_model == "ollama/qwen2.5-coder:1.5b"
    assert "at localhost:11434, this machine" in recorder.of("notice")[-1].text
    dispatch(ctrl, "/suggest codestral/codestral-latest")
    assert "what you type leaves this machine" in recorder.of("notice")[-1].text
    dispatch(ctrl, "/suggest")
    status = recorder.of("notice")[-1].text
    assert "fill-in-the-middle" in status and "0 request(s)" in status
    assert "show only at an interactive prompt" in status  # the test's front end is not interactive
    dispatch(ctrl, "/suggest off")
    assert ctrl.config.suggest_model is None
    assert recorder.of("notice")[-1].text == "Suggestions are off; nothing you type is sent."


def test_a_failed_suggestion_is_one_quiet_line_in_trace_and_tokens_count_in_cost(ctrl, recorder):
    ctrl.settings.replace(ctrl.config.replace(suggest_model="openai/x"))
    ctrl.settings.replace(ctrl.config.replace(suggest_api_base="http://127.0.0.1:9/v1"))
    clock = Clock()
    model = Model("answer", LLMServerError("The provider at x failed (HTTP 500); try again in a moment."))
    ctrl._suggester = Suggester(lambda: ctrl.config, ctrl.runtime, ask=model, pause=0.01, clock=clock)
    try:
        screen = Screen()
        ctrl.suggester.edit("x = ", "", screen)
        clock.now = 1.0
        assert screen.arrived.wait(WAIT)
        ctrl.suggester.edit("x = 1 + ", "", screen)
        clock.now = 2.0
        model.wait_asked()
        model.wait_asked()
        deadline = time.monotonic() + WAIT
        while ctrl.suggester.stats.failed == 0:  # the failure is recorded on the engine's thread
            assert time.monotonic() < deadline
            time.sleep(0.005)
        dispatch(ctrl, "/trace")
        trace = recorder.of("notice")[-1].text
        assert trace.startswith("No question asked yet.")
        assert "Suggestions: 1 failed request(s); last:" in trace and "HTTP 500" in trace
        dispatch(ctrl, "/cost")
        assert "Suggestions: 2 request(s), 30 prompt + 5 completion tokens" in recorder.of("notice")[-1].text
    finally:
        ctrl.close()
