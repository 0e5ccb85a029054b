"""The one transport: starting, talking to and stopping adapters.

Invariant: the only layer that starts a process (:mod:`.process`); every wait is bounded and
everything read from an adapter is capped; nothing here judges an answer.
"""
