"""Run records written out by hand, for tests of what reads them (reports, progress, JUnit):
:func:`record` takes an item's fields flat, as a report shows them, and makes the
:class:`~conformance.runner.results.VectorResult` the runner would, the judge's result
(:class:`~conformance.judge.verdicts.Errored` for a process verdict, else
:class:`~conformance.judge.verdicts.Verdict`) with the run's facts beside it."""

from __future__ import annotations

from typing import Any

from conformance.judge.verdicts import PROCESS_VERDICTS, Errored, Judged, Verdict
from conformance.runner.results import VectorResult


def judged(
    vector_id: str,
    verdict: str,
    call_index: int | None = None,
    op: str | None = None,
    message: str = "",
    expected: Any = None,
    actual: Any = None,
    *,
    rule: str | None = None,
    exit_status: int | None = None,
) -> Judged:
    """The judge's result with these fields."""
    if verdict in PROCESS_VERDICTS and expected is None and actual is None and rule is None:
        return Errored(vector_id, verdict, call_index, op, message, exit_status)
    assert exit_status is None, "only an errored item has an exit status"
    return Verdict(vector_id, verdict, call_index, op, message, expected, actual, rule)


def record(
    vector_id: str,
    verdict: str,
    *fields: Any,
    rule: str | None = None,
    exit_status: int | None = None,
    **options: Any,
) -> VectorResult:
    """The run's record of an item judged so (``fields``, or the same by name: call index, op,
    message, expected, actual), with the other ``options`` (``stderr_tail``,
    ``known_failure``, ...) beside it."""
    named = {name: options.pop(name) for name in _FIELDS if name in options}
    found = judged(vector_id, verdict, *fields, rule=rule, exit_status=exit_status, **named)
    return VectorResult(found, **options)


_FIELDS = ("call_index", "op", "message", "expected", "actual")
