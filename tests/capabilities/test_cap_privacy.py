"""Privacy levels are enforced by every capability: at ``schema`` no cell value, list element or string
content leaves through any of them; at ``names`` only names and types do."""

from __future__ import annotations

import pytest
from cap_helpers import make_session

from pyaichat.capabilities import all_capabilities, call

SETUP = """
import numpy as np
import pandas as pd
frame = pd.DataFrame({"label": ["CELLMARK_A", "CELLMARK_B"], "score": [918273.5, 192837.25]})
series = pd.Series(["SERIESMARK_1", "SERIESMARK_2"], name="tags")
words = ["LISTMARK_1", "LISTMARK_2"]
numbers = [48151623, 42424242]
text = "STRINGMARK content here"
blob = b"BYTESMARK"
table = {"who": "DICTMARK_VALUE", 7: 31415926}
bag = {"SETMARK"}
pair = ("TUPLEMARK", 27182818)
matrix = np.array([[11235813, 21345589]])
nested = {"inner": ["NESTEDMARK"]}
class Record:
    "Class documentation is code, not data."
    def __init__(self):
        self.owner = "ATTRMARK"
        self.__doc__ = "DOCMARK in the instance"
    @property
    def upper(self):
        return "PROPMARK"
    def __repr__(self):
        return f"Record(owner={self.owner!r}, REPRMARK)"
record = Record()
PREFIX = "EXCMARK "
LOCAL = "LOCALMARK"
def fail(arg):
    local_text = LOCAL
    raise ValueError(PREFIX + arg)
"""
MARKERS = [
    "CELLMARK",
    "918273",
    "192837",
    "SERIESMARK",
    "LISTMARK",
    "48151623",
    "42424242",
    "STRINGMARK",
    "BYTESMARK",
    "DICTMARK",
    "31415926",
    "SETMARK",
    "TUPLEMARK",
    "27182818",
    "11235813",
    "21345589",
    "NESTEDMARK",
    "ATTRMARK",
    "DOCMARK",
    "PROPMARK",
    "REPRMARK",
    "LOCALMARK",
    "EXCMARK",
]
EXPRS = [
    "frame",
    "frame.label",
    "frame['score']",
    "frame.columns",
    "frame.values",
    "frame.iloc",
    "frame.T",
    "series",
    "series.values",
    "words",
    "words[0]",
    "numbers",
    "numbers[-1]",
    "text",
    "blob",
    "table",
    "table['who']",
    "table[7]",
    "bag",
    "pair",
    "pair[0]",
    "matrix",
    "matrix[0]",
    "nested",
    "nested['inner']",
    "record",
    "record.owner",
    "record.upper",
    "record.__doc__",
    "fail",
]


def _session(privacy: str):
    session = make_session(SETUP, privacy=privacy)
    session.run("fail(words[1])")
    assert session.last_error is not None
    return session


def _every_call(session):
    """Every executable capability (eval_expr and plugins included) with every expression."""
    for cap in all_capabilities():
        if not cap.executable or cap.name == "run_python":
            continue
        props = cap.args_model.model_json_schema().get("properties", {})
        if "expr" in props:
            for expr in EXPRS:
                args = {"expr": expr}
                yield cap.name, args, call(session, cap.name, args)
                if "include_private" in props:
                    args = {"expr": expr, "include_private": True}
                    yield cap.name, args, call(session, cap.name, args)
        elif not props or set(props) == {"pattern"}:
            yield cap.name, {}, call(session, cap.name, {})


@pytest.mark.parametrize("privacy", ["names", "schema"])
def test_no_value_leaves_through_any_capability_below_sample(privacy):
    session = _session(privacy)
    checked = set()
    for name, args, result in _every_call(session):
        seen = result.text + (result.error or "")
        leaked = [m for m in MARKERS if m in seen]
        assert not leaked, f"{name}({args}) at {privacy} leaked {leaked}: {seen[:400]}"
        checked.add(name)
    assert {"list_globals", "get_type", "get_repr", "get_dir", "get_doc", "get_last_exception"} <= checked
    assert "get_session_picture" in checked  # what an outside agent is told first


def test_schema_still_shows_shapes_columns_and_dtypes():
    session = _session("schema")
    listing = call(session, "list_globals", {}).text
    assert "frame: DataFrame 2×2: label str, score float64" in listing
    assert "words: list, 2 items of str" in listing and "text: str, 23 chars" in listing
    described = call(session, "get_repr", {"expr": "frame"}).text
    assert "DataFrame: 2 rows × 2 columns" in described and "score: float64" in described
    error = call(session, "get_last_exception", {}).text
    assert error.startswith("ValueError: (message of 18 characters withheld")
    assert "local_text: str, 9 chars" in error


def test_names_level_shows_types_only():
    session = _session("names")
    listing = call(session, "list_globals", {}).text
    assert "frame: pandas.DataFrame" in listing and "words: list" in listing
    assert "2 items" not in listing and "2×2" not in listing
    assert call(session, "get_repr", {"expr": "frame"}).text.startswith("<pandas.DataFrame>")


@pytest.mark.parametrize("privacy", ["sample", "full"])
def test_sample_and_full_show_values(privacy):
    session = _session(privacy)
    assert "CELLMARK_A" in call(session, "get_repr", {"expr": "frame"}).text
    assert "LISTMARK_1" in call(session, "get_repr", {"expr": "words"}).text
    assert "EXCMARK LISTMARK_2" in call(session, "get_last_exception", {}).text


@pytest.mark.parametrize("privacy", ["names", "schema"])
def test_the_session_picture_below_sample_shows_no_value(privacy):
    """The picture every question carries (and an outside agent's first call): below ``sample`` the outputs
    of the latest inputs and the last error's message, which quote values, are withheld, as
    ``get_last_exception`` withholds the message."""
    from pyaichat.capabilities.picture import session_picture

    session = _session(privacy)
    session.run("words[0]")  # an input whose output is a value
    text = session_picture(session, session.config)
    assert "Last error" in text and "ValueError" in text
    assert not [m for m in MARKERS if m in text], text
