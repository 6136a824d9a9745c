"""What the person allowed from the approval panel beyond one call: a tool for this session, or always for
this project.

"This project" is the git work tree the session runs in (else its working directory), by its resolved path.
An allowance lives only where the person made it: in their own configuration directory
(``~/.config/pyaichat/mcp-allowed.json``, a file they may read and edit:
``{"projects": {"/path/to/project": ["git__git_status"]}}``), changed under a lock and merged, so two
sessions never lose each other's allowances. A rule ``deny`` or ``ask`` in the configuration still wins over
any allowance.

A file inside the project approves nothing. Earlier versions kept a project's allowances in its own
``.pyaichat/mcp-allowed.json``, and a repository can ship such a file as easily: its author's choice, not
the person's. When one is found it is ignored and the person is told once (per file and content), with the
tools it names, so they can allow them again from the panel if they want them — nothing of it is imported.

A file that cannot be read allows nothing, and is not written over (the person's other allowances in it are
unknown, not gone): allowing a tool "for this project" then holds for this session only, and says why.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from typing import Any

from ..paths import default_config_location
from ..persist import PersistError, shared_json

ALLOWED_FILE = "mcp-allowed.json"
PROJECT_DIR = ".pyaichat"  # where earlier versions kept a project's allowances: never read as approvals now
MAX_LISTED = 5  # tool names quoted from an ignored file


def project_root(start: str | None = None, *, resolved: bool = True) -> str:
    """The git work tree containing ``start`` (default: the working directory), else ``start`` itself; by
    its resolved path (a symbolic link to a project is the same project), or as earlier versions named it
    (``resolved=False``: their entries in the person's file)."""
    start = start or os.getcwd()
    here = os.path.realpath(start) if resolved else os.path.abspath(start)
    probe = here
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return here
        probe = parent


def user_file() -> str:
    """The person's own allowances file, beside their configuration."""
    return os.path.join(os.path.dirname(default_config_location()), ALLOWED_FILE)


class ProjectAllowances:
    """The tools always allowed for one project (see the module docstring). ``start``: where the session
    runs (the project's own files are looked for from there up to ``root``)."""

    def __init__(
        self, root: str, path: str | None = None, start: str | None = None, also: str | None = None
    ) -> None:
        self.root = root
        self.path = path or user_file()
        self.start = os.path.realpath(start or root)
        self.keys = {root} | ({also} if also else set())  # the project's keys in the person's file
        self.problem: str | None = None  # why the file cannot be read or written, for the person
        self._here: set[str] = set()  # allowed "for this project" when the file could not take it
        self._cache: tuple[Any, set[str]] | None = None  # the file's (mtime, size) and its names here
        self._told_unreadable = False

    @classmethod
    def for_project(cls, root: str | None = None) -> ProjectAllowances:
        """The allowances of ``root`` (default: the project of the working directory, also under the name
        earlier versions gave it)."""
        if root is not None:
            return cls(root)
        here = os.getcwd()
        return cls(project_root(here), start=here, also=project_root(here, resolved=False))

    def names(self) -> set[str]:
        """The ``SERVER__TOOL`` names always allowed here."""
        try:
            st = os.stat(self.path)
            stamp: Any = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            stamp = None
        if self._cache is None or self._cache[0] != stamp or stamp is None:
            self._cache = (stamp, self._saved())
        return self._cache[1] | self._here

    def _saved(self) -> set[str]:
        try:
            data = shared_json.read(self.path) or {}
        except shared_json.Unreadable as exc:
            if not self._told_unreadable:
                self._told_unreadable = True
                self.problem = f"{self.path} cannot be read ({exc}); it allows no tool for any project."
            return set()
        projects = data.get("projects")
        saved: set[str] = set()
        for key in self.keys:
            listed = projects.get(key) if isinstance(projects, dict) else None
            if isinstance(listed, list):
                saved |= {n for n in listed if isinstance(n, str)}
        return saved

    def add(self, name: str) -> bool:
        """Save ``name`` as always allowed here; False (and ``problem``) when the file cannot take it (the
        tool is then allowed for this session only)."""

        def change(data: dict[str, Any]) -> None:
            projects = data.get("projects")
            if not isinstance(projects, dict):
                projects = data["projects"] = {}
            listed = projects.get(self.root)
            kept = {n for n in listed if isinstance(n, str)} if isinstance(listed, list) else set()
            projects[self.root] = sorted(kept | {name})

        try:
            shared_json.update(self.path, change)
        except (shared_json.Unreadable, PersistError) as exc:
            self._here.add(name)
            self.problem = f"{self.path} cannot be written ({exc}); the tool is allowed this session only."
            return False
        return True

    def shipped(self) -> list[str]:
        """A sentence for each allowances file inside the project (from where the session runs up to the
        project's root), the first time that file with that content is seen."""
        found = []
        probe = self.start
        while True:
            candidate = os.path.join(probe, PROJECT_DIR, ALLOWED_FILE)
            try:  # the repository's file: a regular file, not followed (a link to /dev/tty would stall)
                raw = shared_json.read_bytes(candidate, limit=1 << 20, follow=False)
            except shared_json.Unreadable:
                raw = b""  # there, and allows nothing: said so, without what it names
            if raw is not None:
                found.append((candidate, raw))
            parent = os.path.dirname(probe)
            if probe == self.root or parent == probe or not probe.startswith(self.root):
                break
            probe = parent
        return [sentence for path, raw in found if (sentence := self._ignored(path, raw))]

    def _ignored(self, found: str, raw: bytes) -> str | None:
        stamp = f"{found}#{hashlib.sha256(raw).hexdigest()[:16]}"
        told: list[bool] = []

        def remember(data: dict[str, Any]) -> None:
            seen = data.get("ignored")
            if not isinstance(seen, list):
                seen = data["ignored"] = []
            told.append(stamp in seen)
            if stamp not in seen:
                seen.append(stamp)

        with contextlib.suppress(shared_json.Unreadable, PersistError):  # cannot remember: told each session
            shared_json.update(self.path, remember)
        if told and told[0]:
            return None
        return (
            f"Ignored {found}: pyaichat no longer takes approvals from a project's own files (a repository "
            f"can ship one){_listing(raw)}; tools you allow with [p] on their panel are kept in {self.path}."
        )


def _listing(raw: bytes) -> str:
    """``; it names a, b and 3 more`` — what an ignored file would have allowed, for the person to judge."""
    try:
        projects = json.loads(raw.decode("utf-8")).get("projects")
        names = sorted({n for v in projects.values() if isinstance(v, list) for n in v if isinstance(n, str)})
    except Exception:  # whatever it holds, it allows nothing
        return ""
    if not names:
        return ""
    more = len(names) - MAX_LISTED
    shown = ", ".join(names[:MAX_LISTED]) + (f" and {more} more" if more > 0 else "")
    return f" (it names {shown})"


class Allowances:
    """This session's allowances and the project's (``where`` says which applies to a tool)."""

    def __init__(self, project: ProjectAllowances | None = None) -> None:
        self.session: set[str] = set()
        self._project = project
        self._news: list[str] = []
        self._looked = False

    @property
    def project(self) -> ProjectAllowances:
        if self._project is None:
            self._project = ProjectAllowances.for_project()
        if not self._looked:
            self._looked = True
            self._news.extend(self._project.shipped())
        return self._project

    def news(self) -> list[str]:
        """Sentences for the person not told yet: an ignored project file, a file that cannot be read."""
        if self._project is not None and self._project.problem:
            self._news.append(self._project.problem)
            self._project.problem = None
        lines, self._news = self._news, []
        return lines

    def where(self, server: str, tool: str) -> str | None:
        """ "this session" or "this project (FILE)" when the person allowed the tool, else ``None``."""
        name = f"{server}__{tool}"
        if name in self.session:
            return "allowed for this session from the approval panel"
        if name in self.project.names():
            return f"always allowed for this project ({self.project.path})"
        return None

    def allow(self, server: str, tool: str, scope: str) -> str:
        """Record the person's choice (``session`` or ``project``); the one line that says what it means."""
        name = f"{server}__{tool}"
        self.session.add(name)
        if scope == "project":
            if self.project.add(name):
                return f"{name} is now always allowed in {self.project.root} (saved in {self.project.path})."
            problem, self.project.problem = self.project.problem, None
            return problem or f"{name} is allowed for this session."
        return f"{name} is allowed for the rest of this session."
