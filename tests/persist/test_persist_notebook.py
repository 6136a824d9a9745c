"""Saving the session as .ipynb / .py / .md: order, the assistant's marks, masking, and a saved notebook that
runs in a real kernel (nbclient) to the same outputs the session showed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pyaichat import Session
from pyaichat.extras import this_python
from pyaichat.persist import PersistError
from pyaichat.persist.notebook import (
    export,
    timeline,
    to_notebook,
    to_percent_script,
    to_transcript,
)
from pyaichat.records import ApprovedProposal, AssistantTurn
from timeouts import HANG_GUARD

nbformat = pytest.importorskip("nbformat")

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
APPROVED_AT = "2025-03-04T10:11:12+0000"


@pytest.fixture
def work(capsys):
    """A session as a user would leave it: inputs, two questions, one approved proposal."""
    s = Session()
    inputs = [
        "import pandas as pd",  # 1
        "df = pd.DataFrame({'a': [1, 2, 3], 'b': ['x', 'y', 'z']})",  # 2
        "print('rows:', len(df)); df",  # 3
        "import sys; print('careful', file=sys.stderr); df.a.sum()",  # 4
        "df.missing",  # 5 (fails)
        f"api_key = {SECRET!r}",  # 6
        "df['c'] = df.a * 2\ndf.c.tolist()",  # 7 (the approved proposal)
        "for i in range(2):\n    print(i)",  # 8
    ]
    for src in inputs:
        s.run(src)
    capsys.readouterr()
    turns = [
        AssistantTurn(
            "what is in @df?",
            "Three rows, columns a and b.",
            after_input=3,
            end_input=3,
            steps=[{"name": "get_repr", "detail": "df", "size": 120, "ok": True}],
        ),
        AssistantTurn(
            f"add a column c = 2a (my key is {SECRET})",
            "Added c.",
            after_input=6,
            end_input=7,
            note="stopped by max_steps",
        ),
    ]
    proposals = [ApprovedProposal(s.history[6].source, "openai/test-model", APPROVED_AT, 7, "double a")]
    return s, turns, proposals


def test_cells_are_in_the_order_things_happened(work):
    s, turns, proposals = work
    cells = timeline(s.history, turns, proposals)
    kinds = [(c.kind, c.entry.number if c.entry is not None else None) for c in cells]
    assert kinds == [
        ("code", 1),
        ("code", 2),
        ("code", 3),
        ("markdown", None),  # question 1 and its answer: nothing ran in between, one cell
        ("code", 4),
        ("code", 5),
        ("code", 6),
        ("markdown", None),  # question 2
        ("code", 7),  # the approved code, as the input it ran as
        ("markdown", None),  # answer 2
        ("code", 8),
    ]
    assert cells[3].source == "**Question:** what is in @df?\n\n**Answer:** Three rows, columns a and b."
    assert cells[8].proposal is proposals[0]


def test_notebook_cells_outputs_and_marks(work):
    s, turns, proposals = work
    nb = to_notebook(s.history, turns, proposals)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == [1, 2, 3, 4, 5, 6, 7, 8]
    by_n = {c.execution_count: c for c in code}
    assert [o.output_type for o in by_n[3].outputs] == ["stream", "execute_result"]
    assert by_n[3].outputs[0].text == "rows: 3\n"
    assert by_n[3].outputs[1].data["text/plain"] == repr(s.namespace["df"].drop(columns="c"))
    assert [(o.output_type, getattr(o, "name", None)) for o in by_n[4].outputs] == [
        ("stream", "stderr"),
        ("execute_result", None),
    ]
    error = by_n[5].outputs[0]
    assert error.output_type == "error" and error.ename == "AttributeError"
    assert "missing" in error.evalue
    assert by_n[5].metadata["tags"] == ["raises-exception"]
    assert by_n[7].metadata["pyaichat"] == {
        "source": "assistant",
        "model": "openai/test-model",
        "approved_at": APPROVED_AT,
    }
    assert "pyaichat" not in by_n[6].metadata
    assert by_n[8].outputs[0].text == "0\n1\n"


def test_secrets_are_masked_everywhere(work, tmp_path):
    s, turns, proposals = work
    for ext in ("ipynb", "py", "md"):
        report = export(tmp_path / f"s.{ext}", s.history, turns, proposals)
        text = Path(report.path).read_text()
        assert SECRET not in text, ext
    nb = nbformat.read(tmp_path / "s.ipynb", as_version=4)
    assert "<redacted" in nb.cells[7].source  # the input that bound api_key


def test_percent_script_reads_back_as_the_same_cells(work, tmp_path):
    jupytext = pytest.importorskip("jupytext")
    s, turns, proposals = work
    text = to_percent_script(s.history, turns, proposals)
    assert text.count("# %%") == 12
    back = jupytext.reads(text, fmt="py:percent")
    nb = to_notebook(s.history, turns, proposals)
    assert [c.cell_type for c in back.cells] == [c.cell_type for c in nb.cells]
    raised = [i for i, c in enumerate(nb.cells) if "raises-exception" in c.metadata.get("tags", [])]
    assert len(raised) == 1  # df.missing: in the script it runs inside try, so that the script goes on
    assert [c.source for i, c in enumerate(back.cells) if i not in raised] == [
        c.source for i, c in enumerate(nb.cells) if i not in raised
    ]
    assert back.cells[raised[0]].source.startswith("try:\n    df.missing\nexcept Exception as error:")
    marked = [c.metadata for c in back.cells if "pyaichat" in c.metadata]
    meta = {"source": "assistant", "model": "openai/test-model", "approved_at": APPROVED_AT}
    assert marked == [{"pyaichat": meta}]
    assert [c.metadata.get("tags") for c in back.cells if "tags" in c.metadata] == [["raises-exception"]]


def test_the_saved_script_runs_to_the_sessions_state(tmp_path, capsys):
    """``python FILE.py`` gets past an input that failed to parse, one that raised after doing some work,
    and an undone proposal, and ends where the session stood."""
    s = Session()
    for src in [
        "x = = 2",  # does not parse: a comment in the script
        "total = 10\ntotal += 5\n1 / 0",  # raised after binding total: runs inside try
        'label = """two\n  lines"""',  # a multi-line string stays as it was
        "total *= 2",
        "undone = 1",  # approved, then /undo: commented out
        "print(total, repr(label), 'undone' in globals())",
    ]:
        s.run(src)
    capsys.readouterr()
    proposals = [ApprovedProposal("undone = 1", "m", APPROVED_AT, 5, undone="took back undone")]
    path = tmp_path / "session.py"
    path.write_text(to_percent_script(s.history, [], proposals))
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["ZeroDivisionError: division by zero", "30 'two\\n  lines' False"]
    assert "# x = = 2" in path.read_text()


def test_transcript_is_what_save_has_always_written():
    from pyaichat.agent.loop import StepRecord, TurnResult

    results = [
        TurnResult(
            question="why?",
            answer="because",
            steps=[
                StepRecord("llm", "model", 10.0, detail="ok"),
                StepRecord("tool", "get_repr", 1.0, size=1234, ok=True, detail="df"),
                StepRecord("tool", "eval_expr", 1.0, size=5, ok=False, detail="x.y"),
            ],
            note="stopped by max_steps",
        ),
        TurnResult(question="and?", answer="", error="The model could not be reached."),
    ]
    turns = [AssistantTurn.from_result(r, after_input=0) for r in results]
    assert to_transcript(turns) == (
        "# pyaichat transcript\n\n## Question 1\n\nwhy?\n\nSteps:\n"
        "- `get_repr(df)` → 1,234 chars\n- `eval_expr(x.y)` → 5 chars (failed)\n\n"
        "### Answer\n\nbecause\n\n_stopped by max_steps_\n\n"
        "## Question 2\n\nand?\n\n### Answer\n\n(no answer)\n\n_Error: The model could not be reached._\n"
    )


def test_unknown_format_and_unwritable_place(tmp_path, work):
    s, turns, proposals = work
    with pytest.raises(PersistError, match=r"use a \.ipynb, \.py or \.md file name"):
        export(tmp_path / "s.docx", s.history, turns, proposals)
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(PersistError, match="Cannot create the folder"):
        export(blocker / "sub" / "s.ipynb", s.history, turns, proposals)


def test_a_notebook_with_nothing_yet_is_valid(tmp_path):
    report = export(tmp_path / "empty.ipynb")
    nb = nbformat.read(report.path, as_version=4)
    assert len(nb.cells) == 1 and nb.cells[0].cell_type == "markdown"
    assert json.loads(Path(report.path).read_text())["metadata"]["kernelspec"]["name"] == "python3"


def test_the_save_report_says_how_to_run_what_it_wrote(tmp_path, monkeypatch):
    import importlib.util

    notebook = export(tmp_path / "s.ipynb")
    # ipykernel and nbclient are both in the test extras; the command is this environment's, so it works
    # where the environment is not activated (no venv on PATH), as the .py line's interpreter does
    run = notebook.text().partition("Run it with: ")[2]
    assert run.endswith(f" execute {notebook.path}")
    command = run.split()
    assert os.path.samefile(command[0], Path(sys.executable).parent / "jupyter")
    bare = {**os.environ, "PATH": "/usr/bin:/bin"}
    done = subprocess.run(command, cwd=os.getcwd(), env=bare, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "ipykernel" else real(n, *a))
    assert "(needs ipykernel: " in notebook.text() and "-m pip install ipykernel)" in notebook.text()
    script = export(tmp_path / "s.py")
    assert script.text().endswith(f"Run it with: {this_python()} {script.path}")  # the one with pandas
    assert os.path.samefile(this_python(), sys.executable)
    assert "Run it" not in export(tmp_path / "s.md").text()


def _text_outputs(cell) -> dict[str, str]:
    """A code cell's outputs as text by kind (a kernel may split one stream into several messages)."""
    out: dict[str, str] = {}
    for o in cell.outputs:
        if o.output_type == "stream":
            out[o.name] = out.get(o.name, "") + o.text
        elif o.output_type == "execute_result":
            out["result"] = o.data["text/plain"]
        elif o.output_type == "error":
            out["error"] = f"{o.ename}: {o.evalue}"
    return out


