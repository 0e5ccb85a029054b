"""Validation's rules (:mod:`conformance.suite.validation`, SPEC.md §4.3, §4.4), each pinned on its
own: weights judged by their text, refused calls free, problems named where they are, the replay
against the reference, and protocol checks' expectations.

Each test names the SPEC.md rule it pins; the expected values come from SPEC.md and the committed
vectors and checks, never from the code under test.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from conformance.adapter.replay import replay
from conformance.mutants import lookup
from conformance.policy.fast import fast_policy
from conformance.spec.errors import GenerationError, VectorError
from conformance.spec.resources import suite_dir
from conformance.suite import validation
from conformance.suite.tags import load_vocabulary
from conformance.suite.validation import (
    CheckDraft,
    FloatLiteral,
    check_document,
    check_file,
    check_problems,
    parse_json,
    realize,
    replay_problems,
    rule_problems,
    validate_paths,
    weight_problem,
)
from conformance.suite.vectors import parse_document
from tests.support.runner_support import params, reference_vector

#: Parameters the reference accepts (odd poolKernel) and parameters it refuses (even poolKernel,
#: SPEC.md §2.1).
ACCEPTED_PARAMS = params(2, 1, 2, 1)
REFUSED_PARAMS = params(2, 1, 2, 2)


def vector_document(
    top: dict[str, Any],
    calls: list[Any],
    *,
    canonical: bool,
    tags: tuple[str, ...] = ("ties",),
    vector_id: str = "rules/validation",
) -> str:
    """A vector file's text. ``canonical``: the layout the suite ships (the calls last, one a
    line, which the loader reads line by line); else all on one line. A call given as a string
    is written as that text (to write a weight's digits as they are)."""
    head = {
        "format": "snapkv-vector/1",
        "id": vector_id,
        "description": "A vector for the validation tests. Catches: nothing.",
        "tags": list(tags),
        **top,
    }
    written = [c if isinstance(c, str) else json.dumps(c, separators=(",", ":")) for c in calls]
    if not canonical:
        return json.dumps(head)[:-1] + ', "calls": [' + ", ".join(written) + "]}"
    return (
        json.dumps(head, indent=2)[:-2]
        + ',\n  "calls": [\n'
        + ",\n".join(f"    {line}" for line in written)
        + "\n  ]\n}\n"
    )


def found(problems: list[Any]) -> list[tuple[str, str]]:
    return [(problem.pointer, problem.reason) for problem in problems]


#: The small vector of SPEC.md §2 (3 entries, budget 2, victims [1]) with its third step's
#: weights to be filled in as text.
def small_calls(third_step_weights: str) -> list[Any]:
    return [
        {"op": "new", "params": ACCEPTED_PARAMS, "seed": 0},
        {"op": "step", "pos": 0, "attn": []},
        {"op": "step", "pos": 1, "attn": [0.5]},
        f'{{"op":"step","pos":2,"attn":[{third_step_weights}]}}',
        {"op": "evict", "expect": {"victims": [1]}},
    ]


SMALL_TOP = {"params": ACCEPTED_PARAMS, "seed": 0}


#: 0.1's float32 is 13421773 * 2^-27; its shortest round-trip decimal is 0.10000000149011612.
FLOAT32_OF_TENTH = 13421773 * 2.0**-27


#: The same float64 written with one more digit: numerically another decimal (SPEC.md §4.3).
TENTH_LONGER = "0.100000001490116121"


# -- validation (suite/validation.py, SPEC.md §4.3, §4.4) ------------------------------------------


def test_the_float32_of_a_tenth_and_its_longer_spelling_are_what_the_tests_assume():
    assert repr(FLOAT32_OF_TENTH) == "0.10000000149011612"
    assert float(TENTH_LONGER) == FLOAT32_OF_TENTH


@pytest.mark.parametrize("canonical", [True, False], ids=["by-line", "whole-file"])
@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        ("0.5,0.25", []),
        ("0.5,0.10000000149011612", []),
        ("0.5,1.0000000149011612E-1", []),
        ("16777216,0", []),
        ("0.5,0.1", [("/calls/3/attn/1", "0.1 is not exactly a float32")]),
        (f"0.5,{TENTH_LONGER}", [("/calls/3/attn/1", "not in shortest round-trip form")]),
        # 2^60 + 1: a float64 reader rounds it to 2^60, a float32, but the integer is not one
        ("1152921504606846977,3", [("/calls/3/attn/0", "is not exactly a float32")]),
    ],
)
def test_spec_4_3_weights_of_a_call_that_must_succeed_are_judged_by_their_text(
    weights, expected, canonical
):
    """SPEC.md §4.3: every weight of a call that must succeed is an exact float32 written as a
    decimal numerically equal to its shortest round-trip form, or an integer literal of exactly
    that value; judged whether the file is read line by line or whole."""
    text = vector_document(SMALL_TOP, small_calls(weights), canonical=canonical)
    problems = found(check_document(text, None)[1])
    assert [pointer for pointer, _ in problems] == [pointer for pointer, _ in expected]
    for (_, reason), (_, words) in zip(problems, expected, strict=True):
        assert words in reason
    # bytes are read as the file's bytes, the same way
    assert found(check_document(text.encode(), None)[1]) == problems


