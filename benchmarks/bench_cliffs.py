"""Parameter cliffs in the reference policy, in process: maximal obsWindow and poolKernel against
the defaults, on the same decode stream, for the readable reference and its numpy fast path.

SPEC.md §2.1 lets every parameter be as large as ``2^31 - 1``. Two naive implementations turn
that into a cliff: pooling that visits every neighbour of each entry (O(kept^2) once the kernel
covers the cache) and sums that re-add every written ring slot at each evict (a ring of
``2^31 - 1`` slots never wraps). The stream: budget B (default 1024), recentWindow 16, an
``evict`` after every step, float32 weights from a seeded generator, first ``budget`` null
steps to fill the cache, then the timed steps. Three settings:

- ``defaults``: obsWindow 16, poolKernel 7;
- ``obsWindow max``: obsWindow 2^31 - 1, poolKernel 7;
- ``poolKernel max``: obsWindow 16, poolKernel 2^31 - 1.

It prints, per implementation and setting, the median CPU seconds of the timed steps over the
repeats (this process's CPU time, steadier than wall time on a shared machine) and the ratio
of each maximal setting to the defaults (target: at most 2). Repeats are interleaved across
implementations and settings, so background load falls on all alike.

    python3 benchmarks/bench_cliffs.py [--budget 1024] [--steps 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance.policy.fast import fast_policy  # noqa: E402
from conformance.policy.reference import INT31_MAX, new_policy  # noqa: E402

SETTINGS = {
    "defaults": (16, 7),
    "obsWindow max": (INT31_MAX, 7),
    "poolKernel max": (16, INT31_MAX),
}
IMPLEMENTATIONS = {"reference": False, "fast path": True}


def run(budget: int, obs: int, kernel: int, fast: bool, rows: list[list[float]]) -> float:
    """CPU seconds of the timed steps (each ``step`` then ``evict``) of one fresh policy."""
    params = {"budget": budget, "recentWindow": 16, "obsWindow": obs, "poolKernel": kernel}
    policy = (fast_policy if fast else new_policy)(params)
    for pos in range(budget):
        policy.step(pos, None)
    start = time.process_time()
    for offset, row in enumerate(rows):
        policy.step(budget + offset, row[: len(policy.kept)])
        policy.evict()
    return time.process_time() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--budget", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(2026)
    rows = rng.random((args.steps, args.budget), dtype=np.float32).tolist()
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.repeats):
        for name, fast in IMPLEMENTATIONS.items():
            for setting, (obs, kernel) in SETTINGS.items():
                seconds = run(args.budget, obs, kernel, fast, rows)
                times.setdefault((name, setting), []).append(seconds)
    print(
        f"budget {args.budget}, recentWindow 16, {args.steps} timed steps with an evict each; "
        f"median CPU seconds of {args.repeats} repeats; ratio = setting / defaults\n"
    )
    header = f"{'implementation':<16}" + "".join(f"{s:>18}" for s in SETTINGS)
    header += f"{'obsWindow ratio':>18}{'poolKernel ratio':>18}"
    print(header)
    print("-" * len(header))
    for name in IMPLEMENTATIONS:
        medians = {s: statistics.median(times[(name, s)]) for s in SETTINGS}
        base = medians["defaults"]
        line = f"{name:<16}" + "".join(f"{medians[s]:>17.3f}s" for s in SETTINGS)
        line += f"{medians['obsWindow max'] / base:>17.2f}x"
        line += f"{medians['poolKernel max'] / base:>17.2f}x"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
