"""The tie and window-size trap vectors defeat the mistakes they name, by construction.

Each committed ``ties/`` and ``summation/window-*`` vector is replayed here on a small
policy written for this test (not the reference) whose summation or selection is swapped
for one of the wrong ways real ports sum or sort. With the right ones it must reproduce
every expectation (so the replayer is right); with each wrong one the vector must fail.
Summations are real algorithms (numpy's own ``sum`` and ``dot`` among them), and selections
are numpy's default ``argsort`` and ``argpartition`` on this machine's SIMD dispatch and, in
a subprocess, on the baseline dispatch that machines without AVX2 or AVX-512 take.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from conformance.spec.resources import suite_dir
from conformance.tools.generate.builders.selection import TIE_GROUPS
from conformance.tools.generate.builders.summation import TRAP_WINDOWS
from tests.support.numpy_dispatch import numpy_answers
from tests.support.paths import TESTS

SUITE = suite_dir()

Sum = Callable[[Sequence[float], int], float]  # (ring by slot, cursor) -> sum
Select = Callable[[Sequence[float], int], list[int]]  # (pooled candidates, k) -> indices


def load(vector_id: str) -> dict:
    return json.loads((SUITE / f"{vector_id}.json").read_text())


def replay(vector: dict, summation: Sum, select: Select) -> list[list[int]]:
    """Every evict's victims under ``summation`` and ``select`` (the rest as SPEC §2 says).

    Only successful calls appear in these vectors; weights are exact float32 values already.
    """
    kept: list[int] = []
    rings: dict[int, list[float]] = {}
    slot = 0
    obs = kernel = budget = recent = 0
    answers = []
    for call in vector["calls"]:
        assert "error" not in call.get("expect", {})
        if call["op"] == "new":
            p = call["params"]
            budget, recent, obs, kernel = (
                p["budget"], p["recentWindow"], p["obsWindow"], p["poolKernel"],
            )  # fmt: skip
            kept, rings, slot = [], {}, 0
        elif call["op"] == "step":
            if call["attn"] is not None:
                for position, weight in zip(kept, call["attn"], strict=True):
                    rings[position][slot] = float(weight)
                slot = (slot + 1) % obs
            kept.append(call["pos"])
            rings[call["pos"]] = [0.0] * obs
        else:
            k = max(0, len(kept) - budget)
            sums = [summation(rings[position], slot) for position in kept]
            r = (kernel - 1) // 2
            pooled = [max(sums[max(0, i - r) : i + r + 1]) for i in range(len(sums))]
            chosen = select(pooled[: len(kept) - recent], k) if k else []
            victims = sorted(kept[i] for i in chosen)
            for position in victims:
                kept.remove(position)
                del rings[position]
            answers.append(victims)
    return answers


def expected(vector: dict) -> list[list[int]]:
    return [call["expect"]["victims"] for call in vector["calls"] if call["op"] == "evict"]


# -- summations ----------------------------------------------------------------------------


def sequential(ring: Sequence[float], slot: int) -> float:
    total = 0.0
    for value in ring:
        total += value
    return total


def reversed_order(ring: Sequence[float], slot: int) -> float:
    return sequential(ring[::-1], slot)


def chronological(ring: Sequence[float], slot: int) -> float:
    return sequential([*ring[slot:], *ring[:slot]], slot)


def kahan(ring: Sequence[float], slot: int) -> float:
    total = compensation = 0.0
    for value in ring:
        corrected = value - compensation
        moved = total + corrected
        compensation = (moved - total) - corrected
        total = moved
    return total


def neumaier(ring: Sequence[float], slot: int) -> float:
    total = compensation = 0.0
    for value in ring:
        moved = total + value
        if abs(total) >= abs(value):
            compensation += (total - moved) + value
        else:
            compensation += (value - moved) + total
        total = moved
    return total + compensation


def float32_accumulation(ring: Sequence[float], slot: int) -> float:
    total = np.float32(0.0)
    for value in ring:
        total = np.float32(total + np.float32(value))
    return float(total)


def numpy_sum(ring: Sequence[float], slot: int) -> float:
    return float(np.asarray(ring, dtype=np.float64).sum())


def numpy_dot_ones(ring: Sequence[float], slot: int) -> float:
    """``history @ ones`` as a port might write it: BLAS, blocked and FMA-contracted."""
    values = np.asarray(ring, dtype=np.float64)
    return float(values @ np.ones_like(values))


def exact(ring: Sequence[float], slot: int) -> float:
    return math.fsum(ring)


def lanes(count: int) -> Sum:
    """A loop vectorised over ``count`` lanes (element ``i`` into lane ``i % count`` for the
    whole blocks), the lanes reduced by halving, then the tail added in order: what a
    compiler allowed to reassociate makes of ``for s: sum += ring[s]``."""

    def summation(ring: Sequence[float], slot: int) -> float:
        body = len(ring) - len(ring) % count
        partial = [0.0] * count
        for index in range(body):
            partial[index % count] += ring[index]
        while len(partial) > 1:
            half = len(partial) // 2
            partial = [partial[i] + partial[i + half] for i in range(half)]
        total = partial[0]
        for value in ring[body:]:
            total += value
        return total

    summation.__name__ = f"lanes_{count}"
    return summation


def pairwise_numpy_algorithm(ring: Sequence[float], slot: int) -> float:
    """numpy's pairwise sum, written out: 8 accumulators below 128 elements, halves above."""

    def pairwise(values: Sequence[float]) -> float:
        n = len(values)
        if n < 8:
            return sequential(values, 0)
        if n <= 128:
            r = list(values[:8])
            for i in range(8, n - n % 8, 8):
                r = [r[j] + values[i + j] for j in range(8)]
            total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
            for value in values[n - n % 8 :]:
                total += value
            return total
        half = n // 2
        half -= half % 8
        return pairwise(values[:half]) + pairwise(values[half:])

    return pairwise(list(ring))


