"""The per-step model of the catalogue: the reference as hooks, and choices that compose.

:class:`conformance.mutants.model.Model` must answer exactly as the reference does (victims,
refusals and scores, bit for bit), or every choice built on it would carry a difference that is
not its own; each catalogued choice must change only the hooks of its steps, or two choices on
different steps could not be made together; and the rounding helpers must round as the formats
they name do.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import mutants
from conformance.adapter.replay import replay
from conformance.explain.play import compose, play
from conformance.judge.outcomes import expected_outcomes
from conformance.mutants._base import overridden
from conformance.mutants._floats import BFLOAT16, FLOAT16, FLOAT32, round_to, to_bfloat16
from conformance.mutants.model import HOOK_STEP, STEPS, Model
from conformance.policy.reference import new_policy
from conformance.spec import resources
from conformance.suite.vectors import load_suite
from conformance.tools.scenarios import scenarios

#: Replays the catalogue, the fast path or numpy-built ports: must hold on any CPU and numpy.
pytestmark = pytest.mark.numpy_dispatch

#: Class attributes a choice may set besides hooks: data, not steps of the policy.
NOT_HOOKS = {"PER_ROW", "LANES", "tracing"}


def test_the_model_passes_every_committed_vector() -> None:
    for vector in load_suite([str(resources.suite_dir())]):
        assert play(Model, vector).outcomes == expected_outcomes(vector), vector.id


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(scenario=scenarios())
def test_the_model_answers_and_scores_as_the_reference(scenario: Any) -> None:
    calls = []
    for call in scenario.calls:  # ask for the scores before every evict
        if call["op"] == "evict":
            calls.append({"op": "scores"})
        calls.append(call)
    reference = replay(calls, new_policy)
    ours = replay(calls, Model)
    for request, theirs, mine in zip(calls, reference, ours, strict=True):
        if request["op"] == "scores" and theirs.get("ok"):
            assert mine["positions"] == theirs["positions"]
            for name in ("sums", "pooled"):
                bits = [struct.pack("<d", value) for value in mine[name]]
                assert bits == [struct.pack("<d", float(value)) for value in theirs[name]]
        else:
            assert {k: v for k, v in mine.items() if k != "error"} == {
                k: v for k, v in theirs.items() if k != "error"
            }
            assert mine.get("error", {}).get("kind") == theirs.get("error", {}).get("kind")


def test_every_hook_belongs_to_one_step() -> None:
    hooks = [hook for step in STEPS for hook in step.hooks]
    assert len(hooks) == len(set(hooks))
    for hook in hooks:
        assert hasattr(Model, hook), hook


@pytest.mark.parametrize("mutant", mutants.CATALOGUE, ids=lambda m: m.name)
def test_each_choice_changes_only_the_hooks_of_its_steps(mutant: Any) -> None:
    defined = {
        name
        for klass in mutant.policy.__mro__
        if klass is not Model and issubclass(klass, Model)
        for name in vars(klass)
        if not name.startswith("__")
    }
    stray = {name for name in defined - NOT_HOOKS - set(HOOK_STEP) if not name.startswith("_")}
    assert not stray, f"{mutant.name} overrides what no step owns: {sorted(stray)}"
    assert mutant.steps, mutant.name
    assert {HOOK_STEP[hook] for hook in overridden(mutant.policy)} == set(mutant.steps)


def test_named_points_are_made_of_catalogued_choices() -> None:
    for mutant in mutants.CATALOGUE:
        for part in mutant.parts:
            chosen = mutants.lookup(part)
            assert not chosen.parts, (mutant.name, part)
            assert set(chosen.steps) <= set(mutant.steps)


def test_choices_on_different_steps_compose_and_keep_each_others_hooks() -> None:
    choices = [m for m in mutants.CATALOGUE if not m.parts]
    for index, first in enumerate(choices):
        for second in choices[index + 1 :: 7]:  # a spread of pairs, not all of them
            policy = compose([first, second])
            if set(first.steps) & set(second.steps):
                assert policy is None
                continue
            assert policy is not None, (first.name, second.name)
            for part in (first, second):
                for hook in overridden(part.policy):
                    assert defining(policy, hook) is defining(part.policy, hook), (part.name, hook)


def defining(policy: type, name: str) -> type:
    """The class of ``policy``'s MRO whose definition of ``name`` is the one in force."""
    return next(klass for klass in policy.__mro__ if name in vars(klass))


# -- rounding --------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=32))
def test_float16_rounding_is_numpys(value: float) -> None:
    ours = round_to(Fraction(value), FLOAT16) if value else 0.0
    with np.errstate(over="ignore"):
        theirs = float(np.float64(value).astype(np.float16))
    assert ours == theirs or (math.isinf(ours) and math.isinf(theirs) and ours == theirs)


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=32))
def test_bfloat16_bits_round_as_the_exact_rounding(value: float) -> None:
    exact = round_to(Fraction(value), BFLOAT16) if value else 0.0
    assert float(to_bfloat16([value])[0]) == exact


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float32_rounding_is_the_cast(value: float) -> None:
    try:
        cast = struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        cast = math.copysign(math.inf, value)
    assert round_to(Fraction(value), FLOAT32) == cast if value else True
