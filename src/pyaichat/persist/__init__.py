"""Work that outlives one process: notebooks, snapshots of variables, the resumable conversation, and undo.

Each module is standalone and loads its heavy library (nbformat, cloudpickle) only when it is used. None of
them imports the agent or a front end: they take plain data (namespaces, history entries, dicts), so the
REPL, the IPython extension and the kernel helper can all call them.

- ``notebook``: the session as ``.ipynb`` (nbformat), a percent-format ``.py`` script or a ``.md``
  transcript.
- ``snapshot``: the session's variables, signed for this user, written atomically, loaded all or nothing.
- ``resume``: the conversation memory and the input history of the last session.
- ``undo``: what an approved proposal created, rebound, deleted or changed in place, and taking it back.
"""

from __future__ import annotations

from ..errors import PyAIChatError


class PersistError(PyAIChatError):
    """A save or load that was refused or failed. ``str()`` is one sentence for the user; nothing changed."""
