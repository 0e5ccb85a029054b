"""What the fuzzer's default budget finds: README's fuzz table, printed by this script.

For each planted mistake (catalogued mutants, a held-out numpy port ranking with the default
argsort, and the weight-reading slip of ``tests/lax_adapters/slips.py``), ``fuzz`` runs with
the default example budget over seeds 1..N and counts the scenarios run up to the first
difference (shrinking is not timed here); likewise ``fuzz --protocol`` with its default budget
for the protocol slips. Prints Markdown tables: median and worst examples to the first
difference over the seeds, and how many seeds found nothing, with the hypothesis version it
was measured with. The mistakes of the policy are served in-process; the weight-reading slip
must see each weight's text, so it runs as a process.

    python benchmarks/bench_fuzz.py            # seeds 1..10
    python benchmarks/bench_fuzz.py --seeds 20
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import hypothesis

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS / "lax_adapters"))

import slips  # noqa: E402
from heldout_ports import ArgsortSelection  # noqa: E402

from conformance.mutants import lookup  # noqa: E402
from conformance.runner.client import Client  # noqa: E402
from conformance.tools import (  # noqa: E402
    fuzz,
    protocol_fuzz,
)
from conformance.transport.in_process import InProcessAdapter  # noqa: E402

MISTAKES = (
    ("stale history on slot reuse", "stale-history-on-reuse"),
    ("a null step advances the ring", "null-advances-ring"),
    ("ties evict the higher position", "ties-to-higher-position"),
    ("pairwise summation (`np.sum`)", "pairwise-summation"),
    ("Kahan summation", "kahan-summation"),
    ("chronological slot order", "chronological-order"),
    ("float32 accumulation", "float32-accumulation"),
    ("numpy's default argsort (held out)", "argsort"),
    ("weights read with one rounding, `Float.parseFloat` (slip)", "single-rounding"),
)
PROTOCOL_SLIPS = (
    ("ids read as signed 64-bit integers (slip)", "signed-64-bit-ids"),
    ("the first of repeated names kept (slip)", "first-name-wins"),
)


def adapter(name: str) -> Client:
    if name == "single-rounding":
        process = Client.process([sys.executable, str(TESTS / "lax_adapters" / "slips.py"), name])
        process.start()
        return process
    if name == "argsort":
        served = Client(InProcessAdapter(ArgsortSelection))
    else:
        mutant = lookup(name)
        served = Client(InProcessAdapter(mutant.factory, mutant.implementation()))
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
            served = adapter(name)
            finding = fuzz.fuzz(served, seed=seed, max_shrinks=1).finding
            served.close()
            if finding is None:
                missed += 1
            else:
                found.append(finding.examples_to_find)
        print(row(label, name, found, missed), flush=True)
    print()
    sessions = protocol_fuzz.DEFAULT_MAX_SESSIONS
    print(f"fuzz --protocol, default budget {sessions} sessions, seeds 1 to {args.seeds}")
    print()
    head = "| planted bug | sessions to the first difference: median"
    print(f"{head} | worst of {args.seeds} | missed |")
    print("|---|---:|---:|---:|")
    for label, name in PROTOCOL_SLIPS:
        found, missed = [], 0
        for seed in seeds:
            lines = protocol_fuzz.fuzz_protocol(slips.Sessions(name), seed=seed, max_shrinks=1)
            if lines.finding is None:
                missed += 1
            else:
                found.append(lines.finding.examples_to_find)
        print(row(label, name, found, missed), flush=True)


def row(label: str, name: str, found: list[int], missed: int) -> str:
    median = f"{statistics.median(found):g}" if found else "-"
    worst = str(max(found)) if found else "-"
    return f"| {label} (`{name}`) | {median} | {worst} | {missed} |"


if __name__ == "__main__":
    main()
