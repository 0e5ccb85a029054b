"""Protocol checks of the id (SPEC.md §3.1): an integer id echoed exactly at every reader's
boundary, anything else answered with ``"id": null``."""

from __future__ import annotations

from collections.abc import Iterator

from conformance.suite.validation import CheckDraft
from conformance.tools.generate.check_families._common import HELLO, PARAMS, draft, line

ECHO = "SPEC.md §3.1: an integer id is echoed as the same integer, whatever its size or sign"

#: Ids at and around the boundaries of the integer readers ports use (int32, uint32, float64,
#: int64, uint64), and the longest integer literal every port must read (40 digits).
BOUNDARIES = (
    2**31 - 1,
    2**31,
    2**32 - 1,
    2**32,
    2**32 + 1,
    2**53 - 1,
    2**53,
    2**63 - 1,
    2**64 - 1,
    2**64,
    -(2**31),
    -(2**31) - 1,
    -(2**32),
    -(2**53),
    -(2**63),
    10**39 + 7,
    -(10**39) - 7,
)


def drafts() -> Iterator[CheckDraft]:
    id_cases: tuple[tuple[str, int, str], ...] = (
        (
            "above-2-53",
            2**53 + 1,
            "ids read as float64 (JavaScript numbers, Go's interface{} decoding): 2^53 + 1 "
            "comes back as 9007199254740992",
        ),
        ("negative", -7, "ids read as unsigned integers, or refused when negative"),
        (
            "below-minus-2-53",
            -(2**53) - 1,
            "ids read as float64: -(2^53 + 1) comes back rounded",
        ),
        (
            "2-63",
            2**63,
            "ids read as signed 64-bit integers (Java's long, Go's int64, serde's i64): 2^63 "
            "overflows, is refused as not an integer or wraps to a negative",
        ),
        (
            "above-2-64",
            2**64 + 1,
            "ids read as unsigned 64-bit integers (u64, uint64): 2^64 + 1 overflows or wraps to 1",
        ),
        (
            "below-minus-2-63",
            -(2**63) - 1,
            "ids read as signed 64-bit integers: -(2^63 + 1) overflows, is refused or wraps",
        ),
        (
            "below-minus-2-64",
            -(2**64) - 1,
            "ids read as 64-bit integers of either sign, or as float64: -(2^64 + 1) overflows "
            "or comes back rounded",
        ),
    )
    for name, id_value, catches in id_cases:
        yield draft(
            f"id-{name}",
            ECHO,
            f"The id {id_value} is echoed as exactly {id_value}, on a success and on a refusal.",
            catches,
            [
                HELLO,
                line({"id": id_value, "op": "new", "params": PARAMS, "seed": 0}),
                line({"id": id_value, "op": "step", "pos": -1, "attn": None}),
            ],
            ["ok", "ok", "invalid-position"],
            spec=("S3.1-id-echo", "S1-integers"),
        )
    yield draft(
        "id-reader-boundaries",
        ECHO,
        "Ids at and next to 2^31, 2^32, 2^53, 2^63 and 2^64, negative ones at -2^31, -2^32, "
        "-2^53 and -2^63, and 40-digit ids of both signs are each echoed exactly, on a "
        "handshake and on a refusal (no-policy); -0 is echoed as the integer 0.",
        "ids held in a 32-bit integer (signed or unsigned: 2^31 wraps negative, 2^32 to 0), a "
        "float64 (2^53 + 1 rounds), a 64-bit integer (2^63 and 2^64 overflow or wrap), or a "
        "reader that gives up before 40 digits; -0 read as a float and echoed as -0.0 or "
        "refused",
        [
            HELLO,
            '{"id":-0,"op":"hello","protocol":1}\n',
            '{"id":-0,"op":"evict"}\n',
            *(
                line({"id": value, "op": op, **({"protocol": 1} if op == "hello" else {})})
                for value in BOUNDARIES
                for op in ("hello", "evict")
            ),
        ],
        ["ok", "ok", "no-policy"] + ["ok", "no-policy"] * len(BOUNDARIES),
        spec=("S3.1-id-echo", "S1-integers", "S3.1-limits"),
    )
    yield draft(
        "id-not-an-integer",
        "SPEC.md §3.1: an answer to a request whose id is not an integer carries id null",
        'Requests whose id is true, "7", 1.5, 5.0, 5e0, -0.0, null or missing are '
        'bad-request with "id": null.',
        'any JSON value echoed as the id (true, "7", 1.5), an integral float (5.0, 5e0) '
        "taken as the integer 5, or a missing id answered without an id field",
        [
            HELLO,
            '{"id":true,"op":"evict"}\n',
            '{"id":"7","op":"evict"}\n',
            '{"id":1.5,"op":"evict"}\n',
            '{"id":null,"op":"evict"}\n',
            '{"op":"evict"}\n',
            '{"id":5.0,"op":"evict"}\n',
            '{"id":5e0,"op":"evict"}\n',
            '{"id":-0.0,"op":"evict"}\n',
        ],
        ["ok"] + ["bad-request"] * 8,
        spec=("S3.1-id-null", "S1-integers"),
    )
