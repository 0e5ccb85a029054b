"""Which slips the default run kills, and the score of every numbered sentence of SPEC.md.

A slip (:mod:`conformance.slips`) is replayed in process as the default run would drive its
adapter, and judged by the run's own judges:

- the vectors through one adapter session, as the runner sends them: ``hello`` (id 1), then
  each vector's calls numbered on from there, written as the file writes them
  (:meth:`~conformance.suite.vectors.Call.body`), each answer line read by the runner's
  rules (:func:`conformance.judge.answers.read_answer`), the vector judged by
  :func:`conformance.judge.checker.judge`. A vector's
  answers are awaited before the next is sent; an adapter that reads on without having
  written (flushed) every answer due is stalled, a timeout, as the runner would wait for an
  answer that never comes. After a crash, a stall or a protocol error the session starts
  again, as the runner restarts the adapter;
- each protocol check in a fresh adapter, its bytes in, its input closed, every line it
  wrote and its exit status judged by :func:`conformance.judge.check_answers.judge_check`.

An item *kills* a slip when its verdict is not ``pass``. The policy family's entries (the
mutant catalogue) are scored by the kill matrix instead (:mod:`conformance.explain.kill_matrix`):
the same vectors, the same judge. ``tests/system/test_slip_runs.py`` runs a sample through the real
runner and checks that it agrees.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.judge.answers import LineFault, read_answer
from conformance.judge.check_answers import judge_check
from conformance.judge.checker import judge
from conformance.judge.verdicts import PASS
from conformance.slips import Slip, SlipAdapter
from conformance.spec.protocol import DecodeError, decode, parse_hello_answer
from conformance.spec.sentences import Sentence, sentences
from conformance.suite.protocol_checks import ProtocolCheck
from conformance.suite.vectors import Vector
from conformance.transport.failures import AdapterFailure

HELLO = b'{"id":1,"op":"hello","protocol":1}\n'


class _Starved(Exception):
    """The adapter asked for a line the runner has not sent (it waits for answers first)."""


class _Feed:
    """The adapter's stdin: the lines sent so far; reading past them is :class:`_Starved`,
    until :meth:`close` (then end of input)."""

    def __init__(self) -> None:
        self.queue: list[bytes] = []
        self.closed = False

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        if self.queue:
            return self.queue.pop(0)
        if self.closed:
            raise StopIteration
        raise _Starved


class _Pipe:
    """The adapter's stdout: what it has flushed is what the runner can read."""

    def __init__(self) -> None:
        self.pending = bytearray()
        self.flushed = bytearray()

    def write(self, data: bytes) -> int:
        self.pending += data
        return len(data)

    def flush(self) -> None:
        self.flushed += self.pending
        self.pending.clear()

    def lines(self, count: int) -> list[bytes] | None:
        """Take the first ``count`` complete flushed lines, or None when fewer are there."""
        found: list[bytes] = []
        start = 0
        while len(found) < count:
            end = self.flushed.find(b"\n", start)
            if end < 0:
                return None
            found.append(bytes(self.flushed[start:end]))
            start = end + 1
        del self.flushed[:start]
        return found


class _Session:
    """One adapter process as the runner drives it, in process."""

    def __init__(self, entry: Slip) -> None:
        self.adapter: SlipAdapter = entry.make(implementation=entry.implementation())
        self.feed = _Feed()
        self.pipe = _Pipe()
        self.next_id = 1
        self.dead = False

    def exchange(self, bodies: Sequence[bytes]) -> tuple[list[bytes] | None, str | None]:
        """Send one request per body, numbered on; the answer lines, or None and why not
        (``timeout`` or ``crash``)."""
        first = self.next_id
        self.next_id += len(bodies)
        self.feed.queue.extend(_request(first + index, body) for index, body in enumerate(bodies))
        try:
            self.adapter.serve(self.feed, self.pipe)  # type: ignore[arg-type]
            self.dead = True  # it stopped reading: the session is over (bye, or a crash)
        except _Starved:
            pass
        except Exception:  # the adapter raised: a crash of its process
            self.dead = True
            self.pipe.flush()
        got = self.pipe.lines(len(bodies))
        if got is None:
            return None, "crash" if self.dead else "timeout"
        return got, None


def _request(request_id: int, body: bytes) -> bytes:
    """The request line the runner writes: ``{"id":N,`` and the body (``"op":...}``)."""
    if body.startswith(b"}"):
        return b'{"id":%d' % request_id + body
    return b'{"id":%d,' % request_id + body


def _answers(
    lines: Sequence[bytes], first: int, previous_first: int
) -> tuple[list[dict[str, Any]], AdapterFailure | None]:
    """The answers as the runner holds them (:func:`conformance.judge.answers.read_answer`),
    and the protocol failure at the first line that is not the answer due."""
    answers: list[dict[str, Any]] = []
    for index, line in enumerate(lines):
        answer = read_answer(line + b"\n", index, first, previous_first)
        if isinstance(answer, LineFault):
            return answers, AdapterFailure("protocol", index, answer.detail, answers=answers)
        answers.append(answer)
    return answers, None


