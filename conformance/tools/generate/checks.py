"""The protocol checks as written: drafts (the bytes to send and each answered line's intended
outcome), realized on the reference by :func:`conformance.suite.validation.realize` into the files
under ``vectors/protocol/`` (``snapkv-conformance generate``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from conformance.spec.text import split_description
from conformance.suite.protocol_checks import THEME, ProtocolCheck, load_check
from conformance.suite.validation import CheckDraft, realize
from conformance.suite.vectors import is_protocol_check_file


def _line(request: Any) -> str:
    return json.dumps(request, separators=(",", ":")) + "\n"


HELLO = _line({"id": 1, "op": "hello", "protocol": 1})


PARAMS = {"budget": 1, "recentWindow": 0, "obsWindow": 2, "poolKernel": 1}


NEW = _line({"id": 2, "op": "new", "params": PARAMS, "seed": 0})


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
    scores_params = {"budget": 3, "recentWindow": 2, "obsWindow": 2, "poolKernel": 3}
    weights = ([0.5], [0.25, 0.5], [0.5, 0.125, 0.25], [0.5, 0.25, 0.125, 0.25])
    yield _draft(
        "scores-kept-positions",
        "SPEC.md §2.5: scores lists every kept position, ascending, the protected recent "
        "entries included, with one sum and one pooled score each",
        "scores answers three lists of one length, the kept positions ascending: empty while "
        "nothing is kept, then the five kept positions, then after an evict the three left "
        "(1, 3 and 4: the evict took 0 and 2), the two protected recent entries among them. An "
        "adapter that does not announce scores answers each unsupported.",
        "scores lists of unequal length, positions in rank or insertion order, the protected "
        "recent entries left out (only the candidates scored), evicted positions still listed",
        [
            HELLO,
            _line({"id": 2, "op": "new", "params": scores_params, "seed": 0}),
            '{"id":3,"op":"scores"}\n',
            _line({"id": 4, "op": "step", "pos": 0, "attn": None}),
            *(
                _line({"id": 5 + index, "op": "step", "pos": 1 + index, "attn": attn})
                for index, attn in enumerate(weights)
            ),
            '{"id":9,"op":"scores"}\n',
            '{"id":10,"op":"evict"}\n',
            '{"id":11,"op":"scores"}\n',
        ],
        ["ok"] * 11,
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


#: Where protocol checks found by ``snapkv-conformance fuzz --protocol`` are kept to be
#: generated into the suite, beside the vectors kept from fuzzing.
FINDINGS = Path(__file__).resolve().parent / "builders" / "findings"


def finding_drafts() -> Iterator[CheckDraft]:
    """The protocol checks kept in :data:`FINDINGS`, as drafts: their bytes are kept, their
    expectations recomputed (an outcome must still be the reference's)."""
    for path in sorted(FINDINGS.glob("*.json")) if FINDINGS.is_dir() else ():
        if not is_protocol_check_file(path):
            continue  # a vector, the findings builder's
        check = load_check(path)
        pins, said = split_description(check.description)
        catches = said or ""
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
