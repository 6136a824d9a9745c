"""The last session's conversation memory and input history, kept in the state directory for ``--resume``.

Plain JSON (loading it runs nothing), written atomically and privately (``0600``), with secrets masked on
the way out: the file holds what the model was allowed to see, never more. The shapes are plain dicts so
this module needs neither the agent nor a front end:

- a turn: ``{"question": str, "messages": [chat messages], "answer": str, "native": bool}`` (the agent's
  ``Turn``);
- an input: the fields of ``records.HistoryEntry`` (number, source, ok, summary, duration_ms, stdout,
  stderr, result);
- the journal (``/save``'s record of where questions fell and which inputs were approved proposals, and
  ``/history``'s marks): ``{"turns": [records.AssistantTurn fields], "approved": [records.ApprovedProposal
  fields]}``. Optional: a file without it resumes with an empty journal.

Loading checks every field first and returns nothing unless all of it is sound.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any

from ..paths import state_path
from ..records import ApprovedProposal, AssistantTurn, HistoryEntry
from ..version import __version__
from . import PersistError
from .atomic import atomic_write
from .masking import document_mask, texts_of

FORMAT = 1
FILE_NAME = "last-session.json"
MAX_TURNS = 200  # the newest turns kept; the agent fits far fewer into a request anyway
MAX_INPUTS = 1000  # the newest inputs kept


def default_path() -> str:
    """The resume file in the state directory, as a plain string: written after every input, from a thread
    that shares the interpreter with the prompt, it does without ``pathlib`` (and the ``urllib`` and
    ``ipaddress`` that ``pathlib`` imports)."""
    return state_path(FILE_NAME)


@dataclass
class ResumeState:
    """A loaded, checked resume file."""

    path: str
    turns: list[dict[str, Any]]
    history: list[dict[str, Any]]
    saved: str
    snapshot: str | None = None
    notes: list[str] = field(default_factory=list)  # told to the model with the next question (an /undo)
    journal_turns: list[AssistantTurn] = field(default_factory=list)
    approved: list[ApprovedProposal] = field(default_factory=list)

    def text(self) -> str:
        return (
            f"Resumed the session saved {self.saved}: {_count(self.turns, 'question')} and "
            f"{_count(self.history, 'input')}."
        )

    def history_entries(self) -> list[Any]:
        """The inputs as ``records.HistoryEntry`` objects, ready for ``Session.history``."""

        return [HistoryEntry(**entry) for entry in self.history]


@dataclass
class ResumeReport:
    path: str
    turns: int
    inputs: int
    size: int
    seconds: float

    def text(self) -> str:
        return (
            f"Saved {self.turns} question{'s' if self.turns != 1 else ''} and {self.inputs} "
            f"input{'s' if self.inputs != 1 else ''} to {self.path} "
            f"({self.size:,} bytes, {self.seconds:.2f} s)."
        )


def _count(items: list[Any], word: str) -> str:
    return f"{len(items)} {word}{'' if len(items) == 1 else 's'}"


# -- saving -------------------------------------------------------------------------------------------------
def save_resume(
    turns: Iterable[Mapping[str, Any]],
    history: Iterable[Any],
    *,
    path: str | os.PathLike[str] | None = None,
    config: Any = None,
    snapshot: str | None = None,
    notes: Iterable[str] = (),
    journal: Any = None,
) -> ResumeReport:
    """Write the conversation memory, input history (``HistoryEntry`` objects or dicts) and ``journal``
    (its ``turns`` and ``approved``) atomically."""

    started = time.perf_counter()
    plain = [_turn(t) for t in list(turns)[-MAX_TURNS:]]
    inputs = [_entry(e) for e in list(history)[-MAX_INPUTS:]]
    mask = _remembered_masks(document_mask(config, texts_of(plain, inputs)))
    kept_turns = [_mask_turn(t, mask) for t in plain]
    kept_inputs = [_mask_entry(e, mask) for e in inputs]
    document = {
        "format": FORMAT,
        "pyaichat": __version__,
        "saved": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "snapshot": snapshot,
        "notes": [mask(str(note)) for note in notes],
        "turns": kept_turns,
        "history": kept_inputs,
    }
    if journal is not None:
        document["journal"] = _journal_out(journal, mask)
    data = json.dumps(document, ensure_ascii=False, default=str).encode("utf-8")
    target = os.path.abspath(os.path.expanduser(os.fspath(path))) if path is not None else default_path()
    size = atomic_write(target, lambda fh: fh.write(data), private=True)
    return ResumeReport(target, len(kept_turns), len(kept_inputs), size, time.perf_counter() - started)


_masks: tuple[Any, Callable[[str], str]] | None = None


def _remembered_masks(mask: Callable[[str], str]) -> Callable[[str], str]:
    """``mask``, remembering its answers: the file is rewritten after every input with the same old turns and
    inputs, which need masking once, not at every save. The same masker with no value revealed by the texts
    is the same bound method, so the memory lasts while the settings and the revealed values stay the same."""
    global _masks
    if _masks is None or _masks[0] != mask:
        _masks = (mask, functools.lru_cache(maxsize=20_000)(mask))
    return _masks[1]


def _turn(turn: Mapping[str, Any]) -> dict[str, Any]:
    if is_dataclass(turn) and not isinstance(turn, type):
        turn = asdict(turn)
    return {
        "question": str(turn.get("question", "")),
        "messages": [dict(m) for m in turn.get("messages") or []],
        "answer": str(turn.get("answer") or ""),
        "native": bool(turn.get("native", True)),
    }


def _entry(entry: Any) -> dict[str, Any]:
    data = asdict(entry) if is_dataclass(entry) and not isinstance(entry, type) else dict(entry)
    return {
        "number": int(data["number"]),
        "source": str(data["source"]),
        "ok": bool(data["ok"]),
        "summary": str(data.get("summary") or ""),
        "duration_ms": float(data.get("duration_ms") or 0.0),
        "stdout": str(data.get("stdout") or ""),
        "stderr": str(data.get("stderr") or ""),
        "result": None if data.get("result") is None else str(data["result"]),
    }


def _mask_turn(turn: dict[str, Any], mask: Callable[[str], str]) -> dict[str, Any]:
    messages = []
    for msg in turn["messages"]:
        new = dict(msg)
        if isinstance(new.get("content"), str):
            new["content"] = mask(new["content"])
        if new.get("tool_calls"):
            calls = []
            for call in new["tool_calls"]:
                fn = dict(call.get("function") or {})
                if isinstance(fn.get("arguments"), str):
                    fn["arguments"] = mask(fn["arguments"])
                calls.append({**call, "function": fn})
            new["tool_calls"] = calls
        messages.append(new)
    return {**turn, "question": mask(turn["question"]), "answer": mask(turn["answer"]), "messages": messages}


def _mask_entry(entry: dict[str, Any], mask: Callable[[str], str]) -> dict[str, Any]:
    out = dict(entry)
    for key in ("source", "summary", "stdout", "stderr", "result"):
        if isinstance(out.get(key), str):
            out[key] = mask(out[key])
    return out


_TURN_MASKED = ("question", "answer", "note", "error", "receipts")
# Keys a record written by an older pyaichat may lack (its dataclass default stands in).
_OPTIONAL = frozenset({"receipts"})
_APPROVED_MASKED = ("code", "explanation", "undone")


def _journal_out(journal: Any, mask: Callable[[str], str]) -> dict[str, Any]:
    """The journal's records as masked dicts: the newest ``MAX_TURNS`` questions, the approved proposals of
    the inputs kept."""
    turns = []
    for turn in list(journal.turns)[-MAX_TURNS:]:
        data = asdict(turn)
        data.update({k: mask(data[k]) for k in _TURN_MASKED if isinstance(data.get(k), str)})
        data["steps"] = [{**step, "detail": mask(str(step.get("detail") or ""))} for step in data["steps"]]
        turns.append(data)
    approved = []
    for proposal in journal.approved:
        data = asdict(proposal)
        data.update({k: mask(data[k]) for k in _APPROVED_MASKED if isinstance(data.get(k), str)})
        approved.append(data)
    return {"turns": turns, "approved": approved}


_JOURNAL_TYPES: dict[str, dict[str, tuple[type, ...]]] = {
    "turns": {
        "question": (str,),
        "answer": (str,),
        "after_input": (int,),
        "end_input": (int, type(None)),
        "steps": (list,),
        "note": (str, type(None)),
        "error": (str, type(None)),
        "receipts": (str, type(None)),
    },
    "approved": {
        "code": (str,),
        "model": (str, type(None)),
        "approved_at": (str,),
        "input_number": (int, type(None)),
        "explanation": (str,),
        "undone": (str, type(None)),
        "undone_after": (int, type(None)),
        "proposed_by": (str,),
    },
}


def _journal_problem(journal: Any) -> str | None:
    if journal is None:
        return None
    if not isinstance(journal, dict) or not all(isinstance(journal.get(k), list) for k in _JOURNAL_TYPES):
        return "its journal is malformed"
    for part, types_ in _JOURNAL_TYPES.items():
        for i, record in enumerate(journal[part], 1):
            if not isinstance(record, dict) or not set(types_) - _OPTIONAL <= set(record) <= set(types_):
                return f"journal record {i} of its {part} is malformed"
            for key, allowed in types_.items():
                if key not in record:
                    continue
                value = record[key]
                if not isinstance(value, allowed) or (isinstance(value, bool) and int in allowed):
                    return f"journal record {i} of its {part} has a bad {key}"
    steps = [step for turn in journal["turns"] for step in turn["steps"]]
    if not all(isinstance(step, dict) for step in steps):
        return "its journal's steps are malformed"
    return None


# -- loading ------------------------------------------------------------------------------------------------
def load_resume(path: str | os.PathLike[str] | None = None) -> ResumeState:
    """The saved conversation and history; ``PersistError`` (one sentence, nothing loaded) when the file is
    missing, broken or from a newer pyaichat."""
    target = os.path.abspath(os.path.expanduser(os.fspath(path))) if path is not None else default_path()
    try:
        with open(target, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError as exc:
        raise PersistError(f"There is no saved session to resume ({target} does not exist).") from exc
    except OSError as exc:
        raise PersistError(f"Cannot read {target}: {exc.strerror or exc}.") from exc
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise PersistError(f"{target} is damaged (it is not valid JSON); nothing was loaded.") from exc
    if not isinstance(document, dict) or not isinstance(document.get("format"), int):
        raise PersistError(f"{target} is not a pyaichat session file; nothing was loaded.")
    if document["format"] > FORMAT:
        raise PersistError(
            f"{target} was written by a newer pyaichat (session format {document['format']}; this version "
            f"reads format {FORMAT}); update pyaichat to resume it."
        )
    problem = _problem(document)
    if problem:
        raise PersistError(f"{target} is damaged ({problem}); nothing was loaded.")
    return ResumeState(
        path=target,
        turns=document["turns"],
        history=document["history"],
        saved=str(document.get("saved") or "?"),
        snapshot=document.get("snapshot") if isinstance(document.get("snapshot"), str) else None,
        notes=list(document.get("notes") or []),
        journal_turns=[AssistantTurn(**turn) for turn in (document.get("journal") or {}).get("turns", [])],
        approved=[ApprovedProposal(**p) for p in (document.get("journal") or {}).get("approved", [])],
    )


_ENTRY_TYPES: dict[str, tuple[type, ...]] = {
    "number": (int,),
    "source": (str,),
    "ok": (bool,),
    "summary": (str,),
    "duration_ms": (int, float),
    "stdout": (str,),
    "stderr": (str,),
    "result": (str, type(None)),
}


def _problem(document: dict[str, Any]) -> str | None:
    """What is wrong with a parsed file, in a few words; ``None`` when every turn and input is sound."""
    turns, history = document.get("turns"), document.get("history")
    if not isinstance(turns, list) or not isinstance(history, list):
        return "its turns or inputs are missing"
    notes = document.get("notes") or []
    if not isinstance(notes, list) or not all(isinstance(note, str) for note in notes):
        return "its notes are malformed"
    for i, turn in enumerate(turns, 1):
        if not (
            isinstance(turn, dict)
            and isinstance(turn.get("question"), str)
            and isinstance(turn.get("answer"), str)
            and isinstance(turn.get("native"), bool)
            and isinstance(turn.get("messages"), list)
            and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in turn["messages"])
        ):
            return f"question {i} is malformed"
    journal_problem = _journal_problem(document.get("journal"))
    if journal_problem:
        return journal_problem
    for i, entry in enumerate(history, 1):
        if not isinstance(entry, dict) or set(entry) != set(_ENTRY_TYPES):
            return f"input {i} is malformed"
        for key, types_ in _ENTRY_TYPES.items():
            value = entry[key]
            if not isinstance(value, types_) or (key == "number" and isinstance(value, bool)):
                return f"input {i} has a bad {key}"
    return None
