"""A question about each kind of data, through the real litellm HTTP path and the scripted server: the facts
reach the model (in the session picture and in the tool results), and nothing is computed or changed."""

from __future__ import annotations

import sqlite3

import pytest

from fakes.openai_server import ScriptedServer
from fakes.recorder import Recorder, never_approve
from pyaichat.agent.assistant import Assistant, Front
from pyaichat.agent.llm import LiteLLMClient
from pyaichat.configuration.config import Config
from pyaichat.session import Session

pytestmark = pytest.mark.e2e


def ask(srv: ScriptedServer, namespace: dict, question: str) -> tuple[str, str, object]:
    """Ask ``question`` over ``namespace``; return the session picture and the first tool result the model
    received, and the answer."""
    config = Config(model="openai/local", api_base=srv.base_url, audit=False, request_timeout=10)
    session = Session(namespace, echo=lambda value: None)
    session.settings.replace(config)
    assistant = Assistant(config, session, llm_factory=lambda cfg: LiteLLMClient(cfg, backoff=0.01))
    result = assistant.ask(question, Front(Recorder().emit, never_approve))
    first, second = srv.bodies[:2]
    picture = next(m["content"] for m in reversed(first["messages"]) if m["role"] == "user")
    tool_result = next(m["content"] for m in second["messages"] if m["role"] == "tool")
    return picture, tool_result, result


def test_a_question_about_a_dask_frame_computes_nothing(srv, partitions):
    ddf = partitions.frame(4)
    srv.tool("get_type", {"expr": "ddf"}).text(
        "It has 4 partitions; its row count is not known until computed."
    )
    picture, tool_result, result = ask(srv, {"ddf": ddf}, "how many rows does ddf have?")
    assert "ddf: Dask DataFrame ?×3 (4 partitions, lazy: not computed): id int64, amount float64" in picture
    assert "rows: not known without computing every partition" in tool_result
    assert "partitions: 4 (lazy: not computed)" in tool_result
    assert result.answer.startswith("It has 4 partitions")
    assert partitions.built == []


def test_a_question_about_a_lazyframe_sees_its_schema_and_plan(srv):
    pl = pytest.importorskip("polars")
    lf = pl.LazyFrame({"region": ["n", "s"], "amount": [1.0, 2.0]}).filter(pl.col("amount") > 5)
    srv.tool("get_repr", {"expr": "lf"}).text("The filter keeps amount > 5, and no amount is above 2.")
    picture, tool_result, _ = ask(srv, {"lf": lf}, "why is lf.collect() empty?")
    assert "lf: polars LazyFrame ?×2 (lazy: not computed): region String, amount Float64" in picture
    assert 'FILTER col("amount") > 5.0' in tool_result or 'FILTER [(col("amount")) > (5.0)]' in tool_result


def test_a_question_about_a_database_reads_it_read_only(srv, tmp_path):
    conn = sqlite3.connect(tmp_path / "shop.db")
    conn.execute("CREATE TABLE sales (region TEXT, amount REAL)")
    conn.executemany("INSERT INTO sales VALUES (?, ?)", [("north", 10), ("south", 30), ("north", 5)])
    conn.commit()
    conn.execute("INSERT INTO sales VALUES ('pending', 1000)")  # the user's uncommitted row
    sql = "SELECT region, sum(amount) AS total FROM sales GROUP BY region ORDER BY total DESC"
    srv.tool("query_sql", {"connection": "conn", "sql": sql}).text("south sells most (30).")
    picture, tool_result, result = ask(srv, {"conn": conn}, "which region sells most?")
    assert "conn: sqlite3 Connection to shop.db: 1 table/view: sales (query_sql reads it)" in picture
    assert "south   30" in tool_result and "pending" not in tool_result
    assert result.answer == "south sells most (30)."
    assert conn.in_transaction and conn.execute("SELECT count(*) FROM sales").fetchone() == (4,)
    conn.rollback()
    conn.close()


def test_a_question_about_an_empty_plot(srv):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    plt.close("all")
    fig, ax = plt.subplots(num="sales")
    ax.plot(range(10), range(10), label="north")
    ax.set_xlim(50, 60)
    srv.tool("get_figure", {}).text("The x limits 50…60 leave out all the data (0…9).")
    picture, tool_result, _ = ask(srv, {"fig": fig}, "why is my plot empty?")
    assert "Open figures (matplotlib): 1 'sales' (1 axes) — get_figure describes them" in picture
    assert "note: all data of line 'north' lies outside the view limits" in tool_result
    assert ax.get_xlim() == (50.0, 60.0)
    plt.close("all")
