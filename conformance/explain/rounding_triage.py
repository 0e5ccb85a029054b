"""Whether a numerics profile explains every failure of an exact run as rounding, so that the
triage's first line can say which (``all 22 failures are rounding within float32 accumulation
in any order: rerun with --numerics float32``).

:func:`rounding` judges each failing vector's answers under every profile but exact
(:func:`conformance.numerics.verdict.judge_numerics`) and picks the profile under which none
fails and the fewest are not applicable, the tighter profile first on a tie (the table's
order), and names the others that explain them too. :func:`with_rounding` puts its line
before the catalogue's triage.

Invariant: pure over values; replays only the plain reference, in process, and imports no
numpy (a failing run loads it on the way to the triage).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from conformance.numerics.profiles import PROFILES, Profile
from conformance.numerics.verdict import FAIL, NOT_APPLICABLE, judge_numerics
from conformance.suite.vectors import LONG_VECTOR


class Explanation(Protocol):
    """A triage as the reports show it (:class:`conformance.explain.triage.Triage` is one)."""

    def headline(self) -> str: ...

    def lines(self) -> list[str]: ...

    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Rounding:
    """A profile that explains every failure: ``failures`` failing vectors, every one within
    it but ``not_applicable`` that lie outside its range; ``others``, the other profiles that
    explain them too, each with its own count outside its range."""

    profile: Profile
    failures: int
    not_applicable: int
    others: tuple[tuple[str, int], ...] = ()

    def line(self) -> str:
        """The triage's first line."""
        also = "; ".join(
            name + (f", {beyond} n/a" if beyond else "") for name, beyond in self.others
        )
        rerun = f": rerun with --numerics {self.profile.name}" + (
            f" (also within: {also})" if also else ""
        )
        within = f"rounding within {self.profile.arithmetic}"
        if not self.not_applicable:
            every = (
                "the one failure is" if self.failures == 1 else f"all {self.failures} failures are"
            )
            return f"{every} {within}{rerun}"
        judged = self.failures - self.not_applicable
        return (
            f"{judged} of the {self.failures} failures {'is' if judged == 1 else 'are'} {within}, "
            f"and the other {self.not_applicable} lie outside its range (not judged){rerun}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile.name,
            "failures": self.failures,
            "not_applicable": self.not_applicable,
            "others": [{"profile": name, "not_applicable": beyond} for name, beyond in self.others],
            "line": self.line(),
        }


def rounding(vectors: Sequence[Any], results: Sequence[Any]) -> Rounding | None:
    """The profile that explains every failing result among ``results`` as rounding (their
    vectors among ``vectors``: vectors, or suite entries read here), or None: when none does,
    when nothing failed, or when a failing vector is too long to replay
    (:data:`~conformance.suite.vectors.LONG_VECTOR` calls)."""
    failing = [result for result in results if not result.passed]
    by_id = {vector.id: vector for vector in vectors}
    if not failing or any(result.vector_id not in by_id for result in failing):
        return None
    if any(_is_long(by_id[result.vector_id]) for result in failing):
        return None
    loaded = [(_whole(by_id[result.vector_id]), result.answers) for result in failing]
    explaining: list[tuple[int, int, Profile]] = []
    for order, profile in enumerate(PROFILES.values()):
        if profile.exact:
            continue
        beyond = 0
        for vector, answers in loaded:
            status = judge_numerics(vector, answers, profile).status
            if status == FAIL:
                break
            beyond += status == NOT_APPLICABLE
        else:
            if beyond < len(loaded):
                explaining.append((beyond, order, profile))
    if not explaining:
        return None
    explaining.sort(key=lambda item: item[:2])
    (beyond, _, best), others = explaining[0], explaining[1:]
    return Rounding(best, len(loaded), beyond, tuple((p.name, n) for n, _, p in others))


def _is_long(vector: Any) -> bool:
    calls = getattr(vector, "calls", None)
    if calls is not None:
        return len(calls) > LONG_VECTOR
    return bool(vector.is_long())


def _whole(vector: Any) -> Any:
    """A vector, or a suite entry's vector read now."""
    return vector if hasattr(vector, "calls") else vector.load()


@dataclass(frozen=True)
class WithRounding:
    """A triage whose first line says which profile explains every failure as rounding."""

    triage: Explanation
    rounding: Rounding

    def headline(self) -> str:
        return self.rounding.line()

    def lines(self) -> list[str]:
        return [f"triage: {self.rounding.line()}", *self.triage.lines()]

    def to_json(self) -> dict[str, Any]:
        found = self.triage.to_json()
        return {**found, "headline": self.rounding.line(), "rounding": self.rounding.to_json()}


def with_rounding(
    triage: Explanation, vectors: Sequence[Any], results: Sequence[Any]
) -> Explanation:
    """``triage``, led by the rounding line when a profile explains every failure."""
    found = rounding(vectors, results)
    return triage if found is None else WithRounding(triage, found)


__all__ = ["Rounding", "WithRounding", "rounding", "with_rounding"]
