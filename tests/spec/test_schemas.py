"""The vector schema applied from remembered verdicts gives the plain validator's problems."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from conformance.spec.schemas import schema_problems, schema_validator

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
