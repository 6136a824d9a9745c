"""The assistant: events, context, LLM client and the bounded loop.

Importing this package is cheap; ``litellm`` is imported only by ``agent.llm`` when a question is asked (or
warmed in the background once the user enters Assistant mode).
"""
