"""The reference adapter against a naive pure-Python adapter: CPU time over one whole run.

One request stream is built here: ``hello``, ``new`` at budget ``--budget`` (recentWindow 16,
obsWindow 16, poolKernel 7), then ``--steps`` steps of random float32 weights (one per kept
position, written in shortest round-trip form), each followed by an ``evict``, then ``bye``.
Each adapter process reads the whole stream from a file on its stdin and writes its answers to
a file, so the figure is the adapter's own CPU time (user + system of the child, start-up
included), not the runner's. The two adapters alternate ``--repeats`` times; the script checks
that every answer of the two is the same (victims identical) and prints the median CPU time of
each and their ratio (the target is at least 10x), with the JSON reader the reference used.

- reference: ``python -m conformance adapter`` (orjson fast path when installed, strict codec
  otherwise);
- reference, orjson hidden: the same with its strict ``json`` path alone (orjson's gain);
- naive: ``benchmarks/naive_adapter.py`` (plain ``json``, the plain-Python oracle policy).

    python3 benchmarks/bench_adapter.py [--steps 4000] [--budget 1024] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The reference with orjson hidden: its strict ``json`` path alone, to measure orjson's gain.
_WITHOUT_ORJSON = (
    "import sys; sys.modules['orjson'] = None; "
    "from conformance.server import main; sys.exit(main())"
)
ADAPTERS = {
    "reference": [sys.executable, "-m", "conformance", "adapter"],
    "strict": [sys.executable, "-c", _WITHOUT_ORJSON],
    "naive": [sys.executable, str(ROOT / "benchmarks" / "naive_adapter.py")],
}


def float32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


def stream(steps: int, budget: int, seed: int = 0) -> bytes:
    """The request lines of one run; the kept count follows the policy (budget after evict)."""
    rng = random.Random(seed)
    params = {"budget": budget, "recentWindow": 16, "obsWindow": 16, "poolKernel": 7}
    lines = [
        {"id": 1, "op": "hello", "protocol": 1},
        {"id": 2, "op": "new", "params": params, "seed": 0},
    ]
    kept = 0
    for pos in range(steps):
        attn = [float32(rng.random()) for _ in range(kept)]
        lines.append({"id": len(lines) + 1, "op": "step", "pos": pos, "attn": attn})
        lines.append({"id": len(lines) + 1, "op": "evict"})
        kept = min(kept + 1, budget)
    lines.append({"id": len(lines) + 1, "op": "bye"})
    return b"".join(json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in lines)


def cpu_seconds(argv: list[str], requests: Path, answers: Path) -> float:
    """User + system CPU seconds of one adapter process over the whole stream."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        completed = subprocess.run(argv, stdin=stdin, stdout=stdout, check=False, cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited with {completed.returncode}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def version(module: str) -> str:
    try:
        return str(__import__(module).__version__)
    except ImportError:
        return "not installed"


def victims(path: Path) -> list[object]:
    return [json.loads(line).get("victims") for line in path.read_bytes().splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--budget", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from conformance import server

    reader = "orjson" if server._orjson is not None else "json (orjson not installed)"
    with tempfile.TemporaryDirectory() as workdir:
        requests = Path(workdir) / "requests.jsonl"
        requests.write_bytes(stream(args.steps, args.budget))
        times: dict[str, list[float]] = {name: [] for name in ADAPTERS}
        outputs: dict[str, list[object]] = {}
        for _ in range(args.repeats):
            for name, argv in ADAPTERS.items():
                answers = Path(workdir) / f"{name}.jsonl"
                times[name].append(cpu_seconds(argv, requests, answers))
                outputs[name] = victims(answers)
        if not outputs["reference"] == outputs["strict"] == outputs["naive"]:
            sys.exit("the adapters' answers differ")
        median = {name: statistics.median(values) for name, values in times.items()}
        size = requests.stat().st_size / 1e6
        blas = os.environ.get("OPENBLAS_NUM_THREADS", "unset (the adapter sets 1)")
        print(
            f"{args.steps} steps at budget {args.budget} (obsWindow 16, poolKernel 7), evict "
            f"after every step, {size:.0f} MB of requests; median of {args.repeats}, load "
            f"average {os.getloadavg()[0]:.1f}\n"
            f"python {sys.version.split()[0]}, numpy {version('numpy')}, orjson "
            f"{version('orjson')}, OPENBLAS_NUM_THREADS {blas}"
        )
        print(f"  {'adapter':34} {'CPU s':>8}")
        print(f"  {'reference (' + reader + ')':34} {median['reference']:8.2f}")
        print(f"  {'reference, orjson hidden (json)':34} {median['strict']:8.2f}")
        print(f"  {'naive (json + plain Python)':34} {median['naive']:8.2f}")
        print(
            f"  naive/reference: {median['naive'] / median['reference']:.1f}x (victims identical)"
        )


if __name__ == "__main__":
    main()
