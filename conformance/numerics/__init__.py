"""Numerics profiles: whether every difference between a port's answers and the reference's is
rounding that a named arithmetic admits (``run --numerics P``; SPEC.md, appendix "Numerics
profiles").

:mod:`.profiles` is the table and the error bound, :mod:`.decision` the exact decision of
whether a victim set is one some admitted evaluation picks, :mod:`.verdict` a vector's answers
judged under a profile, the reference continued from the port's accepted choices.

Invariant: pure over values, exact rational arithmetic; replays the plain reference in process,
never starts a process and imports no numpy (it is on the run path).
"""
