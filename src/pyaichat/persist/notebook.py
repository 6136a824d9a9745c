"""The session as a runnable notebook (``.ipynb``), a percent-format script (``.py``) or a transcript
(``.md``).

Inputs come from the session history (``HistoryEntry``: source and bounded text output), conversation from
``AssistantTurn`` records and the assistant's approved code from ``ApprovedProposal`` records; all are plain
data, so the REPL, IPython and the kernel front end build them the same way. Everything is written in the
order it happened: a question sits after the input it followed, the code approved while answering it comes
next (as the numbered input it ran as, marked as the assistant's), then the answer.

Every text (code, outputs, questions, answers) passes the one masking function, as everything else that
leaves the session does. A cell that failed carries the ``raises-exception`` tag and one the user interrupted
the ``skip-execution`` tag, so the notebook runs top to bottom with ``nbclient``/``jupyter nbconvert``.

One module of ~420 lines on purpose: the three formats are three readings of one ``timeline`` with one set of
rules (masking, undone proposals, failed and interrupted cells, receipts), about a hundred lines each; apart,
each would import those rules from the others.
"""

from __future__ import annotations

import ast
import io
import json
import os
import sys
import time
import tokenize
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any

from ..capabilities.redact import masker_for
from ..extras import install_command, this_python, this_script
from ..literal_tags import literal_tags
from ..records import ApprovedProposal, AssistantTurn
from ..version import __version__
from . import PersistError
from .atomic import atomic_write
from .masking import document_mask, texts_of

FORMATS = {".ipynb": "ipynb", ".py": "py", ".md": "md"}
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


@dataclass
class ExportReport:
    path: str
    fmt: str
    cells: int
    size: int
    seconds: float

    def text(self) -> str:
        what = "the transcript" if self.fmt == "md" else f"{self.cells} cells"
        return f"Wrote {what} to {self.path} ({self.size:,} bytes).{self._how_to_run()}"

    def _how_to_run(self) -> str:
        """How to run what was saved: a notebook needs a kernel (ipykernel) and something that executes it."""
        if self.fmt == "py":
            return f" Run it with: {this_python()} {self.path}"
        if self.fmt != "ipynb":
            return ""
        import importlib.util  # with /save FILE.ipynb only

        missing = [name for name in ("ipykernel", "nbclient") if importlib.util.find_spec(name) is None]
        run = f" Run it with: {this_script('jupyter')} execute {self.path}"
        if missing:
            run += f" (needs {' and '.join(missing)}: {sys.executable} -m pip install {' '.join(missing)})"
        return run


# -- the timeline -------------------------------------------------------------------------------------------
@dataclass
class _Cell:
    kind: str  # "code" | "markdown"
    source: str
    entry: Any = None  # the HistoryEntry of a code cell (None: approved code that never ran)
    proposal: ApprovedProposal | None = None


def _field(entry: Any, name: str, default: Any = None) -> Any:
    return entry.get(name, default) if isinstance(entry, dict) else getattr(entry, name, default)


def timeline(
    history: Sequence[Any],
    turns: Sequence[AssistantTurn],
    proposals: Sequence[ApprovedProposal],
    mask: Callable[[str], str] | None = None,
) -> list[_Cell]:
    """Inputs, questions, approved code and answers in the order they happened; the questions' and answers'
    text masked (``mask``) and then with its HTML-like tags shown as written (a ``<redacted …>`` mark too)."""
    m = mask or _mask_for(None)

    def shown(text: str) -> str:
        return literal_tags(m(text))

    by_input = {p.input_number: p for p in proposals if p.input_number is not None}
    numbers = {_field(e, "number") for e in history}
    keyed: list[tuple[tuple[float, ...], _Cell]] = []
    for entry in history:
        number = _field(entry, "number")
        keyed.append(((number, 1), _Cell("code", _field(entry, "source", ""), entry, by_input.get(number))))
    for p in proposals:  # approved but not in the history (never ran, or the history was trimmed)
        if p.input_number is None or p.input_number not in numbers:
            at = p.input_number if p.input_number is not None else float("inf")
            keyed.append(((at, 1), _Cell("code", p.code, None, p)))
    for i, turn in enumerate(turns):
        end = turn.end_input if turn.end_input is not None else turn.after_input
        keyed.append(((turn.after_input, 2, i, 0), _Cell("markdown", _question_md(turn, shown))))
        keyed.append(((max(end, turn.after_input), 2, i, 1), _Cell("markdown", _answer_md(turn, shown))))
    keyed.sort(key=lambda item: item[0])
    cells: list[_Cell] = []
    previous_key: tuple[float, ...] | None = None
    for key, cell in keyed:
        same_turn = (
            previous_key is not None and len(key) == 4 and key[1:3] == previous_key[1:3] and key[3] == 1
        )
        if same_turn and cells and cells[-1].kind == "markdown":  # nothing ran in between: one cell
            cells[-1].source += "\n\n" + cell.source
        else:
            cells.append(cell)
        previous_key = key
    return cells


