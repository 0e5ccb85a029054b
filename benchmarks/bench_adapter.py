"""The reference adapter against a naive pure-Python adapter: CPU time over one whole run.

One request stream (:class:`conformance.tools.bench.Workload`, as ``snapkv-conformance bench`` sends
it): ``hello``, ``new`` at budget ``--budget`` (recentWindow 16, obsWindow 16, poolKernel 7),
then ``--steps`` steps of random float32 weights (one per kept position, written in shortest
round-trip form), each followed by an ``evict``, then ``bye``. Each adapter process gets the
whole stream through a pipe, and the figure is the adapter's own CPU time (user + system of
the child, start-up included), not the writer's. The adapters alternate ``--repeats`` times;
the script checks that their victims are identical and prints the median CPU time of each and
the ratio (the target is at least 10x), with the JSON reader the reference used.

- reference: ``python -m conformance adapter`` (orjson fast path when installed, strict codec
  otherwise);
- reference, orjson hidden: the same with its strict ``json`` path alone (orjson's gain);
- naive: ``benchmarks/naive_adapter.py`` (plain ``json``, SPEC.md §2 written the straightforward
  way in plain Python with a port's checks, standard library only).

    python3 benchmarks/bench_adapter.py [--steps 4000] [--budget 1024] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

from in_tree import REFERENCE_ARGV, ROOT, run_once, victims

from conformance.tools.bench import Workload

#: The reference with orjson hidden: its strict ``json`` path alone, to measure orjson's gain.
_WITHOUT_ORJSON = (
    "import sys; sys.modules['orjson'] = None; "
    "from conformance.cli import main; sys.exit(main(['adapter']))"
)
#: The reference adapter's CPU time at least this many times smaller than the naive one's.
TARGET = 10.0
ADAPTERS = {
    "reference": list(REFERENCE_ARGV),
    "strict": [sys.executable, "-c", _WITHOUT_ORJSON],
    "naive": [sys.executable, str(ROOT / "benchmarks" / "naive_adapter.py")],
}


def version(module: str) -> str:
    try:
        return str(__import__(module).__version__)
    except ImportError:
        return "not installed"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--budget", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from conformance.adapter import server

    reader = "orjson" if server._orjson is not None else "json (orjson not installed)"
    stream = Workload("adapter", args.budget, 16, 16, 7, steps=args.steps).stream()
    times: dict[str, list[float]] = {name: [] for name in ADAPTERS}
    outputs: dict[str, list[object]] = {}
    for _ in range(args.repeats):
        for name, argv in ADAPTERS.items():
            seconds, answers = run_once(argv, stream)
            times[name].append(seconds)
            outputs[name] = victims(answers)
    if not outputs["reference"] == outputs["strict"] == outputs["naive"]:
        sys.exit("the adapters' answers differ")
    median = {name: statistics.median(values) for name, values in times.items()}
    size = len(stream) / 1e6
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
    ratio = median["naive"] / median["reference"]
    verdict = "meets" if ratio >= TARGET else "misses"
    print(
        f"  naive/reference: {ratio:.1f}x (victims identical; target at least {TARGET:.0f}x: "
        f"{verdict} it)"
    )


if __name__ == "__main__":
    main()
