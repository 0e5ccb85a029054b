"""Protocol checks of a request's members (SPEC.md §2.1, §3.1, §3.4): the op, required fields
and their presence, fields beyond a request's own, repeated names, and params' names."""

from __future__ import annotations

import json
from collections.abc import Iterator

from conformance.suite.validation import CheckDraft
from conformance.tools.generate.check_families._common import (
    HELLO,
    NEW,
    PARAMS,
    compact,
    draft,
    line,
)

PARAMS_JSON = compact(PARAMS)


def drafts() -> Iterator[CheckDraft]:
    yield draft(
        "unknown-op",
        "SPEC.md §3.4 step 1: an op that is not one of the six of §3.2 (case-sensitive) is "
        "bad-request",
        'Ops "reset", "Evict", "evict " (a trailing space), 5 and a missing op are '
        "bad-request, with the id.",
        "an unknown op answered ok or ignored, ops matched case-insensitively or trimmed",
        [
            HELLO,
            NEW,
            '{"id":3,"op":"reset"}\n',
            '{"id":4,"op":"Evict"}\n',
            '{"id":5,"op":5}\n',
            '{"id":6}\n',
            '{"id":7,"op":"evict "}\n',
        ],
        ["ok", "ok"] + ["bad-request"] * 5,
        spec=("S3.4-ops",),
    )
    missing = "SPEC.md §3.4 step 2: a required field that is missing is bad-request"
    for name, request, catches, before in (
        (
            "new-params",
            '{"id":3,"op":"new","seed":0}\n',
            "missing params taken as {} or defaults",
            [],
        ),
        (
            "new-seed",
            '{"id":3,"op":"new","params":' + PARAMS_JSON + "}\n",
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
        yield draft(
            f"missing-{name}",
            missing,
            f"{request.strip()} lacks a required field: bad-request with the id.",
            catches + " (Go and serde zero values, dict.get)",
            [HELLO, *before, request],
            ["ok"] * (1 + len(before)) + ["bad-request"],
            spec=("S3.4-required",),
        )
    yield draft(
        "present-null",
        "SPEC.md §3.4 step 2: a field that is present counts as present whatever its value, "
        "null included",
        "A null params or seed is invalid-params, a null pos invalid-position, not "
        "bad-request; a null attn is a null step.",
        "null treated as missing (Go's nil, Python's dict.get) and answered bad-request",
        [
            HELLO,
            '{"id":2,"op":"new","params":null,"seed":0}\n',
            '{"id":3,"op":"new","params":' + PARAMS_JSON + ',"seed":null}\n',
            NEW.replace('"id":2', '"id":4'),
            '{"id":5,"op":"step","pos":null,"attn":null}\n',
            '{"id":6,"op":"step","pos":0,"attn":null}\n',
        ],
        ["ok", "invalid-params", "invalid-params", "ok", "invalid-position", "ok"],
        spec=("S3.4-required", "S2.1-object", "S2.1-seed"),
    )
    yield draft(
        "unknown-fields-ignored",
        "SPEC.md §3.4: fields a request has beyond its own are ignored, whatever their name "
        "or value",
        "Every request carrying an extra field is answered as without it: fields of its own "
        "kind, another op's fields holding values that op would refuse, and names that differ "
        'from an own field in case only. So {"ID":7,"op":"evict"} has no id (bad-request, id '
        'null) and {"id":8,"Op":"evict"} no op (bad-request), while a "Pos" beside "pos" or a '
        '"Seed" beside "seed" changes nothing.',
        "closed request types (serde's deny_unknown_fields, a strict schema) refusing fields "
        "that later protocol versions may add; every present field validated whatever the op "
        "(a pos on an evict judged as a position); member names matched case-insensitively "
        "(Go's encoding/json into a struct)",
        [
            '{"id":1,"op":"hello","protocol":1,"client":"x","params":null,"pos":-1}\n',
            '{"id":2,"op":"new","params":'
            + PARAMS_JSON
            + ',"seed":0,"trace":{"a":[1]},"Seed":"x","attn":"?"}\n',
            '{"id":3,"op":"step","pos":0,"attn":null,"t":0.5,"Pos":-1,"seed":[],"params":7}\n',
            '{"id":4,"op":"evict","why":null}\n',
            '{"id":5,"op":"evict","pos":"x","attn":-1,"params":null,"seed":"y","protocol":2}\n',
            '{"id":6,"op":"hello","protocol":1,"Protocol":2,"id2":"z"}\n',
            '{"ID":7,"op":"evict"}\n',
            '{"id":8,"Op":"evict"}\n',
            '{"id":9,"op":"step","Pos":0,"pos":1,"ATTN":[5],"attn":[0.5]}\n',
            '{"id":10,"op":"evict"}\n',
        ],
        ["ok"] * 6 + ["bad-request", "bad-request", "ok", "ok"],
        spec=("S3.4-unknown-fields",),
    )
    repeated = (
        "SPEC.md §3.1: where an object repeats a member name, the last occurrence counts, at any "
        "depth, in params too"
    )
    yield draft(
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
            '{"id":9,"op":"new","params":' + PARAMS_JSON + ',"seed":"x","seed":0,"id":2}\n',
            '{"id":3,"op":"step","pos":-1,"pos":0,"attn":[1],"attn":null}\n',
            '{"id":4,"op":"evict","op":"step","pos":1,"attn":[0.5]}\n',
            '{"id":5,"op":"evict"}\n',
        ],
        ["ok"] * 5,
        spec=("S3.1-repeated",),
    )
    twice = {"budget": 1, "recentWindow": 0, "obsWindow": 2, "poolKernel": 1}
    repeated_budget = compact(twice)[:-1] + ',"budget":0}'
    zero_budget = compact({**twice, "budget": 0})
    yield draft(
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
            + PARAMS_JSON
            + ',"seed":0}\n',
            '{"id":5,"op":"evict"}\n',
        ],
        ["ok", "invalid-params", "no-policy", "ok", "ok"],
        spec=("S3.1-repeated",),
    )
    yield draft(
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
        spec=("S3.1-repeated",),
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
        yield draft(
            f"params-{name}",
            params_rule,
            f"new with params {json.dumps(raw)} is invalid-params, and no policy is made.",
            catches,
            [
                HELLO,
                line({"id": 2, "op": "new", "params": raw, "seed": 0}),
                '{"id":3,"op":"evict"}\n',
            ],
            ["ok", "invalid-params", "no-policy"],
            spec=("S2.1-names", "S3.2-new-refused"),
        )
    yield draft(
        "number-beyond-float64",
        "SPEC.md §2.3: a weight is read as the nearest float64 (1e400 is beyond it: "
        "infinite) and refused as invalid-attention",
        "A weight written 1e400 is a number beyond every float: invalid-attention, with the "
        "id; so are 1e4294967297 and 0.1e2147483648, whose exponents are past 2^31. "
        "1e-4294967295 is below every float: it reads as 0, is accepted, and the evict after "
        "it takes position 0 (its score ties with position 1's).",
        "a JSON reader that refuses an out-of-range number (Go's ParseFloat error, "
        "serde_json) and answers bad-request, or clamps it to the float32 maximum; a "
        "hand-written reader that accumulates the exponent in a 32-bit integer, which wraps "
        "(1e4294967297 read as 10, 1e-4294967295 as 10)",
        [
            HELLO,
            NEW,
            line({"id": 3, "op": "step", "pos": 0, "attn": None}),
            '{"id":4,"op":"step","pos":1,"attn":[1e400]}\n',
            '{"id":5,"op":"step","pos":1,"attn":[1e4294967297]}\n',
            '{"id":6,"op":"step","pos":1,"attn":[0.1e2147483648]}\n',
            '{"id":7,"op":"step","pos":1,"attn":[1e-4294967295]}\n',
            line({"id": 8, "op": "evict"}),
        ],
        ["ok", "ok", "ok", *["invalid-attention"] * 3, "ok", "ok"],
        spec=("S2.3-weight-range", "S2.3-rounding"),
    )
