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

``--commands`` measures whole ``snapkv-conformance run`` commands instead, on the committed
suite copied many times under new ids (each copy a directory ``copy-NNN/``, ids prefixed
likewise), against the C port's adapter (``make -C adapters/c``):

- **memory and first request** (100 copies): the peak resident memory of the ``run`` process
  (``ru_maxrss`` of the process itself, not of the adapter), and the time from starting the
  command to the adapter receiving its first ``new``, recorded by a pass-through in front of
  the adapter. Targets: at most 150 MB, within 1 s.
- **speed** (20 copies, protocol checks left out of them): ``run --adapter <C adapter>``
  against a bare replay command that reads the same files itself (sorted by id), decodes
  them, encodes every request with an id and pipes the lines through one C adapter while
  reading the answers, judging nothing
  (a script of its own, importing only the standard library). Medians of interleaved
  repeats; target at most 1.3x.
  Then where ``run``'s own CPU goes (``--report`` and ``--junit`` written too): importing,
  planning (the ids), reading the vectors (the schema check included), judging, writing
  outputs, and the rest, the exchange itself; beside it the bare replay's own CPU.
- **triage** (the committed suite as it is, protocol checks included): a failing default
  ``run`` (its triage included) against a passing one of the same program, whole commands:
  ``adapter --mutant float32-accumulation`` against the same command passing (``adapter``,
  the reference: the same start-up, CLI and numpy included) and against the server alone
  serving the plain reference from ``python -c`` (no CLI, no numpy: a quicker start, paid
  once per protocol check), and held-out ports
  (``tests/heldout/real_ports.py``: one mistake, several, a protected-window slip) against
  the faithful ``numpy-spec``. Medians of interleaved repeats; target at most 1.5x.
- **jobs** (2 copies, no protocol checks): ``run`` at ``--jobs 1``, ``2`` and ``4`` with a
  slow adapter, the reference waiting 2 ms in every evict (as a GPU port waits for its
  device). An adapter that is only busy on the CPU gains from ``--jobs`` only as far as the
  machine has cores to spare beside the runner's own.

    python3 benchmarks/bench_runner.py --commands [--repeats 5] [--parts memory,speed,jobs,triage]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shlex
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

from conformance.adapter.server import Session  # noqa: E402
from conformance.policy.reference import float32_literal  # noqa: E402
from conformance.runner.run import run_suite  # noqa: E402
from conformance.spec import resources  # noqa: E402
from conformance.suite.vectors import Call, Vector, dumps_vector, load_suite  # noqa: E402

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


# -- whole commands ----------------------------------------------------------------------------

C_ADAPTER = ROOT / "adapters" / "c" / "build" / "snapkv-adapter"
CLI = [sys.executable, "-m", "conformance"]
#: Runs the CLI like the console script does, then writes this process's peak RSS (KiB) to the
#: file named by SNAPKV_BENCH_RSS: the runner's own memory, the adapter's not included.
_MEASURED_CLI = """
import os, resource, sys
from conformance.cli import main
try:
    status = main(sys.argv[1:])
finally:
    with open(os.environ["SNAPKV_BENCH_RSS"], "w") as out:
        out.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
sys.exit(status)
"""
#: What ``run --adapter X`` imports before it reads the suite.
_IMPORTS = (
    "import conformance.cli, conformance.cli.commands.run, conformance.report.terminal, "
    "conformance.runner.run"
)
#: A pass-through in front of the adapter: records when the first ``new`` arrives (epoch
#: seconds, to the file named by its first argument, unless an earlier adapter process of the
#: same run wrote it: protocol checks start one each), then copies bytes both ways untouched.
_RECORDER = """
import contextlib, os, subprocess, sys, time
record, argv = sys.argv[1], sys.argv[2:]
adapter = subprocess.Popen(argv, stdin=subprocess.PIPE)  # its stdout is ours
stdin = sys.stdin.buffer
while line := stdin.readline():
    adapter.stdin.write(line)
    adapter.stdin.flush()
    if b'"op":"new"' in line:
        with contextlib.suppress(FileExistsError), open(record, "x") as out:
            out.write(repr(time.time()))
        break
while chunk := stdin.read1(1 << 16):
    adapter.stdin.write(chunk)
    adapter.stdin.flush()
adapter.stdin.close()
sys.exit(adapter.wait())
"""


