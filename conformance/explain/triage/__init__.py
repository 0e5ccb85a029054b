"""Triage: which catalogued porting mistakes, made together, answer exactly as the port did,
and the failures grouped by where the port first diverged.

:func:`triage` is the one entry: it leaves out the vectors too long to replay, runs the search
(:mod:`.search`: singles from the shipped kill table, a beam over the steps, the best replayed
in process), groups the failures (:mod:`.groups`) and returns what it found (:mod:`.explanations`:
:class:`Triage`, whose ``lines`` and ``to_json`` the reports show).

Invariant: everything here is a function of the vectors, the port's answers and the catalogue:
nothing is timed but the duration reported, and the ranking is deterministic.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from conformance import mutants
from conformance.explain.triage import search
from conformance.explain.triage.explanations import Likely, Part, Triage, Unconfirmed, part_of
from conformance.explain.triage.groups import GROUPS, Group, divergence_kind, group_failures
from conformance.explain.triage.search import Engine, Scored
from conformance.suite.vectors import LONG_VECTOR

__all__ = [
    "GROUPS",
    "Group",
    "Likely",
    "Part",
    "Triage",
    "Unconfirmed",
    "catalogue",
    "divergence_kind",
    "group_failures",
    "part_of",
    "triage",
]


def _is_long(vector: Any) -> bool:
    """Whether a vector (or a suite entry, read only to count its lines) is too long to
    replay (:data:`~conformance.suite.vectors.LONG_VECTOR`)."""
    calls = getattr(vector, "calls", None)
    if calls is not None:
        return len(calls) > LONG_VECTOR
    is_long = getattr(vector, "is_long", None)
    return bool(is_long()) if is_long is not None else False


def catalogue(exclude: Iterable[str] = ()) -> list[Any]:
    """The catalogue as triage candidates, in catalogue order, then the protocol-level
    choices (:data:`conformance.mutants.PROTOCOL`), minus ``exclude``."""

    skip = set(exclude)
    return [m for m in (*mutants.CATALOGUE, *mutants.PROTOCOL) if m.name not in skip]


def triage(
    vectors: Sequence[Any],
    results: Sequence[Any],
    *,
    checks: Sequence[Any] = (),
    mistakes: Sequence[Any] | None = None,
    combine: bool = True,
    clock: Callable[[], float] = time.perf_counter,
    capabilities: Sequence[str] | None = None,
) -> Triage:
    """Rank catalogued mistakes (``mistakes``, the whole catalogue by default), alone and
    combined, by how exactly each reproduces the answers behind ``results`` (the runner's
    :class:`~conformance.runner.results.VectorResult` list, matched to ``vectors`` and to the
    protocol ``checks`` by id: a check's judgement counts as one answer, and the figures count
    vectors and checks alike, as the run's summary does).

    ``vectors`` may be :class:`~conformance.suite.vectors.Vector` objects or the runner's suite
    entries (anything with ``id``, ``path`` and ``load()``): an entry is read only when a
    replay needs it. ``capabilities`` are the optional ops the port announced in its hello
    (None: unknown); candidates are replayed announcing no others."""
    began = clock()
    # A long vector (a recorded trace) would cost each candidate a replay of all its calls:
    # it is left out, and the triage says so.
    long_ids = {vector.id for vector in vectors if _is_long(vector)}
    left_out = sorted(r.vector_id for r in results if r.vector_id in long_ids)
    vectors = [vector for vector in vectors if vector.id not in long_ids]
    results = [result for result in results if result.vector_id not in long_ids]
    engine = Engine(
        vectors,
        results,
        list(mistakes) if mistakes is not None else catalogue(),
        checks,
        capabilities,
    )
    ranked = engine.rank(combine)
    unsure: list[tuple[Scored, int, int, int]] = []
    if ranked and combine:
        others, unsure = engine.alike(ranked[0])
        ranked = [ranked[0], *others, *(item for item in ranked[1:] if item not in others)]
    failures = [r for r in results if not r.passed]
    undiagnosed = {r.vector_id for r in failures if not getattr(r, "diagnosis", None)}
    groups = group_failures(
        [run.vector for run in engine.failing if run.id in undiagnosed and not run.check],
        failures,
        {check.id for check in checks},
    )
    likely = [engine.likely(item) for item in ranked]
    alike: list[Likely] = []
    unconfirmed: list[Unconfirmed] = []
    tells_apart = None
    if likely and likely[0].explains:
        top = ranked[0]
        alike = [
            engine.likely(item)
            for item in ranked[1:]
            if item.exact
            and len(item.explained) == len(top.explained)
            and item.agrees == top.agrees
            and item.firsts == top.firsts
        ]
        # A candidate found alike by the search itself is no longer unconfirmed.
        seen = {engine.choices(item) for item in ranked[: len(alike) + 1]}
        for item, part, checked, unchecked in unsure:
            if engine.choices(item) in seen:
                continue
            seen.add(engine.choices(item))
            by = next(index for index in item.indices if index not in top.indices)
            unconfirmed.append(
                Unconfirmed(
                    engine.likely(item),
                    engine.singles[part].mutant.name,
                    engine.singles[by].mutant.name,
                    checked,
                    unchecked,
                )
            )
        if alike or unconfirmed:
            tells_apart = engine.tells_apart(
                [top, *ranked[1 : len(alike) + 1], *(item for item, *_ in unsure)]
            )
    return Triage(
        likely=likely,
        groups=groups,
        failing=len(engine.failing),
        passing=len(engine.passing),
        mistakes=len(engine.singles),
        combinations=engine.combinations,
        duration=clock() - began,
        alike=alike,
        tells_apart=tells_apart,
        replayed=engine.replayed,
        left_out=left_out,
        unconfirmed=unconfirmed,
        cut_short=len(engine.cut),
        budget=search.SEARCH_BUDGET,
        items=engine.items,
    )
