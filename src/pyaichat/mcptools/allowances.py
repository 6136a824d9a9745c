"""What the person allowed from the approval panel beyond one call: a tool for this session, or always for
this project.

"This project" is the git work tree the session runs in (else its working directory). The allowance is saved
where the project keeps its pyaichat settings — a ``.pyaichat/`` directory at the project's root, when there
is one — or else in the user's configuration directory, under the project's path (``mcp-allowed.json``, a
file a person may read and edit: ``{"projects": {"/path/to/project": ["git__git_status"]}}``, ``"."`` for the
project's own file). A rule ``deny`` or ``ask`` in the configuration still wins over any allowance.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..paths import default_config_location

ALLOWED_FILE = "mcp-allowed.json"
PROJECT_DIR = ".pyaichat"


def project_root(start: str | None = None) -> str:
    """The git work tree containing ``start`` (default: the working directory), else ``start`` itself."""
    here = os.path.abspath(start or os.getcwd())
    probe = here
    while True:
        if os.path.exists(os.path.join(probe, ".git")) or os.path.isdir(os.path.join(probe, PROJECT_DIR)):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return here
        probe = parent


class ProjectAllowances:
    """The tools always allowed for one project, read from and saved to one file (see the module
    docstring)."""

    def __init__(self, root: str, path: str, key: str) -> None:
        self.root, self.path, self.key = root, path, key
        self.problem: str | None = None

    @classmethod
    def for_project(cls, root: str | None = None) -> ProjectAllowances:
        root = root or project_root()
        local = os.path.join(root, PROJECT_DIR)
        if os.path.isdir(local):
            return cls(root, os.path.join(local, ALLOWED_FILE), ".")
        return cls(root, os.path.join(os.path.dirname(default_config_location()), ALLOWED_FILE), root)

    def _read(self) -> dict[str, Any]:
        try:
            with open(self.path, encoding="utf-8") as fh:
                data = json.load(fh)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            self.problem = f"{self.path} cannot be read ({exc}); no tool is allowed for this project from it."
            return {}
        return data if isinstance(data, dict) else {}

    def names(self) -> set[str]:
        """The ``SERVER__TOOL`` names always allowed here."""
        projects = self._read().get("projects")
        listed = projects.get(self.key) if isinstance(projects, dict) else None
        return {n for n in listed if isinstance(n, str)} if isinstance(listed, list) else set()

    def add(self, name: str) -> bool:
        """Save ``name`` as always allowed here; False (and ``problem``) when the file cannot be written."""
        data = self._read()
        projects = data.setdefault("projects", {})
        if not isinstance(projects, dict):
            projects = data["projects"] = {}
        listed = set(projects.get(self.key) or ()) | {name}
        projects[self.key] = sorted(listed)
        try:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            tmp = f"{self.path}.{os.getpid()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, ensure_ascii=False, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except OSError as exc:
            self.problem = (
                f"{self.path} cannot be written ({exc.strerror}); the tool is allowed for this session only."
            )
            return False
        return True


class Allowances:
    """This session's allowances and the project's (``where`` says which applies to a tool)."""

    def __init__(self, project: ProjectAllowances | None = None) -> None:
        self.session: set[str] = set()
        self._project = project

    @property
    def project(self) -> ProjectAllowances:
        if self._project is None:
            self._project = ProjectAllowances.for_project()
        return self._project

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
            return self.project.problem or f"{name} is allowed for this session."
        return f"{name} is allowed for the rest of this session."
