"""Configuration: what the person sets and where it comes from (defaults < config file < ``PYAICHAT_*``
environment < command-line flags), checked once against the one settings table; and the entries of their MCP
servers, tool rules and kernel flags, read with it. Plain data and the standard library: read at start-up.
"""
