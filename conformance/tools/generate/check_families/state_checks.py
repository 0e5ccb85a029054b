"""Protocol checks of the session's state (SPEC.md §2.5, §3.2-§3.4): which refusal wins, what a
refused or an inert request leaves behind, scores, and the end of the session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conformance.policy.reference import float32_literal
from conformance.suite.validation import CheckDraft
from conformance.tools.generate.check_families._common import HELLO, NEW, compact, draft, line


def _step(request_id: int, pos: Any, attn: Any) -> str:
    return line({"id": request_id, "op": "step", "pos": pos, "attn": attn})


def _evict(request_id: int) -> str:
    return line({"id": request_id, "op": "evict"})


def _scores(request_id: int) -> str:
    return line({"id": request_id, "op": "scores"})


def drafts() -> Iterator[CheckDraft]:
    yield draft(
        "victims-empty-list",
        "SPEC.md §3.2: victims is a list of integers, [] when nothing is evicted",
        "An evict with nothing to evict answers victims [], before and after a step.",
        "an empty victim list written as null (a nil slice in Go, None) or left out",
        [HELLO, NEW, _evict(3), _step(4, 0, None), _evict(5)],
        ["ok"] * 5,
        spec=("S2.4-victims", "S2.4-count"),
    )
    yield from _judgement_order()
    yield from _kept_state()
    yield from _scores_checks()
    yield draft(
        "bye-ends-session",
        "SPEC.md §3.2: bye is answered, then the adapter reads nothing more and exits with "
        "status 0",
        "After bye the adapter answers nothing more: the evict sent after it gets no answer, "
        "and the adapter exits with status 0.",
        "an adapter that answers bye and goes on reading, or exits with another status after it",
        [HELLO, '{"id":2,"op":"bye"}\n', '{"id":3,"op":"evict"}\n'],
        ["ok", "ok"],
        spec=("S3.2-bye", "S3.1-stdout"),
    )


def _judgement_order() -> Iterator[CheckDraft]:
    yield draft(
        "judgement-order",
        "SPEC.md §3.4: a request is judged shape first (the id and op before whether the op "
        "is implemented, every required field's presence before any value), then no-policy, "
        "then values, position before attention",
        "Before any new: a bad id with an unknown op, a bad id on scores or on a hello for "
        "protocol 2, and scores without an id are bad-request with id null; a step missing "
        "attn is bad-request, even with a bad position; a new missing its seed or its params "
        "is bad-request, even with bad params or a bad seed; a step with a bad position or "
        "bad attention is no-policy. After new: a step with a bad position missing attn is "
        "bad-request, a bad position with bad attention is invalid-position, and a new with "
        "bad params and a null seed is invalid-params.",
        "checks made in another order: whether the op is implemented before the id (scores "
        "answered unsupported with id null), values before the presence of every field, the "
        "policy looked up before the fields are checked, a position's type judged before the "
        "policy, attention before position",
        [
            HELLO,
            '{"id":"x","op":"nope"}\n',
            '{"id":2,"op":"step","pos":0}\n',
            '{"id":3,"op":"step","pos":-1,"attn":[1]}\n',
            '{"id":4,"op":"evict"}\n',
            '{"id":"x","op":"scores"}\n',
            '{"op":"scores"}\n',
            '{"id":"y","op":"hello","protocol":2}\n',
            '{"id":10,"op":"step","pos":"x","attn":null}\n',
            '{"id":11,"op":"step","pos":0,"attn":"x"}\n',
            '{"id":12,"op":"step","pos":-1}\n',
            '{"id":13,"op":"new","params":{"budget":0}}\n',
            '{"id":14,"op":"new","seed":"x"}\n',
            NEW.replace('"id":2', '"id":5'),
            '{"id":6,"op":"step","pos":-1,"attn":[1]}\n',
            '{"id":15,"op":"step","pos":"x"}\n',
            '{"id":16,"op":"new","params":{"budget":0},"seed":null}\n',
            '{"id":17,"op":"step","pos":0,"attn":[1]}\n',
        ],
        [
            "ok",
            "bad-request",
            "bad-request",
            "no-policy",
            "no-policy",
            "bad-request",
            "bad-request",
            "bad-request",
            "no-policy",
            "no-policy",
            "bad-request",
            "bad-request",
            "bad-request",
            "ok",
            "invalid-position",
            "bad-request",
            "invalid-params",
            "invalid-attention",
        ],
        spec=(
            "S3.4-step1",
            "S3.4-presence-first",
            "S3.4-policy-first",
            "S3.4-position-first",
            "S3.4-required",
            "S3.1-id-null",
        ),
    )


#: The policy of :func:`_kept_state`: three kept, the newest protected, two ring slots.
KEPT = {"budget": 3, "recentWindow": 1, "obsWindow": 2, "poolKernel": 1}


def _kept_state() -> Iterator[CheckDraft]:
    good = compact(KEPT)
    unwrapped = compact({**KEPT, "seed": 0})[1:-1]
    first: list[tuple[str, str]] = [
        (_evict(1), "no-policy"),
        ('{"id":2,"op":"new","params":' + good + "}\n", "bad-request"),
        (_evict(3), "no-policy"),
        ('{"id":4,"op":"new",' + unwrapped + "}\n", "bad-request"),
        (_evict(5), "no-policy"),
        ('{"id":6,"op":"new","params":' + good + ',"seed":true}\n', "invalid-params"),
        (_evict(7), "no-policy"),
        ('{"id":8,"op":"new","params":{"budget":0},"seed":0}\n', "invalid-params"),
        (_step(9, 0, None), "no-policy"),
        ('{"id":10,"op":"new","params":' + good + ',"seed":0\n', "bad-request"),
        (_evict(11), "no-policy"),
        (line({"id": 12, "op": "new", "params": KEPT, "seed": 0}), "ok"),
        (_step(13, 0, []), "ok"),
        (_step(14, 1, [4.0]), "ok"),
        (_step(15, 2, [0.5, 2.0]), "ok"),
    ]
    refused: list[tuple[str, str]] = [
        ('{"id":16,"op":"new","params":' + good + "}\n", "bad-request"),
        ('{"id":17,"op":"new",' + unwrapped + "}\n", "bad-request"),
        ('{"id":18,"op":"new","params":' + good + ',"seed":"0"}\n', "invalid-params"),
        (
            '{"id":19,"op":"new","params":' + compact({**KEPT, "budget": 0}) + ',"seed":0}\n',
            "invalid-params",
        ),
        ('{"id":20,"op":"hello","protocol":2}\n', "unsupported"),
        ('{"id":21,"op":"hello"}\n', "bad-request"),
        ('{"id":22,"op":"step","pos":3,"attn":[0.25,0.25,1.0]\n', "bad-request"),
        ('{"id":"x","op":"scores"}\n', "bad-request"),
        ('{"id":24,"op":"reset"}\n', "bad-request"),
        (_step(25, 2, [1.0, 1.0, 1.0]), "invalid-position"),
        (_step(26, 3, [1.0, 1.0]), "invalid-attention"),
        ('{"id":27,"op":"step","pos":3}\n', "bad-request"),
    ]
    last: list[tuple[str, str]] = [
        (_step(28, 3, [0.25, 0.25, 1.0]), "ok"),
        (_evict(29), "ok"),
        (_evict(30), "ok"),
    ]
    rows = first + refused + last
    yield draft(
        "refusals-keep-state",
        "SPEC.md §3.3: a refused request changes nothing, whatever its op and kind; a refused "
        "new creates no policy and keeps the earlier one; an adapter answers without a hello",
        "A session without hello. Before any policy, a new missing its seed, one with its "
        "parameters unwrapped at the top level, one with a boolean seed, one with bad params "
        "and a line cut short create no policy: each following step, evict or scores is "
        "no-policy. Then, with positions 0 to 2 kept and the ring cursor on slot 1, twelve "
        "refused requests (news missing a seed, unwrapped or with a string seed or bad "
        "params, a hello for protocol 2 and one without protocol, a line cut short, scores "
        "with a bad id, an unknown op, a step at an old position, one with too few weights "
        "and one missing attn) change nothing: the step at 3 writes slot 1 and the evict takes "
        "position 0.",
        "a port that demands hello first; a refused new that still replaces the policy (or "
        "creates one from defaults, a zero seed, or parameters found at the top level); a "
        "refused hello or an unparseable line that resets the session or the ring cursor; any "
        "refusal that moves the cursor or admits",
        [row for row, _ in rows],
        [outcome for _, outcome in rows],
        spec=(
            "S3.3-unchanged",
            "S3.2-new-refused",
            "S3.2-no-hello",
            "S3.2-hello-state",
            "S3.4-required",
        ),
    )


def _scores_checks() -> Iterator[CheckDraft]:
    yield draft(
        "scores-only-when-announced",
        "SPEC.md §3.3: an op the adapter does not implement (scores without the capability) "
        "is unsupported, judged before no-policy",
        "scores before any new is no-policy from an adapter that announced scores and "
        "unsupported from one that did not; after a new and a step it is answered, or again "
        "unsupported.",
        "scores answered by an adapter that did not announce it, or refused with bad-request "
        "as an unknown op",
        [HELLO, _scores(2), NEW.replace('"id":2', '"id":3'), _step(4, 0, None), _scores(5)],
        ["ok", "no-policy", "ok", "ok", "ok"],
        spec=("S3.3-unannounced", "S3.4-policy-first"),
    )
    scores_params = {"budget": 3, "recentWindow": 2, "obsWindow": 2, "poolKernel": 3}
    weights = ([0.5], [0.25, 0.5], [0.5, 0.125, 0.25], [0.5, 0.25, 0.125, 0.25])
    yield draft(
        "scores-kept-positions",
        "SPEC.md §2.5: scores lists every kept position, ascending, the protected recent "
        "entries included, with one sum and one pooled score each",
        "scores answers three lists of one length, the kept positions ascending: empty while "
        "nothing is kept, then the five kept positions, then after an evict the three left "
        "(1, 3 and 4: the evict took 0 and 2), the two protected recent entries among them, "
        "each with the reference's sum and pooled score. An adapter that does not announce "
        "scores answers each unsupported.",
        "scores lists of unequal length, positions in rank or insertion order, the protected "
        "recent entries left out (only the candidates scored), evicted positions still listed",
        [
            HELLO,
            line({"id": 2, "op": "new", "params": scores_params, "seed": 0}),
            _scores(3),
            _step(4, 0, None),
            *(_step(5 + index, 1 + index, attn) for index, attn in enumerate(weights)),
            _scores(9),
            _evict(10),
            _scores(11),
        ],
        ["ok"] * 11,
        spec=("S2.5-shape", "S2.5-values", "S3.3-unannounced"),
    )
    tenth, fifth, three_tenths = (float32_literal(v) for v in (0.1, 0.2, 0.3))
    swap = {"budget": 3, "recentWindow": 1, "obsWindow": 2, "poolKernel": 1}
    pooled = {"budget": 2, "recentWindow": 0, "obsWindow": 2, "poolKernel": 3}
    yield draft(
        "scores-and-hello-keep-state",
        "SPEC.md §3.2, §2.5: hello and scores change nothing, and scores reports the sums and "
        "pooled scores an evict now would rank by",
        "With positions 0 to 2 kept and the ring cursor on slot 1, an accepted hello, a scores "
        "and a refused hello change nothing: the step at 3 writes slot 1 (not slot 0) and the "
        "evict takes position 0. Then, under poolKernel 3, scores answers each kept "
        "position's float64 sum (0.4000000134110451 for 0.3 + 0.1 as float32 values, which "
        "takes 17 digits) and its pooled score, twice alike, and the evict takes position 2.",
        "a hello or a scores that resets or moves the ring cursor, a refused hello that drops "
        "the policy; scores values that are not the reference's: sums and pooled swapped, "
        "pooled over weights, values printed with fewer digits than round-trip (%g, %.15g) or "
        "as float32",
        [
            HELLO,
            line({"id": 2, "op": "new", "params": swap, "seed": 0}),
            _step(3, 0, []),
            _step(4, 1, [4.0]),
            _step(5, 2, [0.5, 2.0]),
            line({"id": 6, "op": "hello", "protocol": 1}),
            _scores(7),
            '{"id":8,"op":"hello","protocol":"1"}\n',
            _step(9, 3, [0.25, 0.25, 1.0]),
            _evict(10),
            _scores(11),
            line({"id": 12, "op": "new", "params": pooled, "seed": 0}),
            _step(13, 0, []),
            _step(14, 1, [tenth]),
            _step(15, 2, [three_tenths, fifth]),
            _scores(16),
            _scores(17),
            _evict(18),
            _scores(19),
        ],
        ["ok"] * 7 + ["unsupported"] + ["ok"] * 11,
        spec=(
            "S3.2-hello-state",
            "S2.5-unchanged",
            "S2.5-values",
            "S2.5-shape",
            "S2.6-score-text",
        ),
    )
