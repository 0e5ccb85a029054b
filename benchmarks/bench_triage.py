"""What the triage costs next to the run it explains, on the committed suite.

For a few failing ports (catalogued mistakes served in process, so the figures measure the
triage and not process start-up), the run and the triage are each timed several times;
medians are printed side by side with their ratio. The machine is shared and noisy: compare
the ratios, not the seconds.

Run: ``python benchmarks/bench_triage.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from conformance import mutants
from conformance.explain import triage
from conformance.policy.reference import SnapKV
from conformance.runner.run import run_suite
from conformance.spec import resources
from conformance.suite.vectors import load_suite
from conformance.transport.session import InProcessAdapter

PORTS = ("float32-accumulation", "ties-to-higher-position", "forward-only-pooling")
#: Two independent mistakes: the triage has to build combinations to explain them.
PAIR = ("float32-accumulation", "forward-only-pooling")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    suite = load_suite([str(resources.suite_dir())])
    cases = [(name, mutants.lookup(name).policy) for name in PORTS]
    pair = triage.compose([mutants.lookup(name).policy for name in PAIR], SnapKV)
    assert pair is not None
    cases.append((" + ".join(PAIR), pair))
    print(
        f"{len(suite)} vectors, {len(mutants.CATALOGUE)} catalogued mistakes, "
        f"median of {args.repeat}"
    )
    print(f"{'port':50} {'failing':>7} {'run s':>7} {'triage s':>8} {'ratio':>6}  top item")
    for name, policy in cases:
        implementation = {"name": name, "language": "python", "version": "0"}
        runs, triages = [], []
        for _ in range(args.repeat):
            began = time.perf_counter()
            run = run_suite(
                suite,
                adapter_factory=lambda p=policy, i=implementation: InProcessAdapter(p, i),
            )
            runs.append(time.perf_counter() - began)
            began = time.perf_counter()
            found = triage.triage(suite, run.results)
            triages.append(time.perf_counter() - began)
        run_s, triage_s = statistics.median(runs), statistics.median(triages)
        top = found.likely[0].mistake if found.likely else "-"
        print(
            f"{name:50} {found.failing:>7} {run_s:7.2f} {triage_s:8.2f} "
            f"{triage_s / run_s:6.1f}  {top}"
        )


if __name__ == "__main__":
    main()
