"""The failures grouped by where the port first diverged, so a porter whose mistake the
catalogue does not hold still knows where to look.

Invariant: a failing result belongs to exactly one group of :data:`GROUPS`, decided from its
verdict, the runner's diagnosis and (without one) a look for a tie at the failing call; the
groups come in :data:`GROUPS` order, designed vectors first within each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.explain.diagnosis import tied_selection
from conformance.judge import verdicts
from conformance.suite.discovery import is_generated
from conformance.suite.vectors import Vector

#: The groups of first divergence, in the order a porter should look at them.
GROUPS: tuple[tuple[str, str], ...] = (
    ("process", "crash, timeout or protocol error"),
    ("refusal", "refusal mismatch (a call accepted or refused wrongly, or with the wrong kind)"),
    ("invariant", "broken invariant (victims not a valid eviction)"),
    ("sums", "window sums differ from the reference's"),
    ("pooled", "pooled scores differ (sums equal)"),
    ("ties", "selection differs among equal pooled scores (a tie broken the wrong way)"),
    ("selection", "selection differs with scores equal to the reference's"),
    ("victims", "victims differ (no scores capability to tell sums, pooling and selection apart)"),
)


@dataclass
class Group:
    """Failing vectors that first diverged the same way."""

    kind: str
    label: str
    vectors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label, "vectors": list(self.vectors)}


def divergence_kind(vector: Vector | None, result: Any) -> str:
    """The group of :data:`GROUPS` a failing result belongs to."""

    verdict = result.verdict
    if verdict in verdicts.PROCESS_VERDICTS:
        return "process"
    if verdict in (
        verdicts.WRONG_ERROR_KIND,
        verdicts.UNEXPECTED_SUCCESS,
        verdicts.UNEXPECTED_REFUSAL,
    ):
        return "refusal"
    if verdict == verdicts.BROKEN_INVARIANT:
        return "invariant"
    kind = getattr(result, "divergence", None)
    if kind in ("sums", "pooled", "ties", "selection"):
        return str(kind)
    # A result the runner diagnosed has already been looked at for a tie (without_scores).
    if (
        vector is not None
        and result.call_index is not None
        and not getattr(result, "diagnosis", None)
        and tied_selection(vector, result.call_index, result.actual) is not None
    ):
        return "ties"
    return "victims"


def group_failures(vectors: Sequence[Vector], failures: Sequence[Any]) -> list[Group]:
    """The failing results grouped by :func:`divergence_kind`, groups in :data:`GROUPS`
    order, designed vectors first within each."""
    by_id = {vector.id: vector for vector in vectors}
    groups = {kind: Group(kind, label) for kind, label in GROUPS}
    for result in sorted(failures, key=lambda r: is_generated(r.vector_id)):
        groups[divergence_kind(by_id.get(result.vector_id), result)].vectors.append(
            result.vector_id
        )
    return [group for group in groups.values() if group.vectors]
