"""Step mistakes: which positions and weights a step accepts, how it reads them, and what a
refused step leaves behind.

SPEC.md §2.3: ``pos`` is an integer in ``[0, 2^31 - 1]`` strictly above every position
admitted before (gaps allowed), else ``invalid-position``; ``attn`` is null or exactly
``len(kept)`` numbers (kept as before this step's admission), each read as the nearest float64,
narrowed to the nearest float32 and refused when infinite or negative (``-0.0`` is zero), else
``invalid-attention``; the position is judged before the attention, and a refused call changes
nothing. SPEC.md §3 fixes the error kinds.
"""

from __future__ import annotations

import bisect
import math
import struct
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np

from conformance.mutants._base import EVICT, Witness, mutant, params, step, steps
from conformance.mutants._floats import FLOAT32, exact_value, round_float, round_to
from conformance.mutants.model import Model
from conformance.policy.reference import (
    FLOAT32_MAX,
    INT31_MAX,
    PolicyError,
    float32_literal,
    is_integer,
)

ONE = params(1, 0, 1, 1)


def _integral(text: str) -> bool:
    """True for a string a loose reader turns into an integer (``"3"``, ``" -4 "``)."""
    try:
        int(text.strip())
    except ValueError:
        return False
    return True


def _numeric(text: str) -> bool:
    """True for a string a loose reader turns into a number (``"0.5"``)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


# -- the order of a step's phases ----------------------------------------------------------------


@mutant(
    "attention-judged-before-position",
    rule="§2.3, §3.4: the position is judged before the attention",
    origin="validating fields in the order the port reads them, or attention first because "
    "it is the expensive one",
    keywords=(
        "judged before",
        "judged first",
        "validated before the position",
        "order of judgement",
    ),
    witness=Witness(ONE, (step(0), step(0, [1.0, 1.0]))),
)
class AttentionJudgedBeforePosition(Model):
    """Validates attn before pos, so a step bad in both is refused as invalid-attention."""

    def step(self, pos: Any, attn: Any) -> None:
        self.calls += 1
        weights = self.check_attention(attn)
        position = self.check_position(pos)
        self.record(weights)
        self.admit(position)


@mutant(
    "writes-before-position-judged",
    rule="§2.3: a refused call changes nothing (the position is judged before anything is written)",
    origin="recording the step's attention first and validating the position afterwards",
    keywords=("writes its attention before the position is judged",),
)
class WritesBeforePositionJudged(Model):
    """Validates and records the attention, then judges the position: a step refused for its
    position has already written its weights and moved the cursor."""

    def step(self, pos: Any, attn: Any) -> None:
        self.calls += 1
        weights = self.check_attention(attn)
        self.record(weights)
        self.admit(self.check_position(pos))


@mutant(
    "admitted-before-recording",
    rule="§2.3: attn has len(kept) weights, kept as before this step's admission",
    origin="appending the new position first and then writing the step's attention over "
    "every kept position, the new one included",
    keywords=(
        "before this step's admission",
        "before admission",
        "after admission",
        "count after admission",
        "weights for the new position",
    ),
    witness=Witness(ONE, (step(0), step(1, [1.0]))),
)
class AdmittedBeforeRecording(Model):
    """Admits first, then expects and records ``len(kept) + 1`` weights (the new one too)."""

    def step(self, pos: Any, attn: Any) -> None:
        self.calls += 1
        position = self.check_position(pos)
        self.kept.append(position)  # judged as if already admitted
        try:
            weights = self.check_attention(attn)
        finally:
            self.kept.pop()
        self.admit(position)
        self.record(weights)


# -- what a refused step leaves behind -------------------------------------------------------


@mutant(
    "refused-step-still-admits",
    rule="§2.3: a refused call changes nothing (the position is not admitted)",
    origin="admitting the position as soon as it is validated, before the attention is checked",
    keywords=("still admit", "refused step", "atomic", "changes nothing"),
    witness=Witness(params(1, 0, 1, 1), (step(0), step(1, [1.0, 1.0]), step(1), EVICT)),
)
class RefusedStepStillAdmits(Model):
    """A step refused for its attention has already admitted its position."""

    def on_refusal(self, pos: Any, position: int | None, attn: Any, error: PolicyError) -> None:
        if position is not None and error.kind == "invalid-attention":
            self.admit(position)


@mutant(
    "admitted-before-judged",
    rule="§2.3: a refused call changes nothing (the position is not admitted)",
    origin="`kept.push(pos)` as the first line of step, before any check, so a step refused "
    "for its position or its attention leaves the position kept",
    keywords=("still admits its position",),
)
class AdmittedBeforeJudged(Model):
    """Admits an integer position before judging the step: a refused step leaves it kept."""

    def on_refusal(self, pos: Any, position: int | None, attn: Any, error: PolicyError) -> None:
        if is_integer(pos):
            self.admit(pos)


@mutant(
    "partial-write-on-refusal",
    rule="§2.3: a refused call changes nothing",
    origin="validating each weight inside the write loop (`if (w < 0) return ERR; "
    "hist[i][slot] = w;`), so the weights before the bad one are already written",
    keywords=("partial write", "partial", "atomic", "changes nothing"),
    witness=Witness(
        params(2, 1, 1, 1),
        (*steps(0, 2), step(2, [1.0, -1.0]), step(2), EVICT),
    ),
)
class PartialWriteOnRefusal(Model):
    """A refused weight list still writes the weights before the first bad one into the ring."""

    def on_refusal(self, pos: Any, position: int | None, attn: Any, error: PolicyError) -> None:
        if position is None or not isinstance(attn, list) or len(attn) != len(self.kept):
            return
        prefix = valid_prefix(attn)
        if prefix:
            if self.slot >= self.width:
                self.put(self.slot, np.zeros(len(self.kept)))
            self.hist[: len(prefix), self.slot] = prefix


def valid_prefix(attn: list[Any]) -> list[float]:
    """The float32 weights before the first one the reference refuses."""
    prefix: list[float] = []
    for weight in attn:
        if type(weight) not in (int, float):
            break
        narrow = float32_literal(weight)
        if not 0 <= narrow <= FLOAT32_MAX:
            break
        prefix.append(narrow)
    return prefix


@mutant(
    "refused-step-moves-cursor",
    rule="§2.3: a refused call changes nothing (the cursor stays where it is)",
    origin="advancing the ring cursor at the top of step, before (or without) writing, so a "
    "refused step has moved it",
    keywords=("advances the ring cursor",),
)
class RefusedStepMovesCursor(Model):
    """A refused step with a non-null attn has already moved the ring cursor on."""

    def on_refusal(self, pos: Any, position: int | None, attn: Any, error: PolicyError) -> None:
        if attn is not None:
            self.slot = (self.slot + 1) % self.ring_size()


# -- reading pos -------------------------------------------------------------------------------


@mutant(
    "non-integer-position-bad-request",
    rule="§2.3, §3.3: a pos that is not an integer is invalid-position, not bad-request",
    origin="schema-validating the whole request up front, so a mistyped field is reported as "
    "a malformed request",
    keywords=("not an integer", "non-integer", "invalid-position"),
    witness=Witness(ONE, (step(0), step(1.5))),
)
class NonIntegerPositionBadRequest(Model):
    """Refuses a non-integer pos with bad-request."""

    def read_position(self, pos: Any) -> int:
        if not is_integer(pos):
            raise PolicyError("bad-request", f"pos is not an integer: {pos!r}")
        return int(pos)


@mutant(
    "position-strings-coerced",
    rule="§2.3: pos is a JSON integer; a string is invalid-position",
    origin='a loose reader converting `"3"` to 3 (`Number(pos)`, `int(pos)`)',
    keywords=("coerced from strings",),
)
class PositionStringsCoerced(Model):
    """Reads a string holding an integer as that position."""

    def read_position(self, pos: Any) -> int:
        if isinstance(pos, str) and _integral(pos):
            pos = int(pos.strip())
        return super().read_position(pos)


@mutant(
    "position-fractions-truncated",
    rule="§2.3: pos is a JSON integer; 3.5 is invalid-position",
    origin="every JSON number read as a double and cast to an integer (`(long)3.5 == 3`)",
    keywords=("truncated from fractions",),
)
class PositionFractionsTruncated(Model):
    """Reads a fractional position truncated towards zero."""

    def read_position(self, pos: Any) -> int:
        if type(pos) is float and math.isfinite(pos):
            pos = int(pos)
        return super().read_position(pos)


@mutant(
    "boolean-position-accepted",
    rule="§2.3: pos is a JSON integer; true and false are invalid-position",
    origin="Python's `isinstance(pos, int)` (True is an int), or a reader that coerces "
    "booleans to 1 and 0",
    keywords=("python's bool",),
)
class BooleanPositionAccepted(Model):
    """Reads `true`/`false` as the positions 1/0."""

    def read_position(self, pos: Any) -> int:
        return super().read_position(int(pos) if type(pos) is bool else pos)


@mutant(
    "position-bool-null-as-number",
    rule="§2.3: pos is a JSON integer; true and null are invalid-position",
    origin="JavaScript's `Number(true) == 1` and `Number(null) == 0`, or a nullable integer "
    "given its zero value",
    keywords=("booleans and null",),
)
class PositionBoolNullAsNumber(Model):
    """Reads `true`/`false` as 1/0 and `null` as 0."""

    def read_position(self, pos: Any) -> int:
        if type(pos) is bool:
            pos = int(pos)
        elif pos is None:
            pos = 0
        return super().read_position(pos)


# -- judging pos -------------------------------------------------------------------------------


@mutant(
    "position-above-int31-accepted",
    rule="§2.3: pos is at most 2^31 - 1",
    origin="positions held in 64-bit or unsigned 32-bit integers with no upper bound checked",
    keywords=("2^31", "above int31", "too large", "out-of-range", "missing upper bound"),
    witness=Witness(ONE, (step(2**31),)),
)
class PositionAboveInt31Accepted(Model):
    """Accepts positions up to ``2^32 - 1`` (a uint32 port)."""

    def check_position_range(self, position: int) -> None:
        if not 0 <= position < 2**32:
            super().check_position_range(position)


@mutant(
    "negative-position-accepted",
    rule="§2.3: pos is at least 0",
    origin="positions read as signed integers with no lower bound (or -1 taken as 'before "
    "0', the sentinel of an empty cache, and admitted)",
    keywords=("without a lower bound", "before 0"),
)
class NegativePositionAccepted(Model):
    """Accepts negative positions."""

    def check_position_range(self, position: int) -> None:
        if position > INT31_MAX:
            super().check_position_range(position)


@mutant(
    "gaps-refused",
    rule="§2.3: positions only have to increase; gaps are allowed",
    origin="assuming decode positions are consecutive (`pos == last + 1`), true of a plain "
    "decode loop but not of a harness that skips or batches",
    keywords=("gap",),
    witness=Witness(ONE, (step(0), step(2))),
)
class GapsRefused(Model):
    """Refuses a position that is not exactly one above the last admitted one."""

    def check_order(self, position: int) -> None:
        super().check_order(position)
        last = self.last_admitted
        if last is not None and position != last + 1:
            raise PolicyError("invalid-position", f"pos {position} is not {last + 1}")


@mutant(
    "equal-position-accepted",
    rule="§2.3: pos must be strictly greater than every position admitted before",
    origin="`pos < last` where `pos <= last` was meant in the monotonicity check",
    keywords=(
        "equal position",
        "same position",
        "repeat",
        "strictly greater",
        "admitting the same",
    ),
    witness=Witness(ONE, (step(0), step(0))),
)
class EqualPositionAccepted(Model):
    """Accepts a position equal to the last admitted one."""

    def check_order(self, position: int) -> None:
        if position != self.last_admitted:
            super().check_order(position)


@mutant(
    "position-checked-against-kept",
    rule="§2.3: pos must exceed every position admitted before, evicted ones included",
    origin="comparing with the highest *kept* position (`kept.back()`), which falls when the "
    "newest position is evicted",
    keywords=("evicted ones included", "ever admitted", "highest kept", "admitted before"),
    witness=Witness(ONE, (step(0), step(1, [1.0]), EVICT, step(1))),
)
class PositionCheckedAgainstKept(Model):
    """Checks monotonicity against the highest kept position, not the highest admitted."""

    def check_order(self, position: int) -> None:
        highest = self.kept[-1] if self.kept else None
        if highest is not None and position <= highest:
            raise PolicyError("invalid-position", f"pos {position} must exceed {highest}")


@mutant(
    "position-order-unchecked",
    rule="§2.3: pos must be strictly greater than every position admitted before",
    origin="kept positions held in a sorted set with no ordering check, so an old position is "
    "inserted in the middle",
    keywords=("sorted set without an ordering check",),
)
class PositionOrderUnchecked(Model):
    """Accepts any new position and inserts it in order among the kept ones."""

    def check_order(self, position: int) -> None:
        if position in self.kept:
            raise PolicyError("invalid-position", f"pos {position} is already kept")

    def insertion_index(self, stored: int) -> int:
        return bisect.bisect_left(self.kept, stored)


@mutant(
    "next-position-overflow",
    rule="§2.3: pos must be strictly greater than every position admitted before",
    origin="the lowest next position computed as `last + 1` in a 32-bit int: after 2^31 - 1 "
    "it wraps to -2^31 and every position passes",
    keywords=("last + 1 that overflows",),
)
class NextPositionOverflow(Model):
    """Checks `pos >= last + 1` with `last + 1` in 32-bit arithmetic (wrapping at 2^31)."""

    def check_order(self, position: int) -> None:
        last = self.last_admitted
        if last is None:
            return
        following = (last + 1 + 2**31) % 2**32 - 2**31
        if position < following:
            raise PolicyError("invalid-position", f"pos {position} is below {following}")


# -- storing pos -------------------------------------------------------------------------------


@mutant(
    "positions-truncated-16-bit",
    rule="§2.3: positions are integers up to 2^31 - 1, returned as given",
    origin="a compact `uint16_t` position array sized for short contexts",
    keywords=("16-bit", "16 bit", "near 2^31", "large position", "truncat"),
    witness=Witness(ONE, (step(65536), step(65537), EVICT)),
)
class PositionsTruncated16Bit(Model):
    """Stores kept positions modulo 2^16 (the full value is checked, the truncated one kept)."""

    def store_position(self, position: int) -> int:
        return position & 0xFFFF


@mutant(
    "positions-as-float32",
    rule="§2.3: positions are integers up to 2^31 - 1, returned as given",
    origin="positions kept in a float32 array beside the weights: above 2^24 neighbours "
    "become the same number",
    keywords=("positions stored as float32",),
)
class PositionsAsFloat32(Model):
    """Stores kept positions as float32 (rounded to 24 significant bits) and returns them."""

    def store_position(self, position: int) -> int:
        return int(struct.unpack("<f", struct.pack("<f", float(position)))[0])


# -- the attention's shape ---------------------------------------------------------------------


@mutant(
    "wrong-length-bad-request",
    rule="§2.3, §3.3: an attn of the wrong length is invalid-attention, not bad-request",
    origin="checking the array length in the request decoder and reporting a malformed request",
    keywords=("wrong length", "too short", "too long", "invalid-attention"),
    witness=Witness(ONE, (step(0), step(1, []))),
)
class WrongLengthBadRequest(Model):
    """Refuses an attention list of the wrong length with bad-request."""

    def attention_items(self, attn: Any) -> list[Any]:
        if isinstance(attn, list) and len(attn) != len(self.kept):
            raise PolicyError("bad-request", f"attn has {len(attn)} weights, want {len(self.kept)}")
        return super().attention_items(attn)


@mutant(
    "scalar-attention-broadcast",
    rule="§2.3: attn is null or a list",
    origin="numpy broadcasting: `hist[:, slot] = attn` takes a scalar for every row",
    keywords=("scalar broadcast",),
)
class ScalarAttentionBroadcast(Model):
    """Takes a number for attn as that weight for every kept position."""

    def attention_items(self, attn: Any) -> list[Any]:
        if type(attn) in (int, float):
            return [attn] * len(self.kept)
        return super().attention_items(attn)


@mutant(
    "sparse-attention-map",
    rule="§2.3: attn is null or a list",
    origin="accepting `{position: weight}` (a sparse map, as some engines log attention) in "
    "place of the list",
    keywords=("sparse",),
)
class SparseAttentionMap(Model):
    """Takes an object `{kept index: weight}` for attn, missing indices read as 0."""

    def attention_items(self, attn: Any) -> list[Any]:
        if isinstance(attn, dict):
            return [attn.get(str(index), 0.0) for index in range(len(self.kept))]
        return super().attention_items(attn)


@mutant(
    "nested-attention-flattened",
    rule="§2.3: each weight is a JSON number; a list inside attn is invalid-attention",
    origin="a reader that flattens nested arrays (`np.ravel`, `flat()`) before checking",
    keywords=("flattens nested arrays",),
)
class NestedAttentionFlattened(Model):
    """Flattens lists nested in attn before checking its length."""

    def attention_items(self, attn: Any) -> list[Any]:
        if isinstance(attn, list) and any(isinstance(w, list) for w in attn):
            flat: list[Any] = []
            for weight in attn:
                flat.extend(weight if isinstance(weight, list) else [weight])
            attn = flat
        return super().attention_items(attn)


@mutant(
    "nested-weight-first-element",
    rule="§2.3: each weight is a JSON number; a list inside attn is invalid-attention",
    origin="a reader that takes a one-element array for its element (`np.asarray(w).item()`)",
    keywords=("takes their first element",),
)
class NestedWeightFirstElement(Model):
    """Reads a list weight as its first element."""

    def attention_items(self, attn: Any) -> list[Any]:
        items = super().attention_items(attn)
        return [w[0] if isinstance(w, list) and w else w for w in items]


@mutant(
    "short-attention-padded",
    rule="§2.3: attn has exactly len(kept) weights",
    origin="missing weights padded with zeros (`np.resize`, `attn + [0] * (n - len(attn))`)",
    keywords=("padded with zeros",),
)
class ShortAttentionPadded(Model):
    """Accepts a list shorter than the kept list, the missing weights written as 0."""

    def attention_items(self, attn: Any) -> list[Any]:
        if isinstance(attn, list) and len(attn) < len(self.kept):
            attn = attn + [0.0] * (len(self.kept) - len(attn))
        return super().attention_items(attn)


@mutant(
    "short-attention-zipped",
    rule="§2.3: attn has exactly len(kept) weights",
    origin="`for (i, w) in zip(kept, attn)`: a short list leaves the last rows unwritten",
    keywords=("zipped",),
)
class ShortAttentionZipped(Model):
    """Accepts a list shorter than the kept list; the rows without a weight keep what their
    slot held."""

    def attention_items(self, attn: Any) -> list[Any]:
        if isinstance(attn, list) and len(attn) < len(self.kept):
            keep: list[float] = (
                self.hist[len(attn) : len(self.kept), self.slot].tolist()
                if self.slot < self.width
                else []
            )
            attn = (
                attn + [float(v) for v in keep] + [0.0] * (len(self.kept) - len(attn) - len(keep))
            )
        return super().attention_items(attn)


@mutant(
    "extra-weights-ignored",
    rule="§2.3: attn has exactly len(kept) weights",
    origin="zipping the kept entries with attn, so weights past the kept count are dropped",
    keywords=("extra weights ignored",),
)
class ExtraWeightsIgnored(Model):
    """Accepts a list longer than the kept list and drops the extra weights."""

    def attention_items(self, attn: Any) -> list[Any]:
        if isinstance(attn, list) and len(attn) > len(self.kept):
            attn = attn[: len(self.kept)]
        return super().attention_items(attn)


@mutant(
    "empty-kept-length-unchecked",
    rule="§2.3: attn has exactly len(kept) weights, none while nothing is kept",
    origin="a length check written inside the loop over kept entries, which never runs while "
    "nothing is kept",
    keywords=("skips the empty case",),
)
class EmptyKeptLengthUnchecked(Model):
    """While nothing is kept, accepts an attn list of any length (and writes nothing)."""

    def attention_items(self, attn: Any) -> list[Any]:
        if not self.kept and isinstance(attn, list):
            return []
        return super().attention_items(attn)


# -- the weights' values -----------------------------------------------------------------------


@mutant(
    "boolean-weight-accepted",
    rule="§2.3: booleans inside attn are not numbers (invalid-attention)",
    origin="Python's `isinstance(True, int)` or JavaScript's `Number(true)`: true becomes 1.0",
    keywords=("boolean", "not a number", "non-number"),
    witness=Witness(ONE, (step(0), step(1, [True]))),
)
class BooleanWeightAccepted(Model):
    """Accepts `true`/`false` weights as 1.0/0.0."""

    def weight_values(self, items: list[Any]) -> list[Any]:
        return super().weight_values([int(w) if type(w) is bool else w for w in items])


@mutant(
    "string-weights-coerced",
    rule="§2.3: each weight is a JSON number; a string is invalid-attention",
    origin='a loose reader converting `"0.5"` to 0.5 (`parseFloat`, `float(w)`)',
    keywords=("strings coerced",),
)
class StringWeightsCoerced(Model):
    """Reads a string holding a number as that weight."""

    def weight_values(self, items: list[Any]) -> list[Any]:
        converted = []
        for weight in items:
            if isinstance(weight, str) and _numeric(weight):
                weight = float(weight)
            converted.append(weight)
        return super().weight_values(converted)


@mutant(
    "null-weight-as-zero",
    rule="§2.3: each weight is a JSON number; null inside attn is invalid-attention",
    origin="a nullable float given its zero value (`w or 0.0`, `Option::unwrap_or(0.0)`)",
    keywords=("null weights read as 0",),
)
class NullWeightAsZero(Model):
    """Reads a null weight as 0.0."""

    def weight_values(self, items: list[Any]) -> list[Any]:
        return super().weight_values([0.0 if w is None else w for w in items])


@mutant(
    "null-weight-as-nan",
    rule="§2.3: each weight is a JSON number; null inside attn is invalid-attention",
    origin="JavaScript's `Number(null)` path in a reader that maps null to NaN, which then "
    "passes `w < 0` and every other comparison",
    keywords=("or nan",),
)
class NullWeightAsNaN(Model):
    """Reads a null weight as NaN, which no sign or range check refuses."""

    def weight_values(self, items: list[Any]) -> list[Any]:
        return super().weight_values([math.nan if w is None else w for w in items])

    def check_weights(self, weights: list[float]) -> None:  # NaN compares false: accepted
        super().check_weights([0.0 if w != w else w for w in weights])


@mutant(
    "integer-weights-refused",
    rule="§2.3: an integer literal such as 3 is a JSON number like any other",
    origin="a JSON reader that requires a decimal point or a float type for weights "
    "(`as_f64()` on a typed integer, a float-only schema)",
    keywords=("requires a decimal point",),
)
class IntegerWeightsRefused(Model):
    """Refuses a weight written as a JSON integer."""

    def weight_values(self, items: list[Any]) -> list[Any]:
        for index, weight in enumerate(items):
            if type(weight) is int:
                raise PolicyError("invalid-attention", f"attn[{index}] is not a float")
        return super().weight_values(items)


@mutant(
    "integer-weights-as-zero",
    rule="§2.3: an integer literal such as 3 is a JSON number like any other",
    origin="a reader that takes only floats and gives anything else 0.0 "
    "(`as_f64().unwrap_or(0.0)` on a value typed integer)",
    keywords=("misreads integers",),
)
class IntegerWeightsAsZero(Model):
    """Reads a weight written as a JSON integer as 0.0."""

    def weight_values(self, items: list[Any]) -> list[Any]:
        return super().weight_values([0.0 if type(w) is int else w for w in items])


@mutant(
    "huge-integer-saturated",
    rule="§2.3: an integer weight is read as its nearest float64 (10^39 is beyond float32)",
    origin="integers read into int64 by a reader that saturates on overflow (Go's "
    "`strconv.ParseInt` returns the maximum with an error the port ignores)",
    keywords=("overflowing a 64-bit json reader",),
)
class HugeIntegerSaturated(Model):
    """Reads an integer weight beyond 64 bits as 2^63 - 1, a finite float32."""

    def weight_values(self, items: list[Any]) -> list[Any]:
        capped = [min(w, 2**63 - 1) if type(w) is int else w for w in items]
        return super().weight_values(capped)


@mutant(
    "huge-integer-bad-request",
    rule="§3.1: an integer literal of up to 40 digits is a number, not an unparseable line",
    origin="a JSON reader that fails on integers beyond 64 bits, answered as a malformed request",
    keywords=("failing as bad-request",),
)
class HugeIntegerBadRequest(Model):
    """Refuses an integer weight beyond 64 bits with bad-request."""

    def weight_values(self, items: list[Any]) -> list[Any]:
        if any(type(w) is int and not -(2**63) <= w < 2**64 for w in items):
            raise PolicyError("bad-request", "an integer weight does not fit in 64 bits")
        return super().weight_values(items)


# -- narrowing ---------------------------------------------------------------------------------


def float64_of(value: Any) -> float:
    """The nearest float64 to a JSON number (an int may be past its range: then infinity, of
    the number's sign), the first rounding of SPEC.md §2.3."""
    try:
        return float(value)
    except OverflowError:
        return math.copysign(math.inf, value)


def far_outside_float32(decimal: Decimal) -> bool:
    """Whether the nonzero ``decimal`` reads as float32 zero (below 10^-46: under half the
    smallest subnormal, 2^-150, about 7e-46) or infinity (from 10^39: past FLT_MAX, about
    3.4e38, by far more than half an ulp), decided from its exponent: an exponent written with
    many digits (`1e-2147483649`) would make the exact fraction billions of digits long."""
    return not -46 <= decimal.adjusted() < 39


def decimal_to_float32(value: Any, text: str | None = None) -> float:
    """The float32 nearest the decimal, rounded once: what `strtof` and Java's
    `Float.parseFloat` give; infinity past the range. The decimal is ``text`` as the request
    writes it when known, else the one ``value``'s shortest repr writes."""
    if text is not None:
        decimal = Decimal(text)
        sign = -1.0 if decimal.is_signed() else 1.0
        if decimal.is_zero():
            return math.copysign(0.0, sign)
        if far_outside_float32(decimal):
            return math.copysign(0.0 if decimal.adjusted() < 0 else math.inf, sign)
        return round_to(Fraction(decimal), FLOAT32)
    if type(value) is float and not math.isfinite(value):
        return value
    if type(value) is float and float32_literal(value) == value:
        return value  # exactly a float32 already: no rounding of either kind moves it
    return round_to(exact_value(value), FLOAT32)


@mutant(
    "single-rounding",
    rule="§2.3, §2.6: a weight is read as the nearest float64, then rounded to float32",
    origin="parsing the decimal straight to float32 (`strtof`, Rust's `parse::<f32>`, Go's "
    "`ParseFloat(s, 32)`, Java's `Float.parseFloat`): one rounding instead of two",
    keywords=("straight to float32", "strtof", "parsefloat"),
)
class SingleRounding(Model):
    """Rounds each weight's decimal, as the request writes it, straight to float32."""

    reads_weight_text = True

    def narrow(self, values: list[Any]) -> list[float]:
        texts = self.written if len(self.written) == len(values) else [None] * len(values)
        return [decimal_to_float32(value, text) for value, text in zip(values, texts, strict=True)]


FLOAT32_MIN_NORMAL = 2.0**-126
#: Below this magnitude a number rounded to float32's 24 significant bits with no bound on the
#: exponent stays below the smallest normal float32: glibc judges tininess so (after rounding,
#: as on x86). It is the midpoint between 2^-126 and the 24-bit number below it, which rounds
#: to even, up to 2^-126.
TINY_BELOW = Fraction(2) ** -126 - Fraction(2) ** -151


def strtof_range_error(exact: Fraction) -> bool:
    """Whether glibc's ``strtof`` sets ``errno = ERANGE`` for the decimal ``exact`` (what makes
    ``std::stof`` throw ``std::out_of_range``): its float32 overflows, or it is tiny (below the
    smallest normal float32 once rounded to 24 significant bits) and not exactly the float32
    it reads as (an exactly written subnormal is read without complaint)."""
    if exact == 0:
        return False
    read = round_to(exact, FLOAT32)
    if math.isinf(read):
        return True
    return abs(exact) < TINY_BELOW and Fraction(read) != exact


@mutant(
    "std-stof",
    rule="§2.3, §2.6: a weight is the nearest float64 rounded to float32, and every finite "
    "float32 is accepted, subnormals included",
    origin="C++'s `std::stof` on the weight's text: `strtof` reads the decimal straight to "
    "float32 (one rounding), and where `strtof` sets ERANGE (an inexact subnormal or zero "
    "result, as for 1.401298464324817e-45) `std::stof` throws `std::out_of_range`, which the "
    "port answers as a refused weight",
    keywords=("std::stof", "out_of_range"),
    witness=Witness(ONE, (step(0), step(1, [1.401298464324817e-45]))),
)
class StdStof(Model):
    """Reads each weight's decimal with ``std::stof``: rounded once to float32, and refused
    (``invalid-attention``) where ``strtof`` reports a range error."""

    reads_weight_text = True

    def narrow(self, values: list[Any]) -> list[float]:
        texts = self.written if len(self.written) == len(values) else [None] * len(values)
        out = []
        for index, (value, text) in enumerate(zip(values, texts, strict=True)):
            if (
                text is None
                and type(value) is float
                and (value == 0 or abs(value) >= FLOAT32_MIN_NORMAL)
                and float32_literal(value) == value
            ):
                out.append(value)  # a normal float32 (or zero) as its shortest decimal: exact
                continue
            if type(value) is float and not math.isfinite(value):
                exact = None
            elif text is not None:
                decimal = Decimal(text)
                if not decimal.is_zero() and far_outside_float32(decimal):  # ERANGE
                    raise PolicyError(
                        "invalid-attention",
                        f"attn[{index}]: std::stof threw std::out_of_range",
                    )
                exact = Fraction(decimal)
            else:
                exact = exact_value(value)
            if exact is not None and strtof_range_error(exact):
                raise PolicyError(
                    "invalid-attention",
                    f"attn[{index}]: std::stof threw std::out_of_range",
                )
            out.append(decimal_to_float32(value, text))
        return out


@mutant(
    "narrowing-half-away",
    rule="§2.3, §2.6: the float32 nearest the float64, a tie going to the even neighbour",
    origin="narrowing by hand that rounds a tie up in magnitude (adding half an ulp before "
    "truncating the mantissa, `Math.round` on the scaled value)",
    keywords=("halves away from zero",),
)
class NarrowingHalfAway(Model):
    """Narrows each float64 weight to the nearest float32, ties away from zero."""

    def narrow(self, values: list[Any]) -> list[float]:
        return [round_float(float64_of(value), FLOAT32, "half-away") for value in values]


@mutant(
    "range-checked-on-float64",
    rule="§2.3: the range is judged on the float32 the weight rounds to, not on its float64",
    origin="a guard on the parsed double (`d > Float.MAX_VALUE` refused) before narrowing: "
    "decimals just above the float32 maximum that round to it are refused",
    keywords=("checked on the float64 before rounding",),
)
class RangeCheckedOnFloat64(Model):
    """Refuses a weight whose float64 exceeds the float32 maximum, then narrows."""

    def narrow(self, values: list[Any]) -> list[float]:
        for index, value in enumerate(values):
            if abs(float64_of(value)) > FLOAT32_MAX:
                raise PolicyError("invalid-attention", f"attn[{index}] is beyond the float32 range")
        return super().narrow(values)


def _toward_zero(value: Any) -> float:
    try:
        wide = float(value)
    except OverflowError:
        return math.copysign(FLOAT32_MAX, value)
    if float32_literal(wide) == wide:
        return wide  # exactly a float32 already
    return round_float(wide, FLOAT32, "toward-zero")


@mutant(
    "narrowing-truncates",
    rule="§2.3, §2.6: the float32 nearest the float64 (ties to even), not the one toward zero",
    origin="narrowing by truncating the mantissa (round toward zero), as a hand-written "
    "bit conversion does",
    keywords=("narrowing by truncation", "round toward zero"),
)
class NarrowingTruncates(Model):
    """Narrows each float64 weight to float32 toward zero."""

    def narrow(self, values: list[Any]) -> list[float]:
        return [_toward_zero(value) for value in values]


@mutant(
    "no-float32-narrowing",
    rule="§2.3: each weight is narrowed to float32, and refused if that is infinite",
    origin="weights kept as float64 (or the language's only float) without the float32 "
    "narrowing, so 1e39 passes as finite",
    keywords=("without the float32 narrowing",),
)
class NoFloat32Narrowing(Model):
    """Keeps each weight as its float64, never narrowed to float32."""

    def narrow(self, values: list[Any]) -> list[float]:
        return [float64_of(value) for value in values]

    def check_weights(self, weights: list[float]) -> None:  # finite as a float64 is enough
        for index, weight in enumerate(weights):
            if not 0.0 <= weight < math.inf:
                raise PolicyError("invalid-attention", f"attn[{index}] is out of range")


@mutant(
    "range-checked-before-narrowing",
    rule="§2.3: each weight is narrowed to float32 first and judged after",
    origin="validating the parsed double (finite, >= 0) and narrowing afterwards, so 1e39 "
    "passes as a finite double and is stored as float32 infinity",
    keywords=("float32 range", "beyond float32", "narrowed to inf"),
    witness=Witness(ONE, (step(0), step(1, [1e39]))),
)
class RangeCheckedBeforeNarrowing(Model):
    """Judges weights as float64 (finite, not negative), then narrows to float32."""

    def narrow(self, values: list[Any]) -> list[float]:
        wide = []
        for index, value in enumerate(values):
            number = float64_of(value)
            if not (math.isfinite(number) and number >= 0):
                raise PolicyError("invalid-attention", f"attn[{index}] is out of range")
            wide.append(number)
        return [float32_literal(value) for value in wide]  # may be float32 infinity

    def check_weights(self, weights: list[float]) -> None:
        """Judged already, as float64."""


# -- subnormals, signs, ranges -----------------------------------------------------------------


@mutant(
    "flush-subnormals",
    rule="§2.3: every float32 weight is kept exactly, subnormals included",
    origin="flush-to-zero and denormals-are-zero (FTZ/DAZ): fast-math builds (`-ffast-math`, "
    "`-Ofast` link crtfastmath), GPU defaults; a subnormal weight becomes 0, a negative one "
    "-0.0 before the sign check",
    keywords=("ftz/daz", "subnormals flushed", "flushed to zero"),
)
class FlushSubnormals(Model):
    """Flushes subnormal weights to zero (of the same sign) before judging and storing them.

    x86 judges tininess before rounding: a float64 just below the smallest normal float32 is
    flushed by the narrowing itself, even where it rounds up to that normal."""

    def flush(self, weights: list[float]) -> list[float]:
        read = self.read if len(self.read) == len(weights) else weights
        return [
            math.copysign(0.0, w)
            if 0 < abs(w) < FLOAT32_MIN_NORMAL or 0 < abs(r) < FLOAT32_MIN_NORMAL
            else w
            for w, r in zip(weights, read, strict=True)
        ]


@mutant(
    "negative-weights-accepted",
    rule="§2.3: a weight that narrows to a negative float32 is refused",
    origin="checking only for NaN and infinity; attention weights are never negative in a "
    "real model, so nobody thought to refuse them",
    keywords=("negative",),
    witness=Witness(ONE, (step(0), step(1, [-1.0]))),
)
class NegativeWeightsAccepted(Model):
    """Accepts negative weights (and records them)."""

    def check_weights(self, weights: list[float]) -> None:
        super().check_weights([abs(w) for w in weights])


@mutant(
    "negative-zero-refused",
    rule="§2.3: -0.0 counts as zero and is accepted",
    origin="testing the sign bit (`signbit(w)`, `Math.sign`, `w.is_sign_negative()`) instead "
    "of `w < 0`",
    keywords=("-0.0", "negative zero", "sign-bit test"),
    witness=Witness(ONE, (step(0), step(1, [-0.0]))),
)
class NegativeZeroRefused(Model):
    """Refuses a weight whose float32 has the sign bit set, -0.0 included."""

    def check_weights(self, weights: list[float]) -> None:
        super().check_weights(weights)
        for index, weight in enumerate(weights):
            if math.copysign(1.0, weight) < 0:
                raise PolicyError("invalid-attention", f"attn[{index}] is negative: -0.0")


@mutant(
    "float32-max-refused",
    rule="§2.3: every finite float32 weight is accepted, the largest included",
    origin="a range check written `w < FLT_MAX` (or `w < 3.4e38`) instead of `<=`",
    keywords=("refuse the float32 maximum",),
)
class Float32MaxRefused(Model):
    """Refuses the largest float32 (3.4028234663852886e38) as out of range."""

    def check_weights(self, weights: list[float]) -> None:
        super().check_weights(weights)
        for index, weight in enumerate(weights):
            if weight >= FLOAT32_MAX:
                raise PolicyError("invalid-attention", f"attn[{index}] is out of range")
