"""The suite as files: the vector and protocol-check models, the one reader of their layout,
discovery (the walk, ids, ``-k``, shards, known failures) and validation.

Invariant: no processes; files are read here and nowhere else.
"""
