"""Decode steps per second of the reference policy and its fast path against the oracle.

The workload, at each budget (default 256, 1024, 4096; recentWindow 16, obsWindow 16,
poolKernel 7): every decode step is ``step(pos, attn)`` followed by ``evict()``, so at steady
state each step evicts exactly one position. The cache is filled with ``budget`` null steps
(cheap, and cost-neutral: an eviction's cost depends on the sizes, not the values), then
``obsWindow`` steps with attention fill every ring; only after that does the clock run. The
attention rows are float32 from a seeded numpy RNG, generated before each timed window.

Measured side by side in one run, the repeats interleaved so background load falls on all alike:

- **in-process**: the numpy fast path (``fast_policy(params)``), the readable
  reference (``conformance.policy.reference.SnapKV``) and the oracle (``tests/support/oracles.py``,
  imported by path), each fed the same lists of Python floats. Each repeat times one window of
  steps; the reference's and the oracle's windows are shorter at large budgets (they are
  slower), which changes nothing in a per-step rate at steady state.
- **end to end**: ``python -m conformance adapter`` as a subprocess; every request line is
  encoded before the clock starts, a writer thread pipes them in while the main thread reads
  the answers. The clock runs from the answer that ends the warm-up to the last answer.

Prints steps/s medians and the ratios to the oracle (targets at budget 1024: fast path >= 20x
the oracle in-process, adapter >= 5x the in-process oracle):

    python3 benchmarks/bench_reference.py [--budgets 256 1024 4096] [--repeats 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance.policy.fast import fast_policy  # noqa: E402
from conformance.policy.reference import new_policy  # noqa: E402

RECENT, OBS, KERNEL = 16, 16, 7
ADAPTER = [sys.executable, "-m", "conformance", "adapter"]
TIMEOUT = 600.0  # seconds for one adapter run; every wait is bounded
CHUNK_CELLS = 1_000_000  # attention weights generated at a time (about 32 MB as Python lists)
SLICES = 4  # the in-process implementations alternate this many times within a repeat
NAMES = ("fast", "reference", "oracle", "adapter")


def load_oracle() -> Any:
    """``tests/support/oracles.py`` as a module (the tests are not installed)."""
    path = ROOT / "tests" / "support" / "oracles.py"
    spec = importlib.util.spec_from_file_location("snapkv_oracles", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def params(budget: int) -> dict[str, int]:
    return {"budget": budget, "recentWindow": RECENT, "obsWindow": OBS, "poolKernel": KERNEL}


def attention_rows(rng: np.random.Generator, steps: int, width: int) -> list[list[float]]:
    """``steps`` attention lists of ``width`` float32 values, as Python floats."""
    return rng.random((steps, width), dtype=np.float32).tolist()


class Clock:
    """Wall-clock and CPU seconds, added up over the timed stretches of one measurement.

    On a shared machine the wall clock mostly measures how much CPU the process was given;
    CPU seconds (this process's, or the adapter's from ``/proc``) are the steadier comparison.
    """

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0

    def add(self, wall: float, cpu: float) -> None:
        self.wall += wall
        self.cpu += cpu


class Driver:
    """One policy at steady state, fed consecutive positions."""

    def __init__(self, policy: Any, budget: int, rng: np.random.Generator) -> None:
        self.policy, self.budget, self.pos = policy, budget, 0
        for _ in range(budget):
            self.advance(None)
        for row in attention_rows(rng, OBS, budget):
            self.advance(row)

    def advance(self, attn: list[float] | None) -> list[int]:
        self.policy.step(self.pos, attn)
        self.pos += 1
        return self.policy.evict()

    def window(self, rng: np.random.Generator, steps: int, clock: Clock) -> None:
        """Run ``steps`` steps, each with an eviction, adding their time to ``clock``.

        The attention rows are generated in chunks of about :data:`CHUNK_CELLS` weights, each
        before its clock starts, so memory stays bounded at any budget.
        """
        step, evict, pos = self.policy.step, self.policy.evict, self.pos
        chunk = max(1, CHUNK_CELLS // self.budget)
        for first in range(0, steps, chunk):
            rows = attention_rows(rng, min(chunk, steps - first), self.budget)
            wall, cpu = time.perf_counter(), time.process_time()
            for row in rows:
                step(pos, row)
                evict()
                pos += 1
            clock.add(time.perf_counter() - wall, time.process_time() - cpu)
        self.pos = pos


def adapter_stream(budget: int, rows: list[list[float]], warmup: list[list[float]]) -> bytes:
    """Every request line of one end-to-end run, ending with ``bye``."""
    requests: list[dict[str, Any]] = [
        {"op": "hello", "protocol": 1},
        {"op": "new", "params": params(budget), "seed": 0},
    ]
    for pos, attn in enumerate([None] * budget + warmup + rows):
        requests += [{"op": "step", "pos": pos, "attn": attn}, {"op": "evict"}]
    requests.append({"op": "bye"})
    return b"".join(
        json.dumps({"id": index, **request}, separators=(",", ":")).encode() + b"\n"
        for index, request in enumerate(requests)
    )


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by process ``pid`` (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def adapter_window(stream: bytes, timed_answers: int, clock: Clock) -> None:
    """Pipe ``stream`` through a fresh adapter; time its last ``timed_answers`` answers.

    The clock runs from the answer just before them to the last of them (``bye`` excluded),
    in wall seconds and in the adapter process's CPU seconds. A writer thread feeds stdin and
    a reader thread drains stdout, so neither pipe can block the other; every wait is bounded.
    """
    process = subprocess.Popen(ADAPTER, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    total = stream.count(b"\n")
    marks = {total - timed_answers - 2: "start", total - 2: "end"}
    seen: dict[str, tuple[float, float]] = {}
    failures: list[str] = []

    def write() -> None:
        process.stdin.write(stream)
        process.stdin.close()

    def read() -> None:
        for index in range(total):
            line = process.stdout.readline()
            if not line:
                failures.append(f"the adapter answered {index} of {total} requests")
                return
            if index in marks:
                seen[marks[index]] = (time.perf_counter(), process_cpu(process.pid))
            if b'"ok":true' not in line:
                failures.append(f"the adapter refused request {index}: {line[:200]!r}")
                return

    threads = [threading.Thread(target=job, daemon=True) for job in (write, read)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    if any(thread.is_alive() for thread in threads) or failures:
        process.kill()
        raise SystemExit(failures[0] if failures else f"the adapter took over {TIMEOUT} s")
    process.wait(TIMEOUT)
    (wall0, cpu0), (wall1, cpu1) = seen["start"], seen["end"]
    clock.add(wall1 - wall0, cpu1 - cpu0)


def window_steps(budget: int, steps: int, cells: int) -> int:
    """A timed window of at most ``steps`` steps and about ``cells`` attention weights in all.

    The oracle gets ~400k (about a second of its time); the adapter ~1M (the pre-encoded
    request lines stay near 20 MB). Per-step rates at steady state do not depend on it.
    """
    return max(50, min(steps, cells // budget))


def bench_budget(
    budget: int, steps: int, repeats: int, oracle: Any, end_to_end: bool
) -> dict[str, Any]:
    """Rates (steps/s, wall and CPU) at one budget: per repeat, and their medians.

    Within a repeat the reference and the oracle run in alternating slices, and the ratios
    are taken per repeat before the median, so load that comes and goes falls on both alike.
    """
    fast = Driver(fast_policy(params(budget)), budget, np.random.default_rng([budget]))
    reference = Driver(new_policy(params(budget)), budget, np.random.default_rng([budget]))
    slow = Driver(oracle.OracleSnapKV(params(budget)), budget, np.random.default_rng([budget]))
    short = window_steps(budget, steps, 400_000)
    piped = window_steps(budget, steps, CHUNK_CELLS)
    rates: dict[str, list[float]] = {}
    for repeat in range(repeats):
        # One seed per repeat: every implementation sees the same rows (a prefix for the
        # shorter windows), drawn from the same stream.
        seed = [budget, repeat + 1]
        clocks = {name: Clock() for name in NAMES}
        fast_rng, slow_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        plain_rng = np.random.default_rng(seed)
        for part in range(SLICES):
            fast.window(fast_rng, share(steps, part), clocks["fast"])
            reference.window(plain_rng, share(short, part), clocks["reference"])
            slow.window(slow_rng, share(short, part), clocks["oracle"])
        counts = {"fast": steps, "reference": short, "oracle": short}
        if end_to_end:
            warmup = attention_rows(np.random.default_rng([budget]), OBS, budget)
            rows = attention_rows(np.random.default_rng(seed), piped, budget)
            adapter_window(adapter_stream(budget, rows, warmup), 2 * piped, clocks["adapter"])
            counts["adapter"] = piped
        for name, count in counts.items():
            for kind in ("wall", "cpu"):
                rates.setdefault(f"{name} {kind}", []).append(count / getattr(clocks[name], kind))
    row: dict[str, Any] = {"budget": budget, "steps": steps, "oracle_steps": short}
    row["adapter_steps"] = piped if end_to_end else 0
    for kind in ("wall", "cpu"):
        oracle_rates = rates[f"oracle {kind}"]
        for name in NAMES:
            values = rates.get(f"{name} {kind}")
            if values:
                row[f"{name} {kind}"] = statistics.median(values)
                ratios = [v / o for v, o in zip(values, oracle_rates, strict=True)]
                row[f"{name}/oracle {kind}"] = statistics.median(ratios)
    return row


def share(total: int, part: int) -> int:
    """Slice ``part`` of ``total`` steps cut into :data:`SLICES` near-equal slices."""
    return total * (part + 1) // SLICES - total * part // SLICES


def print_table(rows: Sequence[dict[str, Any]], kind: str) -> None:
    """One markdown table of rates and ratios, ``kind`` ``wall`` or ``cpu``."""
    end_to_end = f"adapter {kind}" in rows[0]
    header = (
        "| budget | fast path steps/s | reference steps/s | oracle steps/s "
        "| fast/oracle | reference/oracle |"
    )
    rule = "|---:|---:|---:|---:|---:|---:|"
    if end_to_end:
        header += " adapter steps/s | adapter/oracle |"
        rule += "---:|---:|"
    print(header)
    print(rule)
    for row in rows:
        line = (
            f"| {row['budget']} | {row[f'fast {kind}']:,.0f} | {row[f'reference {kind}']:,.0f} "
            f"| {row[f'oracle {kind}']:,.1f} | {row[f'fast/oracle {kind}']:.1f}x "
            f"| {row[f'reference/oracle {kind}']:.1f}x |"
        )
        if end_to_end:
            line += f" {row[f'adapter {kind}']:,.0f} | {row[f'adapter/oracle {kind}']:.1f}x |"
        print(line)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budgets", type=int, nargs="+", default=[256, 1024, 4096])
    parser.add_argument("--steps", type=int, default=2000, help="timed steps per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-adapter", action="store_true", help="skip the end-to-end runs")
    args = parser.parse_args(argv)
    oracle = load_oracle()
    rows = []
    for budget in args.budgets:
        row = bench_budget(budget, args.steps, args.repeats, oracle, not args.no_adapter)
        print(
            f"budget {budget}: timed windows of {row['steps']} steps (reference and oracle "
            f"{row['oracle_steps']}, adapter {row['adapter_steps']}), median of {args.repeats}",
            file=sys.stderr,
        )
        rows.append(row)
    for kind, title in (("wall", "wall clock"), ("cpu", "CPU time")):
        print(f"\n{title}: medians of {args.repeats} repeats (ratios: of per-repeat ratios)\n")
        print_table(rows, kind)
    return 0


if __name__ == "__main__":
    sys.exit(main())
