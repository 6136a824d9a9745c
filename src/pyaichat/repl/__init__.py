"""The interactive terminal front end.

``app`` (entry point, no heavy imports) → ``frontend`` (the prompt_toolkit loop and the controller's
``FrontEnd``), with ``keys`` (key bindings), ``completion`` (the runtime's completions as prompt_toolkit
completers) and ``render`` (rich rendering of events, shared with the IPython extension). Nothing is imported
here.
"""
