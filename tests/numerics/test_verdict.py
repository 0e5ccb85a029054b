"""A vector's answers judged under a numerics profile: differences the profile's rounding
explains are accepted and the reference continues from the port's choice; everything else
fails, and a difference where the profile's formats overflow is not applicable."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from conformance.judge.outcomes import DIES, OK, Outcome, expected_outcomes
from conformance.numerics.profiles import PROFILE_NAMES, profile_named
from conformance.numerics.verdict import FAIL, NOT_APPLICABLE, PASS, WITHIN, judge_numerics
from conformance.spec import resources
from conformance.suite.vectors import Call, Vector, load_suite
from tests.support.precision_ports import PORTS, PROFILE_OF
from tests.support.runner_support import params, reference_vector

TINY = 2.0**-30  # 1 + 2^-30 is exact in float64 and rounds to 1 in float32


def requests(scale: float = 1.0) -> list[dict[str, Any]]:
    """A's ring sums to (1 + 2^-30) * scale, B's to exactly scale: the reference evicts B, a
    float32 port (A rounds down to a tie) evicts A. The next step writes 0.5 * scale to the
    first kept entry, which is A for the reference and B for that port, so the second evict
    takes A (the vector's expectation) or B (the reference continued from the port's choice)."""
    return [
        {"op": "new", "params": params(3, 1, 3, 1), "seed": 0},
        {"op": "step", "pos": 0, "attn": None},
        {"op": "step", "pos": 1, "attn": None},
        {"op": "step", "pos": 2, "attn": [scale, scale]},
        {"op": "step", "pos": 3, "attn": [TINY * scale, 0.0, 4.0 * scale]},
        {"op": "evict"},
        {"op": "step", "pos": 4, "attn": [0.5 * scale, 0.0, 4.0 * scale]},
        {"op": "evict"},
    ]


def answers(first: Sequence[int], second: Sequence[int]) -> list[Outcome]:
    return [OK] * 5 + [("victims", tuple(first)), OK, ("victims", tuple(second))]


@pytest.fixture(scope="module")
def vector() -> Vector:
    made = reference_vector("numerics/continued", requests())
    assert [call.expected_victims for call in made.calls if call.op == "evict"] == [[1], [0]]
    return made


def judged(vector: Vector, outcomes: Sequence[Outcome], profile: str) -> Any:
    return judge_numerics(vector, outcomes, profile_named(profile))


@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_the_reference_answers_pass_exactly(vector: Vector, profile: str) -> None:
    result = judged(vector, answers([1], [0]), profile)
    assert (result.status, result.accepted, result.label()) == (PASS, 0, "pass")


def test_a_rounding_difference_is_accepted_and_the_reference_continues_from_it(
    vector: Vector,
) -> None:
    port = answers([0], [1])
    result = judged(vector, port, "float32")
    assert (result.status, result.accepted) == (WITHIN, 1)
    assert result.label() == "within float32"
    assert result.gap == pytest.approx(TINY, rel=1e-6)  # A's exact score is 2^-30 above B's
    assert judged(vector, port, "bfloat16").status == WITHIN
    # Following the vector's own second expectation after the port's choice is wrong: 0 has
    # already gone.
    stale = judged(vector, answers([0], [0]), "float32")
    assert (stale.status, stale.call_index) == (FAIL, 7)
    assert "position 0 is not kept" in stale.message


@pytest.mark.parametrize("profile", ["exact", "float64"])
def test_a_difference_beyond_the_profile_fails(vector: Vector, profile: str) -> None:
    result = judged(vector, answers([0], [1]), profile)
    assert (result.status, result.call_index, result.op) == (FAIL, 5, "evict")
    assert result.message.startswith("evicted [0], the reference [1]")
    if profile == "float64":
        assert "no float64 accumulation in any order ranks position 0 below position 1" in (
            result.message
        )


@pytest.mark.parametrize("profile", PROFILE_NAMES[1:])
@pytest.mark.parametrize(
    ("victims", "reason"),
    [
        ((0, 1), "2 victim(s), but exactly 1 must go"),
        ((3,), "position 3 is protected"),
        ((7,), "position 7 is not kept"),
    ],
)
def test_a_malformed_answer_fails_under_every_profile(
    vector: Vector, profile: str, victims: tuple[int, ...], reason: str
) -> None:
    result = judged(vector, answers(victims, [0]), profile)
    assert (result.status, result.call_index) == (FAIL, 5)
    assert reason in result.message


def test_victims_out_of_order_fail(vector: Vector) -> None:
    ordered = reference_vector(
        "numerics/two",
        [
            {"op": "new", "params": params(1, 0, 1, 1), "seed": 0},
            {"op": "step", "pos": 0, "attn": None},
            {"op": "step", "pos": 1, "attn": [1.0]},
            {"op": "step", "pos": 2, "attn": [1.0, 1.0]},
            {"op": "evict"},
        ],
    )
    result = judged(ordered, [OK, OK, OK, OK, ("victims", (2, 0))], "bfloat16")
    assert result.status == FAIL and "strictly ascending" in result.message


@pytest.mark.parametrize("profile", PROFILE_NAMES[1:])
def test_refusals_must_be_the_references(vector: Vector, profile: str) -> None:
    refused = [OK, OK, OK, ("error", "invalid-attention"), *answers([1], [0])[4:]]
    result = judged(vector, refused, profile)
    assert (result.status, result.call_index, result.op) == (FAIL, 3, "step")
    assert result.message == "answered a refusal with invalid-attention, the reference success"


def test_a_crash_or_a_short_answer_fails(vector: Vector) -> None:
    crashed = judged(vector, [OK, OK, DIES], "bfloat16")
    assert (crashed.status, crashed.call_index) == (FAIL, 2)
    short = judged(vector, [OK, OK], "bfloat16")
    assert (short.status, short.call_index) == (FAIL, 2)
    assert "answered 2 of 8 calls" in short.message


def test_beyond_the_range_a_difference_is_not_applicable() -> None:
    big = reference_vector("numerics/big", requests(scale=2.0**17))  # weights past 65504
    port = answers([0], [1])
    for profile in ("float16", "float16-result"):
        result = judged(big, port, profile)
        assert (result.status, result.call_index) == (NOT_APPLICABLE, 5)
        assert result.label() == f"n/a for {profile}"
        assert "a weight of 131072, beyond" in result.message
        assert not result.ok
    assert judged(big, port, "float32").status == WITHIN
    # Out of range but answered exactly as the reference: a pass, nothing to judge.
    assert judged(big, answers([1], [0]), "float16").status == PASS


def test_a_vector_the_reference_does_not_reproduce_fails(vector: Vector) -> None:
    calls = list(vector.calls)
    calls[5] = Call(calls[5].request, {"victims": [0]})
    edited = replace(vector, calls=tuple(calls))
    result = judged(edited, answers([0], [1]), "float32")
    assert (result.status, result.call_index) == (FAIL, 5)
    assert "not a valid vector" in result.message


# -- the committed suite: precision-only ports pass under their profile, mistakes fail ---------


@pytest.fixture(scope="module")
def suite() -> list[Vector]:
    return load_suite([resources.suite_dir()])


def port_outcomes(factory: Any, vector: Vector) -> tuple[Outcome, ...]:
    from conformance.adapter.replay import replay
    from conformance.judge.outcomes import answer_outcomes

    return answer_outcomes(vector, replay([call.request for call in vector.calls], factory))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROFILE_OF))
def test_a_precision_only_port_fails_exact_and_passes_under_its_profile(
    suite: list[Vector], name: str
) -> None:
    profile = profile_named(PROFILE_OF[name])
    failing = []
    for vector in suite:
        outcomes = port_outcomes(PORTS[name], vector)
        if outcomes != expected_outcomes(vector):
            failing.append((vector, outcomes))
    assert failing, f"{name} answers the whole suite exactly: it tests nothing"
    results = [judge_numerics(vector, outcomes, profile) for vector, outcomes in failing]
    failed = [result.describe() for result in results if result.status == FAIL]
    assert not failed, "\n".join(failed)
    assert any(result.status == WITHIN for result in results)
    exact = [
        judge_numerics(vector, outcomes, profile_named("exact")) for vector, outcomes in failing
    ]
    assert all(result.status == FAIL for result in exact)


@pytest.fixture(scope="module")
def known(suite: list[Vector]) -> dict[str, Any]:
    from conformance.explain import known_kills as kills

    return kills.load(suite)


def mutant_failures(name: str, suite: list[Vector], known: dict[str, Any]) -> list[Any]:
    """The committed vectors the mistake ``name`` fails exactly, with its outcomes: those the
    shipped kill matrix lists, and any vector it does not know, replayed."""
    from conformance.explain.play import play
    from conformance.mutants import lookup

    policy = lookup(name).policy
    failing = []
    for vector in suite:
        entry = known.get(vector.id)
        if entry is not None and name not in entry.kills:
            continue
        outcomes = play(policy, vector).outcomes
        if outcomes != expected_outcomes(vector):
            failing.append((vector, outcomes))
    return failing


def catalogue_names() -> list[str]:
    from conformance import mutants

    return mutants.names()


@pytest.mark.slow
@pytest.mark.parametrize("name", catalogue_names())
def test_every_catalogued_mistake_fails_under_every_profile_unless_it_is_only_arithmetic(
    suite: list[Vector], known: dict[str, Any], name: str
) -> None:
    """A semantic mistake fails some vector under every profile; one documented as
    numerically equivalent passes where the argument says; a precision-only one passes under
    the profile of its arithmetic (and fails float64, when that arithmetic is coarser)."""
    from conformance.mutants import NUMERICALLY_EQUIVALENT, PRECISION_ONLY

    failing = mutant_failures(name, suite, known)
    assert failing, f"{name} passes the exact suite"
    passes = set(PRECISION_ONLY.get(name, ())) | set(NUMERICALLY_EQUIVALENT.get(name, ((), ""))[0])
    for profile in PROFILE_NAMES[1:]:
        results = (judge_numerics(v, outcomes, profile_named(profile)) for v, outcomes in failing)
        if profile in passes:
            failed = [result.describe() for result in results if result.status == FAIL]
            assert not failed, f"{name} under {profile}:\n" + "\n".join(failed)
        elif name not in PRECISION_ONLY or profile == "float64":
            assert any(result.status == FAIL for result in results), (
                f"{name} passes under {profile}: add a vector that separates it, or document "
                "it in NUMERICALLY_EQUIVALENT"
            )


# -- semantic mistakes, each over the arithmetic of the profile that judges it -----------------


def semantic_cases() -> list[Any]:
    from tests.support.semantic_ports import EQUIVALENT_UNDER, MISTAKES

    cases = []
    for mistake in MISTAKES:
        for profile in PROFILE_NAMES:
            equivalent = profile in EQUIVALENT_UNDER.get(mistake, ((), ""))[0]
            marks = [pytest.mark.slow] if equivalent else []  # the whole suite is replayed
            cases.append(pytest.param(mistake, profile, id=f"{mistake}-{profile}", marks=marks))
    return cases


@pytest.mark.parametrize(("mistake", "profile"), semantic_cases())
def test_a_semantic_mistake_fails_under_a_profile_even_in_that_profile_s_own_arithmetic(
    suite: list[Vector], mistake: str, profile: str
) -> None:
    """A GPU or BLAS port with one semantic mistake (tests/support/semantic_ports.py: prefix
    sums, running sums, renormalised rows, a step clock, value-only top-k, a masked cache,
    paged eviction, a protected-window slip, flushed subnormals), written over the arithmetic
    of the profile that judges it, fails some committed vector under that profile, and that
    vector is not one its arithmetic alone fails there: the mistake is what failed it. Where a
    mistake cannot be told from the profile's rounding, the port passes under it on the
    whole suite (the argument in ``EQUIVALENT_UNDER``)."""
    from tests.support.semantic_ports import BASE_OF, EQUIVALENT_UNDER, semantic_port

    judged_under = profile_named(profile)
    port = semantic_port(mistake, profile)
    differing = 0
    for vector in sorted(suite, key=lambda v: (len(v.calls), v.id)):
        outcomes = port_outcomes(port, vector)
        if outcomes == expected_outcomes(vector):
            continue
        differing += 1
        result = judge_numerics(vector, outcomes, judged_under)
        if profile in EQUIVALENT_UNDER.get(mistake, ((), ""))[0]:
            assert result.status != FAIL, result.describe()
            continue
        if result.status == FAIL:
            alone = port_outcomes(BASE_OF[profile].base, vector)
            assert judge_numerics(vector, alone, judged_under).status != FAIL, vector.id
            return
    assert differing, f"{mistake} answers the whole suite exactly: it tests nothing"
    assert profile in EQUIVALENT_UNDER.get(mistake, ((), ""))[0], (
        f"{mistake} over {profile} arithmetic passes under {profile}: add a vector that "
        "separates it, or document the equivalence"
    )
