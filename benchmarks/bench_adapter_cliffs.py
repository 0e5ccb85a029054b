"""Parameter cliffs in every adapter: the same request stream at the defaults and at maximal
``obsWindow`` or ``poolKernel``, timed side by side.

SPEC.md §2.1 lets every parameter be as large as ``2^31 - 1``. Two naive implementations turn
that into a cliff: pooling that visits ``poolKernel`` neighbours per entry (O(kept^2) once the
kernel covers the cache), and sums that re-add every written ring column at each evict (a ring
of ``2^31 - 1`` slots never wraps, so the columns written grow with the run). This script runs
one decode stream (budget 1024, recentWindow 16, an ``evict`` after every step, float32
weights from a seeded generator) through each adapter three ways:

- ``defaults``: obsWindow 16, poolKernel 7;
- ``obsWindow max``: obsWindow 2^31 - 1, poolKernel 7;
- ``poolKernel max``: obsWindow 16, poolKernel 2^31 - 1.

The lines differ only in the ``new`` request. It prints, per adapter and setting, the median
adapter CPU seconds over the repeats (the adapter process's user + system time from
``wait4``, start-up included; steadier than wall time on a shared machine), and the ratio of
each maximal setting to the defaults. Repeats are interleaved across adapters and settings.
An adapter that is not built is reported as absent.

    python3 benchmarks/bench_adapter_cliffs.py [--steps 3000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics

from in_tree import adapters, run_once, victims

from conformance.policy.reference import INT31_MAX
from conformance.tools.bench import Workload

#: The three settings; their streams differ only in the ``new`` request.
SETTINGS = {
    "defaults": Workload("defaults", 1024, 16, 16, 7, steps=3000),
    "obsWindow max": Workload("obsWindow max", 1024, 16, INT31_MAX, 7, steps=3000),
    "poolKernel max": Workload("poolKernel max", 1024, 16, 16, INT31_MAX, steps=3000),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    streams = {
        name: dataclasses.replace(workload, steps=options.steps, seed=options.seed).stream()
        for name, workload in SETTINGS.items()
    }
    found = adapters()
    times: dict[tuple[str, str], list[float]] = {}
    answers: dict[tuple[str, str], list[object]] = {}
    for _ in range(options.repeats):
        for name, argv in found.items():
            if argv is None:
                continue
            for setting, stream in streams.items():
                seconds, raw = run_once(argv, stream)
                times.setdefault((name, setting), []).append(seconds)
                answers.setdefault((name, setting), victims(raw))
    print(
        f"{options.steps} steps, budget 1024, recentWindow 16, evict after every step; "
        f"median adapter CPU seconds of {options.repeats} (load average "
        f"{os.getloadavg()[0]:.1f})"
    )
    print(
        f"{'adapter':<12} {'defaults':>9} {'obsWindow max':>14} {'ratio':>6} "
        f"{'poolKernel max':>15} {'ratio':>6}"
    )
    for name, argv in found.items():
        if argv is None:
            print(f"{name:<12} not built")
            continue
        base = statistics.median(times[(name, "defaults")])
        obs = statistics.median(times[(name, "obsWindow max")])
        kernel = statistics.median(times[(name, "poolKernel max")])
        print(
            f"{name:<12} {base:9.2f} {obs:14.2f} {obs / base:5.2f}x {kernel:15.2f} "
            f"{kernel / base:5.2f}x"
        )
    for setting in SETTINGS:
        reference = answers[("reference", setting)]
        for name, argv in found.items():
            if argv is not None and answers[(name, setting)] != reference:
                raise SystemExit(f"{name} answered {setting} differently from the reference")
    print("every adapter answered each setting exactly as the reference did")


if __name__ == "__main__":
    main()
