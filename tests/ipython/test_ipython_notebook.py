"""The IPython extension in a Jupyter notebook: cells run by nbclient in a real ipykernel, as Jupyter runs
them, with the scripted server as the model."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e


def _cell_text(cell) -> str:
    """Everything a cell shows: its streams, and the plain or markdown form of its displays."""
    parts = []
    for out in cell.outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("display_data", "execute_result"):
            data = out.get("data", {})
            parts.append(data.get("text/markdown") or data.get("text/plain") or "")
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
    shown = _cell_text(nb.cells[2])
    assert "Preview (ran on a walled copy of your session" in shown, shown
    assert "new total: float64" in shown, shown
    assert "in place" not in shown and "cannot take this back" not in shown, shown
