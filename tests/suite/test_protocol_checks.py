"""Protocol checks: the committed cases, their validation, the judge, sessions and lax adapters.

The judge is a pure function of a check and answer lines, so most tests feed it lines: the
reference adapter's own (in-process), hand-made wrong ones, and those of the lax adapters in
``tests/lax_adapters/lax.py`` run in-process. A few tests start real processes to check the
session plumbing and the ``run`` integration.
"""

from __future__ import annotations

import io
import json
import shlex
import subprocess
import sys

import pytest

from conformance.adapter.server import Session
from conformance.judge import verdicts
from conformance.judge.check_answers import judge_check
from conformance.runner.check_sessions import run_check, run_checks
from conformance.spec.resources import suite_dir
from conformance.suite.protocol_checks import ProtocolCheck, dumps_check
from conformance.suite.stream import load_checks
from conformance.suite.validation import check_problems, reference_answers
from conformance.tools.generate.checks import build_checks
from tests.support.paths import TESTS

sys.path.insert(0, str(TESTS / "lax_adapters"))
import lax

CHECKS = load_checks([suite_dir()])
BY_ID = {check.id: check for check in CHECKS}


def check(name: str) -> ProtocolCheck:
    return BY_ID[f"protocol/{name}"]


def reference(check: ProtocolCheck) -> list[bytes]:
    return reference_answers(check.payload)


def lines_of(data: bytes) -> list[bytes]:
    """The lines an adapter reading its input line by line sees (the last may lack LF)."""
    return io.BytesIO(data).readlines()


def answer_lines(*answers: object) -> list[bytes]:
    return [json.dumps(answer).encode() for answer in answers]


# -- the committed checks ----------------------------------------------------------------------


def test_the_committed_checks_are_what_the_generator_makes():
    built = sorted(build_checks(), key=lambda c: c.id)
    assert [c.to_json() for c in CHECKS] == [c.to_json() for c in built]
    assert len(CHECKS) >= 40


def test_every_check_names_its_rule_and_the_bug_it_catches():
    for item in CHECKS:
        assert item.rule.startswith("SPEC.md §"), item.id
        assert "Catches: " in item.description, item.id


def test_the_reference_passes_every_check():
    for item in CHECKS:
        assert judge_check(item, reference(item)) == verdicts.Verdict(item.id, verdicts.PASS), (
            item.id
        )


def test_every_area_the_checks_must_cover_has_checks():
    ids = " ".join(BY_ID)
    for name in (
        "hello-protocol-true", "hello-protocol-float", "hello-protocol-string",
        "hello-protocol-two", "hello-protocol-missing", "hello-repeated", "id-above-2-53",
        "id-negative", "id-not-an-integer", "strict-json-nan", "strict-json-infinity",
        "strict-json-minus-infinity", "strict-json-syntax", "utf8-bom", "utf8-invalid-bytes",
        "lone-surrogate-escape", "deep-nesting", "number-beyond-float64", "blank-lines", "crlf",
        "unknown-op", "missing-new-params", "missing-new-seed", "missing-step-pos",
        "missing-step-attn", "unknown-fields-ignored", "params-other-case", "params-extra-name",
        "victims-empty-list", "judgement-order", "scores-only-when-announced", "id-2-63",
        "id-above-2-64", "id-below-minus-2-63", "id-below-minus-2-64", "repeated-names-request",
        "repeated-names-params", "repeated-names-nested", "scores-kept-positions",
    ):  # fmt: skip
        assert f"protocol/{name}" in ids


def test_validation_refuses_a_check_whose_expectation_is_not_the_reference():
    data = check("hello-protocol-true").to_json()
    assert check_problems(data, "vectors/protocol/hello-protocol-true.json") == []
    data["expect"][0] = {"line": 0, "id": 1, "ok": True, "protocol": 1}
    problems = check_problems(data, "vectors/protocol/hello-protocol-true.json")
    assert problems and "reference" in problems[0]


