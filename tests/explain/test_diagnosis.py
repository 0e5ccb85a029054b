"""conformance.explain.diagnosis: a tie is described as the port broke it, and a port that
announced scores is never told it lacks them."""

from __future__ import annotations

from types import SimpleNamespace

from conformance.explain.diagnosis import NO_SCORES, Tie, tied_selection
from conformance.explain.triage.groups import divergence_kind
from conformance.judge import verdicts
from conformance.spec.resources import suite_dir
from conformance.suite.vectors import load_suite

ALL_EQUAL = next(v for v in load_suite([suite_dir()]) if v.id == "ties/all-equal-17")
EVICT = next(i for i, call in enumerate(ALL_EQUAL.calls) if call.op == "evict")


def test_a_tie_split_in_no_fixed_order_is_called_so_and_names_the_unstable_selections() -> None:
    """[1, 6, 7] out of tied 0-7 with [0, 1, 2] expected: the higher positions are taken, but
    not as a consistent reversal would take them ([5, 6, 7])."""
    tie = Tie(0.0, tuple(range(8)), (0, 1, 2), (1, 6, 7))
    assert not tie.went_higher
    text = tie.describe()
    assert "in no fixed order ([1, 6, 7])" in text
    assert "higher position" not in text
    for name in ("std::nth_element", "torch.topk", "std-sort-by-score", "unstable-argsort"):
        assert name in text


def test_a_consistent_reversal_is_called_the_higher_position() -> None:
    tie = Tie(0.0, tuple(range(8)), (0, 1, 2), (5, 6, 7))
    assert tie.went_higher
    text = tie.describe()
    assert "went to the higher position ([5, 6, 7])" in text
    assert "no fixed order" not in text and "ties-to-higher-position" in text


def test_the_ties_of_a_suite_vector_are_described_from_the_reference() -> None:
    expected = ALL_EQUAL.calls[EVICT].expected_victims
    assert expected == list(range(len(expected)))
    tied = tied_selection(ALL_EQUAL, EVICT, [*range(len(expected) - 1), 16])
    assert tied is not None and not tied.went_higher
    assert "no fixed order" in tied.describe()
    highest = list(range(17 - len(expected), 17))
    tied = tied_selection(ALL_EQUAL, EVICT, highest)
    assert tied is not None and tied.went_higher
    # A mixed set taking some of the highest, as [97..145, 169..183] out of [65..192] did.
    mixed = list(range(1, 4)) + list(range(12, 17))
    assert len(mixed) == len(expected)
    tied = tied_selection(ALL_EQUAL, EVICT, mixed)
    assert tied is not None and not tied.went_higher


def _wrong_victims(diagnosis: str | None) -> SimpleNamespace:
    return SimpleNamespace(
        verdict=verdicts.WRONG_VICTIMS,
        divergence=None,
        diagnosis=diagnosis,
        call_index=EVICT,
        actual=[0],
    )


def test_a_port_that_announced_scores_is_not_grouped_as_lacking_them() -> None:
    """Its scores could not be compared (a sum overflowed to infinity, say): grouped as such."""
    announced = _wrong_victims("no diagnosis: the scores answer holds a value JSON cannot carry")
    assert divergence_kind(None, announced) == "unscored"
    assert divergence_kind(None, _wrong_victims(NO_SCORES)) == "victims"
