"""What the runner costs over a bare replay of the same requests through one adapter process.

Two measurements of the same suite, taken side by side in one run and interleaved so that
background load falls on both alike:

- **bare replay**: every request line of the suite (``hello``, each vector's calls, ``bye``),
  encoded with ids before the clock starts, piped into one reference adapter process by a
  writer thread while the main thread reads the answers, without judging anything. This is
  the floor: the adapter's own work plus the pipe.
- **runner**: ``run_suite`` on the same vectors with the same adapter and ``jobs=1``: process
  start, handshake, request bytes, pipelined exchanges, judging, ``bye``.

Both include one adapter start-up. The script prints, for each, the median wall time and the
median CPU time (this process plus the adapter processes it reaped), their ratios (the target
is at most 1.5), ``--jobs 2`` for scale, and the load average: on a shared machine the wall
ratio mostly measures how much CPU the processes were given, and the CPU ratio is steadier.

The suite is the committed one when it has vectors, else a synthetic suite built here with
the reference (``--synthetic`` forces it; 160 vectors, 14 MB of request lines):

    python3 benchmarks/bench_runner.py [--vectors DIR] [--synthetic] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance import resources  # noqa: E402
from conformance.adapter import Session  # noqa: E402
from conformance.policy import float32_literal  # noqa: E402
from conformance.runner import run_suite  # noqa: E402
from conformance.vectors import Call, Vector, dumps_vector, load_suite  # noqa: E402

ADAPTER = [sys.executable, "-m", "conformance", "adapter"]


def synthetic_suite(seed: int = 0) -> list[Vector]:
    """160 vectors shaped like a conformance suite: many short ones, some long workloads."""
    rng = random.Random(seed)
    vectors = []
    for index in range(150):
        budget = rng.randint(2, 16)
        config = {
            "budget": budget,
            "recentWindow": rng.randint(0, budget - 1),
            "obsWindow": rng.randint(1, 8),
            "poolKernel": rng.choice([1, 3, 5, 7]),
        }
        vectors.append(_workload(f"small/{index:03d}", config, rng.randint(10, 60), rng, every=2))
    for index in range(10):
        config = {"budget": 128, "recentWindow": 16, "obsWindow": 16, "poolKernel": 7}
        vectors.append(_workload(f"large/{index:02d}", config, 600, rng, every=1))
    return vectors


def _workload(vector_id: str, config: dict[str, int], steps: int, rng: random.Random, every: int):
    session = Session()
    requests: list[dict[str, Any]] = [{"op": "new", "params": config, "seed": 0}]
    for pos in range(steps):
        requests.append({"op": "step", "pos": pos, "attn": None})
        if pos % every == 0:
            requests.append({"op": "evict"})
    calls = []
    for index, request in enumerate(requests):
        if request["op"] == "step" and rng.random() > 0.05:
            kept = len(session.policy.kept)
            request["attn"] = [float32_literal(rng.random()) for _ in range(kept)]
        answer = session.handle({**request, "id": index})
        expect = {"victims": answer["victims"]} if request["op"] == "evict" else None
        calls.append(Call(request, expect))
    return Vector(vector_id, "benchmark workload", (), config, 0, tuple(calls))


def request_stream(vectors: Sequence[Vector]) -> tuple[bytes, int]:
    """The whole session as bytes, ids included, and the number of answers it gets."""
    lines = [{"op": "hello", "protocol": 1}]
    for vector in vectors:
        lines.extend(call.request for call in vector.calls)
    lines.append({"op": "bye"})
    encoded = b"".join(
        json.dumps({"id": i, **request}, separators=(",", ":")).encode() + b"\n"
        for i, request in enumerate(lines)
    )
    return encoded, len(lines)


@dataclass
class Cost:
    """One measurement: wall seconds, and CPU seconds of this process and of the adapters."""

    wall: float
    own_cpu: float
    adapter_cpu: float

    @property
    def cpu(self) -> float:
        return self.own_cpu + self.adapter_cpu


@contextmanager
def measured(costs: list[Cost]) -> Iterator[None]:
    """Append the cost of the block to ``costs`` (adapter CPU counts once they are reaped)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    yield
    wall = time.perf_counter() - began
    own_after = resource.getrusage(resource.RUSAGE_SELF)
    children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    costs.append(Cost(wall, _cpu(own_after) - _cpu(own), _cpu(children_after) - _cpu(children)))


def _cpu(usage: Any) -> float:
    return usage.ru_utime + usage.ru_stime


def bare_replay(stream: bytes, answers: int) -> None:
    """Pipe ``stream`` through one adapter and read every answer; judge nothing."""
    proc = subprocess.Popen(ADAPTER, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin and proc.stdout

    def write() -> None:
        proc.stdin.write(stream)
        proc.stdin.close()

    writer = threading.Thread(target=write)
    writer.start()
    count = sum(1 for _ in proc.stdout)
    writer.join()
    proc.wait()
    if count != answers:
        raise SystemExit(f"bare replay got {count} answers, expected {answers}")


def runner(vectors: Sequence[Vector], jobs: int = 1) -> None:
    result = run_suite(vectors, ADAPTER, jobs=jobs, timeout=60.0)
    if not result.ok:
        raise SystemExit("the reference failed its own suite: " + result.results[0].describe())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vectors", type=Path, help="suite directory (default: committed)")
    parser.add_argument("--synthetic", action="store_true", help="use the synthetic suite")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)

    directory = args.vectors or resources.suite_dir()
    vectors = [] if args.synthetic else load_suite([directory])
    source = f"{directory} ({len(vectors)} vectors)"
    with tempfile.TemporaryDirectory() as scratch:
        if not vectors:
            # Written out and loaded back, as the runner gets a committed suite.
            for vector in synthetic_suite():
                path = Path(scratch, f"{vector.id}.json")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(dumps_vector(vector), encoding="utf-8")
            vectors = load_suite([scratch])
            source = f"synthetic ({len(vectors)} vectors)"
        return measure(vectors, source, args.repeats)


def measure(vectors: Sequence[Vector], source: str, repeats: int) -> int:
    stream, answers = request_stream(vectors)
    print(f"suite: {source}, {answers} requests, {len(stream) / 1e6:.1f} MB of request lines")

    bare: list[Cost] = []
    ours: list[Cost] = []
    parallel: list[Cost] = []
    for _ in range(repeats):
        with measured(bare):
            bare_replay(stream, answers)
        with measured(ours):
            runner(vectors)
        with measured(parallel):
            runner(vectors, jobs=2)

    def median(costs: list[Cost], what: str) -> float:
        return statistics.median(getattr(cost, what) for cost in costs)

    print(f"medians of {repeats} repeats, interleaved   wall s   CPU s (this process + adapters)")
    for name, costs in (
        ("bare replay, one adapter", bare),
        ("runner, --jobs 1", ours),
        ("runner, --jobs 2", parallel),
    ):
        print(
            f"  {name:<38} {median(costs, 'wall'):6.3f}   {median(costs, 'cpu'):6.3f} "
            f"({median(costs, 'own_cpu'):.3f} + {median(costs, 'adapter_cpu'):.3f})"
        )
    ratio = median(ours, "wall") / median(bare, "wall")
    cpu_ratio = median(ours, "cpu") / median(bare, "cpu")
    print(f"runner / bare replay: {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU (target: at most 1.50x)")
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    return 0 if ratio <= 1.5 else 1


if __name__ == "__main__":
    sys.exit(main())
