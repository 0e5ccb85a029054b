"""The protocol module: the strict codec's limits, and the typed layer held against the schemas."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapter.server import Session, capabilities_of
from conformance.policy.reference import SnapKV
from conformance.spec import protocol
from conformance.spec.protocol import (
    MAX_DEPTH,
    BadRequest,
    DecodeError,
    answer_problem,
    decode,
    parse_hello_answer,
    parse_request,
    request_to_json,
    validate_message,
)

# -- the codec ------------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 900, 5_000, 200_000])
@pytest.mark.parametrize("kind", ["[]", "{}"])
def test_deep_nesting_is_a_decode_error_never_a_recursion_error(depth: int, kind: str) -> None:
    opener, closer = kind
    inner = opener + closer if opener == "[" else "{}"
    if opener == "[":
        text = "[" * depth + "]" * depth
    else:
        text = '{"a":' * (depth - 1) + inner + "}" * (depth - 1)
    for data in (text, text.encode()):
        with pytest.raises(DecodeError, match=f"nested more than {MAX_DEPTH} levels deep"):
            decode(data)


def test_nesting_up_to_the_limit_decodes() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    value = decode(text)
    for _ in range(MAX_DEPTH - 1):
        (value,) = value
    assert value == []


def test_many_brackets_side_by_side_are_not_deep() -> None:
    text = "[" + ",".join(["[1]"] * 10_000) + "]"
    assert len(decode(text)) == 10_000


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{"a":NaN}', "NaN is not valid JSON"),
        (b'{"a":-Infinity}', "-Infinity is not valid JSON"),
        (b"\xff{}", "not UTF-8"),
        (b"\xef\xbb\xbf{}", "Expecting value"),  # a byte-order mark
        (b"[" + b"9" * 5000 + b"]", "digits"),  # beyond Python's integer-string limit
        (b'{"a":1} {"b":2}', "Extra data"),
    ],
)
def test_strict_codec_refusals(data: bytes, reason: str) -> None:
    with pytest.raises(DecodeError, match=reason):
        decode(data)


def test_repeated_names_last_wins_on_the_wire_and_are_refused_in_files() -> None:
    assert decode('{"a":1,"a":2}') == {"a": 2}
    with pytest.raises(DecodeError, match="duplicate key 'a'"):
        protocol.decode_strict_file('{"b":{"a":1,"a":2}}')


def test_lone_surrogate_escape_decodes_and_encodes_as_ascii() -> None:
    value = decode(b'{"x":"\\ud800"}')
    assert value == {"x": "\ud800"}
    assert protocol.encode(value) == b'{"x":"\\ud800"}\n'
    assert protocol.encode_body({"op": "new", "params": "\ud800"}) == (
        b'"op":"new","params":"\\ud800"}\n'
    )


# -- typed requests against the request schema ----------------------------------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 2**31 + 5),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
good_params = st.fixed_dictionaries(
    {
        "budget": st.integers(1, 2**31 - 1),
        "recentWindow": st.integers(0, 2**31 - 1),
        "obsWindow": st.integers(1, 2**31 - 1),
        "poolKernel": st.integers(0, 2**30 - 1).map(lambda k: 2 * k + 1),
    }
)
field_values = {
    "protocol": st.one_of(st.just(1), json_values),
    "params": st.one_of(good_params, json_values),
    "seed": st.one_of(st.integers(0, 2**31 - 1), json_values),
    "pos": st.one_of(st.integers(0, 2**31 - 1), json_values),
    "attn": st.one_of(
        st.none(), st.lists(st.sampled_from([0.0, 0.25, 1.5, 3.0]), max_size=4), json_values
    ),
}


good_values = {
    "protocol": st.just(1),
    "params": good_params,
    "seed": st.integers(0, 2**31 - 1),
    "pos": st.integers(0, 2**31 - 1),
    "attn": st.one_of(st.none(), st.lists(st.sampled_from([0.0, 0.25, 1.5, 3.0]), max_size=4)),
}


@st.composite
def request_messages(draw: st.DrawFn) -> Any:
    """Messages near the request shapes: an op's own fields, then some taken away, added or
    given a wrong value; or anything at all."""
    if draw(st.integers(0, 20)) == 0:
        return draw(json_values)
    op = draw(st.sampled_from(protocol.OPS))
    message: dict[str, Any] = {"id": draw(st.integers(-(2**70), 2**70)), "op": op}
    for name in protocol.REQUEST_TYPES[op].required:
        message[name] = draw(good_values[name])
    for _ in range(draw(st.integers(0, 2))):
        name = draw(st.sampled_from(["id", "op", *field_values]))
        change = draw(st.sampled_from(["drop", "wrong", "add"]))
        if change == "drop":
            message.pop(name, None)
        elif name in ("id", "op"):
            message[name] = draw(json_values)
        else:
            message[name] = draw(field_values[name] if change == "wrong" else good_values[name])
    if draw(st.integers(0, 6)) == 0:
        message[draw(st.text(min_size=1, max_size=3))] = draw(json_values)
    return message


@settings(max_examples=600, deadline=None)
@given(request_messages())
def test_typed_requests_agree_with_the_request_schema(message: Any) -> None:
    problems = validate_message("request", message)
    try:
        request = parse_request(message)
    except BadRequest:
        assert problems, f"the typed layer refuses a schema-valid request: {message!r}"
        return
    if not problems:
        # a schema-valid request is exactly its typed form
        assert request_to_json(request) == message
    # and what the typed layer builds from its own fields is a request of that op
    rebuilt = request_to_json(request)
    assert rebuilt["op"] == message["op"] and rebuilt["id"] == message["id"]


@given(st.sampled_from(protocol.OPS), st.integers(1, 2**40), good_params)
def test_every_typed_request_with_accepted_values_validates(
    op: str, request_id: int, params: Any
) -> None:
    values = {"protocol": 1, "params": params, "seed": 0, "pos": 3, "attn": [0.5, 0.25]}
    kind = protocol.REQUEST_TYPES[op]
    request = kind(request_id, *(values[name] for name in kind.required))
    assert validate_message("request", request_to_json(request)) == []


# -- typed answers against the response schema -----------------------------------------------------


@st.composite
def answer_messages(draw: st.DrawFn) -> tuple[str, Any]:
    op = draw(st.sampled_from(protocol.OPS))
    answer: dict[str, Any] = {"id": draw(st.one_of(st.integers(0, 9), st.none()))}
    ok = draw(st.one_of(st.booleans(), json_values))
    answer["ok"] = ok
    if ok is False or draw(st.integers(0, 5)) == 0:
        answer["error"] = draw(
            st.one_of(
                st.fixed_dictionaries(
                    {
                        "kind": st.one_of(st.sampled_from(protocol.ERROR_KINDS), json_values),
                        "message": st.one_of(st.text(max_size=5), json_values),
                    }
                ),
                json_values,
            )
        )
    ints = st.lists(st.integers(0, 2**31 - 1), max_size=3, unique=True)
    floats = st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=3)
    for name, values in (
        ("victims", ints),
        ("positions", ints),
        ("sums", floats),
        ("pooled", floats),
    ):
        if draw(st.integers(0, 2)):
            answer[name] = draw(st.one_of(values, json_values))
    return op, answer


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(answer_messages())
def test_answer_shape_rules_agree_with_the_response_schema(case: tuple[str, Any]) -> None:
    op, answer = case
    if op == "hello":
        return
    schema_ok = not validate_message("response", answer, op)
    problem = answer_problem(answer, op)
    if schema_ok and op == "scores" and problem is not None:
        # The one rule JSON Schema cannot state: the three lists have the same length.
        lengths = {len(answer[name]) for name in ("positions", "sums", "pooled")}
        assert len(lengths) > 1 and "positions but" in problem, problem
        return
    if schema_ok:
        assert problem is None, f"{problem} for a schema-valid {op} answer {answer!r}"
    if problem is not None:
        assert not schema_ok


def test_reference_answers_validate_against_the_schema() -> None:
    session = Session()
    requests = [
        {"id": 1, "op": "hello", "protocol": 1},
        {
            "id": 2,
            "op": "new",
            "params": {"budget": 2, "recentWindow": 1, "obsWindow": 2, "poolKernel": 3},
            "seed": 0,
        },
        *({"id": 3 + i, "op": "step", "pos": i, "attn": [0.5] * i} for i in range(4)),
        {"id": 10, "op": "scores"},
        {"id": 11, "op": "evict"},
        {"id": 12, "op": "step", "pos": 0, "attn": None},
        {"id": 13, "op": "bogus"},
        {"id": 14, "op": "bye"},
    ]
    for request in requests:
        assert validate_message("request", request) == [] or request["op"] == "bogus"
        answer = decode(protocol.encode(session.handle(request)))
        assert validate_message("response", answer, request["op"]) == [], answer
        if request["op"] == "hello":
            assert parse_hello_answer(answer).capabilities == ("scores",)
        else:
            assert answer_problem(answer, request["op"]) is None


def test_validate_message_names_pointer_and_reason() -> None:
    assert validate_message("response", {"id": 1, "ok": True, "victim": [1]}, "evict") == [
        "/: 'victims' is a required property",
        "/: Additional properties are not allowed ('victim' was unexpected)",
    ] or validate_message("response", {"id": 1, "ok": True, "victim": [1]}, "evict") == [
        "/: Additional properties are not allowed ('victim' was unexpected)",
        "/: 'victims' is a required property",
    ]
    assert validate_message("request", {"id": 1, "op": "step", "pos": 1.0, "attn": None}) == [
        "/pos: 1.0 is not of type 'integer'"
    ]


# -- the reference server's contract ---------------------------------------------------------


class NoScores:
    """A port without scores()."""

    def __init__(self, params: Any, seed: int) -> None:
        self.kept: list[int] = []

    def step(self, pos: Any, attn: Any) -> None:
        self.kept.append(pos)

    def evict(self) -> list[int]:
        raise IndexError("index 7 is out of bounds")


def test_a_port_without_scores_does_not_announce_it_and_scores_is_unsupported() -> None:
    assert capabilities_of(NoScores) == ()
    assert capabilities_of(SnapKV) == ("scores",)
    session = Session(NoScores)  # type: ignore[arg-type]
    hello = session.handle_line(b'{"id":1,"op":"hello","protocol":1}')
    assert hello["capabilities"] == []
    session.handle_line(b'{"id":2,"op":"new","params":{},"seed":0}')
    answer = session.handle_line(b'{"id":3,"op":"scores"}')
    assert answer["error"]["kind"] == "unsupported" and answer["id"] == 3


def test_handle_never_raises_on_a_port_bug() -> None:
    session = Session(NoScores, capabilities=["scores"])  # type: ignore[arg-type]
    session.handle({"id": 1, "op": "new", "params": {}, "seed": 0})
    for request in ({"id": 2, "op": "evict"}, {"id": 3, "op": "scores"}):
        answer = session.handle(request)
        assert answer["ok"] is False and answer["id"] == request["id"]
        assert answer["error"]["kind"] == "unsupported"
        assert "a bug in the port" in answer["error"]["message"]
    assert (
        "IndexError: index 7 is out of bounds"
        in session.handle({"id": 4, "op": "evict"})["error"]["message"]
    )
    with pytest.raises(IndexError):  # answer() lets it through, for callers that call it a crash
        session.answer({"id": 5, "op": "evict"})
    json.dumps(session.handle({"id": 6, "op": "evict"}))


# -- the codec and the protocol's shape rules (spec/protocol.py, SPEC.md §1, §3) ------------------


def test_spec_1_a_vector_file_can_keep_its_integers_as_written():
    assert protocol.decode_strict_file('{"a": 12}', parse_int=str) == {"a": "12"}


def test_nesting_depth_of_a_scalar_is_zero_and_of_containers_their_depth():
    assert [protocol.nesting_depth(v) for v in (5, "ab", None)] == [0, 0, 0]
    assert protocol.nesting_depth([[], {"a": [1]}]) == 3


def test_spec_2_3_a_weight_written_as_text_reaches_a_policy_as_a_reader_makes_it():
    """SPEC.md §2.3: a request reaches a policy as a JSON reader decodes it; a number kept as
    its text (``NumberText``) inside an object, such as ``params``, becomes a plain float or
    int, and other members stay as they are."""
    decoded = protocol.decoded({"params": {"a": protocol.NumberText("1.50"), "b": 2, "c": "x"}})
    params = decoded["params"]
    assert params == {"a": 1.5, "b": 2, "c": "x"}
    assert [type(params[k]) for k in "abc"] == [float, int, str]


def test_spec_3_1_messages_are_written_in_ascii_unless_asked_otherwise():
    assert protocol.dumps({"a": "é"}) == '{"a":"\\u00e9"}'
    assert protocol.dumps({"a": "é"}, ensure_ascii=False) == '{"a":"é"}'


def test_spec_2_3_a_number_kept_as_text_is_written_as_that_text_however_deep():
    """A :class:`NumberText` is encoded as its text (``0.10``, not ``0.1``), also inside a list
    inside a list."""
    text = protocol.NumberText("0.10")
    assert protocol.dumps([[text], [1]]) == "[[0.10],[1]]"
    assert protocol.dumps({"a": [text]}) == '{"a":[0.10]}'


def test_spec_3_5_an_op_not_implemented_is_unsupported_with_a_message():
    """SPEC.md §3.5: an optional op the adapter does not announce is refused ``unsupported``,
    with the request's id and a message (a string: SPEC.md §3.3)."""
    with pytest.raises(protocol.BadRequest) as caught:
        protocol.parse_request({"id": 4, "op": "scores"}, implemented=protocol.CORE_OPS)
    error = caught.value
    assert (error.id, error.kind) == (4, "unsupported")
    assert isinstance(error.message, str) and "scores" in error.message


