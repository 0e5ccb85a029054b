"""What the fuzzer's default budget finds: README's fuzz table, printed by this script.

For each planted mistake (catalogued mutants, and a held-out numpy port ranking with the
default argsort), ``fuzz`` runs in-process with the default example budget over seeds 1..N
and counts the scenarios run up to the first difference (shrinking is not timed here).
Prints a Markdown table: median and worst examples to the first difference over the seeds,
and how many seeds found nothing, with the hypothesis version it was measured with.

    python benchmarks/bench_fuzz.py            # seeds 1..10
    python benchmarks/bench_fuzz.py --seeds 20
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import hypothesis

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from heldout_ports import ArgsortSelection

from conformance.mutants import lookup
from conformance.tools import fuzz
from conformance.transport.session import InProcessAdapter

MISTAKES = (
    ("stale history on slot reuse", "stale-history-on-reuse"),
    ("a null step advances the ring", "null-advances-ring"),
    ("ties evict the higher position", "ties-to-higher-position"),
    ("pairwise summation (`np.sum`)", "pairwise-summation"),
    ("Kahan summation", "kahan-summation"),
    ("chronological slot order", "chronological-order"),
    ("float32 accumulation", "float32-accumulation"),
    ("numpy's default argsort (held out)", "argsort"),
)


def adapter(name: str) -> InProcessAdapter:
    if name == "argsort":
        served = InProcessAdapter(ArgsortSelection)
    else:
        mutant = lookup(name)
        served = InProcessAdapter(mutant.factory, mutant.implementation())
    served.start()
    return served


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds 1..N (default 10)")
    args = parser.parse_args()
    seeds = range(1, args.seeds + 1)
    budget = fuzz.DEFAULT_MAX_EXAMPLES
    print(
        f"hypothesis {hypothesis.__version__}, default budget {budget} examples, "
        f"seeds 1 to {args.seeds}"
    )
    print()
    print(
        f"| planted bug | examples to the first difference: median | worst of {args.seeds} "
        "| missed |"
    )
    print("|---|---:|---:|---:|")
    for label, name in MISTAKES:
        found, missed = [], 0
        for seed in seeds:
            finding = fuzz.fuzz(adapter(name), seed=seed, max_shrinks=1).finding
            if finding is None:
                missed += 1
            else:
                found.append(finding.examples_to_find)
        median = f"{statistics.median(found):g}" if found else "-"
        worst = str(max(found)) if found else "-"
        print(f"| {label} (`{name}`) | {median} | {worst} | {missed} |", flush=True)


if __name__ == "__main__":
    main()