def copy_suite(source: Path, target: Path, copies: int, checks: bool = True) -> int:
    """Write ``copies`` copies of the suite under ``target``, each vector's id prefixed with
    ``copy-NNN/`` (the id has a line of its own in a canonical file), and the protocol checks
    once (their ids are ``protocol/NAME``); return the file count. ``checks=False`` leaves the
    checks out (a bare replay has no sessions of its own to run them in)."""
    from conformance.suite.vectors import is_protocol_check_file

    count = 0
    for path in sorted(source.rglob("*.json")):
        if is_protocol_check_file(path):  # a check's id is protocol/NAME: copied once, as is
            if checks:
                out = target / "copy-000" / path.relative_to(source)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(path.read_bytes())
                count += 1
            continue
        lines = path.read_text(encoding="utf-8").split("\n")
        at = next(i for i, line in enumerate(lines[:4]) if line.startswith('  "id": '))
        vector_id = json.loads(lines[at][len('  "id": ') :].rstrip(","))
        for copy in range(copies):
            new_id = f"copy-{copy:03d}/{vector_id}"
            lines[at] = f'  "id": {json.dumps(new_id)},'
            out = target / f"{new_id}.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text("\n".join(lines), encoding="utf-8")
            count += 1
    return count


#: The floor for ``run``, as a whole command of its own (a script with nothing but the standard
#: library to import): read the suite's files, sort them by id, encode every request with an
#: id, pipe the lines through one adapter and read one answer per request; judge nothing.
_BARE_REPLAY = """
import json, pathlib, subprocess, sys, threading
directory, adapter = pathlib.Path(sys.argv[1]), sys.argv[2:]
documents = [json.loads(path.read_bytes()) for path in sorted(directory.rglob("*.json"))]
documents.sort(key=lambda document: document["id"])
proc = subprocess.Popen(adapter, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
sent = 0

def line(request):
    global sent
    sent += 1
    return json.dumps({"id": sent, **request}, separators=(",", ":")).encode()

def write():
    proc.stdin.write(line({"op": "hello", "protocol": 1}) + b"\\n")
    for document in documents:
        calls = [{k: v for k, v in call.items() if k != "expect"} for call in document["calls"]]
        proc.stdin.write(b"\\n".join(line(call) for call in calls) + b"\\n")
    proc.stdin.write(line({"op": "bye"}) + b"\\n")
    proc.stdin.close()

writer = threading.Thread(target=write)
writer.start()
answers = sum(1 for _ in proc.stdout)
writer.join()
proc.wait()
if answers != sent:
    sys.exit(f"bare replay got {answers} answers to {sent} requests")
"""


