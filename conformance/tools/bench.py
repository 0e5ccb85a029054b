"""How fast a port is: adapters timed side by side on the same decode workloads.

Every adapter gets the same request stream through protocol v1 (``hello``, ``new``, then
decode steps each followed by an ``evict``, then ``bye``), made a piece at a time as a writer
thread pipes it in, so that neither a billion steps nor their answers are ever held whole and
``--timeout`` bounds the whole run (:func:`time_adapter`).
The clock runs from the ``hello`` answer to the end of the adapter's output, so process
start-up is left out of the wall time (the CPU time, from the kernel's accounting of the
finished process, includes it). Repeats are interleaved: each repeat runs every adapter once,
in an order that rotates, so background load on a shared machine falls on all of them alike.
Rates are medians over the repeats; a ratio is the median of the per-repeat ratios.

The answers must agree: byte for byte, or else value for value (the same JSON after parsing),
or the run reports the first answer that differs. What is kept of them is bounded: their
SHA-256 and their first :data:`ANSWERS_KEPT` bytes, in which a difference is looked for. A
workload holds no refusals, so every answer is ``ok`` and fully determined by the spec.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import statistics
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from conformance.spec.errors import KitError
from conformance.spec.protocol import decode, parse_hello_answer
from conformance.spec.text import escape
from conformance.transport import process
from conformance.transport.raw import Transcript, talk

#: The longest answer line read; the longest a workload calls for is a few kilobytes.
MAX_LINE = 1 << 20
#: The size of a piece of the request stream made at a time.
PIECE = 1 << 20
#: How much of an adapter's answers is kept to show where they differ (the rest is hashed).
ANSWERS_KEPT = 16 << 20

#: The reference adapter's argv, as ``snapkv-conformance run`` starts it.
REFERENCE_ARGV = (sys.executable, "-m", "conformance", "adapter")


@dataclass(frozen=True)
class Workload:
    """A decode run: ``steps`` steps of random float32 attention, an evict after each."""

    name: str
    budget: int
    recent_window: int
    obs_window: int
    pool_kernel: int
    steps: int
    seed: int = 0

    @property
    def params(self) -> dict[str, int]:
        return {
            "budget": self.budget,
            "recentWindow": self.recent_window,
            "obsWindow": self.obs_window,
            "poolKernel": self.pool_kernel,
        }

    def describe(self) -> str:
        p = self.params
        return (
            f"{self.name}: budget {p['budget']}, recentWindow {p['recentWindow']}, "
            f"obsWindow {p['obsWindow']}, poolKernel {p['poolKernel']}; {self.steps} steps, "
            "an evict after each"
        )

    @property
    def requests(self) -> int:
        """How many request lines :meth:`pieces` makes (each is answered)."""
        return 2 * self.steps + 3

    def pieces(self, size: int = PIECE) -> Iterator[bytes]:
        """The request lines, about ``size`` bytes at a time, each piece made when asked for;
        weights are shortest round-trip float32 decimals (SPEC §2.6)."""
        rng = np.random.default_rng(self.seed)
        lines = [
            '{"id":0,"op":"hello","protocol":1}\n',
            json.dumps(
                {"id": 1, "op": "new", "params": self.params, "seed": 0}, separators=(",", ":")
            )
            + "\n",
        ]
        held = sum(map(len, lines))
        kept = 0
        for pos in range(self.steps):
            weights = rng.random(kept, dtype=np.float32).astype(np.float64).tolist()
            attn = "[" + ",".join(map(repr, weights)) + "]"
            line = (
                f'{{"id":{2 * pos + 2},"op":"step","pos":{pos},"attn":{attn}}}\n'
                f'{{"id":{2 * pos + 3},"op":"evict"}}\n'
            )
            lines.append(line)
            held += len(line)
            kept = min(kept + 1, self.budget)
            if held >= size:
                yield "".join(lines).encode()
                lines, held = [], 0
        lines.append(f'{{"id":{2 * self.steps + 2},"op":"bye"}}\n')
        yield "".join(lines).encode()

    def stream(self) -> bytes:
        """The request lines whole (:meth:`pieces` joined), for a caller that wants them all."""
        return b"".join(self.pieces())


#: The defaults of SPEC.md §2.1, and a large budget (most time goes on reading 1,024 weights
#: per step). At steady state every step carries ``budget`` weights and evicts one position.
WORKLOADS = (
    Workload("defaults", 512, 16, 16, 7, steps=2000),
    Workload("large", 1024, 16, 16, 7, steps=3000),
)


class BenchError(KitError):
    """An adapter that cannot be timed: it did not start, shake hands or finish cleanly."""


@dataclass
class Timing:
    wall: float  # seconds from the hello answer to the end of output
    cpu: float  # the adapter process's user + system seconds, start-up included
    answers: bytes  # the answers after the hello answer: the first ANSWERS_KEPT bytes
    hello: bytes = b""
    digest: str = ""  # the SHA-256 of all the answers after the hello answer


class _Answers:
    """A session's answer lines as they come: the first (hello's) kept, the rest hashed and
    kept up to :data:`ANSWERS_KEPT` bytes (a billion steps' answers are never held)."""

    def __init__(self) -> None:
        self.hello: bytes | None = None
        self.kept: list[bytes] = []
        self.size = 0
        self.hash = hashlib.sha256()

    def __call__(self, line: bytes) -> None:
        if self.hello is None:
            self.hello = line
            return
        line += b"\n"
        self.hash.update(line)
        if self.size < ANSWERS_KEPT:
            self.kept.append(line)
            self.size += len(line)


def identity(hello: bytes) -> str:
    """``name (language) version`` from a hello answer, or the raw line if it has none."""
    try:
        port = parse_hello_answer(decode(hello)).implementation  # each name capped
        return escape(f"{port['name']} ({port['language']}) {port['version']}", one_line=True)
    except (ValueError, KeyError, TypeError):
        return _shown(hello[:100])


def _shown(line: bytes) -> str:
    """An adapter's line for a message: decoded (bad bytes replaced), escaped, one line."""
    return escape(line.decode("utf-8", "replace"), one_line=True)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_adapter(argv: Sequence[str], workload: Workload, timeout: float) -> Timing:
    """Run one adapter over ``workload``'s stream once, in a raw session of the one transport
    (:func:`conformance.transport.raw.talk`): ``timeout`` bounds the whole run, hello
    included, the stream is made as it is written, and what the adapter writes is bounded (a
    line per request, each at most :data:`MAX_LINE` bytes, hashed as it comes). Its answer to
    ``hello`` is held to protocol v1 as ``run`` holds it. Raises BenchError."""
    cpu_before = _children_cpu()
    due = workload.requests
    answers = _Answers()
    try:
        transcript = talk(
            argv, workload.pieces(), timeout=timeout, answers_due=due, max_line=MAX_LINE,
            sink=answers,
        )  # fmt: skip
    except process.StartError as error:
        raise BenchError(str(error)) from None
    cpu = _children_cpu() - cpu_before
    hello = answers.hello or b""
    if answers.hello is None:
        raise BenchError(f"{argv[0]}: no answer to hello{_status(transcript, timeout)}")
    try:
        parse_hello_answer(decode(hello))
    except ValueError as error:
        raise BenchError(
            f"{argv[0]}: no successful hello answer: {escape(str(error), one_line=True)}"
        ) from None
    if transcript.overlong:
        raise BenchError(f"{argv[0]}: an answer longer than {MAX_LINE} bytes")
    count = transcript.count
    if count < due and transcript.timed_out:
        raise BenchError(
            f"{argv[0]}: no answer within the {timeout:g} s timeout to "
            f"{request_named(workload, count)} ({count:,} of {due:,} requests answered)"
        )
    if count < due:
        raise BenchError(
            f"{argv[0]}: {count} answer lines to {due} requests: none to "
            f"{request_named(workload, count)} or after"
        )
    if count > due:
        raise BenchError(
            f"{argv[0]}: {count} answer lines to {due} requests: more after the answer "
            f"to the last, {request_named(workload, due - 1)}"
        )
    if transcript.exit_status is None:
        raise BenchError(f"{argv[0]}: did not exit after its input ended (killed)")
    if transcript.exit_status != 0:
        raise BenchError(f"{argv[0]}: exit status {transcript.exit_status}")
    wall = transcript.last_answer - transcript.first_answer
    kept = b"".join(answers.kept)
    return Timing(wall, cpu, kept, hello + b"\n", answers.hash.hexdigest())


def _status(transcript: Transcript, timeout: float) -> str:
    """How a session without answers ended, for a message."""
    if transcript.timed_out:
        return f" within the {timeout:g} s timeout"
    if transcript.exit_status is not None:
        return f" (it exited with status {transcript.exit_status})"
    return ""


@dataclass
class Side:
    """One adapter's timings on one workload."""

    label: str
    argv: Sequence[str]
    timings: list[Timing] = field(default_factory=list)

    def rate(self, steps: int, cpu: bool = False) -> float:
        return statistics.median(steps / (t.cpu if cpu else t.wall) for t in self.timings)


@dataclass
class WorkloadResult:
    workload: Workload
    sides: list[Side]  # the reference first
    agreement: dict[str, str]  # label -> "bytes", "values" or what differs first

    def ratio(self, side: Side, cpu: bool = False) -> float:
        """The median over the repeats of side's rate over the reference's."""
        reference = self.sides[0]
        pairs = zip(side.timings, reference.timings, strict=True)
        if cpu:
            return statistics.median(r.cpu / t.cpu for t, r in pairs)
        return statistics.median(r.wall / t.wall for t, r in pairs)


def agreement(reference: bytes, port: bytes, first_id: int = 1) -> str:
    """``bytes`` or ``values`` when the answers agree, otherwise the first difference, named
    by the id of the request it answers (``first_id``: the first answer's, after ``hello``'s;
    a workload numbers ``hello`` 0 and the rest from 1, :meth:`Workload.stream`)."""
    if port == reference:
        return "bytes"
    want, got = reference.splitlines(), port.splitlines()
    for index, (w, g) in enumerate(zip(want, got, strict=False)):
        try:
            same = decode(w) == decode(g)
        except ValueError:
            same = False
        if not same:
            return (
                f"the answer to request id {first_id + index} differs: reference "
                f"{_shown(w[:120])}, port {_shown(g[:120])}"
            )
    if len(got) < len(want):
        return (
            f"{len(got) + 1} answers, the reference gave {len(want) + 1}: none to request id "
            f"{first_id + len(got)} or after"
        )
    if len(got) > len(want):
        return (
            f"{len(got) + 1} answers, the reference gave {len(want) + 1}: more after the "
            f"answer to the last, request id {first_id + len(want) - 1}"
        )
    return "values"


def request_named(stream: bytes | Workload, index: int) -> str:
    """Request line ``index`` of ``stream`` (from 0, ``hello`` first) named by its id, as
    ``agreement`` names answers: ``request id 5``, the numbering a porter reads in the stream
    and in the answers. A line without an id (not a workload's) is named by its number. A
    :class:`Workload` numbers its requests in order from hello's 0, so its line ``index`` is
    named without making the stream (a billion steps' is never made whole)."""
    if isinstance(stream, Workload):
        if 0 <= index < stream.requests:
            return f"request id {index}"
        return f"request line {index + 1}"
    lines = stream.splitlines()
    try:
        return f"request id {json.dumps(decode(lines[index])['id'])}"
    except (IndexError, ValueError, KeyError, TypeError):
        return f"request line {index + 1}"


def bench(
    adapters: Sequence[tuple[str, Sequence[str]]],
    workloads: Sequence[Workload] = WORKLOADS,
    repeats: int = 5,
    timeout: float = 600.0,
    progress: Callable[[str], None] | None = None,
) -> list[WorkloadResult]:
    """Time every adapter on every workload, the first adapter being the reference.

    ``adapters`` are ``(label, argv)`` pairs. Raises BenchError when an adapter fails.
    """
    results = []
    for workload in workloads:
        sides = [Side(label, argv) for label, argv in adapters]
        for repeat in range(repeats):
            shift = repeat % len(sides)
            for side in sides[shift:] + sides[:shift]:
                if progress is not None:
                    progress(f"{workload.name}: repeat {repeat + 1}/{repeats}, {side.label}")
                side.timings.append(time_adapter(side.argv, workload, timeout))
        reference = sides[0].timings[-1]
        agree = {s.label: _agreement(reference, s.timings[-1]) for s in sides[1:]}
        results.append(WorkloadResult(workload, sides, agree))
    return results


def _agreement(reference: Timing, port: Timing) -> str:
    """:func:`agreement` of two runs' answers, of which only the first :data:`ANSWERS_KEPT`
    bytes are kept: the same hash is ``bytes``; otherwise a difference found in what is kept,
    or where the kept part ends."""
    if reference.digest == port.digest:
        return "bytes"
    found = agreement(reference.answers, port.answers)
    if found in ("bytes", "values") and len(reference.answers) >= ANSWERS_KEPT:
        return (
            f"the answers differ byte for byte after the first {len(reference.answers):,} "
            "bytes, which agreed (only those are kept to compare by value)"
        )
    return found


def agreed(results: Sequence[WorkloadResult]) -> bool:
    return all(v in ("bytes", "values") for r in results for v in r.agreement.values())


def format_results(results: Sequence[WorkloadResult], repeats: int) -> str:
    """The table: per workload and adapter, steps per second and the ratio to the reference,
    by wall time and by CPU time, and whether the answers agreed."""
    lines = []
    for result in results:
        steps = result.workload.steps
        lines.append(result.workload.describe())
        width = max(len(side.label) for side in result.sides)
        lines.append(
            f"  {'adapter':<{width}} {'steps/s':>9} {'x ref':>7} {'CPU steps/s':>12} {'x ref':>7}"
            "  answers"
        )
        for index, side in enumerate(result.sides):
            answers = "reference" if index == 0 else result.agreement[side.label]
            if answers in ("bytes", "values"):
                answers = f"agree ({'byte for byte' if answers == 'bytes' else 'by value'})"
            lines.append(
                f"  {side.label:<{width}} {side.rate(steps):>9,.0f}"
                f" {result.ratio(side):>7.2f} {side.rate(steps, cpu=True):>12,.0f}"
                f" {result.ratio(side, cpu=True):>7.2f}  {answers}"
            )
    lines.append(
        f"medians of {repeats} interleaved repeats; x ref is the median per-repeat ratio; "
        f"wall time from the hello answer to the last answer, CPU time of the whole process"
    )
    return "\n".join(lines)


def load_average() -> str:
    try:
        return "load average " + " ".join(f"{v:.1f}" for v in os.getloadavg())
    except OSError:
        return "load average unknown"
