"""The in-tree ports side by side with the reference adapter: ``conformance.tools.bench`` (what
``snapkv-conformance bench`` runs for one port) over every port that is built.

Each workload (SPEC's defaults, and budget 1024, both with an evict after every step) goes to
every adapter through protocol v1, repeats interleaved; the table gives steps per second and
the ratio to the reference by wall time and by CPU time, medians, and whether each port's
answers agreed with the reference's. A port that is not built is reported as absent:

    make -C adapters/c && make -C adapters/go && make -C adapters/typescript
    cargo build --release --manifest-path adapters/rust/Cargo.toml
    python3 benchmarks/bench_ports.py [--repeats 5] [--steps N]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from in_tree import PORTS

from conformance.tools import bench


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per adapter (default 5)")
    parser.add_argument("--steps", type=int, help="steps per workload (default: its own)")
    args = parser.parse_args(argv)

    adapters: list[tuple[str, list[str]]] = [("reference (python)", list(bench.REFERENCE_ARGV))]
    for name, path in PORTS.items():
        if path.is_file():
            adapters.append((name, [str(path)]))
        else:
            print(f"{name}: absent (not built: {path})")
    workloads = list(bench.WORKLOADS)
    if args.steps:
        workloads = [dataclasses.replace(w, steps=args.steps) for w in workloads]
    print(f"before: {bench.load_average()}")
    results = bench.bench(adapters, workloads, args.repeats)
    print(bench.format_results(results, args.repeats))
    print(f"after: {bench.load_average()}")
    return 0 if bench.agreed(results) else 1


if __name__ == "__main__":
    sys.exit(main())