#: ``run`` as the console script runs it, each part of its own CPU time added up (thread CPU,
#: so the worker threads' reading and judging count where they happen), printed as JSON on
#: stderr at exit: importing (the process's CPU before ``main`` is called), planning
#: (``plan_suite``: the ids), reading the vectors (``read_for_run``, the schema check
#: included), judging (``Judging.feed`` and ``verdict``), writing outputs (the summary, the
#: JSON report and JUnit). The rest of its CPU is the exchange: requests out, answers read.
_PARTS_CLI = """
import json, resource, sys, time
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
import conformance.cli, conformance.cli.commands.run, conformance.report.terminal
import conformance.runner.run, conformance.runner.workers, conformance.judge.checker
import conformance.suite.stream
parts = {"import": cpu(), "plan": 0.0, "read": 0.0, "judge": 0.0, "outputs": 0.0}
def timed(owner, name, part):
    inner = getattr(owner, name)
    def wrapper(*args, **kwargs):
        began = time.thread_time()
        try:
            return inner(*args, **kwargs)
        finally:
            parts[part] += time.thread_time() - began
    setattr(owner, name, wrapper)
stream, workers = conformance.suite.stream, conformance.runner.workers
terminal, checker = conformance.report.terminal, conformance.judge.checker
run_command = conformance.cli.commands.run
timed(stream, "plan_suite", "plan")
timed(workers, "read_for_run", "read")
timed(checker.Judging, "feed", "judge")
timed(checker.Judging, "verdict", "judge")
timed(run_command, "_write_outputs", "outputs")
timed(terminal, "format_summary", "outputs")
try:
    status = conformance.cli.main(sys.argv[1:])
finally:
    parts["total"] = cpu()
    adapters = resource.getrusage(resource.RUSAGE_CHILDREN)
    parts["adapters"] = adapters.ru_utime + adapters.ru_stime
    print(json.dumps(parts), file=sys.stderr)
sys.exit(status)
"""


#: Appended to the bare replay: its own CPU seconds (its adapter's not included), on stderr.
_OWN_CPU = """
import resource
usage = resource.getrusage(resource.RUSAGE_SELF)
print(usage.ru_utime + usage.ru_stime, file=sys.stderr)
"""


#: A slow adapter: the reference, waiting 2 ms in every evict as a GPU port waits for its
#: device, so that the adapter and not the runner sets the pace.
_SLOW_ADAPTER = """
import sys, time
from conformance.policy.fast import fast_policy
from conformance.adapter.server import main

class Slow:
    def __init__(self, params, seed):
        self.inner = fast_policy(params, seed)
    def step(self, pos, attn):
        self.inner.step(pos, attn)
    def evict(self):
        time.sleep(0.002)
        return self.inner.evict()
    def scores(self):
        return self.inner.scores()

sys.exit(main(Slow))
"""
JOBS = (1, 2, 4)


def timed(argv: Sequence[str], env: dict[str, str] | None = None, status: int = 0) -> float:
    """Wall seconds of one whole command (its output discarded); it must exit ``status``."""
    began = time.perf_counter()
    done = subprocess.run(
        list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT
    )
    wall = time.perf_counter() - began
    if done.returncode != status:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-2000:]!r}")
    return wall


