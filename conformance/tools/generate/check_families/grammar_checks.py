"""Protocol checks of the line's JSON (SPEC.md §3.1): strict UTF-8, JSON's own grammar for
numbers, strings and whitespace, one value per line, and what an escape means."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conformance.suite.validation import CheckDraft
from conformance.tools.generate.check_families._common import HELLO, NEW, draft, line

STRICT = (
    "SPEC.md §3.4 step 1: lines are strict JSON; NaN, Infinity and other non-JSON is "
    "bad-request with id null"
)
UTF8 = (
    "SPEC.md §3.1: lines are strict UTF-8; a BOM, an encoded surrogate or an invalid byte "
    "makes the line unparseable"
)

#: Number texts JSON's grammar refuses, each sent where a reader meets it first: as the id,
#: as a position, as a weight and in a field the adapter ignores.
LAX_NUMBERS = ("+3", "03", "-03", ".5", "3.", "3.e1", "-", "1e", "1e+", "0x10", "1_000", "--1")


def drafts() -> Iterator[CheckDraft]:
    for name, token, catches in (
        ("nan", "NaN", "NaN parsed as a number (Python's json.loads, JavaScript's JSON5)"),
        ("infinity", "Infinity", "Infinity parsed as a number (Python's json.loads)"),
        ("minus-infinity", "-Infinity", "-Infinity parsed as a number (Python's json.loads)"),
    ):
        yield draft(
            f"strict-json-{name}",
            STRICT,
            f"A weight written {token} makes the line unparseable: bad-request, id null; the "
            "policy is unchanged, so the next step at the same position is accepted.",
            catches + ", which turns a bad line into invalid-attention or an accepted weight",
            [
                HELLO,
                NEW,
                line({"id": 3, "op": "step", "pos": 0, "attn": None}),
                '{"id":4,"op":"step","pos":1,"attn":[' + token + "]}\n",
                line({"id": 5, "op": "step", "pos": 1, "attn": [0.5]}),
            ],
            ["ok", "ok", "ok", "bad-request", "ok"],
            spec=("S3.1-numbers", "S3.3-unchanged", "S3.1-id-null"),
        )
    yield draft(
        "strict-json-syntax",
        STRICT,
        "Trailing commas (in an object, in a list), single quotes and a comment each make "
        "a line unparseable: bad-request with id null.",
        "lenient parsers (JSON5, Python's ast.literal_eval, YAML) accepting near-JSON and "
        "answering with the id",
        [
            HELLO,
            NEW,
            '{"id":3,"op":"evict",}\n',
            '{"id":4,"op":"step","pos":0,"attn":[],}\n',
            "{'id':5,'op':'evict'}\n",
            '{"id":6,"op":"evict"} // why\n',
            '{id:7,"op":"evict"}\n',
            _line_of(8),
        ],
        ["ok", "ok", *["bad-request"] * 5, "ok"],
        spec=("S3.1-syntax", "S3.1-id-null"),
    )
    sent: list[Any] = [HELLO, NEW, line({"id": 3, "op": "step", "pos": 0, "attn": None})]
    for index, text in enumerate(LAX_NUMBERS):
        number = 10 + 4 * index
        sent += [
            '{"id":' + text + ',"op":"evict"}\n',
            '{"id":' + str(number + 1) + ',"op":"step","pos":' + text + ',"attn":[0.5]}\n',
            '{"id":' + str(number + 2) + ',"op":"step","pos":1,"attn":[' + text + "]}\n",
            '{"id":' + str(number + 3) + ',"op":"evict","x":' + text + "}\n",
        ]
    sent.append(line({"id": 9, "op": "step", "pos": 1, "attn": [0.5]}))
    yield draft(
        "strict-json-numbers",
        "SPEC.md §3.1: numbers are written as JSON's grammar says; +3, 03, .5, 3., 0x10 and "
        "the like make the line unparseable (bad-request, id null)",
        "Numbers JSON's grammar refuses (a leading + or zero, a bare point, an exponent "
        "without digits, hexadecimal, underscores, a lone minus), each written as the id, the "
        "position, a weight and an ignored field, make their line unparseable: bad-request, "
        "id null. None of them changes anything: the step at 1 is accepted at the end.",
        "a hand-written or lenient number reader (strtod or strtol on the token, JavaScript's "
        "Number(), JSON5) that accepts +3, 03, .5 or 3. and answers the request",
        sent,
        ["ok", "ok", "ok"] + ["bad-request"] * (4 * len(LAX_NUMBERS)) + ["ok"],
        spec=("S3.1-numbers", "S3.1-id-null"),
    )
    yield draft(
        "strict-json-strings",
        "SPEC.md §3.1: strings hold no raw control character and only JSON's escapes; a \\u "
        "escape is decoded as JSON says, in member names as in values",
        "Raw control characters (U+0001, a tab, U+001F) in a string and escapes JSON does not "
        "have (\\x41, \\u12, \\a, \\') make their line bad-request with id null. Escaped "
        'member names are the names they spell: "\\u0069d" is id, "\\u006fp" is op, '
        '"p\\u006fs" is pos, and an escaped "op" repeating a plain one counts as the last.',
        "a lenient string reader (control characters passed through, unknown escapes kept "
        "as text), or member names compared before their escapes are decoded, so that the "
        'escaped "id" is missing (bad-request, id null) and the escaped "op" ignored',
        [
            HELLO,
            NEW,
            '{"id":3,"op":"evict","x":"a\u0001b"}\n',
            '{"id":4,"op":"evict","x":"a\tb"}\n',
            '{"id":5,"op":"evict","x":"a\u001fb"}\n',
            '{"id":6,"op":"evict","x":"\\x41"}\n',
            '{"id":7,"op":"evict","x":"\\u12"}\n',
            '{"id":8,"op":"evict","x":"\\a"}\n',
            '{"id":9,"op":"evict","x":"\\\'"}\n',
            '{"\\u0069d":10,"op":"evict"}\n',
            '{"id":11,"\\u006fp":"step","p\\u006fs":0,"attn":null}\n',
            '{"id":12,"op":"\\u0065vict","x":"\\/\\b\\f\\n\\r\\t\\"\\\\"}\n',
            '{"id":13,"op":"evict","\\u006fp":"Evict"}\n',
            '{"id":14,"\\u006f\\u0070":"step","pos":1,"attn":[0.5],"op":"step"}\n',
            line({"id": 15, "op": "evict"}),
        ],
        ["ok", "ok"] + ["bad-request"] * 7 + ["ok", "ok", "ok", "bad-request", "ok", "ok"],
        spec=("S3.1-strings", "S3.1-escapes", "S3.1-repeated", "S3.1-id-null"),
    )
    yield draft(
        "json-whitespace",
        "SPEC.md §3.1: whitespace between tokens is space, tab and CR only; each line holds "
        "one JSON value and nothing else",
        "A no-break space, a line separator (U+2028), an ideographic space, a byte-order mark, "
        "a vertical tab and a form feed between tokens each make their line bad-request with "
        "id null, and so does a line of nothing but a no-break space or a form feed (it is not "
        "blank). A NUL after the value, alone or followed by more text, makes the line "
        "unparseable too. Spaces, tabs and CRs anywhere between tokens are whitespace.",
        "a reader that skips Unicode whitespace (a String.trim() or isspace() loop, "
        "JavaScript's \\s), or a C string function that stops at the NUL and answers the "
        "request before it",
        [
            HELLO,
            NEW,
            '{"id":3,\u00a0"op":"evict"}\n',
            '{"id":4,"op":\u2028"evict"}\n',
            '{"id":5\u3000,"op":"evict"}\n',
            '{"id":6,\ufeff"op":"evict"}\n',
            '{"id":7,"op":"evict"}\u000b\n',
            '{"id":8,\u000c"op":"evict"}\n',
            "\u00a0\n",
            "\u000c\n",
            '{"id":11,"op":"evict"}\u0000\n',
            '{"id":12,"op":"evict"}\u0000{"id":13,"op":"evict"}\n',
            ' \t{\r"id"\t:\r14 ,  "op"\t:"evict"\r}\t \r\n',
        ],
        ["ok", "ok"] + ["bad-request"] * 10 + ["ok"],
        spec=("S3.1-whitespace", "S3.1-one-value", "S3.1-answers", "S3.1-id-null"),
    )
    yield draft(
        "utf8-bom",
        UTF8,
        "A new whose line starts with a byte-order mark is bad-request with id null, so no "
        "policy is made and the evict after it gets no-policy.",
        "a BOM stripped (utf-8-sig decoding, .NET readers) and the new accepted",
        [HELLO, {"hex": "efbbbf"}, NEW, line({"id": 3, "op": "evict"})],
        ["ok", "bad-request", "no-policy"],
        spec=("S3.1-utf8", "S3.3-unchanged", "S3.1-id-null"),
    )
    invalid = (
        ("ff", "the byte 0xff"),
        ("eda080", "an encoded surrogate"),
        ("c0af", "an overlong slash"),
        ("e080af", "an overlong slash in three bytes"),
        ("f4908080", "a code point above U+10FFFF"),
        ("e282", "a sequence cut short"),
        ("80", "a lone continuation byte"),
    )
    sent = [HELLO, NEW]
    for index, (hexed, _) in enumerate(invalid):
        sent += ['{"id":' + str(3 + index) + ',"op":"evict","note":"', {"hex": hexed}, '"}\n']
    sent.append(line({"id": 3 + len(invalid), "op": "evict"}))
    yield draft(
        "utf8-invalid-bytes",
        UTF8,
        "A line holding, in a string, "
        + ", ".join(what for _, what in invalid)
        + " is bad-request with id null.",
        "lines decoded leniently (replacement characters, Latin-1, WTF-8, Java's modified "
        "UTF-8, or a decoder that accepts overlong forms and code points past U+10FFFF) and "
        "answered with the id",
        sent,
        ["ok", "ok"] + ["bad-request"] * len(invalid) + ["ok"],
        spec=("S3.1-utf8", "S3.1-id-null"),
    )
    yield draft(
        "lone-surrogate-escape",
        "SPEC.md §3.1: a lone surrogate escape inside a string is valid JSON text, and the "
        "line is judged as usual",
        'A request carrying "\\ud800" in a field of its own is answered as usual.',
        "a JSON reader that refuses lone surrogate escapes (serde_json into String) and "
        "answers bad-request",
        [HELLO, NEW, '{"id":3,"op":"evict","note":"\\ud800"}\n'],
        ["ok", "ok", "ok"],
        spec=("S3.1-escapes",),
    )
    yield draft(
        "two-values-one-line",
        "SPEC.md §3.1: each line holds one JSON value and nothing else",
        "Two requests on one line are one unparseable line: one answer, bad-request, id null.",
        "a reader of JSON values rather than lines (Go's json.Decoder, serde_json's "
        "StreamDeserializer) that answers both",
        [HELLO, NEW.removesuffix("\n") + ' {"id":3,"op":"evict"}\n', '{"id":4,"op":"evict"}\n'],
        ["ok", "bad-request", "no-policy"],
        spec=("S3.1-one-value", "S3.1-id-null"),
    )
    yield draft(
        "not-an-object",
        "SPEC.md §3.4 step 1: a line that is not a JSON object is bad-request with id null",
        "Lines holding a list, a string and a number are bad-request with id null.",
        "a request that is not an object crashing the adapter, or answered with some id",
        [HELLO, "[1,2]\n", '"hello"\n', "3\n"],
        ["ok", "bad-request", "bad-request", "bad-request"],
        spec=("S3.4-step1", "S3.1-id-null"),
    )


def _line_of(request_id: int) -> str:
    return line({"id": request_id, "op": "evict"})
