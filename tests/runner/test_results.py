"""A vector's result (:class:`conformance.runner.results.VectorResult`): what it keeps of the
runner's record, the line that says what failed where, and its JSON, which is the report
schema's ``results`` item (schema/report.schema.json).
"""

from __future__ import annotations

import json

from conformance.judge import verdicts
from conformance.runner.results import VectorResult
from conformance.spec.resources import suite_dir

# -- the result model (the report's ``results``, schema/report.schema.json) ----------------------


def test_a_result_made_from_a_verdict_keeps_the_runners_record():
    verdict = verdicts.Verdict("v", verdicts.WRONG_VICTIMS, 1, "evict", "m")
    plain = VectorResult(verdict)
    assert (plain.stderr_tail, plain.duration, plain.known_failure, plain.divergence) == (
        "",
        0.0,
        False,
        None,
    )
    assert plain.fails_run
    full = VectorResult(
        verdict,
        stderr_tail="err",
        diagnosis="why",
        divergence="sums",
        duration=2.5,
        known_failure=True,
    )
    assert (full.stderr_tail, full.diagnosis, full.divergence, full.duration) == (
        "err",
        "why",
        "sums",
        2.5,
    )
    assert not full.fails_run


def test_a_results_line_says_what_failed_where():
    failed = VectorResult(verdicts.Verdict("v", verdicts.CRASH, message="died"))
    assert failed.describe() == "v: crash: died"
    known = VectorResult(
        verdicts.Verdict("v", verdicts.WRONG_VICTIMS, 2, "evict", "m"), known_failure=True
    )
    assert known.describe() == "v: call 2 (evict): wrong-victims: m"
    stale = VectorResult(verdicts.Verdict("v", verdicts.PASS), known_failure=True)
    assert stale.describe() == (
        "v: pass (listed as a known failure, but it passes: remove it from the list)"
    )
    assert VectorResult(verdicts.Verdict("v", verdicts.PASS)).describe() == "v: pass"


def test_a_result_as_json_is_what_the_report_schema_says():
    """schema/report.schema.json's ``result`` is closed and lists every member; a result's JSON
    validates against it, with the duration rounded to the microsecond."""
    import jsonschema

    schema = json.loads((suite_dir().parent / "schema" / "report.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(
        {"$defs": schema["$defs"], "$ref": "#/$defs/result"}
    )
    result = VectorResult(
        verdicts.Verdict("v", verdicts.WRONG_VICTIMS, 1, "evict", "m", [1], [2]),
        stderr_tail="e",
        duration=1.23456789,
    )
    data = result.to_json()
    assert list(validator.iter_errors(data)) == []
    assert data["duration"] == 1.234568
    assert (data["id"], data["verdict"], data["expected"], data["actual"]) == (
        "v",
        "wrong-victims",
        [1],
        [2],
    )