def _question_md(turn: AssistantTurn, shown: Callable[[str], str]) -> str:
    return f"**Question:** {shown(turn.question)}"


def _receipts_comment(receipts: str) -> str:
    """The answer's receipts under it: the status line as an HTML comment (Markdown readers hide it; it
    stays in the file for whoever looks; ``--`` is spaced out so it cannot end the comment early), and each
    contradicted number as a visible line, as the REPL shows it."""
    summary, *warnings = receipts.split("\n")
    lines = [f"<!-- {summary.replace('--', '- -')} -->"]
    lines += [f"_⚠ {w.removeprefix('warning: ')}_" for w in warnings]
    return "\n\n".join(lines)


def _answer_md(turn: AssistantTurn, shown: Callable[[str], str]) -> str:
    text = f"**Answer:** {shown(turn.answer) if turn.answer else '(no answer)'}"
    if turn.note:
        text += f"\n\n_{turn.note}_"
    if turn.receipts:
        text += "\n\n" + _receipts_comment(turn.receipts)
    if turn.error:
        text += f"\n\n_Error: {shown(turn.error)}_"
    return text


def _interrupted(entry: Any) -> bool:
    stderr = _field(entry, "stderr", "") or ""
    return (
        not _field(entry, "ok", True)
        and stderr.rstrip().endswith("KeyboardInterrupt")
        and ("Traceback" not in stderr)
    )


def _error_parts(entry: Any) -> tuple[str, str]:
    """(name, message) of a failed input's exception, from the traceback's last line (else the summary)."""
    lines = [line for line in (_field(entry, "stderr", "") or "").splitlines() if line.strip()]
    last = lines[-1] if lines else (_field(entry, "summary", "") or "Error")
    name, _, message = last.partition(": ")
    return (name.strip() or "Error"), message.strip()


def _assistant_meta(p: ApprovedProposal) -> dict[str, Any]:
    meta = {"source": p.proposed_by, "model": p.model, "approved_at": p.approved_at}
    return {**meta, "undone": p.undone} if p.undone else meta


def _leaning_on_undone(proposals: Sequence[ApprovedProposal]) -> set[int]:
    """Input numbers that ran while an undone proposal's effects stood (after it, up to the ``/undo``).

    They succeeded in the session but may use what the proposal made (``y = total * 2``); replayed without
    it (its cell is skipped) they may raise, so the saved file lets them, as it does inputs that failed."""
    numbers: set[int] = set()
    for p in proposals:
        if p.undone and p.input_number is not None and p.undone_after is not None:
            numbers.update(range(p.input_number + 1, p.undone_after + 1))
    return numbers


def _tags(
    entry: Any, proposal: ApprovedProposal | None = None, may_raise: frozenset[int] = frozenset()
) -> list[str]:
    """An undone input (a proposal or any input a checkpoint took back), one that crashed the session and an
    interrupted cell are skipped when the notebook runs (so it runs to the session's state); a failed cell,
    and one that ran on an undone proposal's effects, may raise."""
    if (proposal is not None and proposal.undone) or (
        entry is not None and (_field(entry, "undone") or _field(entry, "crashed") or _interrupted(entry))
    ):
        return ["skip-execution"]
    if entry is None:
        return []
    if not _field(entry, "ok", True) or _field(entry, "number") in may_raise:
        return ["raises-exception"]
    return []