def test_spec_3_3_an_evict_answer_needs_victims_and_a_scores_answer_its_lists():
    assert protocol.answer_problem({"id": 1, "ok": True}, "evict") == (
        "the evict answer has no victims"
    )
    assert protocol.answer_problem({"id": 1, "ok": True}, "step") is None
    unequal = {"id": 1, "ok": True, "positions": [1, 2], "sums": [1.0], "pooled": [1.0, 2.0]}
    assert protocol.answer_problem(unequal, "scores") == "scores has 2 positions but 1 sums"


@pytest.mark.parametrize(
    ("value", "is_number"),
    [(1.5, True), (3, True), (10**400, False), (True, False), ("1", False), (None, False)],
)
def test_spec_2_6_scores_are_float64_numbers(value, is_number):
    """SPEC.md §2.6: a score is a JSON number with a float64 value: an integer literal counts,
    one beyond float64's range does not, nor does ``true``."""
    assert protocol.is_float64(value) is is_number


def test_validate_message_checks_a_request_against_the_request_schema_whatever_its_op():
    hello = {"id": 1, "op": "hello", "protocol": 1}
    assert protocol.validate_message("request", hello, op="hello") == []
    assert protocol.validate_message("response", {"id": 1, "ok": True}, op="evict") != []


_IMPLEMENTATION = {"name": "n", "language": "l", "version": "1"}


