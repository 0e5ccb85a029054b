"""Each adapter against the floor: the least work that answers the same request stream.

The stream is one decode run at budget 1024, recentWindow 16, obsWindow 16, poolKernel 7:
STEPS steps of float32 weights in shortest round-trip text (from 1,024 steps on, 1,024 weights
a line), an ``evict`` after every step. The floor is ``benchmarks/floor`` (a Rust program
built here with cargo): it finds the fields of these very lines by position, reads each
weight with Rust's standard float parser (Eisel-Lemire, correctly rounded), runs the Rust
port's policy and writes the answers, flushing each as an adapter must. What an adapter does
beyond that, a strict general JSON reader, validation and messages, is its overhead.

Every program gets the same bytes through a pipe; the figure is the process's CPU time (user +
system from ``wait4``, start-up included), steadier than wall time on a shared machine. The
repeats are interleaved across programs; the script prints medians in microseconds per step
and each adapter's ratio to the floor, and checks that every program evicted the same
positions. Adapters that are not built are reported as absent.

    python3 benchmarks/bench_floor.py [--steps 4000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from in_tree import ROOT, adapters, run_once, victims

from conformance.tools.bench import Workload

FLOOR = ROOT / "benchmarks" / "floor"


def build_floor() -> list[str]:
    cargo = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
    manifest = FLOOR / "Cargo.toml"
    subprocess.run(
        [cargo, "build", "--quiet", "--release", "--locked", "--manifest-path", str(manifest)],
        check=True,
    )
    return [str(FLOOR / "target" / "release" / "snapkv-floor")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    stream = Workload("floor", 1024, 16, 16, 7, steps=options.steps).stream()
    programs: dict[str, list[str] | None] = {"floor": build_floor(), **adapters()}
    seconds: dict[str, list[float]] = {name: [] for name in programs}
    evicted: dict[str, list[object]] = {}
    for _ in range(options.repeats):
        for name, argv in programs.items():
            if argv is not None:
                cpu, answers = run_once(argv, stream)
                seconds[name].append(cpu)
                evicted.setdefault(name, victims(answers))
    floor = statistics.median(seconds["floor"])
    print(
        f"{options.steps} steps at budget 1024/16/16/7, an evict after each; median CPU of "
        f"{options.repeats} repeats (load average {os.getloadavg()[0]:.1f}); "
        f"python {sys.version.split()[0]}"
    )
    print(f"{'program':<12} {'µs/step':>8} {'x floor':>8}")
    for name, argv in programs.items():
        if argv is None:
            print(f"{name:<12} {'not built':>8}")
            continue
        median = statistics.median(seconds[name])
        print(f"{name:<12} {median / options.steps * 1e6:8.1f} {median / floor:8.2f}")
    for name, answers in evicted.items():
        if answers != evicted["floor"]:
            raise SystemExit(f"{name} evicted differently from the floor program")
    print("every program evicted the same positions")


if __name__ == "__main__":
    main()