# -- .ipynb --------------------------------------------------------------------------------------------------
def to_notebook(
    history: Sequence[Any],
    turns: Sequence[AssistantTurn] = (),
    proposals: Sequence[ApprovedProposal] = (),
    *,
    mask: Callable[[str], str] | None = None,
) -> Any:
    """An nbformat v4 notebook (validated) of the session."""
    try:
        import nbformat  # optional dependency: pyaichat[persist]
        from nbformat import v4  # optional dependency: pyaichat[persist]
    except ImportError as exc:
        raise PersistError(
            f"Saving a notebook needs the nbformat package: {install_command('persist')} (or save as .py or "
            ".md)."
        ) from exc
    m = mask or _mask_for(None)
    cells = [v4.new_markdown_cell(m(_title()))]
    may_raise = frozenset(_leaning_on_undone(proposals))
    for cell in timeline(history, turns, proposals, m):
        if cell.kind == "markdown":
            cells.append(v4.new_markdown_cell(m(cell.source)))
            continue
        metadata: dict[str, Any] = {}
        if cell.proposal is not None:
            metadata["pyaichat"] = _assistant_meta(cell.proposal)
        tags = _tags(cell.entry, cell.proposal, may_raise)
        if tags:
            metadata["tags"] = tags
        number = _field(cell.entry, "number") if cell.entry is not None else None
        code = v4.new_code_cell(m(cell.source), execution_count=number, metadata=metadata)
        code.outputs = _outputs(cell.entry, number, m) if cell.entry is not None else []
        cells.append(code)
    nb = v4.new_notebook(
        cells=cells,
        metadata={
            "kernelspec": dict(KERNELSPEC),
            "language_info": {"name": "python"},
            "pyaichat": {"version": __version__, "saved": time.strftime("%Y-%m-%d %H:%M:%S %z")},
        },
    )
    nbformat.validate(nb)
    return nb


def _outputs(entry: Any, number: int | None, m: Callable[[str], str]) -> list[Any]:
    from nbformat import v4  # optional dependency: pyaichat[persist]

    out = []
    stdout, stderr = _field(entry, "stdout", "") or "", _field(entry, "stderr", "") or ""
    if stdout:
        out.append(v4.new_output("stream", name="stdout", text=m(stdout)))
    if _field(entry, "ok", True) or _interrupted(entry):
        if stderr:
            out.append(v4.new_output("stream", name="stderr", text=m(stderr)))
        result = _field(entry, "result")
        if result is not None:
            out.append(
                v4.new_output("execute_result", data={"text/plain": m(result)}, execution_count=number)
            )
    else:
        name, message = _error_parts(entry)
        out.append(
            v4.new_output(
                "error", ename=m(name), evalue=m(message), traceback=m(stderr).splitlines() or [name]
            )
        )
    return out


def _title() -> str:
    return f"# pyaichat session\n\nSaved {time.strftime('%Y-%m-%d %H:%M')} by pyaichat {__version__}."


# -- .py (percent format) ------------------------------------------------------------------------------------
def to_percent_script(
    history: Sequence[Any],
    turns: Sequence[AssistantTurn] = (),
    proposals: Sequence[ApprovedProposal] = (),
    *,
    mask: Callable[[str], str] | None = None,
) -> str:
    """The session as a percent-format script (``# %%`` cells, as Jupytext, VS Code and Spyder read them);
    cell metadata in Jupytext's ``key=<json>`` form. Outputs are left out: it is a script."""
    m = mask or _mask_for(None)
    parts = [_markdown_cell(m(_title()))]
    may_raise = frozenset(_leaning_on_undone(proposals))
    for cell in timeline(history, turns, proposals, m):
        if cell.kind == "markdown":
            parts.append(_markdown_cell(m(cell.source)))
            continue
        meta = []
        tags = _tags(cell.entry, cell.proposal, may_raise)
        if tags:
            meta.append(f"tags={json.dumps(tags)}")
        if cell.proposal is not None:
            meta.append(f"pyaichat={json.dumps(_assistant_meta(cell.proposal), ensure_ascii=False)}")
        header = "# %%" + ("".join(" " + item for item in meta))
        parts.append(f"{header}\n{_as_script(m(cell.source).rstrip(), tags)}\n")
    return "\n".join(parts)