def vector_verdicts(entry: Slip, vectors: Sequence[Vector]) -> dict[str, str]:
    """Each vector's verdict for ``entry``, as the default run gives it."""
    verdicts: dict[str, str] = {}
    session: _Session | None = None
    previous = 1
    for vector in vectors:
        if session is None or session.dead:
            session = _Session(entry)
            previous = 1
            hello, _ = session.exchange([HELLO[8:]])
            try:
                if hello is None:
                    raise ValueError("no answer to hello")
                parse_hello_answer(decode(hello[0]))
            except (ValueError, DecodeError):
                return {vector.id: "start-failure" for vector in vectors}
        bodies = [call.body() for call in vector.calls]
        previous_first, first = previous, session.next_id
        previous = first
        lines, failed = session.exchange(bodies)
        if lines is None:
            verdicts[vector.id] = judge(
                vector, [], failure=AdapterFailure(failed or "crash", 0, "no answer")
            ).verdict
            session.dead = True
            continue
        answers, failure = _answers(lines, first, previous_first)
        verdict = judge(vector, answers, failure=failure).verdict
        verdicts[vector.id] = verdict
        if failure is not None:
            session.dead = True
    return verdicts


def check_verdicts(entry: Slip, checks: Sequence[ProtocolCheck]) -> dict[str, str]:
    """Each protocol check's verdict for ``entry``: a fresh adapter per check."""
    verdicts: dict[str, str] = {}
    for check in checks:
        adapter = entry.make(implementation=entry.implementation())
        pipe = _Pipe()
        feed = _Feed()
        feed.queue.extend(_lines(check.payload))
        feed.closed = True
        try:
            status = adapter.serve(feed, pipe)  # type: ignore[arg-type]
        except Exception:
            status = 1
        pipe.flush()  # an exiting process's buffers reach the pipe
        written = bytes(pipe.flushed)
        answers = written.split(b"\n")
        if answers and answers[-1] == b"":
            answers.pop()
        verdicts[check.id] = judge_check(check, answers, exit_status=status).verdict
    return verdicts


def _lines(data: bytes) -> list[bytes]:
    """``data`` split as a pipe's reader splits it: at LF only, each line keeping its LF."""
    return io.BytesIO(data).readlines()


@dataclass
class SlipRow:
    """One slip and the items that kill it (item id -> verdict)."""

    slip: Slip
    killers: dict[str, str] = field(default_factory=dict)

    @property
    def killed(self) -> bool:
        return bool(self.killers)

    def to_json(self) -> dict[str, Any]:
        return {
            **self.slip.to_json(),
            "killed": self.killed,
            "killers": [{"id": item, "verdict": v} for item, v in self.killers.items()],
        }


def slip_row(entry: Slip, vectors: Sequence[Vector], checks: Sequence[ProtocolCheck]) -> SlipRow:
    """``entry`` replayed on every vector and check (see the module docstring)."""
    verdicts = {**vector_verdicts(entry, vectors), **check_verdicts(entry, checks)}
    return SlipRow(entry, {item: v for item, v in verdicts.items() if v != PASS})


@dataclass(frozen=True)
class SentenceScore:
    """One sentence's slips and which of them the default run kills."""

    sentence: Sentence
    rows: tuple[SlipRow, ...]

    @property
    def killed(self) -> int:
        return sum(row.killed for row in self.rows)

    @property
    def complete(self) -> bool:
        """At least one slip, and every slip killed."""
        return bool(self.rows) and self.killed == len(self.rows)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.sentence.id,
            "slips": [row.slip.name for row in self.rows],
            "killed": self.killed,
            "survived": [row.slip.name for row in self.rows if not row.killed],
        }


def sentence_scores(rows: Sequence[SlipRow]) -> list[SentenceScore]:
    """Every numbered sentence with its slips' rows, in SPEC.md's order."""
    by_sentence: dict[str, list[SlipRow]] = {}
    for row in rows:
        by_sentence.setdefault(row.slip.sentence, []).append(row)
    return [
        SentenceScore(sentence, tuple(by_sentence.get(sentence.id, ()))) for sentence in sentences()
    ]


def score_slips(
    entries: Sequence[Slip],
    vectors: Sequence[Vector],
    checks: Sequence[ProtocolCheck],
    *,
    mutant_killers: Mapping[str, Mapping[str, str]] | None = None,
    progress: Callable[[Slip, int, int], None] | None = None,
) -> list[SlipRow]:
    """Every entry's row. A ``policy`` entry takes its killers from ``mutant_killers`` (the
    kill matrix's, by mutant name) when given, else is replayed like any slip."""
    rows = []
    for done, entry in enumerate(entries, start=1):
        if entry.mutant is not None and mutant_killers is not None:
            rows.append(SlipRow(entry, dict(mutant_killers.get(entry.mutant, {}))))
        else:
            rows.append(slip_row(entry, vectors, checks))
        if progress is not None:
            progress(entry, done, len(entries))
    return rows
