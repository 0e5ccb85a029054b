"""Diagnosing a wrong eviction from the reference's scores (and the adapter's, when it has them).

:func:`tied_selection` needs nothing from the adapter: it replays the vector on the reference
up to the failing evict and tells whether the adapter's victims differ from the expected ones
only among candidates with equal pooled scores, that is, whether the port broke a tie the wrong
way. That is the signature of an unstable sort, a ``topk`` or an ``argpartition`` used for
the selection, and of a comparison that sends ties to the higher position.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from conformance.vectors import Vector


@dataclass(frozen=True)
class Tie:
    """Positions with equal pooled scores that the port and the reference split differently.

    ``positions`` are the candidates holding the tied ``value`` (ascending); the reference
    evicts ``expected`` of them (the lowest), the port evicted ``actual``.
    """

    value: float
    positions: tuple[int, ...]
    expected: tuple[int, ...]
    actual: tuple[int, ...]

    @property
    def went_higher(self) -> bool:
        """True when the port kept lower tied positions and evicted higher ones instead."""
        return max(self.actual) > max(self.expected) and min(self.actual) >= min(self.expected)

    def describe(self) -> str:
        """One sentence for a FAIL line."""
        shown = _positions(self.positions)
        which = (
            "the port evicted higher positions among them"
            if self.went_higher
            else "the port evicted them in no fixed order"
        )
        return (
            f"Positions {shown} are tied at pooled score {self.value!r}; SPEC.md §2.4 evicts "
            f"the lowest positions first ({_positions(self.expected)}), but {which} "
            f"({_positions(self.actual)}). The usual causes: an unstable sort (numpy's default "
            "argsort), topk or argpartition, or a comparison that sends ties to the higher "
            "position."
        )


def reference_policy(vector: Vector, call_index: int) -> Any:
    """The reference policy just before ``call_index`` (None when no policy is in place)."""
    from conformance.adapter import Session

    session = Session()
    for index, call in enumerate(vector.calls[:call_index]):
        session.handle({**call.request, "id": index})
    return session.policy


def tied_selection(vector: Vector, call_index: int, actual: Any) -> Tie | None:
    """The tie the port broke differently at the evict ``call_index``, or None when its
    victims ``actual`` do not differ from the expected ones only among equal pooled scores."""
    if not 0 <= call_index < len(vector.calls):
        return None
    expected = vector.calls[call_index].expected_victims
    if (
        expected is None
        or not isinstance(actual, list)
        or not all(type(v) is int for v in actual)
        or len(actual) != len(expected)
        or sorted(actual) == sorted(expected)
    ):
        return None
    policy = reference_policy(vector, call_index)
    if policy is None:
        return None
    scores = policy.scores()
    candidates = len(scores.positions) - policy.params.recentWindow
    pooled = dict(zip(scores.positions[:candidates], scores.pooled[:candidates], strict=True))
    if not all(v in pooled for v in actual):
        return None
    if Counter(pooled[v] for v in actual) != Counter(pooled[v] for v in expected):
        return None
    differ = sorted(set(actual) ^ set(expected))
    value = pooled[differ[0]]
    tied = tuple(p for p, score in pooled.items() if score == value)
    return Tie(
        value,
        tied,
        tuple(sorted(v for v in expected if pooled[v] == value)),
        tuple(sorted(v for v in actual if pooled[v] == value)),
    )


def _positions(positions: Sequence[int], limit: int = 12) -> str:
    if len(positions) <= limit:
        return "[" + ", ".join(map(str, positions)) + "]"
    head = ", ".join(map(str, positions[: limit // 2]))
    tail = ", ".join(map(str, positions[-limit // 2 :]))
    return f"[{head}, ... {len(positions) - limit} more ..., {tail}]"