# -- the runner's handshake (parse_hello_answer, SPEC.md §3.2) -----------------------------------


def test_spec_3_2_a_hello_answer_is_read_with_its_id_and_optional_capabilities():
    hello = protocol.parse_hello_answer(
        {"id": 7, "ok": True, "protocol": 1, "implementation": _IMPLEMENTATION}
    )
    assert (hello.id, hello.protocol, hello.capabilities) == (7, 1, ())
    assert dict(hello.implementation) == _IMPLEMENTATION


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ([1], "the answer to hello is not a JSON object: [1]"),
        ({"id": 1, "ok": 1}, "the answer to hello has no boolean ok (is the program an adapter?)"),
        (
            {"id": 1, "ok": False, "error": {"kind": "unsupported", "message": "v2 only"}},
            "the adapter refused hello for protocol 1 (unsupported: v2 only); "
            "it speaks another protocol version",
        ),
        (
            {"id": 1, "ok": False, "error": "v2"},
            "the adapter refused hello for protocol 1 (",  # an error that is not an object
        ),
        ({"id": 1, "ok": True, "protocol": 1}, "the answer to hello has no implementation object"),
        (
            {
                "id": 1,
                "ok": True,
                "protocol": 1,
                "implementation": {**_IMPLEMENTATION, "version": 5},
            },
            "the answer to hello has no string implementation.version: 5",
        ),
        (
            {
                "id": 1,
                "ok": True,
                "protocol": 1,
                "implementation": _IMPLEMENTATION,
                "capabilities": "scores",
            },
            'capabilities in the answer to hello must be a list of strings, got "scores"',
        ),
    ],
)
def test_spec_3_2_a_bad_hello_answer_is_refused_saying_why(answer, message):
    with pytest.raises(ValueError) as caught:
        protocol.parse_hello_answer(answer)
    assert str(caught.value).startswith(message)


