"""Slips in reading numbers (SPEC.md §1, §2.3, §3.1): integers held in 32- or 64-bit integers
or in a float64, ``-0`` and ``5.0``, and weights read by hand-written float readers.

Each reads the line with the strict codec, keeping each number's text, and then reads one
field's numbers the way the slipping reader does; every other number is read as the reference
reads it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Context, Decimal
from typing import Any

from conformance.slips.slip_adapter import SlipAdapter, slip
from conformance.spec.protocol import NumberText, decode, refusal

Reader = Callable[[NumberText], Any]
#: Exact decimal arithmetic for the hand-written readers, whatever the exponent.
_EXACT = Context(prec=1000, Emax=10**17, Emin=-(10**17))


def wrapped(bits: int, signed: bool) -> Reader:
    """An integer reader of ``bits`` bits that wraps (C's conversions, Go's int32(x), Rust's
    ``as``): the text's value modulo 2^bits, read signed or not."""

    def read(text: NumberText) -> Any:
        value = text.decoded()
        if type(value) is not int:
            return value
        value %= 1 << bits
        if signed and value >= 1 << (bits - 1):
            value -= 1 << bits
        return value

    return read


def as_float64(text: NumberText) -> Any:
    """An integer read through a float64 (JavaScript's numbers, Go's interface{} decoding)."""
    value = text.decoded()
    return int(float(value)) if type(value) is int else value


class FieldReader(SlipAdapter):
    """Reads the field(s) ``FIELDS`` of every request (``params`` means each of its values)
    with :meth:`number` (as an integer of ``WRAPS`` bits, signed or not, that wraps, where
    given); every other value as the reference reads it."""

    FIELDS: tuple[str, ...] = ()
    WRAPS: tuple[int, bool] | None = None

    def number(self, text: NumberText) -> Any:
        if self.WRAPS is None:
            return text.decoded()
        bits, signed = self.WRAPS
        return wrapped(bits, signed)(text)

    def read(self, line: bytes) -> Any:
        request = decode(line)
        if not isinstance(request, dict) or not any(name in request for name in self.FIELDS):
            return request
        written = decode(line, parse_float=NumberText, parse_int=NumberText)
        for name in self.FIELDS:
            if name not in written:
                continue
            value = written[name]
            if isinstance(value, NumberText):
                request[name] = self.number(value)
            elif isinstance(value, dict) and name == "params":
                request[name] = {
                    key: self.number(item) if isinstance(item, NumberText) else request[name][key]
                    for key, item in value.items()
                }
            elif isinstance(value, list) and name == "attn":
                request[name] = [
                    self.number(item) if isinstance(item, NumberText) else request[name][index]
                    for index, item in enumerate(value)
                ]
        return request


@slip(
    "positions-uint32",
    sentence="S1-integers",
    origin="a position decoded into a uint32_t or u32 that wraps (C's conversion, Rust's "
    "`as u32`, Go's uint32(x)), so 2^32 + 1 is position 1",
)
class PositionsUint32(FieldReader):
    """Positions are read modulo 2^32."""

    FIELDS = ("pos",)
    WRAPS = (32, False)


@slip(
    "params-uint64",
    sentence="S1-integers",
    origin="parameters decoded into u64 or uint64 through a wrapping conversion, so 2^64 + 4 is 4",
)
class ParamsUint64(FieldReader):
    """Parameters are read modulo 2^64."""

    FIELDS = ("params",)
    WRAPS = (64, False)


@slip(
    "params-int32",
    sentence="S1-integers",
    origin="parameters decoded into a 32-bit int (Java's int, C's int, Go's int32) that "
    "wraps, so 2^32 + 4 is 4 and 2^32 is 0",
)
class ParamsInt32(FieldReader):
    """Parameters are read as signed 32-bit integers, wrapping."""

    FIELDS = ("params",)
    WRAPS = (32, True)


@slip(
    "negative-zero-not-an-integer",
    sentence="S1-integers",
    origin="a reader that takes -0 for a float (-0.0, as JavaScript and some JSON libraries "
    "do) and so refuses it where an integer is meant",
)
class NegativeZeroNotAnInteger(FieldReader):
    """``-0`` is read as the float -0.0 in parameters, seeds and positions."""

    FIELDS = ("params", "seed", "pos")

    def number(self, text: NumberText) -> Any:
        return -0.0 if text.text == "-0" else text.decoded()


