"""The one transport: starting, talking to and stopping adapters.

Invariant: the only layer that starts a process (:mod:`.process`); it moves bytes and bounds:
every wait is bounded and everything read from an adapter is capped; nothing here decodes or
judges an answer (the caller's ``read`` does, :mod:`conformance.runner.client`).
"""
