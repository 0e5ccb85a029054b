"""The front ends beyond ``run``: the matrix, bench, fuzz, record, and the generator of the
committed suite.

Invariant: each reuses the one Run, transport and reader; none starts a process or parses a
suite file itself.
"""
