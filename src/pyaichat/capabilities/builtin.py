"""Imports every built-in capability module so that each registers itself (one import per module)."""

from . import (
    code_tools,  # noqa: F401  run_python, eval_expr (the sandbox)
    figures,  # noqa: F401  get_figure
    introspect,  # noqa: F401  list_globals, get_type, get_repr, get_dir, get_doc, get_last_exception
    picture_tool,  # noqa: F401  get_session_picture (for outside agents; the assistant is sent the picture)
    propose,  # noqa: F401  propose_code (the approval gate; handled by the agent)
    query_sql,  # noqa: F401  query_sql
)
