"""Side-by-side speed of the C, Rust and reference adapters on one large decode run.

The run is a pre-encoded request stream: ``hello``, ``new`` with budget 1024, recentWindow 16,
obsWindow 16, poolKernel 7, then STEPS decode steps each followed by an ``evict`` (so after the
first 1024 steps every step carries 1024 weights and every evict has one victim), then ``bye``.
Each adapter gets the same bytes piped in by a writer thread; the clock runs from the ``hello``
answer to the ``bye`` answer, so process start-up is left out. Repeats are interleaved across
the adapters so that background load falls on all of them alike. The script prints, per
adapter, the median steps per second over the repeats by wall time and by the adapter
process's CPU time (steadier on a shared machine; it includes start-up, a fraction of a second
for Python), each with its ratio to the reference, and checks that all adapters answered the
run identically.

An adapter that is not built is reported as absent and the rest still run:

    make -C adapters/c
    cargo build --release --manifest-path adapters/rust/Cargo.toml
    python3 benchmarks/bench_ports.py [--steps 4000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PARAMS = {"budget": 1024, "recentWindow": 16, "obsWindow": 16, "poolKernel": 7}
TIMEOUT = 600.0  # seconds allowed for one adapter's whole run


@dataclass
class Adapter:
    """One implementation under test: its argv, or why it cannot run."""

    name: str
    argv: list[str] | None
    absent: str = ""
    rates: list[float] = field(default_factory=list)
    cpu_rates: list[float] = field(default_factory=list)
    answers: bytes = b""


def adapters() -> list[Adapter]:
    c_path = ROOT / "adapters" / "c" / "build" / "snapkv-adapter"
    rust_path = ROOT / "adapters" / "rust" / "target" / "release" / "snapkv-adapter"
    found = [
        Adapter("reference (python)", [sys.executable, "-m", "conformance", "adapter"]),
        Adapter("c", [str(c_path)] if c_path.is_file() else None, "run make -C adapters/c"),
        Adapter(
            "rust",
            [str(rust_path)] if rust_path.is_file() else None,
            "run cargo build --release --manifest-path adapters/rust/Cargo.toml",
        ),
    ]
    return found


def build_stream(steps: int, seed: int) -> bytes:
    """The request lines: random float32 weights in shortest round-trip form."""
    rng = np.random.default_rng(seed)
    lines = [
        '{"id":0,"op":"hello","protocol":1}',
        json.dumps({"id": 1, "op": "new", "params": PARAMS, "seed": 0}, separators=(",", ":")),
    ]
    kept = 0
    for pos in range(steps):
        weights = rng.random(kept, dtype=np.float32).astype(np.float64).tolist()
        attn = "[" + ",".join(map(repr, weights)) + "]"
        lines.append(f'{{"id":{2 * pos + 2},"op":"step","pos":{pos},"attn":{attn}}}')
        lines.append(f'{{"id":{2 * pos + 3},"op":"evict"}}')
        kept = min(kept + 1, PARAMS["budget"])
    lines.append(f'{{"id":{2 * steps + 2},"op":"bye"}}')
    return ("\n".join(lines) + "\n").encode()


def child_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_run(argv: list[str], stream: bytes) -> tuple[float, float, bytes]:
    """Wall seconds from the ``hello`` answer to the ``bye`` answer, the adapter process's
    CPU seconds (start-up included), and the answers after hello."""
    cpu_before = child_cpu_seconds()
    with subprocess.Popen(
        argv, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None

        def feed() -> None:
            try:
                proc.stdin.write(stream)
                proc.stdin.close()
            except BrokenPipeError:
                pass  # the adapter died; the reader below sees the short output

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        deadline = time.monotonic() + TIMEOUT
        hello = proc.stdout.readline()
        start = time.perf_counter()
        if not hello.startswith(b'{"id":0,"ok":true'):
            proc.kill()
            raise RuntimeError(f"{argv[0]}: bad hello answer {hello[:200]!r}")
        answers = proc.stdout.read()  # up to the bye answer and end of output
        elapsed = time.perf_counter() - start
        writer.join(timeout=max(deadline - time.monotonic(), 1.0))
        status = proc.wait(timeout=max(deadline - time.monotonic(), 1.0))
    cpu = child_cpu_seconds() - cpu_before
    if status != 0 or not answers.endswith(b'"ok":true}\n'):
        raise RuntimeError(f"{argv[0]}: exit status {status}, output ends {answers[-200:]!r}")
    return elapsed, cpu, answers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=4000, help="decode steps (default 4000)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per adapter (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="weights' random seed")
    args = parser.parse_args(argv)

    stream = build_stream(args.steps, args.seed)
    print(
        f"decode run: {args.steps} steps, an evict after each, params {PARAMS}; "
        f"{len(stream) / 1e6:.1f} MB of requests, {args.repeats} repeats, median shown"
    )
    runnable = [a for a in adapters() if a.argv is not None]
    for adapter in adapters():
        if adapter.argv is None:
            print(f"  {adapter.name:<20} absent: not built ({adapter.absent})")
    for _ in range(args.repeats):
        for adapter in runnable:
            assert adapter.argv is not None
            elapsed, cpu, adapter.answers = time_run(adapter.argv, stream)
            adapter.rates.append(args.steps / elapsed)
            adapter.cpu_rates.append(args.steps / cpu)

    reference = runnable[0]
    base = statistics.median(reference.rates)
    cpu_base = statistics.median(reference.cpu_rates)
    print(
        f"  {'':<20} {'wall steps/s':>13} {'x ref':>7} {'range':>17}"
        f"   {'CPU steps/s':>12} {'x ref':>7}"
    )
    for adapter in runnable:
        rate, cpu_rate = statistics.median(adapter.rates), statistics.median(adapter.cpu_rates)
        spread = f"{min(adapter.rates):,.0f}..{max(adapter.rates):,.0f}"
        print(
            f"  {adapter.name:<20} {rate:>13,.0f} {rate / base:>7.1f} {spread:>17}"
            f"   {cpu_rate:>12,.0f} {cpu_rate / cpu_base:>7.1f}"
        )
    wall = {a.name: statistics.median(a.rates) for a in runnable}
    cpu = {a.name: statistics.median(a.cpu_rates) for a in runnable}
    if "c" in wall and "rust" in wall:
        print(
            f"  rust / c: {wall['rust'] / wall['c']:.2f} by wall time, "
            f"{cpu['rust'] / cpu['c']:.2f} by CPU time"
        )
    # Every answer after hello (victims, oks) must be the same bytes from every adapter.
    differing = [a.name for a in runnable if a.answers != reference.answers]
    if differing:
        print(f"  ANSWERS DIFFER from the reference: {', '.join(differing)}")
        return 1
    print(f"  all {len(runnable)} adapters answered the run identically")
    return 0


if __name__ == "__main__":
    sys.exit(main())
