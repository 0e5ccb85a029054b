"""Victims held bounded: a list no batch could make right is held cut, and judged by the rule
the whole list breaks."""

from __future__ import annotations

from conformance.judge.answers import CutVictims, cut_victims, held_victims
from conformance.judge.checker import BROKEN_INVARIANT, NOT_ASCENDING, NOT_INTEGERS, NOT_KEPT, judge
from tests.support.runner_support import params, reference_vector


def test_a_list_within_the_room_is_held_whole() -> None:
    answer = {"id": 4, "ok": True, "victims": [0, 1, 2]}
    assert held_victims(answer, 3) == (answer, 0)
    assert held_victims(answer, None) == (answer, None)


def test_a_list_past_the_room_is_held_cut_with_what_judging_needs() -> None:
    victims = list(range(300_000))
    held, room = held_victims({"id": 4, "ok": True, "victims": victims}, 10)
    cut = held["victims"]
    assert isinstance(cut, CutVictims) and len(cut) == 1_000 and cut.total == 300_000
    assert cut.disorder is None and room == 10 - 300_000
    assert cut_victims([*range(5_000), 7]).disorder == (4_999, 7)
    assert cut_victims([*range(5_000), "x"])[-1] == "x"  # what is not an integer is kept


def vector_evicting_one() -> object:
    new = {"op": "new", "params": params(1, 0, 1, 1), "seed": 0}
    steps = [{"op": "step", "pos": 0, "attn": None}, {"op": "step", "pos": 1, "attn": [1.0]}]
    return reference_vector("cut/one", [new, *steps, {"op": "evict"}])


def verdict_for(victims: list) -> object:
    vector = vector_evicting_one()
    answers = [{"id": index, "ok": True} for index in range(3)]
    return judge(vector, [*answers, {"id": 3, "ok": True, "victims": victims}])  # type: ignore[arg-type]


def test_a_cut_list_is_judged_by_the_rule_the_whole_list_breaks() -> None:
    """Strictly ascending but longer than what is kept: some are not kept; out of order
    beyond what is held: not ascending; not integers: not integers."""
    long = verdict_for(cut_victims(list(range(300_000))))
    assert (long.verdict, long.rule) == (BROKEN_INVARIANT, NOT_KEPT)  # type: ignore[attr-defined]
    assert "position 2, which is not currently kept" in long.message  # type: ignore[attr-defined]
    late = cut_victims([*range(5_000), 3])
    disorder = verdict_for(late)
    assert disorder.rule == NOT_ASCENDING  # type: ignore[attr-defined]
    assert "put 3 after 4999" in disorder.message  # type: ignore[attr-defined]
    stray = verdict_for(cut_victims([*range(2_000), None]))
    assert stray.rule == NOT_INTEGERS  # type: ignore[attr-defined]
