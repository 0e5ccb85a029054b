"""conformance.mutants.protocol: each protocol-level choice is caught by a protocol
check that names it, and changes nothing a vector sends."""

from __future__ import annotations

import pytest

from conformance import mutants
from conformance.explain.play import check_outcome, play, play_check
from conformance.judge.outcomes import expected_outcomes
from conformance.mutants.model import Model
from conformance.spec.resources import suite_dir
from conformance.spec.text import split_description
from conformance.suite.stream import load_checks
from conformance.suite.vectors import load_suite

CHECKS = load_checks([suite_dir()])


def test_the_reference_passes_every_check_replayed_in_process() -> None:
    assert all(check_outcome(play_check(Model, check)) == ("pass",) for check in CHECKS)


@pytest.mark.parametrize("choice", mutants.PROTOCOL, ids=lambda m: m.name)
def test_a_protocol_choice_is_caught_by_a_check_that_names_it(choice: mutants.Mutant) -> None:
    failed = [c for c in CHECKS if check_outcome(play_check(choice.policy, c)) != ("pass",)]
    assert failed, f"no protocol check catches {choice.name}"
    naming = [c.id for c in failed if choice.names_mistake(c.description)]
    catches = [split_description(c.description)[1] for c in failed]
    assert naming, (choice.name, [c.id for c in failed], catches)
    assert choice.family == "protocol" and choice not in mutants.CATALOGUE
    assert mutants.lookup(choice.name) is choice


@pytest.mark.parametrize("choice", mutants.PROTOCOL, ids=lambda m: m.name)
def test_a_protocol_choice_is_inert_on_the_vectors(choice: mutants.Mutant) -> None:
    for vector in load_suite([suite_dir()])[::4]:
        if len(vector.calls) < 200:
            assert play(choice.policy, vector).outcomes == expected_outcomes(vector), vector.id
