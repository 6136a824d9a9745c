"""The interactive terminal front end.

``app`` (entry point, no heavy imports) → ``frontend`` (the prompt_toolkit loop and the controller's
``FrontEnd``), with ``keys`` (key bindings), ``completion`` (side-effect-free completion) and ``render`` (rich
rendering of events, shared with the IPython extension). Nothing is imported here.
"""