@slip(
    "ids-int32",
    sentence="S3.1-id-echo",
    origin="ids held in a 32-bit int (Java's int, a C int): 2^31 wraps to -2^31",
)
class IdsInt32(FieldReader):
    """Ids are read as signed 32-bit integers, wrapping."""

    FIELDS = ("id",)
    WRAPS = (32, True)


@slip(
    "ids-float64",
    sentence="S3.1-id-echo",
    origin="ids held in a float64 (JavaScript's numbers, Go's interface{} decoding): 2^53 + 1 "
    "comes back as 2^53",
)
class IdsFloat64(FieldReader):
    """Ids are read through a float64."""

    FIELDS = ("id",)

    def number(self, text: NumberText) -> Any:
        return as_float64(text)


@slip(
    "ids-uint64",
    sentence="S3.1-id-echo",
    origin="ids held in a u64 or uint64: negative ids and ids past 2^64 wrap",
)
class IdsUint64(FieldReader):
    """Ids are read modulo 2^64, unsigned."""

    FIELDS = ("id",)
    WRAPS = (64, False)


@slip(
    "negative-zero-id-refused",
    sentence="S3.1-id-echo",
    origin="a reader that takes -0 for a float and so finds no integer id",
)
class NegativeZeroIdRefused(FieldReader):
    """An id written ``-0`` is taken as a float: no integer id, answered with id null."""

    FIELDS = ("id",)

    def number(self, text: NumberText) -> Any:
        return -0.0 if text.text == "-0" else text.decoded()


@slip(
    "integral-float-ids",
    sentence="S3.1-id-null",
    origin="an id compared with == to its integer value or converted with a cast, so 5.0 and "
    "5e0 count as 5 (JavaScript's Number.isInteger, Python's float.is_integer)",
)
class IntegralFloatIds(FieldReader):
    """An id written with a fraction or exponent but an integral value is taken as that
    integer."""

    FIELDS = ("id",)

    def number(self, text: NumberText) -> Any:
        value = text.decoded()
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value


@slip(
    "any-id-echoed",
    sentence="S3.1-id-null",
    origin="an adapter that copies whatever id it was sent into the answer, a string or "
    "true included",
)
class AnyIdEchoed(SlipAdapter):
    """A request whose id is not an integer is answered as usual, echoing that id."""

    def read(self, line: bytes) -> Any:
        request = decode(line)
        if isinstance(request, dict) and "id" in request and type(request["id"]) is not int:
            request["__id"] = request["id"]
            request["id"] = 0
        return request

    def handle(self, request: Any) -> dict[str, Any]:
        given = request.pop("__id", None) if isinstance(request, dict) else None
        answer = super().handle(request)
        if given is not None:
            answer["id"] = given
        return answer


class WeightReader(FieldReader):
    """Reads each weight's text with :meth:`weight` (a float), as a hand-written reader does;
    the policy then narrows it to float32 as the reference does."""

    FIELDS = ("attn",)

    def number(self, text: NumberText) -> Any:
        return self.weight(text.text)

    def weight(self, text: str) -> Any:
        return float(text)


@slip(
    "underflow-refused",
    sentence="S2.3-rounding",
    origin="C's strtod checked for ERANGE, which it also sets on underflow: a weight such as "
    "1e-400 refused as out of range instead of read as 0",
)
class UnderflowRefused(WeightReader):
    """A weight whose decimal underflows float64 (1e-400, 5e-324) is refused."""

    def weight(self, text: str) -> Any:
        value = float(text)
        exact = Decimal(text)
        if exact != 0 and (value == 0 or abs(value) < 2.2250738585072014e-308):
            return math.inf  # refused as beyond range, as the ERANGE check does
        return value


@slip(
    "mantissa-in-64-bits",
    sentence="S2.3-rounding",
    origin="a hand-written float reader that accumulates the digits in a uint64 (which wraps "
    "past 19 digits) before scaling by the exponent",
)
class MantissaIn64Bits(WeightReader):
    """A weight's digits are accumulated in a wrapping 64-bit integer."""

    def weight(self, text: str) -> Any:
        body, _, exponent = text.lower().partition("e")
        negative = body.startswith("-")
        whole, _, fraction = body.lstrip("-").partition(".")
        digits = int(whole + fraction) % (1 << 64)
        scale = int(exponent or "0") - len(fraction)
        value = float(Decimal(digits).scaleb(scale, _EXACT))
        return -value if negative else value


