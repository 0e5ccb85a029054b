"""Vectors for the runner's tests, with expectations computed by the reference and nothing else.

The committed suite is not needed: :func:`reference_vector` replays requests on the reference
adapter session and records what it answered as the expectations, exactly as the generator
does, and :func:`workload` makes small random decode runs from a seed.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from conformance.adapter.server import Session
from conformance.policy.reference import float32_literal
from conformance.suite.vectors import Call, Vector, dumps_vector
from tests.support.paths import TESTS

BROKEN = TESTS / "broken_adapters"
REFERENCE_ARGV = [sys.executable, "-m", "conformance", "adapter"]


def mutant_argv(name: str) -> list[str]:
    """The argv of an adapter serving the catalogued mutant ``name`` (a planted bug)."""
    return [*REFERENCE_ARGV, "--mutant", name]


def broken(name: str) -> list[str]:
    """The argv of ``tests/broken_adapters/<name>.py``."""
    return [sys.executable, str(BROKEN / f"{name}.py")]


def params(budget: int, recent: int, obs: int, kernel: int) -> dict[str, int]:
    return {"budget": budget, "recentWindow": recent, "obsWindow": obs, "poolKernel": kernel}


def reference_vector(vector_id: str, requests: Sequence[Mapping[str, Any]]) -> Vector:
    """A vector of ``requests`` (``new`` first) whose expectations are the reference's answers.

    Every evict expects the reference's victims; every refused call expects its error kind.
    """
    session = Session()
    calls = []
    for index, request in enumerate(requests):
        answer = session.handle({**request, "id": index})
        if not answer["ok"]:
            expect: dict[str, Any] | None = {"error": answer["error"]["kind"]}
        elif request["op"] == "evict":
            expect = {"victims": answer["victims"]}
        else:
            expect = None
        calls.append(Call(dict(request), expect))
    first = requests[0]
    return Vector(
        id=vector_id,
        description=f"runner test vector {vector_id}",
        tags=("runner-test",),
        params=first["params"],
        seed=first["seed"],
        calls=tuple(calls),
    )


def workload_requests(
    config: Mapping[str, int],
    positions: Iterable[int],
    *,
    seed: int = 0,
    evict_every: int = 1,
    null_rate: float = 0.1,
) -> list[dict[str, Any]]:
    """``new``, then a step per position with random float32 weights (some null steps), and an
    evict after every ``evict_every`` steps; the kept count is tracked with the reference."""
    rng = random.Random(seed)
    session = Session()
    requests: list[dict[str, Any]] = [{"op": "new", "params": dict(config), "seed": seed}]
    session.handle({**requests[0], "id": 0})
    for count, pos in enumerate(positions, start=1):
        kept = len(session.policy.kept)
        attn = None
        if rng.random() >= null_rate:
            attn = [float32_literal(rng.random() * 0.5) for _ in range(kept)]
        for request in ({"op": "step", "pos": pos, "attn": attn},) + (
            ({"op": "evict"},) if count % evict_every == 0 else ()
        ):
            session.handle({**request, "id": 0})
            requests.append(request)
    return requests


def workload(
    vector_id: str, config: Mapping[str, int], positions: Iterable[int], **kw: Any
) -> Vector:
    return reference_vector(vector_id, workload_requests(config, positions, **kw))


def write_suite(directory: Path, vectors: Iterable[Vector]) -> Path:
    """Write each vector as ``<directory>/<id>.json`` (canonical text); return the directory."""
    for vector in vectors:
        path = directory / f"{vector.id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dumps_vector(vector), encoding="utf-8")
    return directory


def trigger_vector(vector_id: str = "faults/trigger") -> Vector:
    """Admits position 5 (which arms the broken adapters' faults), then evicts several times."""
    return workload(vector_id, params(3, 1, 2, 3), range(9), seed=5, evict_every=3)


def plain_vector(vector_id: str, seed: int = 1) -> Vector:
    """Never admits position 5, so the broken adapters behave like the reference."""
    return workload(vector_id, params(3, 1, 2, 3), range(100, 112), seed=seed)


def expected_outcomes(vector: Vector) -> list[tuple[Any, ...]]:
    """What the vector's file says each call produces, in the terms of
    :func:`conformance.mutants._base.outcome` (what a replay is compared with)."""
    expected = []
    for call in vector.calls:
        if call.expected_error is not None:
            expected.append(("error", call.expected_error))
        elif call.op == "evict":
            expected.append(("victims", tuple(call.expected_victims or ())))
        else:
            expected.append(("ok",))
    return expected
