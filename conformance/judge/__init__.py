"""Judging: answers and expectations in, frozen results out, one type per outcome
(:mod:`.verdicts`). Each rule lives in one place: an answer line's in :mod:`.answers`, a
vector's answers' in :mod:`.checker`, a protocol check's in :mod:`.check_answers`.

Invariant: pure. No I/O, no replays, no explanation (that is :mod:`conformance.explain`'s).
"""
