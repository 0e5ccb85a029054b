"""The slips a port written from SPEC.md alone made, each caught by the default run.

Each slip is a mode of ``tests/lax_adapters/slips.py``: the reference policy behind a protocol
layer with the one slip. An earlier suite passed all three; now each fails ``snapkv-conformance
run`` with no options, on exactly the vectors or protocol checks of its rule, each failure
quoting the rule or naming the mistake.
"""

from __future__ import annotations

import io
import json
import re
import shlex
import subprocess
import sys

import pytest

from conformance.adapter.server import Session
from conformance.judge.check_answers import judge_check
from conformance.spec.resources import suite_dir
from conformance.suite.stream import load_checks
from tests.support.paths import TESTS

SLIPS = TESTS / "lax_adapters" / "slips.py"
sys.path.insert(0, str(SLIPS.parent))
import slips  # noqa: E402

#: What each slip fails in a default run: these vectors or protocol checks, and no others.
FAILS = {
    "single-rounding": {
        "rounding/halfway-above-one",
        "rounding/halfway-below-rounds-up",
        "rounding/halfway-spellings",
        "rounding/many-digits-sent-as-written",
        "rounding/halfway-above-zero",
        "rounding/halfway-between-subnormals",
        "rounding/halfway-below-smallest-normal",
        "rounding/tiny-negative-reads-as-zero",
        "rounding/integer-past-2-53",
        "rounding/integer-past-2-60",
        "rounding/integer-past-2-64",
    },
    "signed-64-bit-ids": {
        "protocol/id-2-63",
        "protocol/id-above-2-64",
        "protocol/id-below-minus-2-63",
        "protocol/id-below-minus-2-64",
    },
    "first-name-wins": {"protocol/repeated-names-request", "protocol/repeated-names-params"},
}
#: The words every failure of the slip shows: the mistake named, or the rule quoted.
SHOWN = {
    "single-rounding": "Float.parseFloat",
    "signed-64-bit-ids": "SPEC.md §3.1: an integer id is echoed as the same integer",
    "first-name-wins": "SPEC.md §3.1: where an object repeats a member name, the last",
}


@pytest.mark.slow
@pytest.mark.parametrize("mode", slips.MODES)
def test_each_slip_fails_the_default_run_on_its_rule(mode):
    adapter = shlex.join([sys.executable, str(SLIPS), mode])
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--adapter", adapter],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    failed = set(re.findall(r"^FAIL (\S+):", done.stdout, re.M))
    assert failed == FAILS[mode]
    assert "not deterministic" not in done.stdout  # the scores replay sends them as written too
    blocks = re.split(r"^FAIL ", done.stdout, flags=re.M)[1:]
    assert len(blocks) == len(failed)
    # A vector failed away from what it pins shows what it pins instead (a refused weight of a
    # vector that expects no refusal): its FAIL line then names the refused weight.
    for block in blocks:
        assert SHOWN[mode] in block or "this vector pins: " in block, block


def slip_answers(mode: str, data: bytes) -> list[bytes]:
    session = Session()
    out = []
    for line in io.BytesIO(data).readlines():
        response = slips.answer(session, mode, line)
        if response is not None:
            out.append(json.dumps(response).encode())
        if session.finished:
            break
    return out


@pytest.mark.parametrize("mode", ("signed-64-bit-ids", "first-name-wins"))
def test_the_protocol_slips_fail_exactly_the_checks_of_their_rule(mode):
    failed = set()
    for check in load_checks([suite_dir()]):
        verdict = judge_check(check, slip_answers(mode, check.payload))
        if not verdict.passed:
            failed.add(check.id)
            assert verdict.message.startswith(check.rule)
    assert failed == FAILS[mode]


def test_a_signed_64_bit_reader_still_echoes_ids_it_can_hold():
    hello = b'{"id":9223372036854775807,"op":"hello","protocol":1}\n'
    (answer,) = slip_answers("signed-64-bit-ids", hello)
    assert json.loads(answer)["id"] == 2**63 - 1
    (answer,) = slip_answers("signed-64-bit-ids", hello.replace(b"807", b"808"))
    assert json.loads(answer)["id"] is None
