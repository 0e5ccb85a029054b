"""The policy of SPEC.md §2: the reference (plain Python, normative) and its numpy fast path,
bit for bit the same.

Invariant: imports only :mod:`conformance.spec`; numpy only in :mod:`.fast`.
"""