def test_spec_1_a_reader_hook_is_used_alone_and_the_strict_rules_still_hold():
    """The codec's hooks (a float or integer kept as text, for validation) change nothing
    else: NaN is still not JSON, and a repeated member name still lets the last one count on
    the wire (SPEC.md §3.1) while a vector file refuses it."""
    assert protocol.decode("[1.50]", parse_float=str) == ["1.50"]
    assert protocol.decode("[12]", parse_int=str) == ["12"]
    assert protocol.decode('{"a":1,"a":2.5}', parse_float=str) == {"a": "2.5"}
    for text in ('{"a":NaN}', '{"a":-Infinity}'):
        with pytest.raises(protocol.DecodeError):
            protocol.decode_strict_file(text)
        with pytest.raises(protocol.DecodeError):
            protocol.decode(text, parse_float=str)
    with pytest.raises(protocol.DecodeError):
        protocol.decode_strict_file('{"a":1,"a":2}')


def test_spec_3_1_an_integer_literal_beyond_pythons_digit_limit_is_beyond_the_kits_limits():

    digits = sys.get_int_max_str_digits() + 1
    with pytest.raises(protocol.DecodeError) as caught:
        protocol.decode("1" * digits)
    assert str(caught.value) == (
        f"an integer literal of more than {digits - 1} digits "
        "(SPEC.md §3.1: beyond the kit's limits)"
    )


