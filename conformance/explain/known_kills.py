"""What every catalogued mistake answers on every committed vector, shipped so triage need not
replay it.

A triage compares catalogued mistakes (:mod:`conformance.mutants`) with the port's answers on
every vector the port was run on, and on a vector of the committed suite what a mistake answers
is a fact of the suite and the catalogue. This module keeps those facts in
``conformance/data/kills.json``, each vector's entry with a digest of its canonical text, so
an entry is used only for the very vector it was computed on (an edited or user-written vector
is replayed instead). For each vector and each mistake the file says one of three things:

- nothing: the mistake is *inert* there: its answers, and the sums and pooled scores of every
  evict, are the reference's bit for bit. Made together with other mistakes, it changes
  nothing on that vector that they do not change.
- ``moved``: its answers are the expected ones, but some score differs.
- ``kills``: its answers differ: ``[first differing call, digest of that answer, digest of
  all its answers]`` (:func:`conformance.explain.play.digest`).

The file holds facts of the suite and the catalogue alone, not of the machine that computed it:
no catalogued mistake calls numpy's sorts or selections, whose order among equal keys depends on
the CPU numpy dispatches to (:mod:`conformance.mutants._sorts` writes them out instead).

The file is regenerated from a checkout with ``python -m conformance.tools.generate.kills``; a
test recomputes it and fails when it is stale.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance import mutants
from conformance.explain.play import digest as answers_digest
from conformance.explain.play import play
from conformance.judge.outcomes import expected_outcomes
from conformance.mutants.model import Model
from conformance.spec import resources
from conformance.suite import layout
from conformance.suite.vectors import Vector, dumps_vector, vector_fields

PATH = resources.data_path("kills.json")


def digest(vector: Any) -> str:
    """The SHA-256 of the vector's canonical text (:func:`conformance.suite.vectors.dumps_vector`).

    A vector read from a file in the canonical layout keeps each call's line, which is that
    call's part of the canonical text, so only the few top-level fields are encoded again. A
    vector known only by its file (the runner's :class:`~conformance.suite.stream.SuiteEntry`)
    is the file's bytes: the committed files are canonical, and any other file is at worst
    replayed instead of looked up."""
    if not hasattr(vector, "calls"):
        return str(vector.file_digest())
    if any(call.line is None for call in vector.calls):
        return hashlib.sha256(dumps_vector(vector).encode("utf-8")).hexdigest()
    calls = (call.line.decode("utf-8") for call in vector.calls)
    text = layout.text(vector_fields(vector), [("calls", calls)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Kill:
    """How a mistake fails a vector: the first call it answers differently, and digests of
    that answer and of all its answers."""

    first: int
    at_first: str
    answers: str


@dataclass(frozen=True)
class Known:
    """What the catalogue answers on one committed vector."""

    kills: Mapping[str, Kill]
    moved: frozenset[str]

    def inert(self, name: str) -> bool:
        return name not in self.kills and name not in self.moved


def entry(vector: Vector, names: Sequence[str] | None = None) -> dict[str, Any]:
    """The file's entry for ``vector``: replay every catalogued mistake (or those ``names``)
    with its scores traced, and compare with the reference's."""

    expected = expected_outcomes(vector)
    reference = play(Model, vector, trace=True)
    kills: dict[str, list[Any]] = {}
    moved: list[str] = []
    chosen = [mutants.lookup(name) for name in names] if names else mutants.CATALOGUE
    for mutant in chosen:
        played = play(mutant.policy, vector, trace=True)
        if played.outcomes != expected:
            first = next(
                (
                    i
                    for i, (a, b) in enumerate(zip(played.outcomes, expected, strict=False))
                    if a != b
                ),
                min(len(played.outcomes), len(expected)),
            )
            at_first = played.outcomes[first : first + 1]
            kills[mutant.name] = [
                first,
                answers_digest(at_first),
                answers_digest(played.outcomes),
            ]
        elif not _same_scores(played.trace, reference.trace):
            moved.append(mutant.name)
    return {"digest": digest(vector), "kills": kills, "moved": moved}


def _same_scores(a: Sequence[Any], b: Sequence[Any]) -> bool:
    if len(a) != len(b):
        return False
    for (sums_a, pooled_a), (sums_b, pooled_b) in zip(a, b, strict=True):
        if sums_a.tobytes() != sums_b.tobytes() or pooled_a.tobytes() != pooled_b.tobytes():
            return False
    return True


def load(vectors: Sequence[Any]) -> dict[str, Known]:
    """What the shipped file knows of each of ``vectors`` whose text is the one it was computed
    on (others are left out: they are replayed). Empty when the file is missing or unreadable."""
    try:
        table: Mapping[str, Any] = json.loads(PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    known: dict[str, Known] = {}
    for vector in vectors:
        item = table.get(vector.id)
        if not isinstance(item, Mapping) or item.get("digest") != digest(vector):
            continue
        try:
            kills = {
                str(name): Kill(int(value[0]), str(value[1]), str(value[2]))
                for name, value in item["kills"].items()
            }
            moved = frozenset(str(name) for name in item["moved"])
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            continue
        known[vector.id] = Known(kills, moved)
    return known


def dumps(table: Mapping[str, Any]) -> str:
    """The file's text: one vector per line, ids sorted."""
    lines = [
        f"  {json.dumps(key)}: {json.dumps(table[key], separators=(',', ':'))}"
        for key in sorted(table)
    ]
    return "{\n" + ",\n".join(lines) + "\n}\n"
