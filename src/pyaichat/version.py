"""pyaichat's version, in a module of its own: anything may import it without loading the package's entry
points (the IPython extension hooks in ``pyaichat/__init__.py``)."""

__version__ = "0.1.0"