@slip(
    "exponent-in-32-bits",
    sentence="S2.3-rounding",
    origin="a hand-written float reader that accumulates the exponent in an int32, which "
    "wraps past 2^31 (1e4294967297 read as 1e1)",
)
class ExponentIn32Bits(WeightReader):
    """A weight's exponent is accumulated in a wrapping signed 32-bit integer."""

    def weight(self, text: str) -> Any:
        body, marker, exponent = text.lower().partition("e")
        if not marker:
            return float(text)
        value = int(exponent) % (1 << 32)
        if value >= 1 << 31:
            value -= 1 << 32
        return float(Decimal(body).scaleb(value, _EXACT))


@slip(
    "integer-weights-int64",
    sentence="S2.3-weight-type",
    origin="integer literals in attn decoded as int64 (serde's i64, Java's long, Go's "
    "int64), which cannot hold 2^63 or 2^64: the line is refused as unparseable",
)
class IntegerWeightsInt64(SlipAdapter):
    """An integer weight beyond a signed 64-bit integer makes the line unparseable."""

    def answer_line(self, line: bytes) -> dict[str, Any]:
        try:
            request = decode(line)
        except ValueError:
            return super().answer_line(line)
        attn = request.get("attn") if isinstance(request, dict) else None
        if isinstance(attn, list) and any(
            type(w) is int and not -(2**63) <= w < 2**63 for w in attn
        ):
            return refusal(None, "bad-request", "integer overflow in attn")
        return super().answer_line(line)


@slip(
    "integer-weights-int32",
    sentence="S2.3-weight-type",
    origin="integer literals in attn decoded as a 32-bit int before the float (a C atoi, a "
    "Java int), wrapping past 2^31",
)
class IntegerWeightsInt32(WeightReader):
    """Integer weights are read as signed 32-bit integers, wrapping."""

    def weight(self, text: str) -> Any:
        if any(mark in text for mark in ".eE"):
            return float(text)
        return float(wrapped(32, signed=True)(NumberText(text)))


@slip(
    "beyond-float64-bad-request",
    sentence="S2.3-weight-range",
    origin="a JSON reader that refuses a number beyond the float64 range (Go's ParseFloat "
    "error, serde_json) and so answers bad-request instead of invalid-attention",
)
class BeyondFloat64BadRequest(SlipAdapter):
    """A weight whose decimal is beyond the float64 range makes the line unparseable."""

    def answer_line(self, line: bytes) -> dict[str, Any]:
        try:
            request = decode(line)
        except ValueError:
            return super().answer_line(line)
        attn = request.get("attn") if isinstance(request, dict) else None
        if isinstance(attn, list) and any(isinstance(w, float) and math.isinf(w) for w in attn):
            return refusal(None, "bad-request", "number out of range")
        return super().answer_line(line)


def _bools_as_ints(value: Any) -> Any:
    return int(value) if type(value) is bool else value


@slip(
    "true-seed-read-as-1",
    sentence="S2.1-seed",
    origin="a seed checked with isinstance(seed, int) in Python (a bool is an int there) or "
    "read through a truthy cast in C or JavaScript, so true is seed 1 and false seed 0",
)
class TrueSeedReadAs1(SlipAdapter):
    """A seed of ``true`` or ``false`` is read as 1 or 0."""

    def handle(self, request: Any) -> Any:
        if isinstance(request, dict) and "seed" in request:
            request = {**request, "seed": _bools_as_ints(request["seed"])}
        return super().handle(request)


@slip(
    "boolean-params-as-integers",
    sentence="S2.1-types",
    origin="parameters checked with isinstance(value, int) in Python, where True is 1, or "
    "coerced with Number() in JavaScript",
)
class BooleanParamsAsIntegers(SlipAdapter):
    """A parameter written ``true`` or ``false`` is read as 1 or 0."""

    def handle(self, request: Any) -> Any:
        if isinstance(request, dict) and isinstance(request.get("params"), dict):
            params = {key: _bools_as_ints(value) for key, value in request["params"].items()}
            request = {**request, "params": params}
        return super().handle(request)
