"""Reading a weight (SPEC.md §2.3): the reference against an exact oracle, the ``rounding/``
vectors, weights sent as written, and the single-rounding slip failing the default run.

The oracle (``tests/support/rounding_oracle.py``) rounds exact rationals with integer
arithmetic; the reference goes through Python's ``float`` and a C cast; numpy's float32 cast is
a third route. The slip is ``tests/lax_adapters/slips.py single-rounding``: Java's
``Float.parseFloat`` behind a float64 overflow guard.
"""

from __future__ import annotations

import math
import re
import shlex
import struct
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.policy.reference import FLOAT32_MAX, PolicyError, narrow_attention
from conformance.spec.protocol import NumberText, decode, decoded, encode_body
from conformance.spec.resources import suite_dir
from conformance.spec.schemas import REQUEST_SCHEMA, schema_validator
from conformance.suite.validation import check_document
from conformance.suite.vectors import DOUBLE_ROUNDING, dumps_vector, load_suite, load_vector
from conformance.tools import spelling
from tests.support import rounding_oracle as oracle
from tests.support.paths import TESTS

SLIPS = TESTS / "lax_adapters" / "slips.py"
ROUNDING = [v for v in load_suite([suite_dir()]) if DOUBLE_ROUNDING in v.tags]
ROUNDING_BY_ID = {v.id.split("/", 1)[1]: v for v in ROUNDING}
NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def reference_reads(text: str) -> float | None:
    """The float32 the reference stores for a weight written ``text``, or None if refused."""
    try:
        (weight,) = narrow_attention([decode(text)], 1)  # decode: the strict codec's reading
    except PolicyError:
        return None
    return weight


def oracle_reads(text: str) -> float | None:
    weight = oracle.read_twice(text)
    return weight if oracle.accepted(weight) else None


def numpy_reads(text: str) -> float | None:
    with np.errstate(over="ignore"):
        weight = float(np.float64(float(text)).astype(np.float32))
    return weight if oracle.accepted(weight) else None


# -- the reading rule against the oracle --------------------------------------------------------

_FLOAT32 = st.floats(0.0, FLOAT32_MAX, width=32, allow_subnormal=True)
_SPECIAL = st.sampled_from(
    [0.0, 2.0**-149, 3 * 2.0**-149, 2.0**-126 - 2.0**-149, 2.0**-126, 1.0, 1.0 + 2.0**-23,
     2.0**24, 2.0**53, 2.0**60, 2.0**64, FLOAT32_MAX]
)  # fmt: skip


@st.composite
def near_halfway(draw: st.DrawFn) -> str:
    """A decimal around a float32 halfway point (or exactly on one), in some spelling."""
    base = draw(st.one_of(_SPECIAL, _FLOAT32))
    # numpy's nextafter finds the float32 above: a route the spelling module does not take.
    with np.errstate(over="ignore"):
        above = float(np.nextafter(np.float32(base), np.float32(np.inf)))
    halfway = (Fraction(base) + (Fraction(2**128) if math.isinf(above) else Fraction(above))) / 2
    how = draw(st.sampled_from(["exact", "above", "below", "shortest", "next", "previous"]))
    if how == "exact":
        text = spelling.exact_text(halfway)
    elif how in ("above", "below"):
        text = spelling.nudged(halfway, 1 if how == "above" else -1, draw(st.integers(17, 45)))
    else:
        wide = float(halfway)
        wide = {"shortest": wide, "next": math.nextafter(wide, math.inf)}.get(
            how, math.nextafter(wide, 0.0)
        )
        text = repr(wide) if math.isfinite(wide) else "1e39"
    if draw(st.booleans()):
        text = "-" + text.lstrip("-")
    return spelling.respell(text, draw(st.integers(0, 5)))


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(near_halfway())
def test_the_reference_reads_every_decimal_as_the_exact_oracle(text):
    expected = oracle_reads(text)  # -0.0 == 0.0: a zero's sign is not observable (§2.4)
    assert reference_reads(text) == expected, text
    assert numpy_reads(text) == expected, text


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(near_halfway())
def test_round_once_is_exact_single_rounding(text):
    once = spelling.round_once(Fraction(Decimal(text)))
    assert once == oracle.read_once(text), text
    assert spelling.rounds_apart(text) == (oracle.read_once(text) != oracle.read_twice(text))


