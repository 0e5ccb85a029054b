"""The slips replayed on the default run (conformance.explain.slip_kills): every slip killed by
an item that pins its sentence, and the harness itself kills nothing that is right."""

from __future__ import annotations

import functools

import pytest

from conformance import mutants, slips
from conformance.explain.kill_matrix import shipped_matrix
from conformance.explain.slip_kills import (
    check_verdicts,
    score_slips,
    sentence_scores,
    slip_row,
    vector_verdicts,
)
from conformance.slips import Slip, SlipAdapter
from conformance.spec.resources import suite_dir
from conformance.suite.stream import load_checks
from conformance.suite.vectors import load_suite


@functools.cache
def suite():
    return load_suite([str(suite_dir())]), load_checks([suite_dir()])


def pins() -> dict[str, tuple[str, ...]]:
    vectors, checks = suite()
    return {item.id: item.spec for item in (*vectors, *checks)}


UNCHANGED = Slip("unchanged", "S1-integers", "test", "none", "the reference adapter", SlipAdapter)


@pytest.mark.slow
def test_the_reference_adapter_passes_every_item_of_the_replay():
    """No false kill: replayed like a slip, the unchanged adapter passes every vector and
    check, so whatever kills a slip is the slip."""
    vectors, checks = suite()
    row = slip_row(UNCHANGED, vectors, checks)
    assert row.killers == {}


PROTOCOL = [entry for entry in slips.CATALOGUE if entry.mutant is None]


@pytest.mark.slow
@pytest.mark.parametrize("entry", PROTOCOL, ids=lambda entry: entry.name)
def test_every_slip_is_killed_by_an_item_that_pins_its_sentence(entry):
    """The default run kills the slip, and among its killers is an item whose ``spec`` names
    the sentence the slip breaks: the pins are true claims, and a failing item points at the
    right sentence."""
    vectors, checks = suite()
    row = slip_row(entry, vectors, checks)
    assert row.killed, f"{entry.name} survives the default run"
    spec = pins()
    pinned = [item for item in row.killers if entry.sentence in spec[item]]
    assert pinned, f"{entry.name}: no killer pins {entry.sentence}: {list(row.killers)[:5]}"


@pytest.mark.slow
def test_every_policy_mutant_is_killed_by_an_item_that_pins_its_sentence():
    vectors, _ = suite()
    matrix = shipped_matrix(vectors, mutants.CATALOGUE)
    spec = pins()
    unpinned = []
    for row in matrix.rows:
        sentence = slips.BY_NAME[row.mutant.name].sentence
        if not any(sentence in spec[item] for item in row.killers):
            unpinned.append((row.mutant.name, sentence))
    assert unpinned == []


def test_an_adapter_that_never_flushes_stalls_the_run():
    """The runner waits for answers it has been promised: buffered answers are a timeout."""
    vectors, _ = suite()
    verdicts = vector_verdicts(slips.lookup("answers-not-flushed"), vectors[:3])
    assert set(verdicts.values()) == {"start-failure"}


def test_a_check_sees_the_exit_status_the_slip_chooses():
    _, checks = suite()
    bye = [check for check in checks if check.id == "protocol/bye-ends-session"]
    assert check_verdicts(slips.lookup("exit-status-after-bye"), bye) == {
        "protocol/bye-ends-session": "crash"
    }
    assert check_verdicts(UNCHANGED, bye) == {"protocol/bye-ends-session": "pass"}


def test_policy_entries_take_their_kills_from_the_matrix_and_sentences_are_scored():
    vectors, checks = suite()
    entries = [slips.lookup("first-name-wins"), slips.lookup("kahan-summation")]
    rows = score_slips(
        entries,
        vectors,
        checks,
        mutant_killers={"kahan-summation": {"summation/kahan-trap": "wrong-victims"}},
    )
    assert rows[1].killers == {"summation/kahan-trap": "wrong-victims"}
    assert rows[0].killed
    scores = {score.sentence.id: score for score in sentence_scores(rows)}
    assert scores["S3.1-repeated"].complete and scores["S2.4-sums"].killed == 1
    assert not scores["S3.1-utf8"].rows and not scores["S3.1-utf8"].complete
