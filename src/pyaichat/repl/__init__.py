"""The interactive terminal front end: prompt_toolkit input (``app``, ``keys``, ``completion``) and rich
output (``render``). Nothing is imported here, so ``import pyaichat.repl`` stays free.
"""
