"""The reference adapter: the policy served over protocol v1 (``snapkv-conformance adapter``),
and the same answers in process (:func:`.replay.replay`).

Invariant: no processes started, no files read; imports the policy, the catalogue of mistakes
(``--mutant``) and the spec.
"""
