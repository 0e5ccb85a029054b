"""A four-vector suite for the matrix and pytest-plugin tests.

Expectations come from the reference (``runner_support.reference_vector``). Against the
catalogued mutants (``runner_support.mutant_argv``): ``ties-to-higher-position`` fails
``tiny/ties`` and ``tiny/workload``, ``null-advances-ring`` fails ``tiny/null-ring`` and
``tiny/workload``; the reference passes all four.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.runner_support import params, reference_vector, workload, write_suite

IDS = ("tiny/null-ring", "tiny/refusal", "tiny/ties", "tiny/workload")


def write_small_suite(directory: Path) -> Path:
    new = {"op": "new", "params": params(1, 0, 2, 1), "seed": 0}
    vectors = [
        # Two zero scores: the lower position goes.
        reference_vector(
            "tiny/ties",
            [new, step(0, None), step(1, [0.0]), {"op": "evict"}],
        ),
        # With the null step inert, position 0 keeps both of its weights (1 + 0) and stays.
        reference_vector(
            "tiny/null-ring",
            [new, step(0, []), step(1, [1.0]), step(2, None), step(3, [0.0] * 3), {"op": "evict"}],
        ),
        reference_vector(
            "tiny/refusal",
            [new, step(4, None), step(4, None), step(5, [-1.0]), {"op": "evict"}],
        ),
        workload("tiny/workload", params(3, 1, 2, 3), range(100, 112), seed=1),
    ]
    return write_suite(directory, vectors)


def step(pos: int, attn: list[float] | None) -> dict:
    return {"op": "step", "pos": pos, "attn": attn}
