"""A kernel on a Jupyter Server or JupyterHub (``pyaichat --server URL``): the REST API, the kernel websocket
and its channels, and the way from an address and a token to a ``KernelRuntime``. Loaded only with
``--server``.
"""
