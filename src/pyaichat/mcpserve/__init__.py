"""The live session served to outside agents over MCP (``/mcp on``, ``pyaichat --mcp``, ``pyaichat mcp``).

Two halves, kept in separate processes so the person's REPL never carries the MCP SDK (outside calls come
while the person types: the rule for where heavy libraries run is in ``ipc``):

- **In the session's process** (standard library only): ``gate`` (outside calls wait while the person's own
  input runs), ``endpoint`` (a private socket the faces talk to), ``backend`` (one call: bounded, masked,
  audited, shown as a quiet line), ``service`` (``/mcp on|off|status``), ``discovery`` (the record that lets
  ``pyaichat mcp`` find the session).
- **The faces** (the ``mcp`` SDK, ``pyaichat[mcp]``): ``face`` builds one MCP server over a backend;
  ``http_main`` serves it over Streamable HTTP behind ``guard`` (token, Origin, Host, size, rate); ``bridge``
  serves it over stdio for clients that start a command, finding the session through the discovery records
  and proving it (its own socket, its process: ``link.prove``), or a Jupyter kernel headless
  (``bridge_cli``). The faces reach the session through ``link``, over ``ipc``'s JSON lines.

Nothing here is imported at start-up; ``gate`` is the one module the controller loads with itself.
"""
