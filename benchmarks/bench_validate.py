"""``validate`` against ``run`` on the same large suite: wall time and peak memory side by side.

The suite is built here: the committed suite's vectors copied ``--copies`` times under new ids
(``copy-NNN/<id>``, by ``bench_runner.copy_suite``; not its protocol checks, whose ids are
``protocol/NAME``), plus one call-dense vector (``--steps`` steps at budget ``--budget``, an
evict after every step, expectations from the reference). Both commands run as subprocesses
(``snapkv-conformance validate DIR`` and ``snapkv-conformance run DIR`` with the reference
adapter), alternated ``--repeats`` times so that background load falls on both alike; the
script prints the median wall time and peak resident memory of each and their ratios (the
target is validate at most 2.5x run), then the same for the call-dense vector alone.

    python3 benchmarks/bench_validate.py [--copies 20] [--steps 6000] [--budget 512] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_runner import copy_suite  # noqa: E402

from conformance.adapter.server import Session  # noqa: E402
from conformance.policy.reference import float32_literal  # noqa: E402
from conformance.spec import resources  # noqa: E402
from conformance.suite.vectors import Call, Vector, dumps_vector  # noqa: E402

CLI = [sys.executable, "-m", "conformance"]


def dense_vector(steps: int, budget: int, seed: int = 0) -> Vector:
    """A long stream at ``budget`` (obsWindow 16, poolKernel 7), evicting after every step."""
    rng = random.Random(seed)
    params = {"budget": budget, "recentWindow": 16, "obsWindow": 16, "poolKernel": 7}
    session = Session()
    calls = [Call({"op": "new", "params": params, "seed": 0})]
    session.handle({"id": 0, **calls[0].request})
    kept = 0
    for pos in range(steps):
        attn = [float32_literal(rng.random()) for _ in range(kept)] if pos else []
        step = {"op": "step", "pos": pos, "attn": attn}
        assert session.handle({"id": 0, **step})["ok"]
        victims = session.handle({"id": 0, "op": "evict"})["victims"]
        calls += [Call(step), Call({"op": "evict"}, {"victims": victims})]
        kept = kept + 1 - len(victims)
    return Vector(
        id="dense/long-stream",
        description="A long stream evicting after every step, for benchmarking only.",
        tags=("ring",),
        params=params,
        seed=0,
        calls=tuple(calls),
    )


def measure(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident MB of one command, from /usr/bin/time."""
    with tempfile.NamedTemporaryFile("r") as report:
        completed = subprocess.run(
            ["/usr/bin/time", "-o", report.name, "-f", "%e %M", *CLI, *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        if completed.returncode != 0:
            sys.exit(f"{' '.join(args)} failed ({completed.returncode}):\n{completed.stderr}")
        wall, peak_kb = report.read().split()[-2:]
    return float(wall), int(peak_kb) / 1024


def compare(label: str, path: Path, repeats: int) -> None:
    runs: dict[str, list[tuple[float, float]]] = {"validate": [], "run": []}
    for _ in range(repeats):
        for command in runs:
            runs[command].append(measure([command, str(path)]))
    wall = {c: statistics.median(w for w, _ in runs[c]) for c in runs}
    peak = {c: statistics.median(m for _, m in runs[c]) for c in runs}
    print(f"{label}")
    print(f"  {'':10} {'wall s':>8} {'peak MB':>8}")
    for command in runs:
        print(f"  {command:10} {wall[command]:8.2f} {peak[command]:8.0f}")
    print(
        f"  validate/run: time {wall['validate'] / wall['run']:.2f}x, "
        f"memory {peak['validate'] / peak['run']:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--steps", type=int, default=6000)
    parser.add_argument("--budget", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="bench-validate-"))
    try:
        suite = workdir / "suite"
        copy_suite(resources.suite_dir(), suite, args.copies, checks=False)
        size = sum(path.stat().st_size for path in suite.rglob("*.json"))
        dense = dense_vector(args.steps, args.budget)
        dense_path = suite / "dense" / "long-stream.json"
        dense_path.parent.mkdir(parents=True)
        dense_path.write_text(dumps_vector(dense), encoding="utf-8")
        alone = workdir / "alone" / "dense" / "long-stream.json"
        alone.parent.mkdir(parents=True)
        shutil.copy(dense_path, alone)
        dense_size = dense_path.stat().st_size
        print(f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}")
        compare(
            f"suite: committed suite x{args.copies} + one call-dense vector "
            f"({(size + dense_size) / 1e6:.1f} MB, median of {args.repeats})",
            suite,
            args.repeats,
        )
        compare(
            f"call-dense vector alone ({len(dense.calls)} calls, {dense_size / 1e6:.1f} MB, "
            f"median of {args.repeats})",
            alone.parent.parent,
            args.repeats,
        )
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