def test_validation_refuses_schema_faults_and_a_path_that_is_not_the_id():
    data = check("crlf").to_json()
    assert any("does not match" in p for p in check_problems(data, "elsewhere/x.json"))
    del data["rule"]
    assert any("rule" in p for p in check_problems(data, "vectors/protocol/crlf.json"))
    data = check("utf8-bom").to_json()
    data["send"][1] = {"hex": "zz"}
    assert check_problems(data, "vectors/protocol/utf8-bom.json")


def test_validate_and_the_vector_loader_tell_checks_from_vectors(tmp_path):
    from conformance.suite.validation import check_file, validate_paths
    from conformance.suite.vectors import load_suite

    path = tmp_path / "protocol" / "crlf.json"
    path.parent.mkdir()
    path.write_text(dumps_check(check("crlf")))
    assert check_file(path) == (None, [])
    assert validate_paths([tmp_path]).ok
    assert load_suite([tmp_path]) == []
    assert [c.id for c in load_checks([tmp_path])] == ["protocol/crlf"]
    path.write_text(dumps_check(check("crlf")).replace('"ok":true', '"ok":false', 1))
    _, problems = check_file(path)
    assert problems


# -- the judge ---------------------------------------------------------------------------------


def test_an_id_beyond_2_53_echoed_rounded_fails_naming_the_rule():
    item = check("id-above-2-53")
    answers = reference(item)
    answers[1] = b'{"id":9007199254740992,"ok":true}'
    verdict = judge_check(item, answers)
    assert verdict.verdict == verdicts.PROTOCOL_ERROR
    assert verdict.call_index == 1 and verdict.op == "new"
    assert item.rule in verdict.message
    assert "9007199254740992, expected 9007199254740993" in verdict.message
    answers[1] = b'{"id":9007199254740993.0,"ok":true}'
    assert judge_check(item, answers).verdict == verdicts.PROTOCOL_ERROR


def test_outcomes_map_to_the_vector_verdicts():
    item = check("hello-protocol-true")
    ok = {"id": 1, "ok": True, "protocol": 1, "implementation": {}, "capabilities": []}
    assert judge_check(item, answer_lines(ok, ok)).verdict == verdicts.UNEXPECTED_SUCCESS
    refused = {"id": 1, "ok": False, "error": {"kind": "bad-request", "message": ""}}
    assert judge_check(item, answer_lines(refused, ok)).verdict == verdicts.WRONG_ERROR_KIND
    item = check("crlf")
    refused = {"id": 1, "ok": False, "error": {"kind": "bad-request", "message": ""}}
    assert judge_check(item, answer_lines(refused)).verdict == verdicts.UNEXPECTED_REFUSAL


def test_victims_null_is_a_protocol_error_and_other_victims_are_wrong():
    item = check("victims-empty-list")
    answers = reference(item)
    answers[2] = b'{"id":3,"ok":true,"victims":null}'
    verdict = judge_check(item, answers)
    assert (verdict.verdict, verdict.call_index) == (verdicts.PROTOCOL_ERROR, 2)
    assert "victims is null, not a list" in verdict.message
    answers[2] = b'{"id":3,"ok":true,"victims":[0]}'
    assert judge_check(item, answers).verdict == verdicts.WRONG_VICTIMS


def test_missing_extra_and_unreadable_answers():
    item = check("blank-lines")
    answers = reference(item)
    assert judge_check(item, answers[:2]).verdict == verdicts.PROTOCOL_ERROR
    crashed = judge_check(item, answers[:2], exit_status=1)
    assert crashed.verdict == verdicts.CRASH and "status 1" in crashed.message
    assert judge_check(item, answers[:2], timed_out=True).verdict == verdicts.TIMEOUT
    extra = judge_check(item, [*answers, b'{"id":null,"ok":false}'])
    assert extra.verdict == verdicts.PROTOCOL_ERROR and "4 answers to 3 lines" in extra.message
    assert judge_check(item, [b"not json", *answers[1:]]).verdict == verdicts.PROTOCOL_ERROR
    assert judge_check(item, [b"[1]", *answers[1:]]).verdict == verdicts.PROTOCOL_ERROR
    assert (
        judge_check(item, [b'{"id":1,"ok":NaN}', *answers[1:]]).verdict == verdicts.PROTOCOL_ERROR
    )
    assert judge_check(item, answers, exit_status=3).verdict == verdicts.CRASH
    assert judge_check(item, answers, exit_status=None).passed


