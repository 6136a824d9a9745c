"""Tools from outside: the MCP servers the user already has, offered to the assistant as tools of its own.

The entries themselves are configuration, below this package (the settings check them when the config
file is read): ``pyaichat.configuration.mcp_server_spec`` (``ServerSpec``, as configured and, filled in,
ready to start) and ``pyaichat.configuration.mcp_servers`` (the config file's ``[mcp_servers.NAME]`` tables
and the ``mcpServers`` JSON of Claude Desktop, Cursor and VS Code). One module per job here, bottom up:

- ``naming``: the name each tool is offered under (``SERVER__TOOL``, within every provider's limits);
- ``trust``: which calls run at once and which need the person;
- ``results``: a tool's answer as the model reads it (masked, bounded, images only where allowed);
- ``connection``: one server, started, listed and called through the official ``mcp`` SDK;
- ``manager``: every server of the session, on one background event loop, behind plain blocking calls;
- ``offer``: what a turn offers the model (full schemas or names and first lines, ``describe_tool``);
- ``approval``: the seam through which a call that needs the person reaches them;
- ``tools``: the servers as the assistant's tools: each turn's offer, and how a call runs (approval, masking,
  bounds, audit);
- ``status``: the servers as ``/tools`` lists them.

Nothing here is imported at start-up: it loads with the first question that needs it; the ``mcp`` SDK itself
only on the manager's own thread.
"""
