"""Checkpoints of the session process, kept by the operating system: ``/undo`` any input, ``/redo``, and a
crash that loses only the input that crashed.

Before each input that can change the session, the live process forks a paused copy of itself (``copy``):
``fork`` copies page tables, not data, and the pages stay shared until one side writes over them. The
process the shell started stays in front as a small supervisor (``supervisor``) holding the copies, their
memory under a budget (``memory``), and the live session's link (``link``). ``/undo`` resumes a copy — the
copy forks a new live session and stays as it was — and pauses the process left; what continues across the
jump (the conversation, the history, …) travels with it (``carry``); threads and helpers start again in the
resumed session (``services``). What going back cannot undo is counted by the kernel around each input and
said before a jump (``effects``). The live process's side of all of it is ``keeper.Checkpoints``.

Only where pyaichat runs the REPL itself (``python -m pyaichat`` in a terminal) and the system can fork:
IPython, a Jupyter kernel and other systems keep ``/undo`` for approved proposals (``ports.Undo``).
"""
