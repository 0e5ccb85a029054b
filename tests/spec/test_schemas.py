"""The JSON Schemas: valid draft 2020-12 with ids, closed where the format is closed, agreeing
with SPEC.md's examples and with what the reference adapter actually says; and the tag
vocabulary's format."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from conformance.adapter.server import Session
from conformance.spec.resources import schema_dir
from conformance.spec.schemas import schema_validator
from conformance.suite.tags import VocabularyError, load_vocabulary, parse_vocabulary
from conformance.suite.validation import (
    REQUEST_SCHEMA,
    RESPONSE_SCHEMA,
    VECTOR_SCHEMA,
    load_schemas,
    schema_problems,
)

MINE = (VECTOR_SCHEMA, REQUEST_SCHEMA, RESPONSE_SCHEMA)
PARAMS = {"budget": 2, "recentWindow": 1, "obsWindow": 2, "poolKernel": 3}


def _errors(document, name):
    return [(p.pointer, p.reason) for p in schema_problems(document, None, name)]


@pytest.mark.parametrize("name", MINE)
def test_schema_is_valid_draft_2020_12_with_an_id(name):
    schema = load_schemas()[name]
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    # URNs, as for the runner's report schema: identifiers, not addresses to fetch.
    assert schema["$id"].startswith("urn:snapkv-conformance:schema:")


def test_schema_ids_are_unique():
    ids = [s["$id"] for s in load_schemas().values() if "$id" in s]
    assert len(ids) == len(set(ids))
    assert (schema_dir() / VECTOR_SCHEMA).is_file()


# -- requests ---------------------------------------------------------------------------------

SPEC_REQUESTS = [
    {"id": 1, "op": "hello", "protocol": 1},
    {"id": 2, "op": "new", "params": PARAMS, "seed": 0},
    {"id": 3, "op": "step", "pos": 12, "attn": [0.25, 0.5]},
    {"id": 3, "op": "step", "pos": 12, "attn": None},
    {"id": 4, "op": "evict"},
    {"id": 5, "op": "scores"},
    {"id": 6, "op": "bye"},
]


@pytest.mark.parametrize("request_", SPEC_REQUESTS, ids=lambda r: r["op"])
def test_spec_requests_validate_and_extra_fields_do_not(request_):
    assert _errors(request_, REQUEST_SCHEMA) == []
    assert _errors({**request_, "extra": 1}, REQUEST_SCHEMA) == [
        ("", "Additional properties are not allowed ('extra' was unexpected)")
    ]


@pytest.mark.parametrize(
    ("request_", "pointer", "words"),
    [
        ({"op": "evict"}, "", "'id' is a required property"),
        ({"id": 1.0, "op": "evict"}, "/id", "is not of type 'integer'"),
        ({"id": 1, "op": "stop"}, "/op", "is not one of"),
        ({"id": 1, "op": "step", "pos": 3}, "", "'attn' is a required property"),
        ({"id": 1, "op": "step", "pos": -1, "attn": None}, "/pos", "less than the minimum"),
        ({"id": 1, "op": "step", "pos": 2**31, "attn": None}, "/pos", "greater than the max"),
        ({"id": 1, "op": "step", "pos": 1, "attn": [-0.5]}, "/attn/0", "less than the minimum"),
        (
            {"id": 1, "op": "step", "pos": 1, "attn": [1e39]},
            "/attn/0",
            "greater than or equal to the maximum of 3.4028235677973366e+38",
        ),
        ({"id": 1, "op": "step", "pos": 1, "attn": ["0.5"]}, "/attn/0", "is not of type 'number'"),
        ({"id": 1, "op": "step", "pos": 1, "attn": 0.5}, "/attn", "is not of type 'null', 'arr"),
        (
            {"id": 1, "op": "new", "params": {**PARAMS, "poolKernel": 4}, "seed": 0},
            "/params/poolKernel",
            "should not be valid under {'multipleOf': 2}",
        ),
        (
            {"id": 1, "op": "new", "params": {**PARAMS, "budget": True}, "seed": 0},
            "/params/budget",
            "is not of type 'integer'",
        ),
    ],
)
def test_request_schema_names_the_field(request_, pointer, words):
    errors = _errors(request_, REQUEST_SCHEMA)
    assert any(p == pointer and words in reason for p, reason in errors), errors


# -- responses --------------------------------------------------------------------------------

SPEC_RESPONSES = [
    {
        "id": 1,
        "ok": True,
        "protocol": 1,
        "implementation": {"name": "x", "language": "c", "version": "1"},
        "capabilities": ["scores"],
    },
    {"id": 2, "ok": True},
    {"id": 4, "ok": True, "victims": [3, 7]},
    {"id": 5, "ok": True, "positions": [1, 2], "sums": [0.5, 0.0], "pooled": [0.5, 0.5]},
    {"id": 3, "ok": False, "error": {"kind": "invalid-position", "message": "pos 3 again"}},
    {"id": None, "ok": False, "error": {"kind": "bad-request", "message": "not JSON"}},
]


@pytest.mark.parametrize("response", SPEC_RESPONSES, ids=lambda r: str(r["id"]))
def test_spec_responses_validate(response):
    assert _errors(response, RESPONSE_SCHEMA) == []


@pytest.mark.parametrize(
    "response",
    [
        {"id": 4, "ok": True, "victim": [3]},
        {"id": 4, "ok": True, "victims": ["3"]},
        {"id": 4, "ok": True, "victims": [3, 3]},
        {"id": None, "ok": True},
        {"id": 3, "ok": False, "error": {"kind": "invalid-weight", "message": "x"}},
        {"id": 3, "ok": False, "error": {"kind": "invalid-position"}},
        {"id": 3, "ok": "false", "error": {"kind": "invalid-position", "message": ""}},
        {"id": 1, "ok": True, "protocol": 2, "implementation": {}, "capabilities": []},
    ],
)
def test_response_schema_refuses_wrong_answers(response):
    assert _errors(response, RESPONSE_SCHEMA) != []


@pytest.mark.slow
def test_reference_adapter_answers_match_the_response_schema():
    """Every answer the reference gives while replaying the hand-built vectors of the committed
    suite (and the session ops around them) is a valid protocol v1 response, and every call
    that must succeed is a valid request. (The long workload and random vectors add no new
    shapes, only time.)"""
    from conformance.spec.resources import suite_dir
    from conformance.suite.vectors import load_suite

    session = Session()
    requests = [{"id": 0, "op": "hello", "protocol": 1}]
    for vector in load_suite([suite_dir()]):
        if {"workload", "random"} & set(vector.tags):
            continue
        for call in vector.calls:
            request = {**call.request, "id": len(requests)}
            if call.expect is None:
                assert _errors(request, REQUEST_SCHEMA) == [], (vector.id, request)
            requests.append(request)
        requests.append({"id": len(requests), "op": "scores"})
    requests += [{"id": len(requests), "op": "hello", "protocol": 2}, {"id": -1, "op": "bye"}]
    for request in requests:
        response = json.loads(json.dumps(session.handle(request)))
        assert _errors(response, RESPONSE_SCHEMA) == [], (request, response)


# -- vectors ----------------------------------------------------------------------------------

VECTOR = {
    "format": "snapkv-vector/1",
    "id": "ties/example",
    "description": "An example vector. Catches: nothing.",
    "tags": ["ties"],
    "params": PARAMS,
    "seed": 0,
    "calls": [
        {"op": "new", "params": PARAMS, "seed": 0},
        {"op": "step", "pos": 0, "attn": []},
        {"op": "step", "pos": "0", "attn": None, "expect": {"error": "invalid-position"}},
        {"op": "evict", "expect": {"victims": []}},
    ],
}


def _vector(**changes):
    vector = copy.deepcopy(VECTOR)
    vector.update(changes)
    return vector


def test_example_vector_validates():
    assert _errors(VECTOR, VECTOR_SCHEMA) == []


@pytest.mark.parametrize(
    ("mutate", "pointer", "words"),
    [
        (
            lambda v: v["calls"][1].update(expect={"error": "no-policy"}),
            "/calls/1/expect/error",
            "",
        ),
        (lambda v: v["calls"][3].update(id=4), "/calls/3", "'id' was unexpected"),
        (lambda v: v["calls"].append({"op": "hello", "protocol": 1}), "/calls/4/op", "not one of"),
        (lambda v: v["calls"].append({"op": "bye"}), "/calls/4/op", "not one of"),
        (lambda v: v["calls"][3]["expect"].update(error="x"), "/calls/3/expect", "unexpected"),
        (lambda v: v.update(tags=[]), "/tags", "should be non-empty"),
        (lambda v: v.update(tags=["Ties"]), "/tags/0", "does not match"),
        (lambda v: v.update(id="ties"), "/id", "does not match"),
        (lambda v: v.update(description="short"), "/description", "is too short"),
        (lambda v: v.update(seed=-1), "/seed", "less than the minimum"),
        (lambda v: v["calls"][0].update(expect={"error": "invalid-attention"}), "", ""),
    ],
)
def test_vector_schema_names_the_field(mutate, pointer, words):
    vector = copy.deepcopy(VECTOR)
    mutate(vector)
    errors = _errors(vector, VECTOR_SCHEMA)
    assert errors
    if pointer or words:
        assert any(p == pointer and words in reason for p, reason in errors), errors


def test_refused_construction_may_hold_any_params():
    vector = _vector(params=[1, 2], seed="x")
    vector["calls"] = [
        {"op": "new", "params": [1, 2], "seed": "x", "expect": {"error": "invalid-params"}}
    ]
    assert _errors(vector, VECTOR_SCHEMA) == []


# -- the tag vocabulary -----------------------------------------------------------------------


def test_vocabulary_notes_name_a_rule_and_a_bug():
    tags = load_vocabulary()
    assert len(tags) >= 20
    for tag in tags.values():
        assert tag.rule.startswith(("SPEC.md §", "all of SPEC.md")), tag
        assert len(tag.catches) > 20, tag


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("## `a`\n\n- **Rule:** r\n", "lacks Catches"),
        (
            "## `a`\n- **Rule:** r\n- **Catches:** c\n## `a`\n- **Rule:** r\n- **Catches:** c\n",
            "twice",
        ),
        ("## `A b`\n- **Rule:** r\n- **Catches:** c\n", "not a valid tag name"),
        ("## `a`\n- **Rule:** r\nstray\n- **Catches:** c\n", "unexpected line"),
        ("## `a`\n- **Rule:** r\n- **Rule:** s\n- **Catches:** c\n", "a second Rule"),
        ("# nothing here\n", "no tags found"),
    ],
)
def test_vocabulary_format_errors_name_the_line(text, words):
    with pytest.raises(VocabularyError, match=words):
        parse_vocabulary(text)


GOOD: dict[str, Any] = {
    "format": "snapkv-vector/1",
    "id": "evict/some-case",
    "description": "A description of twenty characters or more.",
    "tags": ["eviction-count"],
    "params": {"budget": 2, "recentWindow": 0, "obsWindow": 1, "poolKernel": 1},
    "seed": 0,
    "calls": [
        {
            "op": "new",
            "params": {"budget": 2, "recentWindow": 0, "obsWindow": 1, "poolKernel": 1},
            "seed": 0,
        },
        {"op": "step", "pos": 0, "attn": None},
        {"op": "evict", "expect": {"victims": []}},
    ],
}


def plain(document: dict[str, Any]) -> list[tuple[str, str]]:
    found = [
        ("".join(f"/{p}" for p in e.absolute_path), e.message)
        for e in schema_validator().iter_errors(document)
    ]
    return sorted(found)


def with_field(name: str, value: Any) -> dict[str, Any]:
    document = copy.deepcopy(GOOD)
    document[name] = value
    return document


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("id", "evict/other-case"),  # valid: the same verdict as GOOD's, remembered
        ("id", "Evict/Upper"),
        ("id", "one-segment"),
        ("id", "evict/trailing-newline\n"),  # re.search's $ matches before it, as jsonschema's
        ("id", "a/" + "b" * 199),
        ("id", 5),
        ("description", "x" * 20),
        ("description", "x" * 19),
        ("description", "é" * 20),
        ("description", None),
    ],
)
def test_a_heads_id_and_description_are_judged_as_the_plain_validator_judges_them(name, value):
    schema_problems(GOOD, None)  # GOOD's verdict is remembered first
    document = with_field(name, value)
    got = sorted((p.pointer, p.reason) for p in schema_problems(document, None))
    assert got == plain(document)


def test_a_call_shaped_like_a_valid_head_is_still_judged_as_a_call():
    head = {**with_field("id", "a/b"), "description": "x" * 20, "calls": [GOOD["calls"][0]]}
    assert schema_problems(head, None) == []  # a valid head, remembered
    document = copy.deepcopy(GOOD)
    document["calls"].append(head)
    got = sorted((p.pointer, p.reason) for p in schema_problems(document, None))
    assert got and got == plain(document)
