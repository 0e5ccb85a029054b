"""The validator: malformed vectors are rejected with messages that point at the field, every
problem is reported, weights are judged by their text, and ``validate`` exits 0 or 2."""

from __future__ import annotations

import shutil

import pytest

from conformance import cli
from conformance.mutants import lookup
from conformance.suite.validation import (
    FloatLiteral,
    check_document,
    check_file,
    parse_json,
    path_matches_id,
    validate_paths,
    weight_problem,
)
from tests.support.paths import TESTS

MALFORMED = TESTS / "malformed"

#: Each malformed fixture, the JSON pointer its problem must name, and words of the reason.
EXPECTED: dict[str, tuple[str, str]] = {
    "not-json": ("", "not valid JSON"),
    "duplicate-key": ("", "duplicate key 'seed'"),
    "nan-weight": ("", "NaN is not valid JSON"),
    "missing-description": ("", "'description' is a required property"),
    "extra-field": ("", "'comment' was unexpected"),
    "wrong-format": ("/format", "'snapkv-vector/1' was expected"),
    "bad-id": ("/id", "does not match '^[a-z0-9]"),
    "path-mismatch": ("/id", "does not match the file path"),
    "unknown-tag": ("/tags/0", "unknown tag 'tie'"),
    "first-call-not-new": ("/calls/0/op", "'new' was expected"),
    "params-mismatch": ("/calls/0/params", "differs from the top-level params"),
    "seed-mismatch": ("/calls/0/seed", "differs from the top-level seed"),
    "fractional-budget": ("/params/budget", "2.5 is not of type 'integer'"),
    "refused-new-with-more-calls": ("/calls/1", "must have no other call"),
    "evict-without-expect": ("/calls/4", "'expect' is a required property"),
    "victims-on-step": ("/calls/3/expect", "'victims' was unexpected"),
    "scores-call": ("/calls/5/op", "'scores' is not one of"),
    "integral-float-position": ("/calls/3/pos", "2.0 is not of type 'integer'"),
    "integral-float-refused-position": ("/calls/4/pos", "integral value written with a fraction"),
    "negative-weight": (
        "/calls/3/attn/1",
        "-0.25 is less than the minimum of -7.006492321624085e-46",
    ),
    "weight-not-float32": ("/calls/3/attn/0", "0.1 is not exactly a float32"),
    "weight-not-shortest": ("/calls/3/attn/0", "not in shortest round-trip form"),
    "weight-integer-not-float32": ("/calls/3/attn/0", "16777217 is not exactly a float32"),
    "wrong-victims": ("/calls/4/expect", "expected victims [0], the reference returns [1]"),
    "wrong-error-kind": ("/calls/3/expect", "expected the refusal invalid-attention, but the"),
    "unexpected-refusal": (
        "/calls/3",
        "must succeed, but the reference refuses it with invalid-pos",
    ),
    "expected-refusal-accepted": ("/calls/4/expect", "but the reference accepts the call"),
    "several-problems": ("/tags/0", "unknown tag"),
}


