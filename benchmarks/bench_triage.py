"""What the triage adds to a failing run: the run and its triage timed side by side.

For ports written outside the kit (``tests/heldout/real_ports.py`` and ``tests/heldout/ports.py``
served as adapter processes, the way ``snapkv-conformance run --adapter`` drives a port), for
catalogued mistakes combined in process, and for a catalogued mistake triaged with the rest of
the catalogue only (a mistake the catalogue does not hold), the committed suite is run as the
default ``run`` does (one adapter process, the runner's diagnosis included) and then triaged as
``run`` triages it (from the suite's entries, each vector read only if something is replayed on
it), in a fresh interpreter each time so that the triage's imports count. Each is timed
``--repeat`` times; medians are printed side by side, with the replays the triage needed and the
load average when the port's repeats began, then each group's range against the target
(:data:`TARGET`). The machine is shared and noisy: compare the triage's seconds with the run's,
and quote medians with the load average.

Run: ``python benchmarks/bench_triage.py [--repeat N] [--quick | --group GROUP]``
(GROUP: outside, combined or left-out).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance import mutants  # noqa: E402
from conformance.spec import resources  # noqa: E402
from conformance.suite.vectors import load_suite  # noqa: E402

HELDOUT = ROOT / "tests" / "heldout"
#: Ports served as processes: (label, argv tail under tests/heldout/)
PROCESS_PORTS = (
    ("kvpress transcription", ("real_ports.py", "kvpress")),
    ("official SnapKV, avgpool", ("real_ports.py", "official-avgpool")),
    ("Java habits (2 mistakes)", ("real_ports.py", "java-habits")),
    ("float16 history", ("real_ports.py", "float16-history")),
    ("protected window by step calls", ("real_ports.py", "step-clock")),
    ("OpenVINO SUM transcription", ("ports.py", "openvino-sum")),
)
#: Catalogued choices combined, served in process: the triage has to search combinations.
IN_PROCESS = (
    ("float32-accumulation", "forward-only-pooling"),
    ("simd-lanes-8", "flush-subnormals", "ties-to-higher-position"),
    ("null-as-empty", "case-insensitive-names", "single-rounding"),
)
#: A catalogued mistake served in process and triaged with the catalogue less that mistake:
#: a port whose mistake the catalogue does not hold, for which the search ends "closest".
LEFT_OUT = ("ties-to-higher-position", "openvino-norm-sum")


#: Run in a fresh interpreter for each measurement, as ``snapkv-conformance run`` runs: the
#: triage's own imports (the catalogue, numpy) count, as they do for a porter.
CHILD = r"""
import json, sys, time
from conformance.spec import resources  # noqa: E402
from conformance.runner.run import run_suite  # noqa: E402
from conformance.suite.stream import plan_suite  # noqa: E402
from conformance.suite.vectors import load_suite  # noqa: E402

argv, names, left_out = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3] == "1"
suite = load_suite([str(resources.suite_dir())])
entries = plan_suite([str(resources.suite_dir())]).vectors
began = time.perf_counter()
if argv:
    run = run_suite(suite, argv)
else:
    from conformance import mutants
    from conformance.transport.in_process import InProcessAdapter
    from conformance.explain.play import compose

    policy = compose([mutants.lookup(name) for name in names])
    info = {"name": "+".join(names), "language": "python", "version": "0"}
    run = run_suite(suite, adapter_factory=lambda: InProcessAdapter(policy, info))
run_s = time.perf_counter() - began
began = time.perf_counter()
from conformance.explain.triage import triage  # noqa: E402

if left_out:
    from conformance.explain.triage import catalogue  # noqa: E402

    found = triage(entries, run.results, mistakes=catalogue(exclude=names))
else:
    found = triage(entries, run.results)
triage_s = time.perf_counter() - began
print(json.dumps({"run": run_s, "triage": triage_s, "failing": found.failing,
                  "replayed": found.replayed, "headline": found.headline()}))
"""


def measure(argv: list[str], names: tuple[str, ...], left_out: bool) -> dict[str, object]:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            json.dumps(argv),
            json.dumps(list(names)),
            "1" if left_out else "0",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


#: What the triage may add to a failing run, in seconds (the bound the figures are held to).
TARGET = 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--quick", action="store_true", help="only the in-process ports (no adapter processes)"
    )
    parser.add_argument(
        "--group",
        choices=("outside", "combined", "left-out"),
        help="only this group: ports written outside the kit, catalogued choices combined, or "
        "a mistake left out of the catalogue",
    )
    args = parser.parse_args()
    groups: list[tuple[str, list[tuple[str, list[str], tuple[str, ...], bool]]]] = []
    wanted = {args.group} if args.group else {"outside", "combined", "left-out"}
    if args.quick:
        wanted.discard("outside")
    if "outside" in wanted:
        groups.append(
            (
                "ports written outside the kit, served as processes",
                [
                    (label, [sys.executable, str(HELDOUT / script), name], (), False)
                    for label, (script, name) in PROCESS_PORTS
                ],
            )
        )
    if "combined" in wanted:
        groups.append(
            (
                "catalogued choices combined, in process",
                [(" + ".join(names), [], names, False) for names in IN_PROCESS],
            )
        )
    if "left-out" in wanted:
        groups.append(
            (
                "a mistake the catalogue does not hold, in process",
                [(f"{name} (left out)", [], (name,), True) for name in LEFT_OUT],
            )
        )
    began_load = os.getloadavg()[0]
    print(
        f"{len(load_suite([str(resources.suite_dir())]))} vectors, "
        f"{len(mutants.CATALOGUE)} catalogued mistakes, medians of {args.repeat}; target: "
        f"triage adds at most {TARGET:.2f} s to a failing run; load average {began_load:.1f} "
        f"on {os.cpu_count()} cores"
    )
    header = f"{'port':58} {'failing':>7} {'run s':>6} {'triage s':>8} {'replays':>7} {'load':>5}"
    summaries = []
    for title, cases in groups:
        print(f"\n{title}:")
        print(f"{header}  first line")
        medians = []
        for label, argv, names, left_out in cases:
            load = os.getloadavg()[0]
            results = [measure(argv, names, left_out) for _ in range(args.repeat)]
            run_s = statistics.median(float(r["run"]) for r in results)  # type: ignore[arg-type]
            triage_s = statistics.median(float(r["triage"]) for r in results)  # type: ignore[arg-type]
            medians.append(triage_s)
            line = str(results[-1]["headline"])
            print(
                f"{label:58} {results[-1]['failing']:>7} {run_s:6.2f} {triage_s:8.2f} "
                f"{results[-1]['replayed']:>7} {load:5.1f}  "
                f"{line[:80]}{'...' if len(line) > 80 else ''}"
            )
        over = sum(value > TARGET for value in medians)
        verdict = "all within the target" if not over else f"{over} of {len(medians)} over it"
        summaries.append(
            f"{title}: triage {min(medians):.2f} to {max(medians):.2f} s (medians), {verdict}"
        )
    print()
    for summary in summaries:
        print(summary)
    print(f"load average {began_load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
