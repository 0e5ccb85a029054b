"""Slips through the real default run: ``snapkv-conformance run --adapter "snapkv-conformance
adapter --slip NAME"`` fails, on the items the in-process replay predicts
(conformance.explain.slip_kills), one slip of each kind of failure: a wrong answer to a check,
a wrong victim, an exit status, stdout that is not answers, a stalled pipe, a refused
handshake."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest

from conformance import slips
from conformance.explain.slip_kills import slip_row
from conformance.spec.resources import suite_dir
from conformance.suite.stream import load_checks
from conformance.suite.vectors import load_suite

#: Slips whose run ends in failed items, one of each kind of failure.
ITEMS = (
    "first-name-wins",
    "lax-number-grammar",
    "rings-rotated-at-evict",
    "scores-printed-15-digits",
    "exit-status-after-bye",
    "positions-uint32",
    "unsupported-before-id",
    "lines-capped-16k",
)
#: Slips whose run cannot start: the handshake is refused or never answered.
NO_START = ("hello-without-capabilities", "answers-not-flushed", "banner-on-stdout")


def run(name: str) -> subprocess.CompletedProcess[str]:
    adapter = shlex.join([sys.executable, "-m", "conformance", "adapter", "--slip", name])
    return subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--adapter", adapter],
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", ITEMS)
def test_the_default_run_fails_the_slip_on_the_items_the_replay_predicts(name):
    done = run(name)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    failed = set(re.findall(r"^FAIL (\S+):", done.stdout, re.M))
    entry = slips.lookup(name)
    predicted = slip_row(entry, load_suite([str(suite_dir())]), load_checks([suite_dir()])).killers
    assert failed == set(predicted)


@pytest.mark.slow
@pytest.mark.parametrize("name", NO_START)
def test_a_slip_of_the_handshake_stops_the_default_run(name):
    done = run(name)
    assert done.returncode != 0
    assert "handshake" in done.stderr or "hello" in done.stderr, done.stderr[-2000:]
