"""Protocol checks of the handshake (SPEC.md §3.2): which ``protocol`` is accepted, what the
answer carries, and that ``hello`` changes nothing."""

from __future__ import annotations

from collections.abc import Iterator

from conformance.suite.validation import CheckDraft
from conformance.tools.generate.check_families._common import HELLO, NEW, draft, line


def drafts() -> Iterator[CheckDraft]:
    hello_rule = "SPEC.md §3.2: hello's protocol must be the JSON integer 1, else unsupported"
    for name, value, catches, spec in (
        (
            "true",
            "true",
            "a `protocol == 1` test in a language where true == 1 (Python, C)",
            ("S3.2-hello-protocol", "S1-integers"),
        ),
        (
            "float",
            "1.0",
            "protocol read as a float or compared numerically (1.0 == 1)",
            ("S3.2-hello-protocol", "S1-integers"),
        ),
        (
            "string",
            '"1"',
            "a loose comparison or a coercion of strings (JavaScript ==)",
            ("S3.2-hello-protocol", "S1-integers"),
        ),
        ("two", "2", "a version never checked", ("S3.2-hello-protocol",)),
        (
            "null",
            "null",
            "null taken as missing (bad-request) or as the default 1",
            ("S3.2-hello-protocol", "S3.4-required"),
        ),
    ):
        yield draft(
            f"hello-protocol-{name}",
            hello_rule,
            f"hello with protocol {value} is refused as unsupported, then protocol 1 is accepted.",
            catches,
            ['{"id":1,"op":"hello","protocol":' + value + "}\n", HELLO.replace("1,", "2,", 1)],
            ["unsupported", "ok"],
            spec=(*spec, "S3.2-hello-answer"),
        )
    yield draft(
        "hello-protocol-missing",
        "SPEC.md §3.4 step 2: a hello without protocol is bad-request",
        "hello without protocol is a bad-request, not a handshake for version 1.",
        "a missing protocol defaulted to 1, or answered unsupported",
        ['{"id":1,"op":"hello"}\n'],
        ["bad-request"],
        spec=("S3.4-required",),
    )
    yield draft(
        "hello-repeated",
        "SPEC.md §3.2: hello changes no state and may be sent again",
        "A second hello mid-session is answered like the first and the policy survives it: "
        "the evict after it still has its victim.",
        "a second hello refused, or one that resets the policy (the evict then gets no-policy)",
        [
            HELLO,
            NEW,
            line({"id": 3, "op": "step", "pos": 0, "attn": None}),
            line({"id": 4, "op": "step", "pos": 1, "attn": [0.5]}),
            line({"id": 5, "op": "hello", "protocol": 1}),
            line({"id": 6, "op": "evict"}),
        ],
        ["ok"] * 6,
        spec=("S3.2-hello-state", "S3.2-hello-answer"),
    )
