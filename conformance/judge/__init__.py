"""Judging: answers and expectations in, frozen verdicts out.

Invariant: pure. No I/O, no replays, no explanation (that is :mod:`conformance.explain`'s).
"""
