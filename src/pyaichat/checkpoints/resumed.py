"""``Resumed``: the front end's one import from ``checkpoints`` at start-up (the rest loads with the first
checkpoint)."""


class Resumed(BaseException):
    """Raised in a session resumed from a copy taken inside an input (an answer's second proposal): the
    input it was taken in belongs to the process that was forked; this one goes back to its prompt."""
