"""Peak memory of ``run`` and ``validate`` on one very long vector, against its size.

The vector is built here: ``--calls`` calls (default 10^6: a ``new``, then alternating steps and
evicts) at budget 4 with recentWindow 1, obsWindow 2 and poolKernel 3, each step's weights
drawn from a small table of float32 values, every expectation from the reference, written in
the canonical layout. Then each command runs in a fresh interpreter that reports its own
peak resident memory (``ru_maxrss`` of the process itself, not of the adapter):

- ``snapkv-conformance run FILE --adapter ADAPTER`` (default: the C port, ``make -C
  adapters/c``, so that the kit's own cost is what is measured);
- ``snapkv-conformance validate FILE``.

The target (the one-pipeline design): each at most 3x the file's size plus 60 MB, whatever
the size of the vector. It prints the size, each command's peak and wall time, and the ratio
to the target.

    python3 benchmarks/bench_memory.py [--calls 1000000] [--adapter CMD]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance.adapter.server import Session  # noqa: E402
from conformance.policy.reference import float32_literal  # noqa: E402

PARAMS = {"budget": 4, "recentWindow": 1, "obsWindow": 2, "poolKernel": 3}
WEIGHTS = [float32_literal(x / 97) for x in range(1, 97)]
MEASURE = (
    "import resource, sys\n"
    "from conformance.cli import main\n"
    "status = main(sys.argv[1:])\n"
    "print('PEAK', status, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
)


def write_vector(path: Path, calls: int) -> None:
    """The long vector, written line by line (never held whole)."""
    session = Session()
    session.handle({"id": 0, "op": "new", "params": PARAMS, "seed": 0})
    compact = json.dumps(PARAMS, separators=(",", ":"))
    with path.open("w", encoding="utf-8") as out:
        out.write("{\n")
        out.write('  "format": "snapkv-vector/1",\n')
        out.write('  "id": "memory/long-stream",\n')
        out.write(
            '  "description": "A long stream at budget 4 with an evict after every step, for '
            'benchmarking memory only. Catches: nothing in particular.",\n'
        )
        out.write('  "tags": ["ring"],\n')
        out.write(f'  "params": {compact},\n  "seed": 0,\n  "calls": [\n')
        out.write(f'    {{"op":"new","params":{compact},"seed":0}}')
        kept = 0
        pos = 0
        written = 1
        while written < calls:
            attn = [WEIGHTS[(pos * 7 + i) % len(WEIGHTS)] for i in range(kept)] if pos else None
            step = {"op": "step", "pos": pos, "attn": attn}
            assert session.handle({"id": 0, **step})["ok"]
            out.write(",\n    " + json.dumps(step, separators=(",", ":")))
            written += 1
            kept += 1
            if written < calls:
                victims = session.handle({"id": 0, "op": "evict"})["victims"]
                expect = json.dumps({"victims": victims}, separators=(",", ":"))
                out.write(f',\n    {{"op":"evict","expect":{expect}}}')
                written += 1
                kept -= len(victims)
            pos += 1
        out.write("\n  ]\n}\n")


def measure(args: list[str]) -> tuple[int, float, float]:
    """(exit status, peak MB, wall seconds) of ``snapkv-conformance ARGS`` in a fresh process."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, *args], capture_output=True, text=True, check=False
    )
    wall = time.monotonic() - started
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("PEAK ")), None)
    if line is None:
        raise SystemExit(f"no measurement from {args}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    _, status, peak_kb = line.split()
    return int(status), int(peak_kb) / 1024, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--adapter", help="the adapter for run (default: the C port)")
    args = parser.parse_args()
    adapter = args.adapter
    if adapter is None:
        subprocess.run(["make", "-s", "-C", str(ROOT / "adapters" / "c")], check=True)
        adapter = shlex.quote(str(ROOT / "adapters" / "c" / "build" / "snapkv-adapter"))
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "memory" / "long-stream.json"
        path.parent.mkdir()
        began = time.monotonic()
        write_vector(path, args.calls)
        size = path.stat().st_size / 1e6
        target = 3 * size + 60
        print(
            f"one vector of {args.calls:,} calls, {size:.1f} MB (built in "
            f"{time.monotonic() - began:.0f} s); target: at most 3 x size + 60 MB = "
            f"{target:.0f} MB; load average {os.getloadavg()[0]:.1f}"
        )
        for label, command in (
            ("run", ["run", str(path), "--adapter", adapter]),
            ("validate", ["validate", str(path)]),
        ):
            status, peak, wall = measure(command)
            print(
                f"{label:>8}: exit {status}, peak {peak:.0f} MB ({peak / target:.2f} of the "
                f"target), {wall:.1f} s"
            )


if __name__ == "__main__":
    main()