@pytest.mark.parametrize(
    ("weights", "words"),
    [("0.5,0.1", "0.1 is not exactly a float32"), (f"0.5,{TENTH_LONGER}", "shortest round-trip")],
)
def test_spec_4_3_rule_problems_judges_the_weights_of_data_read_keeping_literals(weights, words):
    """SPEC.md §4.3 on data alone (no lines, no file to read again): its weights' own text."""
    from conformance.suite.validation import parse_json

    text = vector_document(SMALL_TOP, small_calls(weights), canonical=False)
    data = parse_json(text, keep_literals=True)
    problems = found(rule_problems(data, None, load_vocabulary()))
    assert [pointer for pointer, _ in problems] == ["/calls/3/attn/1"]
    assert words in problems[0][1]


def test_spec_4_3_parse_json_keeps_a_float_s_text_only_when_asked():

    assert type(parse_json("[0.50]")[0]) is float
    assert isinstance(parse_json("[0.50]", keep_literals=True)[0], FloatLiteral)


def test_spec_4_3_text_that_is_not_utf_8_is_a_problem_of_the_file_not_a_crash():
    """SPEC.md §4.3 (strict JSON) and §3.1 (UTF-8 only): a document given as text holding a
    lone surrogate, which no UTF-8 file can, is judged as the bytes it stands for: not valid
    JSON, reported, never an exception."""
    vector, problems = check_document('{"format":"snapkv-vector/1","id":"\ud800"}', None)
    assert vector is None
    assert [(p.pointer, p.reason.split(" (")[0]) for p in problems] == [
        ("", "not valid JSON: not UTF-8")
    ]


def test_spec_4_3_the_weights_of_a_call_that_must_be_refused_may_be_anything():
    """SPEC.md §4.3: only calls that must succeed have their weights judged."""
    calls = [
        {"op": "new", "params": ACCEPTED_PARAMS, "seed": 0},
        {"op": "step", "pos": 0, "attn": []},
        '{"op":"step","pos":0,"attn":[0.1],"expect":{"error":"invalid-position"}}',
        '{"op":"step","pos":1,"attn":[0.1,0.1],"expect":{"error":"invalid-attention"}}',
    ]
    for canonical in (True, False):
        text = vector_document(SMALL_TOP, calls, canonical=canonical)
        assert found(check_document(text, None)[1]) == []


@pytest.mark.parametrize(
    ("text", "starts"),
    [
        ("1e39", "1e39 is not exactly a float32 (it is beyond the float32 range)"),
        ("-1E39", "-1E39 is not exactly a float32 (it is beyond the float32 range)"),
        ("true", "true is not a number"),
        ('"0.5"', '"0.5" is not a number'),
        ("0.1", "0.1 is not exactly a float32 (the nearest float32 is 0.10000000149011612)"),
    ],
)
def test_spec_4_3_a_weight_s_problem_quotes_the_weight_as_the_file_writes_it(text, starts):

    reason = weight_problem(parse_json(text, keep_literals=True))
    assert reason is not None and reason.startswith(starts), reason


def refused_new_vector(params_value: Any, seed: Any) -> str:
    new = {"op": "new", "params": params_value, "seed": seed, "expect": {"error": "invalid-params"}}
    return vector_document({"params": params_value, "seed": seed}, [new], canonical=False)


@pytest.mark.parametrize(
    ("params_value", "seed", "pointers"),
    [
        ({**REFUSED_PARAMS, "budget": 2.0}, 0, ["/params/budget", "/calls/0/params/budget"]),
        (REFUSED_PARAMS, 1.0, ["/seed", "/calls/0/seed"]),
        (
            [2.0, {"a/b": [1e0]}],
            0,
            ["/params/0", "/params/1/a~1b/0", "/calls/0/params/0", "/calls/0/params/1/a~1b/0"],
        ),
    ],
)
def test_spec_4_3_an_integral_float_where_an_integer_is_meant_is_named_where_it_is(
    params_value, seed, pointers
):
    """SPEC.md §4.3: no integral value written with a fraction or exponent where an integer is
    meant, however deep in params (a refused new may hold any params), each at its JSON
    pointer (RFC 6901: "/" in a key is "~1"), at the top level and in the new alike."""
    problems = found(check_document(refused_new_vector(params_value, seed), None)[1])
    assert sorted(pointer for pointer, _ in problems) == sorted(pointers)
    assert all("integral value written with a fraction or exponent" in r for _, r in problems)


