"""How long a fuzz campaign takes: README's campaign figure, printed by this script.

Runs the campaign of ``docs/ci/nightly-fuzz.yml`` here, one shard after another: for each of N
shards, ``snapkv-conformance fuzz`` (policy calls) and ``fuzz --protocol`` (raw lines), each
with ``--seed S --shard I/N`` and the recipe's budgets, against an adapter (the reference
adapter by default), with a shared example database in a temporary directory. Prints each
shard's wall time and how many scenarios and sessions it ran, then the median shard (what one
CI job of the campaign takes on a machine like this one) and the sum (the campaign run on one
machine instead).

    python benchmarks/bench_campaign.py                       # 4 shards x (2000 + 500)
    python benchmarks/bench_campaign.py --examples 400 --sessions 200 --adapter ./my-adapter
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RECIPE = Path(__file__).resolve().parents[1] / "docs" / "ci" / "nightly-fuzz.yml"


def recipe_budget(name: str) -> int:
    """A budget as the nightly recipe sets it (``EXAMPLES``, ``SESSIONS``)."""
    found = re.search(rf'^  {name}: "(\d+)"$', RECIPE.read_text(), re.M)
    assert found is not None, name
    return int(found[1])


def fuzz(adapter: str, args: list[str], work: Path) -> tuple[float, int, str]:
    """One fuzz run: its wall time, how many examples it ran, and its last line."""
    command = [sys.executable, "-m", "conformance", "fuzz", "--adapter", adapter, *args]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=work, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{shlex.join(command)} exited {done.returncode}: {done.stderr}")
    counted = re.search(r"(?:no difference in|difference found after) (\d+)", done.stdout)
    return elapsed, int(counted[1]) if counted else 0, done.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--adapter", default=f"{shlex.quote(sys.executable)} -m conformance adapter"
    )
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--examples", type=int, default=recipe_budget("EXAMPLES"))
    parser.add_argument("--sessions", type=int, default=recipe_budget("SESSIONS"))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(
        f"campaign: {args.shards} shards x ({args.examples} scenarios + {args.sessions} "
        f"protocol sessions), seed {args.seed}, adapter {args.adapter}; load average "
        f"{load:.1f} at the start, {os.cpu_count()} cores"
    )
    print()
    print("| shard | scenarios | seconds | sessions | seconds | shard total |")
    print("|---|---:|---:|---:|---:|---:|")
    totals = []
    with tempfile.TemporaryDirectory(prefix="bench-campaign-") as scratch:
        work = Path(scratch)
        for index in range(1, args.shards + 1):
            common = ["--seed", str(args.seed), "--shard", f"{index}/{args.shards}"]
            common += ["--save", str(work / "findings")]
            vectors = fuzz(
                args.adapter,
                [
                    *common,
                    "--max-examples",
                    str(args.examples),
                    "--database",
                    str(work / "db" / "v"),
                ],
                work,
            )
            lines = fuzz(
                args.adapter,
                [
                    "--protocol",
                    *common,
                    "--max-examples",
                    str(args.sessions),
                    "--database",
                    str(work / "db" / "p"),
                ],
                work,
            )
            total = vectors[0] + lines[0]
            totals.append(total)
            print(
                f"| {index}/{args.shards} | {vectors[1]} | {vectors[0]:.1f} | {lines[1]} | "
                f"{lines[0]:.1f} | {total:.1f} |",
                flush=True,
            )
        found = sorted(p.name for p in (work / "findings").rglob("*.json"))
    print()
    print(
        f"median shard {statistics.median(totals):.0f} s (one CI job of the campaign); all "
        f"{args.shards} shards one after another {sum(totals):.0f} s; findings: "
        f"{', '.join(found) if found else 'none'}"
    )


if __name__ == "__main__":
    main()
