"""Step mistakes: which positions and weights a step accepts, and how it refuses the rest.

SPEC.md §2.3: ``pos`` is an integer in ``[0, 2^31 - 1]`` strictly above every position
admitted before (gaps allowed), else ``invalid-position``; ``attn`` is null or exactly
``len(kept)`` numbers (kept as before this step's admission), each narrowed to float32 and then
refused when infinite or negative (``-0.0`` is zero), else ``invalid-attention``; the position
is judged before the attention. SPEC.md §3 fixes the error kinds.
"""

from __future__ import annotations

import math
from typing import Any

from conformance.mutants._base import EVICT, Witness, mutant, params, step
from conformance.policy.reference import (
    INT31_MAX,
    PolicyError,
    SnapKV,
    float32_literal,
    is_json_integer,
    narrow_attention,
    parse_position,
)

ONE = params(1, 0, 1, 1)


@mutant(
    "gaps-refused",
    rule="§2.3: positions only have to increase; gaps are allowed",
    origin="assuming decode positions are consecutive (`pos == last + 1`), true of a plain "
    "decode loop but not of a harness that skips or batches",
    keywords=("gap",),
    witness=Witness(ONE, (step(0), step(2))),
)
class GapsRefused(SnapKV):
    """Refuses a position that is not exactly one above the last admitted one."""

    def check_position(self, pos: Any) -> int:
        position = super().check_position(pos)
        last = self.last_admitted
        if last is not None and position != last + 1:
            raise PolicyError("invalid-position", f"pos {position} is not {last + 1}")
        return position


@mutant(
    "equal-position-accepted",
    rule="§2.3: pos must be strictly greater than every position admitted before",
    origin="`pos < last` where `pos <= last` was meant in the monotonicity check",
    keywords=("equal position", "same position", "repeat", "strictly greater"),
    witness=Witness(ONE, (step(0), step(0))),
)
class EqualPositionAccepted(SnapKV):
    """Accepts a position equal to the last admitted one."""

    def check_position(self, pos: Any) -> int:
        if is_json_integer(pos) and pos == self.last_admitted:
            return pos
        return super().check_position(pos)


@mutant(
    "position-checked-against-kept",
    rule="§2.3: pos must exceed every position admitted before, evicted ones included",
    origin="comparing with the highest *kept* position (`kept.back()`), which falls when the "
    "newest position is evicted",
    keywords=("evicted ones included", "ever admitted", "highest kept", "admitted before"),
    witness=Witness(ONE, (step(0), step(1, [1.0]), EVICT, step(1))),
)
class PositionCheckedAgainstKept(SnapKV):
    """Checks monotonicity against the highest kept position, not the highest admitted."""

    def check_position(self, pos: Any) -> int:
        highest_kept = self.kept[-1] if self.kept else None
        return parse_position(pos, highest_kept)


@mutant(
    "position-above-int31-accepted",
    rule="§2.3: pos is at most 2^31 - 1",
    origin="positions held in 64-bit or unsigned 32-bit integers with no upper bound checked",
    keywords=("2^31", "above int31", "too large", "out-of-range"),
    witness=Witness(ONE, (step(2**31),)),
)
class PositionAboveInt31Accepted(SnapKV):
    """Accepts positions up to ``2^32 - 1`` (a uint32 port)."""

    def check_position(self, pos: Any) -> int:
        last = self.last_admitted
        if is_json_integer(pos) and INT31_MAX < pos < 2**32 and (last is None or pos > last):
            return pos
        return super().check_position(pos)


@mutant(
    "positions-truncated-16-bit",
    rule="§2.3: positions are integers up to 2^31 - 1, returned as given",
    origin="a compact `uint16_t` position array sized for short contexts",
    keywords=("16-bit", "16 bit", "near 2^31", "large position", "truncat"),
    witness=Witness(ONE, (step(65536), step(65537), EVICT)),
)
class PositionsTruncated16Bit(SnapKV):
    """Stores kept positions modulo 2^16 (the full value is checked, the truncated one kept)."""

    def admit(self, position: int) -> None:
        super().admit(position & 0xFFFF)
        self.last_admitted = position


@mutant(
    "non-integer-position-bad-request",
    rule="§2.3, §3.3: a pos that is not an integer is invalid-position, not bad-request",
    origin="schema-validating the whole request up front, so a mistyped field is reported as "
    "a malformed request",
    keywords=("not an integer", "non-integer", "invalid-position"),
    witness=Witness(ONE, (step(0), step(1.5))),
)
class NonIntegerPositionBadRequest(SnapKV):
    """Refuses a non-integer pos with bad-request."""

    def check_position(self, pos: Any) -> int:
        if not is_json_integer(pos):
            raise PolicyError("bad-request", f"pos is not an integer: {pos!r}")
        return super().check_position(pos)


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
class AttentionJudgedBeforePosition(SnapKV):
    """Validates attn before pos, so a step bad in both is refused as invalid-attention."""

    def step(self, pos: Any, attn: Any) -> None:
        weights = self.check_attention(attn)
        position = self.check_position(pos)
        if weights is not None:
            self.write(weights)
        self.admit(position)


