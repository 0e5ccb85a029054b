"""Where a failing run's triage spends its time: one default ``run``, its triage profiled.

Runs ``snapkv-conformance run --adapter CMD`` in this process (the committed suite, protocol
checks included), profiles the triage a failing run takes (``runner/run.py`` ``triaged``) with
cProfile, and prints the run's wall time, the triage's wall and CPU time, and the triage's
functions with the most cumulative time. One run, not a benchmark: the shares matter, not the
seconds.

    python3 benchmarks/profile_triage.py [--top 15] CMD
    python3 benchmarks/profile_triage.py "python tests/heldout/real_ports.py official-avgpool"
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance.cli import main as cli_main  # noqa: E402
from conformance.runner import run as run_module  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("adapter", metavar="CMD")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    profile = cProfile.Profile()
    spent: dict[str, float] = {}
    inner = run_module.triaged

    def triaged(*given, **named):  # type: ignore[no-untyped-def]
        began, cpu = time.perf_counter(), time.process_time()
        profile.enable()
        try:
            return inner(*given, **named)
        finally:
            profile.disable()
            spent["wall"] = time.perf_counter() - began
            spent["cpu"] = time.process_time() - cpu

    run_module.triaged = triaged
    os.chdir(ROOT)
    began = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        status = cli_main(["run", "--adapter", args.adapter])
    wall = time.perf_counter() - began
    print(f"run --adapter {args.adapter!r}: exit {status}, {wall:.2f} s wall")
    if not spent:
        print("  no triage (the run passed)")
        return
    print(f"  triage: {spent['wall']:.2f} s wall, {spent['cpu']:.2f} s CPU (profiled)")
    print(f"  load average {os.getloadavg()[0]:.1f}; the triage's calls by cumulative time:")
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(args.top)
    listing = out.getvalue().splitlines()
    start = next(i for i, line in enumerate(listing) if line.strip().startswith("ncalls"))
    for line in listing[start:]:
        if line.strip():
            print("  " + line.replace(str(ROOT) + "/", ""))


if __name__ == "__main__":
    main()