def measure_commands(
    repeats: int, parts: Sequence[str] = ("memory", "speed", "jobs", "triage")
) -> int:
    if not C_ADAPTER.exists():
        raise SystemExit(f"{C_ADAPTER} is missing: run make -C adapters/c first")
    suite = resources.suite_dir()
    ok = True
    with tempfile.TemporaryDirectory() as scratch:
        big, medium, small = Path(scratch, "x100"), Path(scratch, "x20"), Path(scratch, "x5")
        if "memory" in parts:
            files = copy_suite(suite, big, 100)
            size = sum(p.stat().st_size for p in big.rglob("*.json")) / 1e6
            print(f"memory and first request: {files} files ({size:.0f} MB), run --adapter C port")
            peaks, firsts = [], []
            for _ in range(repeats):
                rss, record = Path(scratch, "rss"), Path(scratch, "first")
                record.unlink(missing_ok=True)
                recorder = shlex.join(
                    [sys.executable, "-c", _RECORDER, str(record), str(C_ADAPTER)]
                )
                env = {**os.environ, "SNAPKV_BENCH_RSS": str(rss)}
                began = time.time()
                argv = [sys.executable, "-c", _MEASURED_CLI, "run", str(big), "--adapter", recorder]
                timed(argv, env)
                peaks.append(int(rss.read_text()) / 1024)
                firsts.append(float(record.read_text()) - began)
            starts = []
            for _ in range(repeats):  # the floor: starting Python and importing what run imports
                starts.append(timed([sys.executable, "-c", _IMPORTS]))
            peak, first = statistics.median(peaks), statistics.median(firsts)
            print(f"  peak memory of run (median of {repeats}): {peak:.0f} MB (target: <= 150)")
            print(f"  first new received after (median):  {first:.2f} s (target: within 1 s)")
            start = statistics.median(starts)
            print(f"  of which starting Python and importing run's modules: {start:.2f} s")
            ok = ok and peak <= 150 and first <= 1.0

        if "speed" in parts:
            files = copy_suite(suite, medium, 20, checks=False)
            size = sum(p.stat().st_size for p in medium.rglob("*.json")) / 1e6
            bare_argv = [sys.executable, "-c", _BARE_REPLAY, str(medium), str(C_ADAPTER)]
            run_argv = [*CLI, "run", str(medium), "--adapter", str(C_ADAPTER)]
            bare, ours = [], []
            for _ in range(repeats):
                bare.append(timed(bare_argv))
                ours.append(timed(run_argv))
            ratio = statistics.median(ours) / statistics.median(bare)
            print(
                f"speed: {files} vectors, no protocol checks ({size:.0f} MB), C port, medians of "
                f"{repeats}, interleaved"
            )
            print(f"  bare replay (reads and encodes the files)  {statistics.median(bare):6.2f} s")
            print(f"  snapkv-conformance run --adapter C port    {statistics.median(ours):6.2f} s")
            print(f"  run / bare replay: {ratio:.2f}x (target: at most 1.3x)")
            ok = ok and ratio <= 1.3
            print_parts(medium, repeats, Path(scratch))

        if "jobs" in parts:
            files = copy_suite(suite, small, 2, checks=False)
            slow = shlex.join([sys.executable, "-c", _SLOW_ADAPTER])
            walls: dict[int, list[float]] = {jobs: [] for jobs in JOBS}
            for _ in range(repeats):
                for jobs in JOBS:
                    argv = [*CLI, "run", str(small), "--jobs", str(jobs), "--adapter", slow]
                    walls[jobs].append(timed(argv))
            print(
                f"jobs: {files} vectors, no protocol checks, the reference waiting 2 ms per evict "
                f"(a slow adapter), medians of {repeats}, interleaved"
            )
            base = statistics.median(walls[1])
            for jobs in JOBS:
                wall = statistics.median(walls[jobs])
                print(f"  --jobs {jobs}  {wall:6.2f} s   speed-up {base / wall:.2f}x")
        if "triage" in parts:
            ok = measure_triage(repeats) and ok
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    return 0 if ok else 1


#: Ports outside the kit (tests/heldout/real_ports.py): one passing, and failing ones whose
#: triage names catalogued choices (one choice; several at once; a protected-window slip).
_REAL_PORTS = ROOT / "tests" / "heldout" / "real_ports.py"
PASSING_PORT = "numpy-spec"
FAILING_PORTS = ("float16-history", "official-avgpool", "step-clock")
#: A catalogued mistake served by the reference's own server (``adapter --mutant``), against
#: two passing programs: the same command serving the reference (``adapter``: the same
#: start-up, the CLI and numpy, which the mistake's model needs), and the server alone serving
#: the plain reference from ``python -c`` (no CLI, no numpy: the quickest start there is).
MUTANT = "float32-accumulation"
_PLAIN_REFERENCE = (
    "import sys; from conformance.adapter.server import main; "
    "from conformance.policy.reference import new_policy; sys.exit(main(new_policy))"
)


