"""One suggestion from the real local model: the engine asks llama-cpp-python's server with the live frame's
facts (fill-in-the-middle on ``/v1/completions``), counts the tokens, and whatever SmolLM2 answers is cut to
code that fits the cursor, or is nothing. Bounded: one request, a few minutes at most on a busy machine."""

from __future__ import annotations

import threading
import time

from pyaichat.agent.suggest import Suggester
from pyaichat.agent.suggest.fit import fit
from pyaichat.configuration.config import Config
from pyaichat.runtime import LocalRuntime
from pyaichat.session import Session

BOUND = 240.0


def test_a_suggestion_from_the_real_local_model(model_server) -> None:
    config = Config(suggest_model=model_server.model, suggest_api_base=model_server.base_url, seed=1)
    session = Session(config=config)
    session.run("import pandas as pd\nsales = pd.DataFrame({'region': ['N', 'S'], 'revenue': [1.0, 2.5]})")
    engine = Suggester(lambda: config, LocalRuntime(session))
    shown: list[str] = []
    arrived = threading.Event()
    before = 'total = sales.groupby("region")['
    try:
        engine.edit(before, "", lambda b, a, text: (shown.append(text), arrived.set()))
        deadline = time.monotonic() + BOUND
        while engine.stats.answered + engine.stats.failed == 0:
            assert time.monotonic() < deadline, "the local model did not answer in time"
            time.sleep(0.1)
        assert engine.stats.failed == 0, engine.stats.last_failure
        assert engine.stats.requests == 1 and engine.stats.prompt_tokens > 0
        sent = engine.last_request or {}
        assert "# sales: DataFrame 2×2: region str, revenue float64" in sent.get("prompt", "")
        if shown:  # a tiny model may have nothing that fits; what it shows is code that fits the cursor
            assert fit(shown[0], before, block=False, echoes=False) == shown[0]
    finally:
        engine.close()
