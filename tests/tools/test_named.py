"""Every mistake a committed vector's "Catches:" text names is catalogued, and that vector
kills it (conformance/tools/generate/named.py holds the reading of every text)."""

from __future__ import annotations

from functools import cache

import pytest

from conformance import mutants
from conformance.explain.play import compose, play
from conformance.judge.outcomes import expected_outcomes
from conformance.spec import resources
from conformance.spec.text import catches_of
from conformance.suite.vectors import Vector, load_suite
from conformance.tools.generate.named import GENERIC, NAMED


@cache
def suite() -> dict[str, Vector]:
    return {vector.id: vector for vector in load_suite([str(resources.suite_dir())])}


def test_every_committed_vector_has_its_catches_read() -> None:
    unread = sorted(set(suite()) - set(NAMED) - set(GENERIC))
    assert unread == [], (
        f"add these vectors' named mistakes to conformance/tools/generate/named.py: {unread}"
    )
    stale = sorted((set(NAMED) | set(GENERIC)) - set(suite()))
    assert stale == [], f"no such committed vectors: {stale}"
    assert not set(NAMED) & set(GENERIC)
    assert all(NAMED.values()), "a vector that names no mistake belongs in GENERIC, with why"


@pytest.mark.slow
@pytest.mark.parametrize("vector_id", sorted(NAMED), ids=str)
def test_each_named_mistake_is_catalogued_and_killed_by_its_vector(vector_id: str) -> None:
    vector = suite()[vector_id]
    catches = catches_of(vector.description)
    expected = expected_outcomes(vector)
    for phrase, names in NAMED[vector_id]:
        assert phrase.lower() in catches.lower(), f"{phrase!r} is not in: {catches}"
        parts = [mutants.lookup(name) for name in names.split("+")]
        policy = compose(parts)
        assert policy is not None, f"{names} change the same step"
        assert play(policy, vector).outcomes != expected, f"{vector_id} does not kill {names}"


def test_every_catalogued_mistake_is_named_by_some_vector_that_kills_it() -> None:
    named = {
        name for entries in NAMED.values() for _, names in entries for name in names.split("+")
    }
    assert sorted(set(mutants.names()) - named) == []
