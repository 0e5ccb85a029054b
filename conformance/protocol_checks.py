"""Protocol checks: raw request lines sent to a fresh adapter session, judged against SPEC §3.

A vector records policy calls; the runner encodes them, so it never sends a line a careful
encoder would not write. A protocol check is the other half: exact bytes (invalid UTF-8, a
byte-order mark, CRLF, blank lines, ``NaN``, ids beyond 2^53 ...) written to a new adapter
process, whose answers are judged line by line. Each check is one file
``vectors/protocol/<name>.json`` (format ``snapkv-protocol-check/1``, schema
``schema/protocol-check.schema.json``) naming the SPEC rule it tests and the porting bug it
catches; its expected answers are the reference adapter's, recorded by the generator.

- :func:`drafts` are the checks as written; :func:`realize` replays one on the reference.
- :func:`load_check`, :func:`check_problems` read and validate a file.
- :func:`judge` is the pure verdict on a list of answer lines.
- :func:`run_check` starts the adapter, sends the bytes, closes its input and judges.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.transport.raw import Transcript, talk

FORMAT = "snapkv-protocol-check/1"
THEME = "protocol"
#: The optional op whose answers depend on the adapter's announced capabilities.
SCORES = "scores"
#: Bytes of adapter output kept per check; a check needs a few lines, never more.
MAX_OUTPUT = 1 << 20
STDERR_TAIL = 2000

# Verdicts: the vector checker's, so reports and JUnit treat both alike.
from conformance.judge.checker import (  # noqa: E402
    CRASH,
    PASS,
    PROTOCOL_ERROR,
    TIMEOUT,
    UNEXPECTED_REFUSAL,
    UNEXPECTED_SUCCESS,
    WRONG_ERROR_KIND,
    WRONG_VICTIMS,
)


class CheckError(Exception):
    """A protocol-check file that cannot be used: names the file and the reason."""


@dataclass(frozen=True)
class ProtocolCheck:
    """One check: the bytes to send and the answers they must get, in order.

    ``send`` holds text chunks (sent UTF-8 encoded) and ``{"hex": ...}`` chunks (sent as
    those bytes). ``expect`` has one entry per line that calls for an answer: ``line`` (its
    index among the payload's LF-separated lines), the ``id`` the answer must carry, ``ok``,
    and ``error`` (a refusal's kind), ``victims`` or ``protocol`` where they are judged.
    ``without`` is the answer due instead when the adapter did not announce ``scores``;
    ``latitude`` lists other answers SPEC lets a port give (its implementation limits).
    """

    id: str
    description: str
    rule: str
    send: tuple[Any, ...]
    expect: tuple[Mapping[str, Any], ...]
    path: Path | None = field(default=None, compare=False)

    @property
    def payload(self) -> bytes:
        return payload(self.send)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "id": self.id,
            "description": self.description,
            "rule": self.rule,
            "send": list(self.send),
            "expect": [dict(item) for item in self.expect],
        }

    @classmethod
    def from_json(cls, data: Any, path: str | Path | None = None) -> ProtocolCheck:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise CheckError(f"{path}: not a {FORMAT} document")
        try:
            return cls(
                id=data["id"],
                description=data["description"],
                rule=data["rule"],
                send=tuple(data["send"]),
                expect=tuple(data["expect"]),
                path=Path(path) if path is not None else None,
            )
        except (KeyError, TypeError) as error:
            raise CheckError(f"{path}: missing or malformed field {error}") from None


def payload(send: Sequence[Any]) -> bytes:
    out = bytearray()
    for chunk in send:
        out += bytes.fromhex(chunk["hex"]) if isinstance(chunk, dict) else chunk.encode("utf-8")
    return bytes(out)


def answered_lines(data: bytes) -> list[int]:
    """Indices of the LF-separated lines of ``data`` that call for an answer (SPEC §3.1):
    every line but blank ones; a last line without LF counts."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [i for i, line in enumerate(lines) if line.strip(b" \t\r")]


def line_of(data: bytes, index: int) -> bytes:
    return data.split(b"\n")[index]


def is_check_document(data: Any) -> bool:
    return isinstance(data, dict) and data.get("format") == FORMAT


# -- the checks --------------------------------------------------------------------------------


def _line(request: Any) -> str:
    return json.dumps(request, separators=(",", ":")) + "\n"


HELLO = _line({"id": 1, "op": "hello", "protocol": 1})
PARAMS = {"budget": 1, "recentWindow": 0, "obsWindow": 2, "poolKernel": 1}
NEW = _line({"id": 2, "op": "new", "params": PARAMS, "seed": 0})


@dataclass(frozen=True)
class CheckDraft:
    """A check as written: bytes to send and the intended outcome of each answered line
    (``"ok"`` or an error kind); the generator fills in the reference's answers."""

    name: str
    rule: str
    pins: str
    catches: str
    send: tuple[Any, ...]
    outcomes: tuple[str, ...]
    latitude: Mapping[int, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{THEME}/{self.name}"


def _draft(
    name: str, rule: str, pins: str, catches: str, send: Sequence[Any], outcomes: Sequence[str]
) -> CheckDraft:
    return CheckDraft(name, rule, pins, catches, tuple(send), tuple(outcomes))


def drafts() -> Iterator[CheckDraft]:
    """Every protocol check, in the order of SPEC §3."""
    hello_rule = "SPEC.md §3.2: hello's protocol must be the JSON integer 1, else unsupported"
    for name, value, catches in (
        ("true", "true", "a `protocol == 1` test in a language where true == 1 (Python, C)"),
        ("float", "1.0", "protocol read as a float or compared numerically (1.0 == 1)"),
        ("string", '"1"', "a loose comparison or a coercion of strings (JavaScript ==)"),
        ("two", "2", "a version never checked"),
        ("null", "null", "null taken as missing (bad-request) or as the default 1"),
    ):
        yield _draft(
            f"hello-protocol-{name}",
            hello_rule,
            f"hello with protocol {value} is refused as unsupported, then protocol 1 is accepted.",
            catches,
            ['{"id":1,"op":"hello","protocol":' + value + "}\n", HELLO.replace("1,", "2,", 1)],
            ["unsupported", "ok"],
        )
    yield _draft(
        "hello-protocol-missing",
        "SPEC.md §3.4 step 2: a hello without protocol is bad-request",
        "hello without protocol is a bad-request, not a handshake for version 1.",
        "a missing protocol defaulted to 1, or answered unsupported",
        ['{"id":1,"op":"hello"}\n'],
        ["bad-request"],
    )
    yield _draft(
        "hello-repeated",
        "SPEC.md §3.2: hello changes no state and may be sent again",
        "A second hello mid-session is answered like the first and the policy survives it: "
        "the evict after it still has its victim.",
        "a second hello refused, or one that resets the policy (the evict then gets no-policy)",
        [
            HELLO,
            NEW,
            _line({"id": 3, "op": "step", "pos": 0, "attn": None}),
            _line({"id": 4, "op": "step", "pos": 1, "attn": [0.5]}),
            _line({"id": 5, "op": "hello", "protocol": 1}),
            _line({"id": 6, "op": "evict"}),
        ],
        ["ok"] * 6,
    )
    id_rule = "SPEC.md §3.1: an integer id is echoed as the same integer, whatever its size or sign"
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
        yield _draft(
            f"id-{name}",
            id_rule,
            f"The id {id_value} is echoed as exactly {id_value}, on a success and on a refusal.",
            catches,
            [
                HELLO,
                _line({"id": id_value, "op": "new", "params": PARAMS, "seed": 0}),
                _line({"id": id_value, "op": "step", "pos": -1, "attn": None}),
            ],
            ["ok", "ok", "invalid-position"],
        )
    yield _draft(
        "id-not-an-integer",
        "SPEC.md §3.1: an answer to a request whose id is not an integer carries id null",
        'Requests whose id is true, "7", 1.5, null or missing are bad-request with "id": null.',
        'any JSON value echoed as the id (true, "7", 1.5), or a missing id answered '
        "without an id field",
        [
            HELLO,
            '{"id":true,"op":"evict"}\n',
            '{"id":"7","op":"evict"}\n',
            '{"id":1.5,"op":"evict"}\n',
            '{"id":null,"op":"evict"}\n',
            '{"op":"evict"}\n',
        ],
        ["ok"] + ["bad-request"] * 5,
    )
    strict = (
        "SPEC.md §3.4 step 1: lines are strict JSON; NaN, Infinity and other non-JSON is "
        "bad-request with id null"
    )
    for name, token, catches in (
        ("nan", "NaN", "NaN parsed as a number (Python's json.loads, JavaScript's JSON5)"),
        ("infinity", "Infinity", "Infinity parsed as a number (Python's json.loads)"),
        ("minus-infinity", "-Infinity", "-Infinity parsed as a number (Python's json.loads)"),
    ):
        yield _draft(
            f"strict-json-{name}",
            strict,
            f"A weight written {token} makes the line unparseable: bad-request, id null; the "
            "policy is unchanged, so the next step at the same position is accepted.",
            catches + ", which turns a bad line into invalid-attention or an accepted weight",
            [
                HELLO,
                NEW,
                _line({"id": 3, "op": "step", "pos": 0, "attn": None}),
                '{"id":4,"op":"step","pos":1,"attn":[' + token + "]}\n",
                _line({"id": 5, "op": "step", "pos": 1, "attn": [0.5]}),
            ],
            ["ok", "ok", "ok", "bad-request", "ok"],
        )
    yield _draft(
        "strict-json-syntax",
        strict,
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
            _line({"id": 7, "op": "evict"}),
        ],
        ["ok", "ok", "bad-request", "bad-request", "bad-request", "bad-request", "ok"],
    )
    utf8 = (
        "SPEC.md §3.1: lines are strict UTF-8; a BOM, an encoded surrogate or an invalid byte "
        "makes the line unparseable"
    )
    yield _draft(
        "utf8-bom",
        utf8,
        "A new whose line starts with a byte-order mark is bad-request with id null, so no "
        "policy is made and the evict after it gets no-policy.",
        "a BOM stripped (utf-8-sig decoding, .NET readers) and the new accepted",
        [HELLO, {"hex": "efbbbf"}, NEW, _line({"id": 3, "op": "evict"})],
        ["ok", "bad-request", "no-policy"],
    )
    yield _draft(
        "utf8-invalid-bytes",
        utf8,
        "A line holding the byte 0xff, or the UTF-8 encoding of a surrogate (ED A0 80), in a "
        "string is bad-request with id null.",
        "lines decoded leniently (replacement characters, Latin-1, WTF-8 or Java's modified "
        "UTF-8) and answered with the id",
        [
            HELLO,
            NEW,
            '{"id":3,"op":"evict","note":"',
            {"hex": "ff"},
            '"}\n{"id":4,"op":"evict","note":"',
            {"hex": "eda080"},
            '"}\n',
            _line({"id": 5, "op": "evict"}),
        ],
        ["ok", "ok", "bad-request", "bad-request", "ok"],
    )
    yield _draft(
        "lone-surrogate-escape",
        "SPEC.md §3.1: a lone surrogate escape inside a string is valid JSON text, and the "
        "line is judged as usual",
        'A request carrying "\\ud800" in a field of its own is answered as usual.',
        "a JSON reader that refuses lone surrogate escapes (serde_json into String) and "
        "answers bad-request",
        [HELLO, NEW, '{"id":3,"op":"evict","note":"\\ud800"}\n'],
        ["ok", "ok", "ok"],
    )
    deep = "[" * 100_000 + "]" * 100_000
    yield CheckDraft(
        "deep-nesting",
        "SPEC.md §3.1: an adapter may refuse nesting beyond its limits with bad-request, and "
        "must answer",
        "A request nested 100,000 levels deep gets an answer (bad-request, or ok from a "
        "parser without a depth limit), and the session goes on.",
        "a recursive parser that overflows its stack and kills the adapter",
        (HELLO, NEW, '{"id":3,"op":"evict","x":' + deep + "}\n", _line({"id": 4, "op": "evict"})),
        ("ok", "ok", "bad-request", "ok"),
        {2: ({"id": 3, "ok": False, "error": "bad-request"}, {"id": 3, "ok": True})},
    )
    yield _draft(
        "number-beyond-float64",
        "SPEC.md §2.3: a weight is read as the nearest float64 (1e400 is beyond it: "
        "infinite) and refused as invalid-attention",
        "A weight written 1e400 is a number beyond every float: invalid-attention, with the id.",
        "a JSON reader that refuses an out-of-range number (Go's ParseFloat error, "
        "serde_json) and answers bad-request, or clamps it to the float32 maximum",
        [
            HELLO,
            NEW,
            _line({"id": 3, "op": "step", "pos": 0, "attn": None}),
            '{"id":4,"op":"step","pos":1,"attn":[1e400]}\n',
        ],
        ["ok", "ok", "ok", "invalid-attention"],
    )
    lines = (
        "SPEC.md §3.1: lines end at LF; a CR before it is whitespace; a blank line gets no answer"
    )
    yield _draft(
        "blank-lines",
        lines,
        "Empty lines and lines of spaces, tabs and CRs between requests get no answer: three "
        "requests, three answers.",
        "a blank line answered (bad-request) or counted as a request, which shifts every "
        "later answer",
        [HELLO, "\n", "  \t\r\n", NEW, "\r\n", _line({"id": 3, "op": "evict"})],
        ["ok", "ok", "ok"],
    )
    yield _draft(
        "crlf",
        lines,
        "Requests ending in CRLF are answered like any others.",
        "the CR kept in the line and the request refused, or taken as a second line end",
        [HELLO.replace("\n", "\r\n"), NEW.replace("\n", "\r\n"), '{"id":3,"op":"evict"}\r\n'],
        ["ok", "ok", "ok"],
    )
    yield _draft(
        "lone-cr",
        lines,
        "A lone CR does not end a line: two requests joined by one are one line holding two "
        "values, bad-request with id null, and no policy is made.",
        "universal-newline reading (Python text mode, .NET ReadLine) that splits at CR",
        [HELLO, NEW.removesuffix("\n") + '\r{"id":3,"op":"evict"}\n', '{"id":4,"op":"evict"}\n'],
        ["ok", "bad-request", "no-policy"],
    )
    yield _draft(
        "two-values-one-line",
        "SPEC.md §3.1: each line holds one JSON value and nothing else",
        "Two requests on one line are one unparseable line: one answer, bad-request, id null.",
        "a reader of JSON values rather than lines (Go's json.Decoder, serde_json's "
        "StreamDeserializer) that answers both",
        [HELLO, NEW.removesuffix("\n") + ' {"id":3,"op":"evict"}\n', '{"id":4,"op":"evict"}\n'],
        ["ok", "bad-request", "no-policy"],
    )
    yield _draft(
        "last-line-without-lf",
        lines + "; a last line without LF is still answered",
        "A last request without a final LF is answered before the adapter exits.",
        "only LF-terminated lines read, so the last one is dropped at end of input",
        [HELLO, NEW.removesuffix("\n")],
        ["ok", "ok"],
    )
    ops = (
        "SPEC.md §3.4 step 1: an op that is not one of the six of §3.2 (case-sensitive) is "
        "bad-request"
    )
    yield _draft(
        "unknown-op",
        ops,
        'Ops "reset", "Evict", 5 and a missing op are bad-request, with the id.',
        "an unknown op answered ok or ignored, ops matched case-insensitively",
        [
            HELLO,
            NEW,
            '{"id":3,"op":"reset"}\n',
            '{"id":4,"op":"Evict"}\n',
            '{"id":5,"op":5}\n',
            '{"id":6}\n',
        ],
        ["ok", "ok", "bad-request", "bad-request", "bad-request", "bad-request"],
    )
    yield _draft(
        "not-an-object",
        "SPEC.md §3.4 step 1: a line that is not a JSON object is bad-request with id null",
        "Lines holding a list, a string and a number are bad-request with id null.",
        "a request that is not an object crashing the adapter, or answered with some id",
        [HELLO, "[1,2]\n", '"hello"\n', "3\n"],
        ["ok", "bad-request", "bad-request", "bad-request"],
    )
    missing = "SPEC.md §3.4 step 2: a required field that is missing is bad-request"
    for name, line, catches, before in (
        (
            "new-params",
            '{"id":3,"op":"new","seed":0}\n',
            "missing params taken as {} or defaults",
            [],
        ),
        (
            "new-seed",
            '{"id":3,"op":"new","params":' + json.dumps(PARAMS, separators=(",", ":")) + "}\n",
            "a missing seed defaulted to 0",
            [],
        ),
        (
            "step-pos",
            '{"id":3,"op":"step","attn":null}\n',
            "a missing pos taken as the next position",
            [NEW],
        ),
        (
            "step-attn",
            '{"id":3,"op":"step","pos":0}\n',
            "a step without attn taken as a null step",
            [NEW],
        ),
    ):
        yield _draft(
            f"missing-{name}",
            missing,
            f"{line.strip()} lacks a required field: bad-request with the id.",
            catches + " (Go and serde zero values, dict.get)",
            [HELLO, *before, line],
            ["ok"] * (1 + len(before)) + ["bad-request"],
        )
    yield _draft(
        "present-null",
        "SPEC.md §3.4 step 2: a field that is present counts as present whatever its value, "
        "null included",
        "A null params or seed is invalid-params, a null pos invalid-position, not "
        "bad-request; a null attn is a null step.",
        "null treated as missing (Go's nil, Python's dict.get) and answered bad-request",
        [
            HELLO,
            '{"id":2,"op":"new","params":null,"seed":0}\n',
            '{"id":3,"op":"new","params":'
            + json.dumps(PARAMS, separators=(",", ":"))
            + ',"seed":null}\n',
            NEW.replace('"id":2', '"id":4'),
            '{"id":5,"op":"step","pos":null,"attn":null}\n',
            '{"id":6,"op":"step","pos":0,"attn":null}\n',
        ],
        ["ok", "invalid-params", "invalid-params", "ok", "invalid-position", "ok"],
    )
    yield _draft(
        "unknown-fields-ignored",
        "SPEC.md §3.4: fields a request has beyond those named are ignored",
        "Every request carrying an extra field is answered as without it.",
        "closed request types (serde's deny_unknown_fields, a strict schema) refusing fields "
        "that later protocol versions may add",
        [
            '{"id":1,"op":"hello","protocol":1,"client":"x"}\n',
            '{"id":2,"op":"new","params":'
            + json.dumps(PARAMS, separators=(",", ":"))
            + ',"seed":0,"trace":{"a":[1]}}\n',
            '{"id":3,"op":"step","pos":0,"attn":null,"t":0.5}\n',
            '{"id":4,"op":"evict","why":null}\n',
        ],
        ["ok"] * 4,
    )
    repeated = (
        "SPEC.md §3.1: where an object repeats a member name, the last occurrence counts, at any "
        "depth, in params too"
    )
    params_json = json.dumps(PARAMS, separators=(",", ":"))
    yield _draft(
        "repeated-names-request",
        repeated,
        "Requests repeating id, protocol, seed, pos, attn and op are read by their last "
        "occurrences: the answers carry the last id, hello is for protocol 1, the new and the "
        "step are accepted, the evict is a step, and the last evict has a victim.",
        "the first occurrence kept (a hand-written reader that stops at the first match, "
        "Jackson or Gson configured to keep the first, a map filled with putIfAbsent), which "
        "echoes another id and refuses or misreads every one of these requests",
        [
            '{"id":1,"op":"hello","protocol":2,"protocol":1}\n',
            '{"id":9,"op":"new","params":' + params_json + ',"seed":"x","seed":0,"id":2}\n',
            '{"id":3,"op":"step","pos":-1,"pos":0,"attn":[1],"attn":null}\n',
            '{"id":4,"op":"evict","op":"step","pos":1,"attn":[0.5]}\n',
            '{"id":5,"op":"evict"}\n',
        ],
        ["ok"] * 5,
    )
    twice = {"budget": 1, "recentWindow": 0, "obsWindow": 2, "poolKernel": 1}
    repeated_budget = json.dumps(twice, separators=(",", ":"))[:-1] + ',"budget":0}'
    zero_budget = json.dumps({**twice, "budget": 0}, separators=(",", ":"))
    yield _draft(
        "repeated-names-params",
        repeated,
        "params repeating budget (1, then 0) is refused, budget 0 counting, and no policy is "
        "made; a new repeating the whole params object (budget 0, then a valid one) is accepted.",
        "the first occurrence kept inside params, which accepts the first new and refuses the "
        "second",
        [
            HELLO,
            '{"id":2,"op":"new","params":' + repeated_budget + ',"seed":0}\n',
            '{"id":3,"op":"evict"}\n',
            '{"id":4,"op":"new","params":'
            + zero_budget
            + ',"params":'
            + params_json
            + ',"seed":0}\n',
            '{"id":5,"op":"evict"}\n',
        ],
        ["ok", "invalid-params", "no-policy", "ok", "ok"],
    )
    yield _draft(
        "repeated-names-nested",
        repeated,
        "Repeated names inside a field the adapter ignores, two and three levels deep, are "
        "valid JSON: the request is answered as without the field.",
        "a JSON reader that refuses repeated names (serde's derived structs, strict-mode "
        "parsers) and answers bad-request",
        [
            HELLO,
            NEW,
            '{"id":3,"op":"evict","x":{"a":1,"a":[2],"b":{"c":1,"c":2}}}\n',
            '{"id":4,"op":"step","pos":0,"attn":null,"t":{"u":null,"u":{"v":0,"v":1}}}\n',
        ],
        ["ok"] * 4,
    )
    params_rule = "SPEC.md §2.1: construction takes exactly the four names, spelt exactly so"
    for name, raw, catches in (
        (
            "other-case",
            {"BUDGET": 1, "recentwindow": 0, "ObsWindow": 2, "poolkernel": 1},
            "names matched case-insensitively (Go's encoding/json into a struct does exactly this)",
        ),
        (
            "snake-case",
            {"budget": 1, "recent_window": 0, "obs_window": 2, "pool_kernel": 1},
            "snake_case names accepted (serde rename_all, a Python port's keyword arguments)",
        ),
        (
            "extra-name",
            {**PARAMS, "pool_kernel": 3},
            "extra names ignored (Go structs, serde without deny_unknown_fields)",
        ),
    ):
        yield _draft(
            f"params-{name}",
            params_rule,
            f"new with params {json.dumps(raw)} is invalid-params, and no policy is made.",
            catches,
            [
                HELLO,
                _line({"id": 2, "op": "new", "params": raw, "seed": 0}),
                '{"id":3,"op":"evict"}\n',
            ],
            ["ok", "invalid-params", "no-policy"],
        )
    yield _draft(
        "victims-empty-list",
        "SPEC.md §3.2: victims is a list of integers, [] when nothing is evicted",
        "An evict with nothing to evict answers victims [], before and after a step.",
        "an empty victim list written as null (a nil slice in Go, None) or left out",
        [
            HELLO,
            NEW,
            '{"id":3,"op":"evict"}\n',
            _line({"id": 4, "op": "step", "pos": 0, "attn": None}),
            '{"id":5,"op":"evict"}\n',
        ],
        ["ok"] * 5,
    )
    order = (
        "SPEC.md §3.4: a request is judged shape first, then no-policy, then values, position "
        "before attention"
    )
    yield _draft(
        "judgement-order",
        order,
        "Before any new: a bad id with an unknown op is bad-request with id null; a step "
        "missing attn is bad-request; a step with a bad position is no-policy. After new: a "
        "bad position with bad attention is invalid-position.",
        "checks made in another order: the policy looked up before the fields are checked, "
        "values before the policy, attention before position",
        [
            HELLO,
            '{"id":"x","op":"nope"}\n',
            '{"id":2,"op":"step","pos":0}\n',
            '{"id":3,"op":"step","pos":-1,"attn":[1]}\n',
            '{"id":4,"op":"evict"}\n',
            NEW.replace('"id":2', '"id":5'),
            '{"id":6,"op":"step","pos":-1,"attn":[1]}\n',
        ],
        ["ok", "bad-request", "bad-request", "no-policy", "no-policy", "ok", "invalid-position"],
    )
    yield _draft(
        "scores-only-when-announced",
        "SPEC.md §3.3: an op the adapter does not implement (scores without the capability) "
        "is unsupported, judged before no-policy",
        "scores before any new is no-policy from an adapter that announced scores and "
        "unsupported from one that did not; after a new and a step it is answered, or again "
        "unsupported.",
        "scores answered by an adapter that did not announce it, or refused with bad-request "
        "as an unknown op",
        [
            HELLO,
            '{"id":2,"op":"scores"}\n',
            NEW.replace('"id":2', '"id":3'),
            _line({"id": 4, "op": "step", "pos": 0, "attn": None}),
            '{"id":5,"op":"scores"}\n',
        ],
        ["ok", "no-policy", "ok", "ok", "ok"],
    )
    yield _draft(
        "bye-ends-session",
        "SPEC.md §3.2: bye is answered, then the adapter reads nothing more and exits with "
        "status 0",
        "After bye the adapter answers nothing more: the evict sent after it gets no answer.",
        "an adapter that answers bye and goes on reading",
        [HELLO, '{"id":2,"op":"bye"}\n', '{"id":3,"op":"evict"}\n'],
        ["ok", "ok"],
    )


# -- generation: the reference's answers -------------------------------------------------------


class DesignError(Exception):
    """A check whose intended outcomes the reference does not give."""


def reference_answers(data: bytes) -> list[bytes]:
    """What the reference adapter answers to ``data``, line by line."""
    from conformance.adapter.server import serve

    out = io.BytesIO()
    serve(io.BytesIO(data), out)
    return out.getvalue().splitlines()


def realize(draft: CheckDraft) -> ProtocolCheck:
    """Replay ``draft`` on the reference and record its answers as the expectations."""
    data = payload(draft.send)
    answers = [json.loads(line) for line in reference_answers(data)]
    lines = answered_lines(data)
    ended = _bye_index(data, lines)
    lines = lines[: ended + 1] if ended is not None else lines
    if len(answers) != len(lines) or len(answers) != len(draft.outcomes):
        raise DesignError(
            f"{draft.id}: {len(lines)} answered lines, {len(draft.outcomes)} outcomes, "
            f"{len(answers)} answers from the reference"
        )
    expect: list[dict[str, Any]] = []
    for line, answer, outcome in zip(lines, answers, draft.outcomes, strict=True):
        got = "ok" if answer["ok"] else answer["error"]["kind"]
        if got != outcome:
            raise DesignError(f"{draft.id}: line {line} meant {outcome}, the reference says {got}")
        item: dict[str, Any] = {"line": line, "id": answer["id"], "ok": answer["ok"]}
        if not answer["ok"]:
            item["error"] = got
        if "victims" in answer:
            item["victims"] = answer["victims"]
        if "protocol" in answer:
            item["protocol"] = answer["protocol"]
        if _op(line_of(data, line)) == SCORES:
            # The reference announces scores; an adapter that does not must refuse it.
            item["without"] = {"capability": SCORES, "ok": False, "error": "unsupported"}
        index = len(expect)
        if index in draft.latitude:
            item["latitude"] = [dict(other) for other in draft.latitude[index]]
        expect.append(item)
    return ProtocolCheck(
        id=draft.id,
        description=f"{draft.pins} Catches: {draft.catches.removesuffix('.')}.",
        rule=draft.rule,
        send=draft.send,
        expect=tuple(expect),
    )


def _bye_index(data: bytes, lines: Sequence[int]) -> int | None:
    for position, line in enumerate(lines):
        if _op(line_of(data, line)) == "bye":
            return position
    return None


def _op(line: bytes) -> str | None:
    try:
        request = json.loads(line)
    except (ValueError, RecursionError):
        return None
    op = request.get("op") if isinstance(request, dict) else None
    return op if isinstance(op, str) else None


#: Where protocol checks found by ``snapkv-conformance fuzz --protocol`` are kept to be
#: generated into the suite, beside the vectors kept from fuzzing.
FINDINGS = Path(__file__).resolve().parent / "builders" / "findings"


def finding_drafts() -> Iterator[CheckDraft]:
    """The protocol checks kept in :data:`FINDINGS`, as drafts: their bytes are kept, their
    expectations recomputed (an outcome must still be the reference's)."""
    from conformance.suite.vectors import is_protocol_check_file

    for path in sorted(FINDINGS.glob("*.json")) if FINDINGS.is_dir() else ():
        if not is_protocol_check_file(path):
            continue  # a vector, the findings builder's
        check = load_check(path)
        pins, _, catches = check.description.partition(" Catches: ")
        yield CheckDraft(
            check.id.removeprefix(f"{THEME}/"),
            check.rule,
            pins,
            catches,
            check.send,
            tuple("ok" if item["ok"] else item["error"] for item in check.expect),
            {
                i: tuple(item["latitude"])
                for i, item in enumerate(check.expect)
                if "latitude" in item
            },
        )


def build_checks() -> list[ProtocolCheck]:
    return [realize(draft) for draft in (*drafts(), *finding_drafts())]


def dumps_check(check: ProtocolCheck) -> str:
    """The canonical text of a check file: one chunk and one expected answer per line."""
    data = check.to_json()
    head = [
        f"  {json.dumps(key)}: {_compact(data[key])},"
        for key in ("format", "id", "description", "rule")
    ]
    send = ",\n".join(f"    {_compact(chunk)}" for chunk in data["send"])
    expect = ",\n".join(f"    {_compact(item)}" for item in data["expect"])
    return (
        "{\n" + "\n".join(head) + f'\n  "send": [\n{send}\n  ],\n  "expect": [\n{expect}\n  ]\n}}\n'
    )


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def check_files(checks: Sequence[ProtocolCheck]) -> dict[str, str]:
    """``{relative path: text}`` for the suite directory."""
    return {f"{check.id}.json": dumps_check(check) for check in checks}


# -- reading and validating --------------------------------------------------------------------


def load_check(path: str | Path) -> ProtocolCheck:
    """Read one check file; raise :class:`CheckError` naming the file, and for a file the
    schema refuses the JSON pointer and the reason, as ``validate`` would."""
    from conformance.spec.schemas import schema_problems

    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"), parse_constant=_refuse_constant)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise CheckError(f"{path}: cannot read: {error}") from None
    for problem in schema_problems(data, path, CHECK_SCHEMA):
        raise CheckError(f"{path}: {problem.pointer or '/'}: {problem.reason}")
    return ProtocolCheck.from_json(data, path)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def check_problems(data: Any, path: str | Path | None) -> list[str]:
    """Schema problems, then the rules the schema cannot state: the id matches the path, the
    expectations are the reference's answers."""
    from conformance.spec.schemas import schema_problems

    problems = [
        f"{error.pointer or '/'}: {error.reason}"
        for error in schema_problems(data, path, CHECK_SCHEMA)
    ]
    if problems:
        return problems
    check = ProtocolCheck.from_json(data, path)
    if path is not None and not Path(path).as_posix().endswith(f"{check.id}.json"):
        problems.append(f"/id: {check.id!r} does not match the file's path")
    try:
        reference = realize(
            CheckDraft(
                check.id.removeprefix(f"{THEME}/"),
                check.rule,
                check.description,
                "",
                check.send,
                tuple("ok" if item["ok"] else item["error"] for item in check.expect),
                {
                    i: tuple(item["latitude"])
                    for i, item in enumerate(check.expect)
                    if "latitude" in item
                },
            )
        )
    except (DesignError, ValueError) as error:
        problems.append(f"/expect: not what the reference answers: {error}")
        return problems
    if reference.expect != check.expect:
        problems.append("/expect: not what the reference answers")
    return problems


CHECK_SCHEMA = "protocol-check.schema.json"


# -- judging -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckVerdict:
    """The verdict on one check. ``line`` is the index of the request line it is about."""

    verdict: str
    message: str = ""
    line: int | None = None
    op: str | None = None
    expected: Any = None
    actual: Any = None

    @property
    def passed(self) -> bool:
        return self.verdict == PASS


def judge(
    check: ProtocolCheck,
    answers: Sequence[bytes],
    *,
    exit_status: int | None = 0,
    timed_out: bool = False,
) -> CheckVerdict:
    """Judge the adapter's answer lines to ``check`` (SPEC §3), the first fault deciding.

    ``exit_status`` is the adapter's status after its input was closed (None: still running
    when the answers stopped). Capabilities come from the first answer, a hello's.
    """
    data = check.payload
    announced = _capabilities(answers[0]) if answers else ()
    for index, item in enumerate(check.expect):
        line = item["line"]
        request = line_of(data, line)
        op = _op(request)

        def verdict(
            kind: str,
            message: str,
            expected: Any = None,
            actual: Any = None,
            request: bytes = request,
            line: int = line,
            op: str | None = op,
        ) -> CheckVerdict:
            return CheckVerdict(
                kind,
                f"{check.rule}: {_show(request)}: {message}",
                line,
                op or "line",
                expected,
                actual,
            )

        if index >= len(answers):
            if timed_out:
                return verdict(TIMEOUT, "no answer before the timeout")
            if exit_status not in (0, None):
                return verdict(
                    CRASH, f"the adapter exited with status {exit_status} before answering"
                )
            return verdict(PROTOCOL_ERROR, "no answer (the adapter stopped answering)")
        fault = _answer_fault(item, answers[index], announced)
        if fault is not None:
            kind, message, expected, actual = fault
            skipped = set(range(line)) - {other["line"] for other in check.expect}
            if kind == PROTOCOL_ERROR and skipped and "id" in message:
                message += " (the answers are out of step: was a blank line answered?)"
            return verdict(kind, message, expected, actual)
    if len(answers) > len(check.expect):
        extra = answers[len(check.expect)]
        return CheckVerdict(
            PROTOCOL_ERROR,
            f"{check.rule}: {len(answers)} answers to {len(check.expect)} lines that call for "
            f"one (a blank line, a line after bye, or a second value on a line answered): the "
            f"extra answer is {_show(extra)}",
            None,
            None,
            len(check.expect),
            len(answers),
        )
    if timed_out:
        return CheckVerdict(TIMEOUT, "the adapter did not exit at the end of its input")
    if exit_status not in (0, None):
        return CheckVerdict(
            CRASH, f"SPEC.md §3.2: end of input ends the session with status 0, not {exit_status}"
        )
    return CheckVerdict(PASS)


def _capabilities(first: bytes) -> tuple[str, ...]:
    try:
        hello = json.loads(first)
    except ValueError:
        return ()
    capabilities = hello.get("capabilities") if isinstance(hello, dict) else None
    if not isinstance(capabilities, list):
        return ()
    return tuple(c for c in capabilities if isinstance(c, str))


def _answer_fault(
    item: Mapping[str, Any], raw: bytes, announced: Sequence[str]
) -> tuple[str, str, Any, Any] | None:
    try:
        answer = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return PROTOCOL_ERROR, f"the answer is not a JSON line: {_show(raw)}", None, None
    if not isinstance(answer, dict):
        return PROTOCOL_ERROR, f"the answer is not a JSON object: {_show(raw)}", None, None
    wanted = dict(item)
    without = wanted.pop("without", None)
    if without is not None and without["capability"] not in announced:
        wanted = {
            "line": item["line"],
            "id": item["id"],
            **{k: v for k, v in without.items() if k != "capability"},
        }
    fault = _outcome_fault(wanted, answer)
    for other in item.get("latitude", ()):
        if fault is not None and _outcome_fault({"line": item["line"], **other}, answer) is None:
            return None
    return fault


def _outcome_fault(
    item: Mapping[str, Any], answer: dict[str, Any]
) -> tuple[str, str, Any, Any] | None:
    if "id" not in answer or not _same_integer(answer["id"], item["id"]):
        got = _json(answer["id"]) if "id" in answer else "no id"
        want = _json(item["id"])
        why = (
            "an integer id is echoed as the same integer"
            if item["id"] is not None
            else 'a request without an integer id gets "id": null'
        )
        return (
            PROTOCOL_ERROR,
            f"answered with id {got}, expected {want} ({why})",
            {"id": item["id"]},
            {"id": answer.get("id")},
        )
    ok = answer.get("ok")
    if not isinstance(ok, bool):
        return PROTOCOL_ERROR, f"the answer's ok is {_json(ok)}, not true or false", None, None
    expected = {"error": item["error"]} if not item["ok"] else "ok"
    if item["ok"] and not ok:
        kind = _kind(answer)
        return (
            UNEXPECTED_REFUSAL,
            f"refused with {kind}, expected it to succeed",
            expected,
            {"error": kind},
        )
    if not item["ok"] and ok:
        return (
            UNEXPECTED_SUCCESS,
            f"answered ok, expected a refusal with {item['error']}",
            expected,
            "ok",
        )
    if not item["ok"]:
        kind = _kind(answer)
        if kind != item["error"]:
            return (
                WRONG_ERROR_KIND,
                f"refused with {kind}, expected {item['error']}",
                expected,
                {"error": kind},
            )
        return None
    if "victims" in item:
        victims = answer.get("victims")
        if not isinstance(victims, list):
            return (
                PROTOCOL_ERROR,
                f"victims is {_json(victims) if 'victims' in answer else 'missing'}, not a list",
                item["victims"],
                victims,
            )
        if victims != item["victims"] or not all(
            _same_integer(v, w) for v, w in zip(victims, item["victims"], strict=False)
        ):
            return (
                WRONG_VICTIMS,
                f"evicted {_json(victims)}, expected {_json(item['victims'])}",
                item["victims"],
                victims,
            )
    if "protocol" in item and not _same_integer(answer.get("protocol"), item["protocol"]):
        return (
            PROTOCOL_ERROR,
            f"hello answered protocol {_json(answer.get('protocol'))}, not 1",
            None,
            None,
        )
    return None


def _kind(answer: dict[str, Any]) -> str:
    error = answer.get("error")
    kind = error.get("kind") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) else f"no error kind ({_json(error)})"


def _same_integer(got: Any, want: Any) -> bool:
    if want is None:
        return got is None
    return type(got) is int and got == want


def _json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True, allow_nan=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _show(line: bytes) -> str:
    """A request or answer line as a porter can read it: escaped, capped."""
    text = repr(bytes(line[:60]))[1:]
    return text + ("..." if len(line) > 60 else "")


# -- running against an adapter ----------------------------------------------------------------


def run_session(
    argv: Sequence[str], data: bytes, timeout: float, answers_due: int | None = None
) -> Transcript:
    """Start ``argv``, write ``data``, close its input and read its answers until it exits:
    one raw session of the one transport (:func:`conformance.transport.raw.talk`), at most
    :data:`MAX_OUTPUT` bytes of answers kept. Raises
    :class:`~conformance.transport.process.StartError` for a command that cannot start."""
    return talk(argv, data, timeout=timeout, answers_due=answers_due, max_output=MAX_OUTPUT)


def run_check(
    check: ProtocolCheck, argv: Sequence[str], timeout: float
) -> tuple[CheckVerdict, Transcript]:
    """Run ``check`` in a fresh session of ``argv`` and judge it."""
    session = run_session(argv, check.payload, timeout, answers_due=len(check.expect))
    verdict = judge(
        check, session.answers, exit_status=session.exit_status, timed_out=session.timed_out
    )
    return verdict, session


def load_checks(paths: Sequence[str | Path]) -> list[ProtocolCheck]:
    """Every protocol check named or found under ``paths`` (vectors are skipped), by id."""
    from conformance.suite.stream import plan_suite

    return [load_check(entry.path) for entry in plan_suite(paths).checks]


#: Sessions run at once: each is a short-lived process that mostly waits to start.
PARALLEL_SESSIONS = 4


def run_checks(
    checks: Sequence[ProtocolCheck],
    argv: Sequence[str],
    *,
    timeout: float,
    jobs: int = 1,
    known_failures: frozenset[str] | set[str] = frozenset(),
    progress: Callable[[Any, int, int], None] | None = None,
) -> list[Any]:
    """Run every check in its own session and return one
    :class:`~conformance.judge.checker.VectorResult` per check, in the order given.

    ``progress(result, done, total)`` is called as each check is judged (in the order they
    finish), from one thread at a time, as :func:`conformance.runner.run.run_suite` calls it."""
    from concurrent.futures import ThreadPoolExecutor

    from conformance.judge.checker import VectorResult

    lock = threading.Lock()
    done = 0

    def one(check: ProtocolCheck) -> VectorResult:
        result = judged(check)
        if progress is not None:
            nonlocal done
            with lock:
                done += 1
                progress(result, done, len(checks))
        return result

    def judged(check: ProtocolCheck) -> VectorResult:
        verdict, session = run_check(check, argv, timeout)
        failed = not verdict.passed
        return VectorResult(
            vector_id=check.id,
            verdict=verdict.verdict,
            call_index=verdict.line,
            op=verdict.op,
            message=verdict.message,
            expected=verdict.expected,
            actual=verdict.actual,
            stderr_tail=session.stderr_tail if failed else "",
            catches=check.description.partition("Catches: ")[2] if failed else "",
            exit_status=session.exit_status,
            duration=session.duration,
            known_failure=check.id in known_failures,
        )

    with ThreadPoolExecutor(max(PARALLEL_SESSIONS, jobs)) as pool:
        return list(pool.map(one, checks))