def test_every_fixture_is_listed():
    assert sorted(path.stem for path in MALFORMED.glob("*.json")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_vector_is_rejected_at_its_field(name):
    pointer, words = EXPECTED[name]
    _, problems = check_file(MALFORMED / f"{name}.json")
    assert problems, f"{name} was accepted"
    found = [(p.pointer, p.reason) for p in problems]
    assert any(p == pointer and words in reason for p, reason in found), found
    assert all(str(problem).startswith(str(MALFORMED / f"{name}.json")) for problem in problems)


def test_every_problem_is_reported_not_only_the_first():
    _, problems = check_file(MALFORMED / "several-problems.json")
    pointers = [problem.pointer for problem in problems]
    assert pointers == ["/tags/0", "/calls/4/expect"]


def test_a_repaired_fixture_is_valid(tmp_path):
    # The fixtures differ from a valid vector only in what they are named for.
    text = (MALFORMED / "wrong-victims.json").read_text()
    repaired = tmp_path / "malformed" / "wrong-victims.json"
    repaired.parent.mkdir()
    repaired.write_text(text.replace('"victims":[0]', '"victims":[1]'))
    assert check_file(repaired)[1] == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("0.10000000149011612", None),
        ("0.100000001490116119384765625", "shortest round-trip"),
        ("1.0000000149011612e-1", None),  # the same decimal in another exponent style
        ("0.1", "not exactly a float32"),
        ("1e-45", "not exactly a float32"),
        ("1.401298464324817e-45", None),
        ("1.401298464324817E-45", None),
        ("-0.0", None),
        ("3.4028234663852886e+38", None),
        ("3.4028235e38", "not exactly a float32"),  # float32 shortest text, not float64's
        ("16777216", None),
        ("16777217", "not exactly a float32"),
        ("1" + "0" * 39, "not exactly a float32"),
        ("true", "not a number"),
        ('"0.5"', "not a number"),
    ],
)
def test_weight_literal_rule(text, problem):
    value = parse_json(text, keep_literals=True)
    reason = weight_problem(value)
    if problem is None:
        assert reason is None
    else:
        assert reason is not None and problem in reason


def test_float_literal_keeps_its_text():
    value = parse_json("[0.50, 1e0]", keep_literals=True)
    assert [v.text for v in value] == ["0.50", "1e0"]
    assert all(isinstance(v, FloatLiteral) for v in value)


def test_path_matches_id_component_by_component():
    assert path_matches_id("vectors/ties/lower.json", "ties/lower")
    assert path_matches_id("ties/lower.json", "ties/lower")
    assert not path_matches_id("vectors/xties/lower.json", "ties/lower")
    assert not path_matches_id("vectors/ties/lower.json", "ties/low")


def test_duplicate_ids_across_files_are_reported(tmp_path):
    source = MALFORMED / "wrong-victims.json"
    text = source.read_text().replace('"victims":[0]', '"victims":[1]')
    for root in ("a", "b"):
        path = tmp_path / root / "malformed" / "wrong-victims.json"
        path.parent.mkdir(parents=True)
        path.write_text(text)
    report = validate_paths([tmp_path / "a", tmp_path / "b"])
    assert [(p.pointer, p.reason.split(",")[0]) for p in report.problems] == [
        ("/id", "duplicate id 'malformed/wrong-victims'")
    ]


def test_replay_uses_the_given_policy_factory():
    TiesToHigher = lookup("ties-to-higher-position").policy
    text = (MALFORMED / "wrong-victims.json").read_text()
    text = text.replace('"attn":[0.5,0.25]', '"attn":[0.0,0.5]')  # 0 and 1 now tie at 0.5
    assert check_document(text, None)[1] == []
    _, problems = check_document(text, None, factory=TiesToHigher)
    assert [p.reason for p in problems] == ["expected victims [0], the reference returns [1]"]


def test_validate_command_exits_2_and_prints_file_pointer_reason(tmp_path, capsys):
    bad = tmp_path / "malformed" / "weight-not-float32.json"
    bad.parent.mkdir()
    shutil.copy(MALFORMED / "weight-not-float32.json", bad)
    assert cli.main(["validate", str(bad)]) == 2
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{bad}: /calls/3/attn/0: 0.1 is not exactly a float32")
    assert lines[-1] == "1 vector file(s) checked: 1 invalid, 1 problem(s)"


def test_validate_command_exits_0_on_a_valid_file(tmp_path, capsys):
    good = tmp_path / "malformed" / "wrong-victims.json"
    good.parent.mkdir()
    good.write_text((MALFORMED / "wrong-victims.json").read_text().replace("[0]", "[1]"))
    assert cli.main(["validate", str(good)]) == 0
    assert capsys.readouterr().out == "1 vector file(s) checked: all valid\n"


def test_validate_command_refuses_an_empty_directory_and_a_missing_path(tmp_path, capsys):
    assert cli.main(["validate", str(tmp_path), str(tmp_path / "missing")]) == 2
    out = capsys.readouterr().out
    assert "no vector files (*.json) found" in out
    assert "no such file or directory" in out