@mutant(
    "admitted-before-recording",
    rule="§2.3: attn has len(kept) weights, kept as before this step's admission",
    origin="appending the new position first and then writing the step's attention over "
    "every kept position, the new one included",
    keywords=("before this step's admission", "before admission", "after admission"),
    witness=Witness(ONE, (step(0), step(1, [1.0]))),
)
class AdmittedBeforeRecording(SnapKV):
    """Admits first, then expects and records ``len(kept) + 1`` weights (the new one too)."""

    def step(self, pos: Any, attn: Any) -> None:
        position = self.check_position(pos)
        # The length is judged as if the position were already admitted.
        weights = narrow_attention(attn, len(self.kept) + 1)
        self.admit(position)
        if weights is not None:
            self.write(weights)


@mutant(
    "wrong-length-bad-request",
    rule="§2.3, §3.3: an attn of the wrong length is invalid-attention, not bad-request",
    origin="checking the array length in the request decoder and reporting a malformed request",
    keywords=("wrong length", "too short", "too long", "invalid-attention"),
    witness=Witness(ONE, (step(0), step(1, []))),
)
class WrongLengthBadRequest(SnapKV):
    """Refuses an attention list of the wrong length with bad-request."""

    def check_attention(self, attn: Any) -> list[float] | None:
        if isinstance(attn, list) and len(attn) != len(self.kept):
            raise PolicyError("bad-request", f"attn has {len(attn)} weights, want {len(self.kept)}")
        return super().check_attention(attn)


def _is_number(weight: Any) -> bool:
    return type(weight) is int or type(weight) is float


@mutant(
    "negative-weights-accepted",
    rule="§2.3: a weight that narrows to a negative float32 is refused",
    origin="checking only for NaN and infinity; attention weights are never negative in a "
    "real model, so nobody thought to refuse them",
    keywords=("negative",),
    witness=Witness(ONE, (step(0), step(1, [-1.0]))),
)
class NegativeWeightsAccepted(SnapKV):
    """Accepts negative weights (and records them)."""

    def check_attention(self, attn: Any) -> list[float] | None:
        if not isinstance(attn, list):
            return super().check_attention(attn)
        negative = [_is_number(w) and w < 0 for w in attn]
        magnitudes = [abs(w) if n else w for w, n in zip(attn, negative, strict=True)]
        weights = super().check_attention(magnitudes)
        if weights is None:
            return None
        return [-w if n else w for w, n in zip(weights, negative, strict=True)]


@mutant(
    "range-checked-before-narrowing",
    rule="§2.3: each weight is narrowed to float32 first and judged after",
    origin="validating the parsed double (finite, >= 0) and narrowing afterwards, so 1e39 "
    "passes as a finite double and is stored as float32 infinity",
    keywords=("float32 range", "beyond float32", "narrow"),
    witness=Witness(ONE, (step(0), step(1, [1e39]))),
)
class RangeCheckedBeforeNarrowing(SnapKV):
    """Judges weights as float64 (finite, not negative), then narrows to float32."""

    def check_attention(self, attn: Any) -> list[float] | None:
        if not isinstance(attn, list) or not all(_is_number(w) for w in attn):
            return super().check_attention(attn)
        try:
            wide = [float(w) for w in attn]
        except OverflowError:
            return super().check_attention(attn)
        if len(wide) != len(self.kept) or not all(math.isfinite(w) and w >= 0 for w in wide):
            return super().check_attention(attn)
        return [float32_literal(w) for w in wide]  # may be float32 infinity


@mutant(
    "negative-zero-refused",
    rule="§2.3: -0.0 counts as zero and is accepted",
    origin="testing the sign bit (`signbit(w)`, `Math.sign`, `w.is_sign_negative()`) instead "
    "of `w < 0`",
    keywords=("-0.0", "negative zero"),
    witness=Witness(ONE, (step(0), step(1, [-0.0]))),
)
class NegativeZeroRefused(SnapKV):
    """Refuses a weight whose float32 has the sign bit set, -0.0 included."""

    def check_attention(self, attn: Any) -> list[float] | None:
        weights = super().check_attention(attn)
        for index, weight in enumerate(weights or ()):
            if math.copysign(1.0, weight) < 0:
                raise PolicyError("invalid-attention", f"attn[{index}] is negative: -0.0")
        return weights


@mutant(
    "boolean-weight-accepted",
    rule="§2.3: booleans inside attn are not numbers (invalid-attention)",
    origin="Python's `isinstance(True, int)` or JavaScript's `Number(true)`: true becomes 1.0",
    keywords=("boolean", "not a number", "non-number"),
    witness=Witness(ONE, (step(0), step(1, [True]))),
)
class BooleanWeightAccepted(SnapKV):
    """Accepts ``true``/``false`` weights as 1.0/0.0."""

    def check_attention(self, attn: Any) -> list[float] | None:
        if isinstance(attn, list):
            attn = [int(w) if type(w) is bool else w for w in attn]
        return super().check_attention(attn)