def test_the_issues_examples():
    assert reference_reads("1.0000000596046448") == 1.0
    assert oracle.read_once("1.0000000596046448") == 1.0 + 2.0**-23
    assert reference_reads("-7.0064923216240854e-46") == 0.0  # -0.0: accepted as zero
    assert oracle.read_once("-7.0064923216240854e-46") == -(2.0**-149)  # refused once read
    assert reference_reads("3.4028235677973366e+38") is None
    assert oracle.read_once("3.4028235677973366e+38") == FLOAT32_MAX
    assert reference_reads(str(2**128 - 2**103 - 1)) is None
    assert reference_reads(str(2**65 + 2**41 + 1)) == 2.0**65


def test_the_schema_bounds_are_the_reading_rule():
    validator = schema_validator(REQUEST_SCHEMA)
    halfway = float(spelling.halfway_above(FLOAT32_MAX))
    for weight in (
        -(2.0**-150),
        math.nextafter(-(2.0**-150), -math.inf),
        -0.0,
        FLOAT32_MAX,
        math.nextafter(halfway, 0.0),
        halfway,
        -1e-50,
        2.0**-149,
    ):
        request = {"id": 1, "op": "step", "pos": 0, "attn": [weight]}
        schema_ok = not list(validator.iter_errors(request))
        assert schema_ok == (reference_reads(repr(weight)) is not None), weight


# -- the rounding/ vectors ---------------------------------------------------------------------


def weights_as_written(vector) -> list[str]:
    texts = []
    for call in vector.calls:
        if call.op == "step" and call.line is not None and b'"attn":[' in call.line:
            listed = call.line.split(b'"attn":[', 1)[1].split(b"]", 1)[0]
            texts += [m.decode() for m in NUMBER.findall(listed)]
    return texts


def test_the_theme_pins_every_case_the_rule_names():
    ids = {v.id for v in ROUNDING}
    for name in (
        "halfway-above-one", "halfway-below-rounds-up", "halfway-spellings",
        "many-digits-sent-as-written", "exact-halfway-ties-to-even", "halfway-above-zero",
        "halfway-between-subnormals", "halfway-below-smallest-normal",
        "tiny-negative-reads-as-zero", "negative-zero-spellings", "float32-maximum-from-below",
        "integer-below-overflow-halfway", "integer-past-2-53", "integer-past-2-60",
        "integer-past-2-64",
    ):  # fmt: skip
        assert f"rounding/{name}" in ids
    vector = load_vector(suite_dir() / "rounding" / "halfway-above-one.json")
    assert vector.params == {"budget": 2, "recentWindow": 1, "obsWindow": 1, "poolKernel": 1}
    assert b'"attn":[1.0000000596046448,1]' in vector.calls[3].line


@pytest.mark.parametrize("vector", ROUNDING, ids=lambda v: v.id)
def test_every_weight_of_the_theme_reads_as_the_oracle_says(vector):
    texts = weights_as_written(vector)
    assert texts
    apart = [text for text in texts if oracle.read_once(text) != oracle.read_twice(text)]
    for text in texts:
        assert reference_reads(text) == oracle_reads(text), text
    # Three vectors pin what both readings share (ties to even, -0.0, the maximum's range);
    # every other one holds a weight that one rounding reads otherwise.
    shared = ("exact-halfway-ties-to-even", "negative-zero-spellings", "float32-maximum-from-below")
    assert bool(apart) != (vector.id.split("/")[1] in shared), vector.id


def test_the_many_digits_vector_needs_its_digits():
    text = max(weights_as_written(ROUNDING_BY_ID["many-digits-sent-as-written"]), key=len)
    assert len(text) > 40
    shortest = repr(float(text))
    assert oracle.read_once(text) != oracle.read_twice(text)
    # Re-encoded from its float64, the weight would read the same both ways: no catch left.
    assert oracle.read_once(shortest) == oracle.read_twice(shortest) == oracle.read_twice(text)


# -- sent as written ---------------------------------------------------------------------------

RECORDER = """
import sys
from conformance.adapter.server import Session, encode
session = Session()
with open(sys.argv[1], "ab") as log:
    for line in sys.stdin.buffer:
        log.write(line)
        log.flush()
        if line.strip():
            sys.stdout.buffer.write(encode(session.handle_line(line)))
            sys.stdout.buffer.flush()
        if session.finished:
            break
"""


