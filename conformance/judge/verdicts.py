"""What the judge returns for one item (a vector or a protocol check): one type per outcome.

- :class:`Verdict`: the answers were judged: ``pass``, or the first answer that is wrong (the
  verdict name, the call, expected and actual, the broken rule);
- :class:`Errored`: the exchange broke before the answers could all be judged: the adapter
  crashed, hung or wrote what is not an answer (``crash``, ``timeout``, ``protocol-error``), or
  could not be started to run the item.

(An item is never skipped: a vector listed as a known failure runs like any other.) Both are
frozen and carry the same names where they overlap, so a report reads either alike; what later
layers know of an item (its explanation, the adapter's stderr, the time, whether it is a known
failure) is added beside the judge's result (:class:`conformance.runner.results.VectorResult`),
never copied into it.

Invariant: values only; a result never changes once made, and whatever an adapter sent is kept
bounded in it (:func:`kept`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from conformance.spec.text import KEEP_ITEMS, KEEP_TEXT, capped, capped_list

PASS = "pass"
WRONG_VICTIMS = "wrong-victims"
BROKEN_INVARIANT = "broken-invariant"
WRONG_ERROR_KIND = "wrong-error-kind"
UNEXPECTED_SUCCESS = "unexpected-success"
UNEXPECTED_REFUSAL = "unexpected-refusal"
CRASH = "crash"
TIMEOUT = "timeout"
PROTOCOL_ERROR = "protocol-error"
#: Every verdict, in the order reports list them.
VERDICTS = (
    PASS,
    WRONG_VICTIMS,
    BROKEN_INVARIANT,
    WRONG_ERROR_KIND,
    UNEXPECTED_SUCCESS,
    UNEXPECTED_REFUSAL,
    CRASH,
    TIMEOUT,
    PROTOCOL_ERROR,
)
#: The verdicts that mean the adapter process misbehaved (JUnit reports them as errors).
PROCESS_VERDICTS = (CRASH, TIMEOUT, PROTOCOL_ERROR)

#: The invariant rules an evict answer can break (the ``rule`` of a broken-invariant result).
NOT_INTEGERS = "not-integers"
NOT_ASCENDING = "not-ascending"
NOT_KEPT = "not-kept"
PROTECTED_EVICTED = "protected-evicted"
WRONG_COUNT = "wrong-count"
INVARIANT_RULES = (NOT_INTEGERS, NOT_ASCENDING, NOT_KEPT, PROTECTED_EVICTED, WRONG_COUNT)


@dataclass(frozen=True)
class Verdict:
    """An item whose answers were judged: ``pass``, or the first thing wrong in them.

    ``call_index`` and ``op`` name the call the verdict is about (for a protocol check, the
    request line; None for a pass or a fault of the whole session); ``message`` is one line
    saying what went wrong; ``expected`` and ``actual`` are JSON values (victim lists for victim
    verdicts, ``{"error": kind}``-style objects for refusals); ``rule`` names the broken
    invariant; ``answers`` are the answers' outcomes, for triage (failures only; not in
    reports).
    """

    vector_id: str
    verdict: str
    call_index: int | None = None
    op: str | None = None
    message: str = ""
    expected: Any = None
    actual: Any = None
    rule: str | None = None
    answers: tuple[tuple[Any, ...], ...] = field(default=(), repr=False, compare=False)
    #: A judged item's adapter did not fail: no exit status to show.
    exit_status: ClassVar[int | None] = None

    @property
    def passed(self) -> bool:
        return self.verdict == PASS


@dataclass(frozen=True)
class Errored:
    """An item whose exchange broke: ``verdict`` is ``crash``, ``timeout`` or
    ``protocol-error`` (:data:`PROCESS_VERDICTS`).

    ``call_index`` and ``op`` name the call whose answer was due (None when the item did not
    run at all); ``message`` says what happened; ``exit_status`` is the adapter's after a crash,
    when it had exited; ``answers`` are the outcomes of the answers before it, then how the
    exchange ended, for triage.
    """

    vector_id: str
    verdict: str
    call_index: int | None = None
    op: str | None = None
    message: str = ""
    exit_status: int | None = None
    answers: tuple[tuple[Any, ...], ...] = field(default=(), repr=False, compare=False)
    #: Nothing was compared with an expectation.
    expected: ClassVar[Any] = None
    actual: ClassVar[Any] = None
    rule: ClassVar[str | None] = None
    passed: ClassVar[bool] = False


#: What the judge returns for an item.
Judged = Verdict | Errored


def kept(value: Any, depth: int = 0) -> Any:
    """``value`` (an adapter's JSON value) bounded for keeping in a result: strings cut at
    :data:`KEEP_TEXT` characters, lists and objects at :data:`KEEP_ITEMS` members, each with a
    note of what was cut. So what a failing adapter sends cannot grow the runner's memory or
    any report beyond a bound per vector, whatever its size."""
    if isinstance(value, str):
        return capped(value, KEEP_TEXT)
    if isinstance(value, list):
        return [kept(item, depth + 1) for item in capped_list(value, KEEP_ITEMS)]
    if isinstance(value, dict):
        items = list(value.items())
        bounded = {key: kept(item, depth + 1) for key, item in items[:KEEP_ITEMS]}
        if len(items) > KEEP_ITEMS:
            bounded["..."] = f"({len(items) - KEEP_ITEMS:,} more members)"
        return bounded
    return value