@pytest.mark.e2e
def test_the_saved_notebook_runs_in_a_real_kernel_to_the_same_outputs(work, tmp_path):
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    s, turns, proposals = work
    report = export(tmp_path / "session.ipynb", s.history, turns, proposals)
    saved = nbformat.read(report.path, as_version=4)
    ran = nbformat.read(report.path, as_version=4)
    for cell in ran.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    client = nbclient.NotebookClient(
        ran, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    saved_code = [c for c in saved.cells if c.cell_type == "code"]
    ran_code = [c for c in ran.cells if c.cell_type == "code"]
    assert len(ran_code) == 8
    for before, after in zip(saved_code, ran_code, strict=True):
        want, got = _text_outputs(before), _text_outputs(after)
        if "error" in want:
            assert got["error"].split(":")[0] == want["error"].split(":")[0] == "AttributeError"
            continue
        assert got == want, before.source
    assert _text_outputs(ran_code[6])["result"] == "[2, 4, 6]"  # the assistant's code ran as it did


def test_a_secret_value_quoted_by_an_error_is_masked_in_every_saved_form(tmp_path, capsys):
    """The assignment is masked; so is the same value wherever else the file would hold it (an error message
    that quotes it, a print), in the notebook, the script and the resume file alike."""
    from pyaichat.persist.resume import save_resume

    s = Session()
    s.run('db_password = "Tr0ub4dor-and-3"')
    s.run("int(db_password)")  # ValueError: invalid literal for int() with base 10: 'Tr0ub4dor-and-3'
    s.run("print(db_password[::-1][::-1])")
    capsys.readouterr()
    assert "Tr0ub4dor-and-3" in (s.history[-2].stderr or "") + (s.history[-1].stdout or "")
    for ext in ("ipynb", "py"):
        report = export(tmp_path / f"s.{ext}", s.history, [], [])
        text = Path(report.path).read_text()
        assert "Tr0ub4dor" not in text and "<redacted" in text, ext
    notebook = Path(tmp_path / "s.ipynb").read_text()
    assert "invalid literal for int() with base 10: '<redacted secret value>'" in notebook
    save_resume([], s.history, path=tmp_path / "last-session.json")
    assert "Tr0ub4dor" not in (tmp_path / "last-session.json").read_text()


def test_a_tag_in_an_answer_is_shown_and_does_not_swallow_what_follows(work):
    """An answer with an unclosed ``<data>`` hid itself and the questions after it when the saved transcript
    or notebook was rendered; a ``<redacted …>`` mark (the masker's) vanished the same way."""
    from markdown_it import MarkdownIt

    s, _, _ = work
    turns = [
        AssistantTurn("what is in <data>?", f"<data>\nthree rows, key {SECRET}", after_input=2, end_input=2),
        AssistantTurn("and the next question?", "Shown.", after_input=3, end_input=3),
    ]

    def rendered(markdown: str) -> tuple[str, list[str]]:
        tokens = MarkdownIt("commonmark").parse(markdown)
        html = [t.type for t in tokens if t.type == "html_block"]
        html += [c.type for t in tokens for c in t.children or [] if c.type == "html_inline"]
        text = " ".join(c.content for t in tokens for c in t.children or [] if c.type == "text")
        return text, html

    text, html = rendered(to_transcript(turns))
    assert html == [] and "Question 2" in text and "and the next question?" in text
    assert "<data>" in text and "three rows, key <redacted openai key>" in text
    cells = [c.source for c in to_notebook(s.history, turns).cells if c.cell_type == "markdown"]
    for source in cells:
        assert rendered(source)[1] == [], source
    shown = " ".join(rendered(c)[0] for c in cells)
    assert "what is in <data>?" in shown and "<redacted openai key>" in shown and "Shown." in shown
