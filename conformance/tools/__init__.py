"""The front ends beyond ``run``: the matrix, bench, fuzz, record, and the generator of the
committed suite.

Invariant: each reuses the one Run, transport and reader; none starts an adapter or parses a
suite file itself. (The one process a tool starts that is not an adapter: the worker pool of
:mod:`.generate.kills`, which recomputes the shipped kill matrix.)
"""