@pytest.mark.parametrize("layout", ["canonical", "other"])
def test_weights_reach_the_adapter_exactly_as_the_file_writes_them(tmp_path, layout):
    names = ("many-digits-sent-as-written", "integer-below-overflow-halfway", "halfway-spellings")
    for name in names:
        vector = ROUNDING_BY_ID[name]
        text = dumps_vector(vector)
        if layout == "other":  # a blank line and spaces: read by the whole-text loader
            text = text.replace('"calls": [\n', '"calls": [\n\n').replace(',"attn":', ', "attn" :')
        path = tmp_path / layout / f"{vector.id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        assert all(call.line is not None for call in load_vector(path).calls)
    log = tmp_path / f"{layout}.log"
    adapter = shlex.join([sys.executable, "-c", RECORDER, str(log)])
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", str(tmp_path / layout), "--adapter", adapter],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    sent = log.read_bytes()
    for name in names:
        for original in weights_as_written(ROUNDING_BY_ID[name]):
            assert re.search(rb"[\[,]" + re.escape(original.encode()) + rb"[\],]", sent), original


def test_a_vector_written_again_keeps_its_weights_as_written(tmp_path):
    for vector in ROUNDING:
        assert dumps_vector(vector) == vector.path.read_text(encoding="utf-8"), vector.id
    # The findings builder (fuzz findings kept in the suite) writes them through Call.as_written.
    call = ROUNDING_BY_ID["many-digits-sent-as-written"].calls[3]
    assert call.as_written()["attn"][0].text == max(
        weights_as_written(ROUNDING_BY_ID["many-digits-sent-as-written"]), key=len
    )


def test_number_text_is_encoded_as_written_and_decoded_as_a_reader_would():
    request = {"op": "step", "pos": 2, "attn": [NumberText("1.0000000596046448e0"), 0.5]}
    assert encode_body(request) == b'"op":"step","pos":2,"attn":[1.0000000596046448e0,0.5]}\n'
    assert decoded(request)["attn"] == [1.0000000596046448, 0.5]
    assert decoded({"attn": [NumberText("-0")]})["attn"] == [0]
    assert type(decoded({"attn": [NumberText("18446744073709551617")]})["attn"][0]) is int
    assert decoded(request) is not request and decoded({"op": "evict"}) == {"op": "evict"}
    with pytest.raises(ValueError):
        NumberText("01")
    assert float(NumberText("1e400")) == math.inf


# -- validity (SPEC.md §4.3) -------------------------------------------------------------------


def test_a_weight_that_is_not_a_float32_needs_the_double_rounding_tag():
    text = dumps_vector(ROUNDING_BY_ID["halfway-above-one"])
    assert check_document(text, "rounding/halfway-above-one.json")[1] == []
    untagged = text.replace('"tags": ["double-rounding","attention"]', '"tags": ["attention"]')
    _, problems = check_document(untagged, "rounding/halfway-above-one.json")
    assert [(p.pointer, p.reason.split(";")[0]) for p in problems] == [
        (
            "/calls/3/attn/0",
            "1.0000000596046448 is not exactly a float32 (the nearest float32 is 1.0)",
        )
    ]
    assert DOUBLE_ROUNDING in problems[0].reason
    # Tagged, a weight the reference refuses is still caught, by the replay.
    refused = text.replace("1.0000000596046448", str(2**128 - 2**103 - 1))  # inside the schema
    _, problems = check_document(refused, "rounding/halfway-above-one.json")
    assert problems and "must succeed" in problems[0].reason


# -- the slip (its default run: tests/system/test_slips.py) ---------------------------------------


def test_the_slip_reads_weights_once_and_guards_the_overflow():
    sys.path.insert(0, str(SLIPS.parent))
    import slips

    assert slips.java_float("1.0000000596046448") == 1.0 + 2.0**-23
    assert slips.java_float("3.4028235677973366e+38") == math.inf  # the guard
    assert slips.java_float("0.5") == 0.5
    assert struct.pack("<f", slips.java_float("-7.0064923216240854e-46")) == struct.pack(
        "<f", -(2.0**-149)
    )