def measure_triage(repeats: int) -> bool:
    """Whole default ``run`` commands on the committed suite (protocol checks included, the
    triage of a failing run included), a failing port against the same program passing,
    medians of interleaved repeats; target: at most 1.5x."""
    port = [sys.executable, str(_REAL_PORTS)]
    reference = [sys.executable, "-c", _PLAIN_REFERENCE]
    mutant = [*ADAPTER, "--mutant", MUTANT]
    pairs = [
        (f"adapter / adapter --mutant {MUTANT}", ADAPTER, mutant),
        (f"plain reference (-c) / adapter --mutant {MUTANT}", reference, mutant),
        *(
            (f"{PASSING_PORT} / {name}", [*port, PASSING_PORT], [*port, name])
            for name in FAILING_PORTS
        ),
    ]
    walls: dict[tuple[str, bool], list[float]] = {}
    for _ in range(repeats):
        for label, passing, failing in pairs:
            for fails, adapter in ((False, passing), (True, failing)):
                argv = [*CLI, "run", "--adapter", shlex.join(adapter)]
                walls.setdefault((label, fails), []).append(timed(argv, status=int(fails)))
    print(
        "triage: a failing default run against the same program passing, whole commands "
        f"(committed suite, protocol checks included), medians of {repeats}, interleaved"
    )
    width = max(len(label) for label, _, _ in pairs)
    print(f"  {'passing / failing':<{width}} {'passing':>8} {'failing':>8}")
    ok = True
    for label, _, _ in pairs:
        passing, failing = (statistics.median(walls[label, fails]) for fails in (False, True))
        ratio = failing / passing
        ok = ok and ratio <= 1.5
        print(f"  {label:<{width}} {passing:6.2f} s {failing:6.2f} s  {ratio:.2f}x (target: 1.5x)")
    return ok


def print_parts(suite: Path, repeats: int, scratch: Path) -> None:
    """Where ``run``'s own CPU time goes, on ``suite`` against the C port (--report and
    --junit written too), medians of ``repeats``; and the CPU of a bare replay's own process
    (the adapter's not included) for comparison."""
    measured: list[dict[str, float]] = []
    bare: list[float] = []
    for _ in range(repeats):
        argv = [
            *(sys.executable, "-c", _PARTS_CLI, "run", str(suite), "--adapter", str(C_ADAPTER)),
            *("--report", str(scratch / "report.json"), "--junit", str(scratch / "junit.xml")),
        ]
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
        if done.returncode != 0:
            raise SystemExit(f"run exited {done.returncode}: {done.stderr[-2000:]!r}")
        measured.append(json.loads(done.stderr.decode().splitlines()[-1]))
        done = subprocess.run(
            [sys.executable, "-c", _BARE_REPLAY + _OWN_CPU, str(suite), str(C_ADAPTER)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        bare.append(float(done.stderr.decode().splitlines()[-1]))

    def median(part: str) -> float:
        return statistics.median(parts[part] for parts in measured)

    total = median("total")
    named = ("import", "plan", "read", "judge", "outputs")
    rest = statistics.median(
        parts["total"] - sum(parts[name] for name in named) for parts in measured
    )
    labels = {
        "import": "importing (start-up)",
        "plan": "planning (ids of every file)",
        "read": "reading vectors (schema check included)",
        "judge": "judging answers",
        "outputs": "writing outputs (summary, --report, --junit)",
    }
    print(f"  run's own CPU (the adapter's not included), median of {repeats}: {total:.2f} s")
    for name in named:
        print(f"    {labels[name]:<46} {median(name):6.2f} s")
    print(f"    {'exchange (requests out, answers read), the rest':<46} {rest:6.2f} s")
    print(f"  the C adapter's CPU under run:                    {median('adapters'):6.2f} s")
    print(f"  bare replay's own CPU, for comparison:            {statistics.median(bare):6.2f} s")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commands", action="store_true", help="measure whole run commands")
    parser.add_argument("--vectors", type=Path, help="suite directory (default: committed)")
    parser.add_argument("--synthetic", action="store_true", help="use the synthetic suite")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--parts",
        default="memory,speed,jobs,triage",
        help="with --commands: which measurements, comma-separated (default: all four)",
    )
    args = parser.parse_args(argv)
    if args.commands:
        return measure_commands(args.repeats, args.parts.split(","))

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
