"""The reference adapter: the policy served over protocol v1 (``snapkv-conformance adapter``),
and the same answers in process (:func:`.replay.replay`).

Invariant: no processes started, no files read; imports only the policy and the spec (a
mutant or a port is served by passing its factory: ``snapkv-conformance adapter --mutant``).
"""