def _as_script(source: str, tags: list[str]) -> str:
    """A cell as ``python FILE.py`` must run it to reach the session's state, as the notebook does.

    A skipped cell (an undone proposal, an interrupted input) and code Python cannot compile (an input that
    failed to parse, an IPython magic or ``!`` command) become comments, the way Jupytext writes magics.
    An input that raised in the session runs inside ``try``: it raises again, says so, and the script goes on
    with whatever the cell did before raising, as the session did (a notebook runs it under the
    ``raises-exception`` tag). So does one that ran while an undone proposal's effects stood.
    """
    if "skip-execution" in tags or not _compiles(source):
        return _commented(source)
    if "raises-exception" in tags:
        wrapped = "\n".join(
            [
                "try:",
                _indented(source),
                "except Exception as error:  # it raised in the session, or leant on undone code; go on",
                '    print(f"{type(error).__name__}: {error}")',
            ]
        )
        return wrapped if _compiles(wrapped) else _commented(source)
    return source


def _indented(source: str) -> str:
    """``source`` indented one level, except lines that begin inside a multi-line string (indenting those
    would change the string)."""
    inside: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            inside.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        pass
    return "\n".join(
        line if (row in inside or not line.strip()) else "    " + line
        for row, line in enumerate(source.splitlines(), 1)
    )


def _compiles(source: str) -> bool:
    try:
        compile(source, "<cell>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _commented(source: str) -> str:
    return "\n".join(("# " + line).rstrip() for line in source.splitlines())


def _markdown_cell(text: str) -> str:
    lines = [("# " + line).rstrip() for line in text.splitlines()]
    return "# %% [markdown]\n" + "\n".join(lines) + "\n"


# -- .md (the transcript) ------------------------------------------------------------------------------------
def to_transcript(turns: Sequence[AssistantTurn], *, mask: Callable[[str], str] | None = None) -> str:
    """The questions, tool steps and answers as Markdown (what ``/save FILE.md`` has always written)."""
    m = mask or _mask_for(None)

    def shown(text: str) -> str:
        return literal_tags(m(text))

    out = ["# pyaichat transcript", ""]
    for n, turn in enumerate(turns, 1):
        out += [f"## Question {n}", "", shown(turn.question), ""]
        if turn.steps:
            out.append("Steps:")
            out += [
                f"- `{s['name']}({s['detail']})` → {s['size']:,} chars{'' if s['ok'] else ' (failed)'}"
                for s in turn.steps
            ]
            out.append("")
        out += ["### Answer", "", shown(turn.answer) if turn.answer else "(no answer)", ""]
        if turn.note:
            out += [f"_{turn.note}_", ""]
        if turn.receipts:
            out += [_receipts_comment(turn.receipts), ""]
        if turn.error:
            out += [f"_Error: {shown(turn.error)}_", ""]
    return m("\n".join(out))


# -- writing ------------------------------------------------------------------------------------------------
def export(
    path: str | os.PathLike[str],
    history: Iterable[Any] = (),
    turns: Iterable[AssistantTurn] = (),
    proposals: Iterable[ApprovedProposal] = (),
    *,
    config: Any = None,
    fmt: str | None = None,
) -> ExportReport:
    """Write the session to ``path`` as ``fmt`` (default: from the extension: .ipynb, .py or .md),
    atomically; ``PersistError`` with one sentence when the format is unknown or the file cannot be
    written."""
    started = time.perf_counter()
    target = os.path.abspath(os.path.expanduser(os.fspath(path)))
    kind = fmt or FORMATS.get(os.path.splitext(target)[1].lower())
    if kind is None or kind not in FORMATS.values():
        raise PersistError(
            f"Cannot save as {os.path.basename(target)!r}: use a .ipynb, .py or .md file name."
        )
    entries = [_plain(e) for e in history]
    turns, proposals = list(turns), list(proposals)
    mask = document_mask(config, texts_of(entries, turns, proposals))
    cells = 0
    if kind == "ipynb":
        import nbformat  # optional dependency: pyaichat[persist]

        nb = to_notebook(entries, turns, proposals, mask=mask)
        cells = len(nb.cells)
        data = nbformat.writes(nb).encode("utf-8")
    elif kind == "py":
        text = to_percent_script(entries, turns, proposals, mask=mask)
        cells = text.count("# %%")
        data = text.encode("utf-8")
    else:
        data = to_transcript(turns, mask=mask).encode("utf-8")
    size = atomic_write(target, lambda fh: fh.write(data), private=False)
    return ExportReport(target, kind, cells, size, time.perf_counter() - started)


def _plain(entry: Any) -> Any:
    return asdict(entry) if is_dataclass(entry) and not isinstance(entry, type) else entry


def _mask_for(config: Any) -> Callable[[str], str]:

    return masker_for(config).mask_text