WRONG_SUMS: tuple[Sum, ...] = (
    reversed_order,
    chronological,
    kahan,
    neumaier,
    float32_accumulation,
    numpy_sum,
    pairwise_numpy_algorithm,
    numpy_dot_ones,
    exact,
    lanes(4),
    lanes(8),
    lanes(16),
)


def stable(pooled: Sequence[float], k: int) -> list[int]:
    return sorted(range(len(pooled)), key=lambda i: (pooled[i], i))[:k]


WINDOW_TRAPS = [f"summation/window-{obs}-trap" for obs in TRAP_WINDOWS]


@pytest.mark.parametrize("vector_id", WINDOW_TRAPS)
def test_slot_order_reproduces_the_window_trap(vector_id):
    vector = load(vector_id)
    assert replay(vector, sequential, stable) == expected(vector)


@pytest.mark.slow
@pytest.mark.parametrize("summation", WRONG_SUMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("vector_id", WINDOW_TRAPS)
def test_every_other_summation_fails_the_window_trap(vector_id, summation):
    vector = load(vector_id)
    obs = vector["params"]["obsWindow"]
    count = int(summation.__name__.removeprefix("lanes_")) if "lanes" in summation.__name__ else 0
    got = replay(vector, summation, stable)
    if obs < count or (summation is numpy_dot_ones and same_sums(vector, summation)):
        # The vector loop never runs and the tail is summed in order (BLAS kernels do this
        # below their block size): slot order itself, which no vector can tell apart.
        assert same_sums(vector, summation) and got == expected(vector)
        return
    assert got[:-1] == expected(vector)[:-1]  # the duel is decided at the last evict only
    assert got[-1] != expected(vector)[-1], f"{summation.__name__} passes {vector_id}"


def same_sums(vector: dict, summation: Sum) -> bool:
    """Whether ``summation`` sums every ring of the vector's last evict as slot order does."""
    rings: list[tuple[list[float], int]] = []

    def spy(ring: Sequence[float], slot: int) -> float:
        rings.append((list(ring), slot))
        return sequential(ring, slot)

    replay(vector, spy, stable)
    return all(summation(ring, slot) == sequential(ring, slot) for ring, slot in rings)


@pytest.mark.numpy_dispatch
def test_numpy_pairwise_is_what_numpy_does():
    # The written-out algorithm agrees with numpy's sum on the rings the traps use, and on
    # rings where the order shows in every bit.
    rng = np.random.default_rng(7)
    for n in (*TRAP_WINDOWS, 7, 300, 1000):
        ring = list(2.0 ** rng.integers(-40, 40, n).astype(float) * rng.random(n))
        assert pairwise_numpy_algorithm(ring, 0) == numpy_sum(ring, 0)


# -- selections ----------------------------------------------------------------------------

TIE_VECTORS = sorted(
    path.relative_to(SUITE).with_suffix("").as_posix()
    for path in (SUITE / "ties").glob("*.json")
    if any(char.isdigit() for char in path.stem)
)
#: The tie vectors that numpy's AVX2 and AVX-512 argsort and argpartition may pass: every entry ties
#: with every other, and the vectorised kernels leave an all-equal row in order. They are
#: there for every other machine and language (see vectors/README.md).
ALL_EQUAL = tuple(v for v in TIE_VECTORS if "all-equal" in v)

PROBE = r"""
import json, sys
import numpy as np
rows = json.load(sys.stdin)
print(json.dumps([
    [sorted(np.argsort(np.array(p))[:k].tolist()),
     sorted(np.argpartition(np.array(p), k - 1)[:k].tolist())]
    for p, k in rows
]))
"""


def tie_rows(vector_id: str) -> tuple[list[float], int]:
    """The pooled candidate scores and victim count of a tie vector's one evict."""
    captured: list[tuple[list[float], int]] = []

    def capture(pooled: Sequence[float], k: int) -> list[int]:
        captured.append((list(pooled), k))
        return stable(pooled, k)

    replay(load(vector_id), sequential, capture)
    (row,) = captured
    return row


def numpy_selections(rows, disabled: str | None) -> list[list[list[int]]]:
    return numpy_answers(PROBE, rows, None if disabled is None else disabled.split())


def test_the_tie_vectors_have_the_group_sizes():
    sizes = {int(re.findall(r"\d+", v)[0]) for v in TIE_VECTORS}
    assert sizes >= set(TIE_GROUPS)
    for vector_id in TIE_VECTORS:
        pooled, k = tie_rows(vector_id)
        threshold = sorted(pooled)[k - 1]
        # The k-th victim's score is shared by more than 16 candidates (libstdc++'s
        # insertion-sort cut-off), on both sides of the cut.
        assert pooled.count(threshold) > 16, vector_id
        assert sorted(pooled)[k] == threshold, vector_id


@pytest.mark.numpy_dispatch
@pytest.mark.parametrize(
    "dispatch",
    [None, "X86_V4", "X86_V4 X86_V3"],
    ids=["this-machine", "without-avx512", "baseline"],
)
def test_numpy_default_argsort_and_argpartition_fail_the_tie_vectors(dispatch):
    rows = [tie_rows(v) for v in TIE_VECTORS]
    chosen = numpy_selections(rows, dispatch)
    for vector_id, (pooled, k), (argsort, argpartition) in zip(
        TIE_VECTORS, rows, chosen, strict=True
    ):
        right = stable(pooled, k)
        if vector_id in ALL_EQUAL and dispatch != "X86_V4 X86_V3":
            continue
        if vector_id != "ties/one-victim-among-1025":
            # (numpy's portable introselect, run wherever no SIMD selection is dispatched (an
            # older numpy, a CPU without AVX2), finds the 0th element by a linear minimum scan,
            # which keeps the first of equal minima, as the reference does.)
            assert argpartition != right, f"argpartition passes {vector_id} ({dispatch})"
        assert argsort != right, f"argsort passes {vector_id} ({dispatch})"


@pytest.mark.slow
@pytest.mark.parametrize("selection", ["argsort", "argpartition"])
def test_run_on_ties_alone_fails_an_unstable_selection(selection):
    adapter = shlex.join([sys.executable, str(TESTS / "heldout_ports.py"), selection])
    out = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "-k", "ties/", "--adapter", adapter],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 1, out.stdout + out.stderr
    failed = {
        line.split()[1].rstrip(":") for line in out.stdout.splitlines() if line.startswith("FAIL ")
    }
    assert failed >= set(TIE_VECTORS) - set(ALL_EQUAL), out.stdout