def test_spec_4_2_a_refused_new_alone_is_valid_and_one_more_call_is_the_one_problem():
    """SPEC.md §4.2, §4.3: a vector whose new is refused has no other call; such a call is the
    one problem named, not also replayed (it would only be refused with no-policy)."""
    new = {"op": "new", "params": REFUSED_PARAMS, "seed": 0, "expect": {"error": "invalid-params"}}
    top = {"params": REFUSED_PARAMS, "seed": 0}
    assert found(check_document(vector_document(top, [new], canonical=True), None)[1]) == []
    more = [new, {"op": "step", "pos": 0, "attn": []}, {"op": "evict", "expect": {"victims": []}}]
    problems = found(check_document(vector_document(top, more, canonical=True), None)[1])
    assert [pointer for pointer, _ in problems] == ["/calls/1"]
    assert "must have no other call" in problems[0][1]


def test_spec_4_3_a_replay_names_the_expected_victims_and_the_reference_s_refusal():
    """SPEC.md §4.3: every expectation is reproduced by the reference; an evict it refuses is
    named with the victims expected and the reference's own refusal, kind and message."""

    new = {"op": "new", "params": REFUSED_PARAMS, "seed": 0, "expect": {"error": "invalid-params"}}
    evict = {"op": "evict", "expect": {"victims": [0]}}
    text = vector_document({"params": REFUSED_PARAMS, "seed": 0}, [new, evict], canonical=False)
    vector = parse_document(text.encode()).vector()
    answers = replay([call.request for call in vector.calls], fast_policy)
    error = answers[1]["error"]
    assert error["kind"] == "no-policy" and error["message"]
    assert found(replay_problems(vector)) == [
        (
            "/calls/1/expect",
            f"expected victims [0], but the reference refuses it with no-policy "
            f"({error['message']})",
        )
    ]


def test_spec_4_3_a_mismatch_in_a_later_replay_batch_is_named_at_its_own_call(monkeypatch):
    """SPEC.md §4.3: validate replays a long vector a batch of calls at a time; a wrong
    expectation past the first batch is named at its own call's pointer."""
    requests = [{"op": "new", "params": params(2, 0, 1, 1), "seed": 0}]
    for pos in range(4):
        requests.append({"op": "step", "pos": pos, "attn": [0.5] * min(pos, 2) if pos else None})
        requests.append({"op": "evict"})
    vector = reference_vector("kills/batches", requests)
    last = len(vector.calls) - 1
    wrong = dataclasses.replace(vector.calls[last], expect={"victims": [0]})
    right = vector.calls[last].expected_victims
    assert right != [0]
    vector = dataclasses.replace(vector, calls=(*vector.calls[:last], wrong))
    monkeypatch.setattr(validation, "REPLAY_BATCH", 2)
    assert found(replay_problems(vector)) == [
        (f"/calls/{last}/expect", f"expected victims [0], the reference returns {right}")
    ]


def test_spec_4_3_a_document_is_judged_at_the_path_it_is_given():
    """SPEC.md §4.3: the path matches the id; the path given is the one judged and named."""

    text = vector_document(SMALL_TOP, small_calls("0.5,0.25"), canonical=True)
    problems = check_document(text, "elsewhere/other.json")[1]
    assert found(problems) == [
        (
            "/id",
            "id 'rules/validation' does not match the file path; "
            "expected <dir>/rules/validation.json",
        )
    ]
    assert problems[0].path == str(Path("elsewhere/other.json"))
    assert check_document(text, "suite/rules/validation.json")[1] == []


def test_spec_4_3_only_tags_of_the_vocabulary_given(tmp_path):
    """SPEC.md §4.3: only tags of the vocabulary; a caller's vocabulary is the one judged."""

    text = vector_document(SMALL_TOP, small_calls("0.5,0.25"), canonical=True, tags=("own",))
    path = tmp_path / "rules" / "validation.json"
    path.parent.mkdir()
    path.write_text(text)
    own = {"own": "a tag of this suite's vocabulary"}
    assert found(check_document(text, None, tags=own)[1]) == []
    assert found(check_file(path, tags=own)[1]) == []
    unknown = ("/tags/0", "unknown tag 'own'; the vocabulary is vectors/TAGS.md")
    assert found(check_document(text, None)[1]) == [unknown]
    assert found(check_file(path)[1]) == [unknown]


def tie_vector(tmp_path: Any) -> Any:
    """Two entries that tie at 0.5: SPEC.md §2.4 evicts the lower position, 0."""
    calls = small_calls("0.0,0.5")
    calls[-1] = {"op": "evict", "expect": {"victims": [0]}}
    path = tmp_path / "rules" / "validation.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(vector_document(SMALL_TOP, calls, canonical=True))
    return path


