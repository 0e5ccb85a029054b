"""The window: what is in flight on one adapter, restarts, and which vector owns each answer.

The adapters here are in-process (the reference's session) with scripted faults, so each test
states exactly which exchange goes wrong and how, and nothing depends on timing.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from conformance import mutants
from conformance.judge.verdicts import CRASH, PROTOCOL_ERROR, WRONG_VICTIMS
from conformance.runner.client import Client
from conformance.runner.results import VectorResult
from conformance.runner.window import MAX_FAILED_RESTARTS, Job, Window
from conformance.suite import wire
from conformance.suite.vectors import Vector
from conformance.suite.wire import prepare
from conformance.transport.failures import AdapterFailure, AdapterStartError
from conformance.transport.framing import Ticket
from conformance.transport.in_process import InProcessAdapter
from tests.support.runner_support import params, plain_vector, reference_vector


def job(index: int, vector: Vector) -> Job:
    return Job(index, vector, wire.prepare_vector(vector), lambda: vector)


def vectors(count: int) -> list[Vector]:
    return [plain_vector(f"window/v{i}", seed=i) for i in range(count)]


class Scripted(Client):
    """The reference in process; ``faults[n]`` replaces the outcome of the n-th vector batch
    received (counting from 0 over the adapter's whole life, restarts included)."""

    def __init__(self, faults: dict[int, AdapterFailure] | None = None, **kw: Any) -> None:
        super().__init__(InProcessAdapter(**kw))
        self.faults = faults or {}
        self.received = 0
        self.sent: list[int] = []  # batch sizes, in order, for checking what was pipelined
        self.starts = 0
        self._starting = False
        self.in_flight_peak = 0
        self._in_flight = 0

    def start(self):
        self.starts += 1
        self._starting = True
        try:
            return super().start()
        finally:
            self._starting = False
            self._in_flight = 0

    def send(self, requests):
        ticket = super().send(requests)
        if self._starting:
            return ticket
        self._in_flight += 1
        self.in_flight_peak = max(self.in_flight_peak, self._in_flight)
        self.sent.append(ticket.count)
        return ticket

    def receive(self, ticket: Ticket, into=None, **kw):
        if self._starting:  # the handshake is not counted
            return super().receive(ticket, into, **kw)
        self._in_flight -= 1
        answers = super().receive(ticket)
        fault = self.faults.pop(self.received, None)
        self.received += 1
        if fault is not None:
            fault.answers = answers[: max(0, fault.call_index)]
            raise fault
        if into is not None:
            into(answers)
            return []
        return answers


@dataclasses.dataclass(frozen=True)
class Settled:
    """What the window settled: the vector's index in the suite, and its record."""

    index: int
    verdict: VectorResult

    @property
    def diagnosis(self) -> str | None:
        return self.verdict.diagnosis


def drive(adapter: Any, jobs: list[Job], **kw: Any) -> tuple[list[Settled], Window]:
    adapter.start()
    settled: list[Settled] = []
    window = Window(adapter, lambda index, result: settled.append(Settled(index, result)), **kw)
    todo = list(jobs)
    window.run(lambda: todo.pop(0) if todo else None, todo.append)
    window.close()
    return settled, window


def test_vectors_are_sent_ahead_and_settled_in_order():
    adapter = Scripted()
    settled, window = drive(adapter, [job(i, v) for i, v in enumerate(vectors(6))], capacity=4)
    assert [s.index for s in settled] == list(range(6))
    assert all(s.verdict.passed for s in settled) and window.warnings == []
    assert adapter.in_flight_peak == 4  # the capacity, and no more
    assert adapter.starts == 1


def test_an_extra_answer_is_blamed_on_the_vector_it_answers():
    # The second vector's receive finds an extra answer to the first vector's call 3.
    extra = AdapterFailure("protocol", 3, "an extra answer with id 4 arrived", earlier=True)
    adapter = Scripted({1: extra})
    settled, _ = drive(adapter, [job(i, v) for i, v in enumerate(vectors(3))])
    by_index = {s.index: s.verdict for s in settled}
    assert by_index[0].verdict == PROTOCOL_ERROR
    assert (by_index[0].call_index, by_index[0].message) == (3, "an extra answer with id 4 arrived")
    assert by_index[1].passed and by_index[2].passed  # the second ran again, after a restart
    assert adapter.starts == 2
    assert sorted(by_index) == [0, 1, 2] and len(settled) == 3


def test_what_was_in_flight_behind_a_crash_runs_again_after_a_restart():
    crash = AdapterFailure("crash", 2, "the adapter exited (exit status 3) without answering")
    crash.exit_status = 3
    adapter = Scripted({1: crash})
    settled, _ = drive(adapter, [job(i, v) for i, v in enumerate(vectors(5))])
    verdicts = {s.index: s.verdict for s in settled}
    assert verdicts[1].verdict == CRASH and verdicts[1].exit_status == 3
    assert all(verdicts[i].passed for i in (0, 2, 3, 4))
    assert adapter.starts == 2
    # Every vector was sent once, and those behind the crash twice.
    assert len(adapter.sent) == 5 + 3


def test_a_vector_needing_a_fresh_session_waits_for_an_empty_window():
    orphan = reference_vector(
        "window/refused-new",
        [
            {"op": "new", "params": params(2, 2, 1, 1), "seed": 0},
            {"op": "step", "pos": 0, "attn": None},
        ],
    )
    adapter = Scripted()
    jobs = [job(0, vectors(1)[0]), job(1, orphan), job(2, plain_vector("window/after"))]
    assert jobs[1].fresh and not jobs[0].fresh
    settled, _ = drive(adapter, jobs)
    assert all(s.verdict.passed for s in settled)
    assert adapter.starts == 2  # restarted for the orphan only


def wrong_tie() -> Vector:
    return reference_vector(
        "window/tie",
        [
            {"op": "new", "params": params(2, 0, 4, 1), "seed": 0},
            *({"op": "step", "pos": p, "attn": None} for p in range(3)),
            {"op": "evict"},
        ],
    )


def test_a_wrong_evict_is_settled_with_its_diagnosis():
    higher = mutants.lookup("ties-to-higher-position").factory
    adapter = Scripted(factory=higher)
    jobs = [job(0, wrong_tie()), *(job(i, v) for i, v in enumerate(vectors(3), start=1))]
    settled, _ = drive(adapter, jobs)
    first = next(s for s in settled if s.index == 0)
    assert first.verdict.verdict == WRONG_VICTIMS
    assert first.diagnosis is not None and "Its selection is wrong" in first.diagnosis
    assert sorted(s.index for s in settled) == [0, 1, 2, 3]


def test_no_scores_request_goes_to_an_adapter_that_did_not_announce_it():
    higher = mutants.lookup("ties-to-higher-position").factory
    implementation = {"name": "quiet", "language": "python", "version": "0"}

    class NoScores(Scripted):
        def start(self):
            self.handshake = dataclasses.replace(super().start(), capabilities=())
            return self.handshake

        def send(self, requests):
            assert "scores" not in [request["op"] for request in prepare(requests).requests]
            return super().send(requests)

    settled, _ = drive(
        NoScores(factory=higher, implementation=implementation), [job(0, wrong_tie())]
    )
    (only,) = settled
    assert only.diagnosis is not None
    assert "no scores diagnosis: the adapter does not announce the scores capability" in (
        only.diagnosis
    )


def test_a_window_whose_adapter_cannot_restart_gives_its_jobs_back():
    crash = AdapterFailure("crash", 1, "gone")

    class NoRestart(Scripted):
        def restart(self):
            raise AdapterStartError("cannot start twice")

    adapter = NoRestart({0: crash})
    settled, _ = drive(adapter, [job(i, v) for i, v in enumerate(vectors(5))], capacity=1)
    verdicts = {s.index: s.verdict for s in settled}
    assert verdicts[0].verdict == CRASH and verdicts[0].message == "gone"
    restarts = [i for i, v in verdicts.items() if "could not be restarted" in v.message]
    assert len(restarts) == MAX_FAILED_RESTARTS
    # What it did not run is neither run nor settled: it went back to the caller's list.
    assert len(settled) == 1 + MAX_FAILED_RESTARTS
