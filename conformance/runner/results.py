"""The run's record of one item: :class:`VectorResult`, the judge's result with what the later
layers know of the item beside it.

The judge's :class:`~conformance.judge.verdicts.Verdict` or
:class:`~conformance.judge.verdicts.Errored` is kept as it was returned (``judged``); the
explanation (:func:`conformance.explain.diagnosis.explained`, the scores diagnosis), the
adapter's stderr, the time and whether the item is a listed known failure sit beside it. The
judge's names read through (``result.verdict``, ``result.call_index``, ...), so a report reads
one record whatever the outcome.

Invariant: made once per item, when nothing about it can change any more (the window settles
it, or the protocol checks' runner judges it), and never changed afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.judge.verdicts import Judged
from conformance.numerics.verdict import NOT_APPLICABLE, WITHIN, NumericsVerdict


def _judged(name: str) -> Any:
    """The judge's ``name``, read through the record."""
    return property(lambda self: getattr(self.judged, name), doc=f"The judge's ``{name}``.")


@dataclass(frozen=True)
class VectorResult:
    """One item's outcome in a run (a vector or a protocol check).

    ``judged`` is the judge's result. Beside it: ``catches`` (the vector's "Catches:" text, for
    a failure at what it pins) or ``elsewhere`` (what it pins and where the port failed
    instead); ``diagnosis``, the scores diagnosis of a wrong evict, and ``divergence``, where it
    found the port first diverged (``sums``, ``pooled``, ``ties``, ``selection``), for triage's
    groups; the adapter's ``stderr_tail``; ``duration``, from the first request to the
    verdict; ``known_failure``, whether the item is listed as one; ``numerics``, in a run under
    a numerics profile (``run --numerics P``), the failed vector judged under it
    (:func:`conformance.numerics.verdict.judge_numerics`; None for a pass, a protocol check, or
    an exact run).
    """

    judged: Judged
    catches: str = ""
    elsewhere: str = ""
    diagnosis: str | None = None
    divergence: str | None = field(default=None, repr=False, compare=False)
    stderr_tail: str = ""
    duration: float = 0.0
    known_failure: bool = False
    numerics: NumericsVerdict | None = None

    # -- the judge's result, read through (see :mod:`conformance.judge.verdicts`) ----------

    vector_id = _judged("vector_id")
    verdict = _judged("verdict")
    passed = _judged("passed")
    call_index = _judged("call_index")
    op = _judged("op")
    message = _judged("message")
    expected = _judged("expected")
    actual = _judged("actual")
    rule = _judged("rule")
    exit_status = _judged("exit_status")
    #: The answers' outcomes, for triage (failures only).
    answers = _judged("answers")

    # -- the run's -------------------------------------------------------------------------

    @property
    def tolerated(self) -> bool:
        """Failed exactly, but every difference is rounding the run's numerics profile admits
        (``within P``), or the profile cannot judge it (``n/a for P``): it fails nothing."""
        return self.numerics is not None and self.numerics.status in (WITHIN, NOT_APPLICABLE)

    @property
    def fails_run(self) -> bool:
        """A failure not listed as known (``within P`` and ``n/a for P`` are not failures), or
        a listed one that passed (the list went stale)."""
        return (self.passed or self.tolerated) == self.known_failure

    def describe(self) -> str:
        """One line: ``<id>: call <i> (<op>): <verdict>: <message>``; under a numerics profile
        ``<id>: within P (...)``, ``<id>: call <i> (<op>): n/a for P: <why>``, or, for a
        failure, the exact verdict's line."""
        if self.numerics is not None and self.tolerated:
            text = self.numerics.describe()
        elif self.passed:
            text = f"{self.vector_id}: pass"
        elif self.call_index is None:
            text = f"{self.vector_id}: {self.verdict}: {self.message}"
        else:
            text = (
                f"{self.vector_id}: call {self.call_index} ({self.op}): "
                f"{self.verdict}: {self.message}"
            )
        if self.known_failure and (self.passed or self.tolerated):
            text += " (listed as a known failure, but it passes: remove it from the list)"
        return text

    def to_json(self) -> dict[str, Any]:
        """The result as the JSON report holds it (``schema/report.schema.json``)."""
        return {
            "id": self.vector_id,
            "verdict": self.verdict,
            "passed": self.passed,
            "known_failure": self.known_failure,
            "fails_run": self.fails_run,
            "call_index": self.call_index,
            "op": self.op,
            "message": self.message,
            "rule": self.rule,
            "expected": self.expected,
            "actual": self.actual,
            "diagnosis": self.diagnosis,
            "catches": self.catches,
            "elsewhere": self.elsewhere,
            "exit_status": self.exit_status,
            "stderr_tail": self.stderr_tail,
            "duration": round(self.duration, 6),
            "numerics": None if self.numerics is None else self.numerics.to_json(),
        }