def test_scores_is_judged_by_the_announced_capabilities():
    item = check("scores-only-when-announced")
    hello = {"id": 1, "ok": True, "protocol": 1, "implementation": {}, "capabilities": []}

    def refused(request_id: int, kind: str) -> dict:
        return {"id": request_id, "ok": False, "error": {"kind": kind, "message": ""}}

    ok = [{"id": 3, "ok": True}, {"id": 4, "ok": True}]
    without = answer_lines(hello, refused(2, "unsupported"), *ok, refused(5, "unsupported"))
    assert judge_check(item, without).passed
    announced = answer_lines({**hello, "capabilities": ["scores"]}, *json_of(without[1:]))
    assert judge_check(item, announced).verdict == verdicts.WRONG_ERROR_KIND
    answered = answer_lines(hello, refused(2, "no-policy"), *ok, refused(5, "unsupported"))
    assert judge_check(item, answered).verdict == verdicts.WRONG_ERROR_KIND


def json_of(lines: list[bytes]) -> list[object]:
    return [json.loads(line) for line in lines]


def test_latitude_lets_a_parser_without_a_depth_limit_answer_ok():
    item = check("deep-nesting")
    answers = reference(item)
    assert json.loads(answers[2])["id"] is None
    answers[2] = b'{"id":3,"ok":true,"victims":[]}'
    assert judge_check(item, answers).passed
    answers[2] = b'{"id":3,"ok":false,"error":{"kind":"bad-request","message":"deep"}}'
    assert judge_check(item, answers).passed
    answers[2] = b'{"id":3,"ok":false,"error":{"kind":"invalid-params","message":"?"}}'
    assert not judge_check(item, answers).passed


# -- the lax adapters, in-process --------------------------------------------------------------


def lax_answers(mode: str, data: bytes) -> list[bytes]:
    session = Session()
    out = []
    for line in lines_of(data):
        response = lax.answer(session, mode, line)
        if response is not None:
            out.append(json.dumps(response, allow_nan=True).encode())
        if session.finished:
            break
    return out


#: The checks each lax protocol layer fails (and no other).
LAX_FAILURES = {
    "params-any-case": {"params-other-case"},
    "hello-loose": {"hello-protocol-true", "hello-protocol-float"},
    "nan-parsed": {"strict-json-nan", "strict-json-infinity", "strict-json-minus-infinity"},
    "any-id": {"id-not-an-integer", "judgement-order"},
    "unknown-op-ok": {"unknown-op", "judgement-order"},
    "step-attn-default": {"missing-step-attn", "judgement-order"},
    "blank-line-answered": {"blank-lines"},
}


@pytest.mark.parametrize("mode", lax.MODES)
def test_each_lax_adapter_fails_exactly_the_checks_of_its_rule(mode):
    failed = {}
    for item in CHECKS:
        verdict = judge_check(item, lax_answers(mode, item.payload))
        if not verdict.passed:
            failed[item.id.removeprefix("protocol/")] = verdict
            assert verdict.message.startswith(item.rule), verdict.message
    assert set(failed) == LAX_FAILURES[mode]


# -- sessions and run --------------------------------------------------------------------------

REFERENCE_ARGV = [sys.executable, "-m", "conformance", "adapter"]


def test_a_session_sends_the_exact_bytes_and_reads_every_answer():
    item = check("utf8-invalid-bytes")
    verdict, session = run_check(item, REFERENCE_ARGV, timeout=60)
    assert verdict.passed, verdict.message
    assert session.exit_status == 0 and not session.timed_out
    assert list(session.answers) == reference(item)


def test_a_hanging_adapter_times_out_and_is_killed():
    argv = [sys.executable, "-c", "import time; time.sleep(60)"]
    verdict, session = run_check(check("crlf"), argv, timeout=1)
    assert session.timed_out and verdict.verdict == verdicts.TIMEOUT
    assert session.duration < 30