def test_spec_2_3_a_message_of_numbers_kept_as_text_is_encoded_as_written():
    text = protocol.NumberText("0.10")
    assert protocol.encode({"a": text}) == b'{"a":0.10}\n'
    assert protocol.encode({"a": [text]}) == b'{"a":[0.10]}\n'


# -- what is kept of an adapter's words: capped, whatever it sends -----------------------------
def hello(implementation: dict[str, str], capabilities: list[str]) -> dict[str, object]:
    return {
        "id": 1,
        "ok": True,
        "protocol": 1,
        "implementation": implementation,
        "capabilities": capabilities,
    }


def test_a_hello_s_names_are_kept_capped() -> None:
    """A port naming itself with 10 MiB keeps a name a report header can hold."""
    huge = "n" * (10 << 20)
    read = parse_hello_answer(hello({"name": huge, "language": huge, "version": huge}, []))
    for value in read.implementation.values():
        assert len(value) < 300 and value.startswith("nnn") and "more characters)" in value


def test_a_million_capabilities_are_kept_capped_and_scores_is_never_lost() -> None:
    capabilities = [f"cap-{index}" for index in range(1_000_000)] + ["scores"]
    read = parse_hello_answer(hello({"name": "p", "language": "c", "version": "1"}, capabilities))
    assert len(read.capabilities) == 34
    assert read.capabilities[:2] == ("cap-0", "cap-1") and "scores" in read.capabilities
    assert read.capabilities[-1] == "... (999,968 more capabilities)"


def test_schema_messages_are_capped() -> None:
    """An answer with 500,000 extra members breaks the schema once; the message does not
    quote all 500,000 names."""
    answer = {"id": 3, "ok": True, **{f"extra{index}": 0 for index in range(500_000)}}
    problems = validate_message("response", answer, "step")
    assert problems and all(len(problem) < 1_200 for problem in problems)
    assert sum(map(len, problems)) < 5_000
