"""conformance.explain.play: a protocol check replayed in process is judged as the same check
run against a port's process."""

from __future__ import annotations

import sys
from pathlib import Path

from conformance import mutants
from conformance.explain.play import check_outcome, play_check
from conformance.runner.check_sessions import run_check
from conformance.spec.resources import suite_dir
from conformance.suite.stream import load_checks
from tests.support.numpy_dispatch import portable_numpy_argv

HELDOUT = Path(__file__).resolve().parents[1] / "heldout"


def test_a_mistake_that_crashes_on_a_check_is_replayed_as_the_ports_process_dying() -> None:
    """A numpy port that allocated budget + 1 rows (tests/heldout/ports.py, written apart from
    the catalogue) dies on the check's fifth step; the catalogued mistake replayed in process
    must die there too, not answer a refusal and go on."""
    check = next(c for c in load_checks([suite_dir()]) if c.id == "protocol/scores-kept-positions")
    argv = portable_numpy_argv([sys.executable, str(HELDOUT / "ports.py"), "numpy-prealloc"])
    port, _ = run_check(check, argv, timeout=60)
    replayed = play_check(mutants.lookup("budget-plus-one-storage").policy, check)
    assert port.verdict == "crash", port
    assert check_outcome(replayed) == check_outcome(port)


def test_a_check_is_replayed_announcing_only_the_capabilities_given() -> None:
    """protocol/scores-kept-positions hangs on the scores capability: the masked cache (evicted
    positions still listed by scores) fails it when it announces scores, and passes it when it
    announces none, as a port without scores does whatever it keeps."""
    check = next(c for c in load_checks([suite_dir()]) if c.id == "protocol/scores-kept-positions")
    masked = mutants.lookup("masked-holes-stale").policy
    assert check.capabilities == {"scores"}
    assert not play_check(masked, check).passed
    assert not play_check(masked, check, capabilities=("scores",)).passed
    assert play_check(masked, check, capabilities=()).passed