def test_spec_4_3_the_replay_runs_on_the_policy_given(tmp_path):
    """SPEC.md §4.3 replays on the reference by default; a policy given is the one replayed
    (here one that breaks ties to the higher position, SPEC.md §2.4)."""
    from conformance.suite.validation import check_file

    ties_to_higher = lookup("ties-to-higher-position").policy
    path = tie_vector(tmp_path)
    wrong = [("/calls/4/expect", "expected victims [0], the reference returns [1]")]
    assert found(check_file(path)[1]) == []
    assert found(check_file(path, factory=ties_to_higher)[1]) == wrong
    assert found(validate_paths([path]).problems) == []
    assert found(validate_paths([path], factory=ties_to_higher).problems) == wrong


def test_validate_paths_counts_every_file_and_goes_on_past_a_root_it_cannot_walk(tmp_path):

    first_file = tie_vector(tmp_path / "a")
    other = tmp_path / "b" / "rules" / "other.json"
    other.parent.mkdir(parents=True)
    other.write_text(first_file.read_text().replace("rules/validation", "rules/other"))
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = tmp_path / "missing"
    report = validate_paths([missing, tmp_path / "a", tmp_path / "b", empty])
    assert report.files == 2
    assert report.summary() == "2 vector file(s) checked: 2 invalid, 2 problem(s)"
    first, second = report.problems
    assert first.path == str(missing) and "no such file or directory" in first.reason
    assert (second.path, second.pointer, second.reason) == (
        str(empty),
        "",
        "no vector files (*.json) found",
    )
    assert isinstance(second, VectorError)


def check_data(name: str) -> dict[str, Any]:
    return json.loads((suite_dir() / "protocol" / f"{name}.json").read_text())


# -- validation of protocol checks (SPEC.md §4.4) --------------------------------------------------


def test_spec_4_4_a_committed_check_with_latitude_is_what_the_reference_answers(tmp_path):
    """SPEC.md §4.4: a check's expectations are the reference's answers, including the
    latitude an expectation allows; a committed check with latitude is valid."""

    data = check_data("deep-nesting")
    assert any("latitude" in item for item in data["expect"])
    path = tmp_path / "protocol" / "deep-nesting.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    assert check_file(path)[1] == []


def test_spec_4_4_a_check_file_s_problems_name_the_file_and_say_what_is_wrong(tmp_path):
    """SPEC.md §4.4: the check's id matches its path; its problems are the file's, each
    ``pointer: reason`` (the pointer within the check) as one reason of the file."""

    data = check_data("victims-empty-list")
    path = tmp_path / "protocol" / "elsewhere.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    problems = check_file(path)[1]
    assert [(p.path, p.pointer, p.reason) for p in problems] == [
        (str(path), "", "/id: 'protocol/victims-empty-list' does not match the file's path")
    ]


def test_spec_4_4_a_check_s_schema_problems_carry_their_pointers():

    data = check_data("victims-empty-list")
    del data["rule"]
    assert check_problems(data, None) == ["/: 'rule' is a required property"]
    data = check_data("victims-empty-list")
    data["expect"][2]["ok"] = "yes"
    assert "/expect/2/ok: 'yes' is not of type 'boolean'" in check_problems(data, None)


def test_spec_4_4_expectations_that_are_not_the_reference_s_answers():
    """SPEC.md §4.4: a check's expectations are the reference's answers: other victims, and an
    outcome the reference does not give (named with the check, the line and both outcomes)."""

    data = check_data("victims-empty-list")
    data["expect"][2]["victims"] = [0]
    assert check_problems(data, None) == ["/expect: not what the reference answers"]
    data = check_data("victims-empty-list")
    data["expect"][2] = {"line": 2, "id": 3, "ok": False, "error": "no-policy"}
    assert check_problems(data, None) == [
        "/expect: not what the reference answers: protocol/victims-empty-list: "
        "line 2 meant no-policy, the reference says ok"
    ]


def test_spec_4_4_a_draft_whose_outcomes_do_not_count_its_answered_lines_is_refused():

    data = check_data("victims-empty-list")
    send = tuple(data["send"])
    outcomes = ("ok",) * len(data["expect"])
    draft = CheckDraft("rules-draft", "a rule", "What it pins.", "a mistake.", send, outcomes)
    realized = realize(draft)
    assert realized.description == "What it pins. Catches: a mistake."
    assert realized.expect == tuple(data["expect"])
    with pytest.raises(GenerationError, match=r"5 answered lines, 4 outcomes, 5 answers"):
        realize(dataclasses.replace(draft, outcomes=outcomes[:-1]))
