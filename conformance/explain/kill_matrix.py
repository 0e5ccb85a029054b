"""The kill matrix: which vectors each mutant fails, replayed in process.

Each vector is replayed on the mutant's policy (:func:`conformance.explain.play.play`: the
calls answered as :class:`conformance.adapter.server.Session` answers them, a crash where the policy
raises) and the answers are judged by :func:`conformance.judge.checker.judge`, the same checker
``snapkv-conformance run`` uses: a vector *kills* a mutant when its verdict is not ``pass``.
The real adapter process path is the runner's; this one skips process start-up, pipes and JSON,
which is what makes judging the whole catalogue against the whole suite cheap enough for CI.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.explain import known_kills
from conformance.explain.play import play
from conformance.judge.checker import judge
from conformance.judge.verdicts import PASS
from conformance.mutants._base import Mutant
from conformance.suite.vectors import Vector
from conformance.transport.failures import AdapterFailure


def answers_of(outcomes: Sequence[tuple[Any, ...]]) -> tuple[list[dict[str, Any]], Any]:
    """Protocol answers for replayed outcomes, and the crash that cut them short (or None)."""
    answers: list[dict[str, Any]] = []
    for index, outcome in enumerate(outcomes):
        if outcome[0] == "dies":
            return answers, AdapterFailure("crash", index, "the policy raised", answers=answers)
        if outcome[0] == "error":
            answers.append({"id": index, "ok": False, "error": {"kind": outcome[1], "message": ""}})
        elif outcome[0] == "victims":
            answers.append({"id": index, "ok": True, "victims": list(outcome[1])})
        else:
            answers.append({"id": index, "ok": True})
    return answers, None


def verdict(mutant: Mutant, vector: Vector) -> str:
    """The checker's verdict on ``mutant`` replaying ``vector`` (``"pass"`` if it survives)."""

    answers, failure = answers_of(play(mutant.policy, vector).outcomes)
    return judge(vector, answers, failure=failure).verdict


@dataclass
class MutantRow:
    """One mutant's line of the matrix: the vectors that kill it, with the checker's verdicts.

    ``guards`` are the killers whose description names the mistake, what a porter who made it
    should read first: the most direct naming first, then the vector killing fewest mutants
    (the most targeted), then by id.
    """

    mutant: Mutant
    killers: dict[str, str] = field(default_factory=dict)  # vector id -> verdict
    guards: list[str] = field(default_factory=list)

    @property
    def killed(self) -> bool:
        return bool(self.killers)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.mutant.name,
            "family": self.mutant.family,
            "rule": self.mutant.rule,
            "origin": self.mutant.origin,
            "killed": self.killed,
            "guarded": bool(self.guards),
            "guards": self.guards,
            "killers": [{"id": vid, "verdict": v} for vid, v in self.killers.items()],
        }


@dataclass
class KillMatrix:
    """Every mutant's row, in catalogue order, over one suite (vectors in suite order)."""

    vectors: list[Vector]
    rows: list[MutantRow]

    @property
    def survivors(self) -> list[Mutant]:
        return [row.mutant for row in self.rows if not row.killed]

    @property
    def unguarded(self) -> list[Mutant]:
        """Killed mutants that no killing vector names (the suite catches, but cannot explain)."""
        return [row.mutant for row in self.rows if row.killed and not row.guards]

    def kills_per_vector(self) -> dict[str, int]:
        """How many mutants each vector kills, in suite order."""
        counts = {vector.id: 0 for vector in self.vectors}
        for row in self.rows:
            for vector_id in row.killers:
                counts[vector_id] += 1
        return counts

    def strongest(self, count: int = 5) -> list[tuple[str, int]]:
        """The vectors that kill the most mutants (ties by id)."""
        ranked = sorted(self.kills_per_vector().items(), key=lambda item: (-item[1], item[0]))
        return [item for item in ranked[:count] if item[1] > 0]

    def weakest(self) -> list[str]:
        """The vectors that kill no mutant."""
        return [vid for vid, kills in self.kills_per_vector().items() if kills == 0]

    def to_json(self) -> dict[str, Any]:
        return {
            "mutants": len(self.rows),
            "killed": sum(row.killed for row in self.rows),
            "survived": [m.name for m in self.survivors],
            "unguarded": [m.name for m in self.unguarded],
            "vectors": len(self.vectors),
            "kills_per_vector": self.kills_per_vector(),
            "rows": [row.to_json() for row in self.rows],
        }


def kill_matrix(
    vectors: Sequence[Vector],
    mutants: Iterable[Mutant],
    progress: Callable[[Mutant, int, int], None] | None = None,
) -> KillMatrix:
    """Replay every vector on every mutant and collect the kills."""
    mutants = list(mutants)
    rows = []
    for done, mutant in enumerate(mutants, 1):
        row = MutantRow(mutant)
        for vector in vectors:
            result = verdict(mutant, vector)
            if result != PASS:
                row.killers[vector.id] = result
        rows.append(row)
        if progress is not None:
            progress(mutant, done, len(mutants))
    return _with_guards(KillMatrix(list(vectors), rows))


def _with_guards(matrix: KillMatrix) -> KillMatrix:
    """Each row's guards: its killers whose description names the mistake."""
    vectors, rows = matrix.vectors, matrix.rows
    kills = matrix.kills_per_vector()
    descriptions = {vector.id: vector.description for vector in vectors}
    for row in rows:
        ranked = []
        for vector_id in row.killers:
            rank = row.mutant.naming_rank(descriptions[vector_id])
            if rank is not None:
                ranked.append((rank, kills[vector_id], vector_id))
        row.guards = [vector_id for *_, vector_id in sorted(ranked)]
    return matrix


def shipped_matrix(vectors: Sequence[Vector], mutants: Iterable[Mutant]) -> KillMatrix:
    """The kill matrix as the shipped outcomes (:mod:`conformance.explain.known_kills`) record it: a
    vector kills a mutant when the mutant's answers differ from the expected ones, which is
    when the checker fails it. Verdicts are not recorded there (``"killed"`` stands for them);
    a vector the file does not know is replayed and judged."""

    known = known_kills.load(vectors)
    mutants = list(mutants)
    rows = []
    for mutant in mutants:
        row = MutantRow(mutant)
        for vector in vectors:
            entry = known.get(vector.id)
            if entry is None:
                result = verdict(mutant, vector)
                if result != PASS:
                    row.killers[vector.id] = result
            elif mutant.name in entry.kills:
                row.killers[vector.id] = "killed"
        rows.append(row)
    return _with_guards(KillMatrix(list(vectors), rows))