@pytest.mark.slow
def test_default_run_fails_a_lax_adapter_with_a_line_naming_the_rule():
    adapter = shlex.join([sys.executable, str(TESTS / "lax_adapters" / "lax.py"), "hello-loose"])
    out = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--adapter", adapter],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 1, out.stderr
    fails = [line for line in out.stdout.splitlines() if line.startswith("FAIL ")]
    assert {line.split()[1].rstrip(":") for line in fails} == {
        "protocol/hello-protocol-true",
        "protocol/hello-protocol-float",
    }
    assert all("SPEC.md §3.2: hello's protocol must be the JSON integer 1" in f for f in fails)
    # Each FAIL line also went to stderr as its check was judged, as vectors' do.
    said = [line for line in out.stderr.splitlines() if line.startswith("FAIL ")]
    assert said == [line for line in fails if line in said] and len(said) == len(fails)


#: Adapters whose evictions are right and whose scores answers are not, and the checks that
#: fail each (the other check that asks for scores answers it after one step: one position).
MALFORMED_SCORES = {
    "scores_unequal_lengths": (
        {"protocol/scores-kept-positions", "protocol/scores-only-when-announced"},
        "scores has 5 positions but 4 pooled",
    ),
    "scores_without_protected": (
        {"protocol/scores-kept-positions"},
        "leave out the kept position(s) [3, 4], the newest",
    ),
    "scores_descending": ({"protocol/scores-kept-positions"}, "put 3 after 4"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MALFORMED_SCORES))
def test_default_run_fails_an_adapter_whose_scores_answers_are_malformed(name):
    """SPEC.md §2.5: scores answers are judged whenever an adapter gives them, not only while
    a failed vector is diagnosed: an adapter passing every vector fails the default run."""
    adapter = shlex.join([sys.executable, str(TESTS / "broken_adapters" / f"{name}.py")])
    out = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--adapter", adapter],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 1, out.stdout + out.stderr
    failed, words = MALFORMED_SCORES[name]
    fails = [line for line in out.stdout.splitlines() if line.startswith("FAIL ")]
    assert {line.split()[1].rstrip(":") for line in fails} == failed
    assert any(words in line for line in fails), fails


def test_run_checks_reports_each_check_as_it_is_judged():
    """progress(result, done, total) once per check, counting up, before run_checks returns:
    what lets ``run`` print a failing check's line at once."""
    items = [check("crlf"), check("utf8-invalid-bytes"), check("hello-protocol-true")]
    seen: list[tuple[str, int, int]] = []
    results = run_checks(
        items,
        REFERENCE_ARGV,
        timeout=60,
        progress=lambda result, done, total: seen.append((result.vector_id, done, total)),
    )
    assert [r.vector_id for r in results] == [item.id for item in items]
    assert sorted(seen, key=lambda s: s[1]) == seen
    assert [(done, total) for _, done, total in seen] == [(1, 3), (2, 3), (3, 3)]
    assert {vector_id for vector_id, _, _ in seen} == {item.id for item in items}


def test_run_selects_checks_with_k_and_honours_known_failures(tmp_path):
    adapter = shlex.join([sys.executable, str(TESTS / "lax_adapters" / "lax.py"), "hello-loose"])
    known = tmp_path / "known.txt"
    known.write_text("protocol/hello-protocol-true\nprotocol/hello-protocol-float\n")
    junit = tmp_path / "junit.xml"
    out = subprocess.run(
        [
            sys.executable, "-m", "conformance", "run", "--adapter", adapter,
            "-k", "protocol/hello-", "--known-failures", str(known), "--junit", str(junit),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    text = junit.read_text()
    assert text.count("<testcase ") == 7
    assert 'name="protocol/hello-protocol-true"' in text


def test_run_refuses_a_check_the_schema_refuses_naming_file_pointer_and_reason(tmp_path, capsys):
    from conformance.cli import main

    path = tmp_path / "protocol" / "crlf.json"
    path.parent.mkdir()
    path.write_text(dumps_check(check("crlf")).replace('"protocol/crlf"', '"x/protocol/crlf"'))
    status = main(["run", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2
    assert "crlf.json: /id: " in err and "does not match" in err
    assert "Traceback" not in err
