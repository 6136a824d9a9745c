"""Suggestions in a kernel session: the facts about the names on the line are gathered by the local runtime in
the kernel (an operation of ``runtime.kernel_link``), masked there; the suggestion never waits for a kernel
the prompt is talking to."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakes.suggest_model import WAIT, Model, Screen
from pyaichat.agent.suggest import Suggester

SECRET_KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"


def test_facts_come_from_the_kernels_objects_masked_before_they_leave_it(runtime):
    runtime.run(
        "import pandas as pd\n"
        f"api_key = {SECRET_KEY!r}\n"
        "orders = pd.DataFrame({'order_id': ['00042'], 'total_eur': [9.5]})\n"
        "orders['ship' + '_country'] = ['FR']"
    )
    reply = runtime.kernel.request(
        {"op": "suggestion_facts", "args": {"before": "orders.merge(api_key, ", "after": ""}, "settings": {}}
    )
    assert SECRET_KEY not in json.dumps(reply)
    found = runtime.suggestion_facts("orders.merge(api_key, ", "")
    assert any(
        f.startswith("orders: DataFrame 1×3: order_id str, total_eur float64, ship_country str")
        for f in found["facts"]
    ), found
    assert "api_key: <redacted: secret-looking name>" in found["facts"]
    assert found["inputs"] and SECRET_KEY not in json.dumps(found)


def test_a_kernel_the_prompt_is_talking_to_gives_no_facts_rather_than_a_wait(runtime):
    got: list[dict] = []
    with runtime.kernel.lock:  # the prompt's own request (completion, Enter) holds the connection
        worker = threading.Thread(target=lambda: got.append(runtime.suggestion_facts("orders.", "")))
        worker.start()
        worker.join(WAIT)
        assert not worker.is_alive()
    assert len(got) == 1 and got[0]["facts"] == [] and got[0]["inputs"] == []
    assert "busy" in got[0]["note"]


def test_the_engine_asks_with_the_kernels_facts(runtime):
    runtime.run("import pandas as pd\nsales = pd.DataFrame({'region_code': ['N'], 'net_eur': [1.0]})")
    runtime.settings.replace(suggest_model="openai/x", suggest_api_base="http://127.0.0.1:9/v1")
    model, screen = Model('"net_eur"].sum()'), Screen()
    engine = Suggester(lambda: runtime.config, runtime, ask=model, pause=0.01)
    try:
        engine.edit('sales.groupby("region_code")[', "", screen)
        assert screen.arrived.wait(WAIT)
        assert "# sales: DataFrame 1×2: region_code str, net_eur float64" in model.requests[0].prompt
        assert screen.shown[0][2] == '"net_eur"].sum()'
    finally:
        engine.close()
