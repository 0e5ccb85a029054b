"""What the runner costs over a bare replay of the same requests through one adapter process.

Two measurements of the same suite, taken side by side in one run and interleaved so that
background load falls on both alike:

- **bare replay**: every request line of the suite (``hello``, each vector's calls, ``bye``),
  encoded with ids before the clock starts, piped into one reference adapter process by a
  writer thread while the main thread reads the answers, without judging anything. This is
  the floor: the adapter's own work plus the pipe.
- **runner**: ``run_suite`` on the same vectors with the same adapter and ``jobs=1``: process
  start, handshake, encoding, one pipelined exchange per vector, judging, ``bye``.

Both clocks include one adapter start-up. The script prints the median of each over the
repeats and their ratio (the target is at most 1.5), and, for scale, ``--jobs 2``.

The suite is the committed one when it has vectors, else a synthetic suite built here with
the reference (``--synthetic`` forces it):

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
from collections.abc import Sequence
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


def bare_replay(stream: bytes, answers: int) -> float:
    """Seconds to pipe ``stream`` through one adapter and read every answer."""
    began = time.perf_counter()
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
    elapsed = time.perf_counter() - began
    if count != answers:
        raise SystemExit(f"bare replay got {count} answers, expected {answers}")
    return elapsed


def runner(vectors: Sequence[Vector], jobs: int = 1) -> tuple[float, float]:
    """Seconds for ``run_suite``, and the CPU seconds the runner's own process spent."""
    cpu = _own_cpu()
    began = time.perf_counter()
    result = run_suite(vectors, ADAPTER, jobs=jobs, timeout=60.0)
    elapsed = time.perf_counter() - began
    if not result.ok:
        raise SystemExit("the reference failed its own suite: " + result.results[0].describe())
    return elapsed, _own_cpu() - cpu


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


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

    bare, ours, parallel, cpu = [], [], [], []
    for _ in range(repeats):
        bare.append(bare_replay(stream, answers))
        elapsed, spent = runner(vectors)
        ours.append(elapsed)
        cpu.append(spent)
        parallel.append(runner(vectors, jobs=2)[0])
    b, r, p, c = (statistics.median(x) for x in (bare, ours, parallel, cpu))
    print(f"bare replay, one adapter:   median {b:.3f} s over {repeats} repeats")
    print(f"runner, --jobs 1:           median {r:.3f} s (its own process: {c:.3f} s CPU)")
    print(f"runner, --jobs 2:           median {p:.3f} s")
    print(f"runner / bare replay:       {r / b:.2f}x (target: at most 1.50x)")
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    return 0 if r / b <= 1.5 else 1


if __name__ == "__main__":
    sys.exit(main())
