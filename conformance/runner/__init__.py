"""The one run: the suite's vectors and protocol checks through the transport, each judged,
with the scores evidence a failure needs gathered from the adapter.

Invariant: no numpy; every front end (run, matrix, the pytest plugin, mutants, fuzz replays)
runs the suite through :class:`.run.Run` or its parts, never a loop of its own.
"""
