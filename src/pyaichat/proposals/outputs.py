"""What the proposal service tells of an approved run: its bounded output (for the model's observation and an
outside client's reply)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..records import ExecResult, HistoryEntry

OUTPUT_CHARS = 1500  # of what a run printed, in an outcome (a model's observation, an MCP reply)


def run_output(result: ExecResult) -> tuple[str, str | None]:
    """(what a run printed and echoed, bounded; its error's headline) of an ``ExecResult``."""
    from ..capabilities.summary import one_line  # with the first approved run

    if not result.ok and result.error is not None:
        return result.output.strip()[:OUTPUT_CHARS], result.error.headline()
    parts = []
    if result.output.strip():
        parts.append("Output:\n" + result.output.strip()[:OUTPUT_CHARS])
    if result.has_value:
        parts.append("Value: " + one_line(result.value, width=1000))  # bounded, whatever the value's size
    return "\n".join(parts), None


def entry_output(entry: HistoryEntry | None) -> tuple[str, str | None]:
    """The same for an input IPython ran itself (its history record)."""
    if entry is None:
        return "", None
    if not entry.ok:
        return entry.stdout.strip()[:OUTPUT_CHARS], entry.summary
    parts = []
    if entry.stdout.strip():
        parts.append("Output:\n" + entry.stdout.strip()[:OUTPUT_CHARS])
    if entry.result is not None:
        parts.append("Value: " + entry.result[:1000])
    return "\n".join(parts), None
